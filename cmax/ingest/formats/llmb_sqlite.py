"""The llmb-run job-history database (SQLite table ``jobs``, DGXC v26.05+).

Recognised by the SQLite magic plus a ``jobs`` table with llmb-run's columns; a run picks its
job by precision, GPU count and workload. A summary: it fills ``runs.reported_*``, never step
rows.

Each job row carries llmb-run's own parse of its log: ``train_step_time_seconds`` and
``tflops_per_gpu`` (means over iterations 35-44), ``perf_parse_status`` (``success |
incomplete | invalid_grad_norm | no_data | no_log | unsupported_framework``) and the job's
``workload_key, model_size, dtype, scale`` (research dgxc.md §3.3).

A manifest run picks its job by precision (``dtype``) and GPU count (``scale``), then by
workload (or ``experiment``); when the same configuration was run more than once the latest
job wins, the way a rerun supersedes a failed attempt. The database is read under the bounds
of :mod:`cmax.reading.sqlitefile` (immutable, nothing written beside it; real tables only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.evidence import JOBS_SCHEMA, conform
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, RunFormat, RunPart, RunRequest, register
from cmax.ingest.formats._slurm import elapsed_seconds, stamp
from cmax.reading.coerce import as_float
from cmax.reading.limits import MAX_HISTORY_JOBS, limit_error
from cmax.reading.sqlitefile import open_sqlite, read_rows, table_columns

MAGIC = b"SQLite format 3\x00"
REQUIRED_COLUMNS = ("perf_parse_status", "train_step_time_seconds")
_JOB_ID_COLUMNS = ("job_id", "jobid", "slurm_job_id", "id")
WHAT = "job-history database"
# llmb-run statuses with no numbers at all -> the canonical "no_data"
STATUS_MAP = {"no_log": "no_data", "unsupported_framework": "no_data"}


@dataclass(frozen=True)
class Job:
    row: dict[str, Any]
    order: int

    @property
    def label(self) -> str:
        parts = [self.row.get(k) for k in ("workload_key", "model_size", "dtype", "scale")]
        job = next((self.row[k] for k in _JOB_ID_COLUMNS if self.row.get(k) is not None), None)
        text = "_".join(str(p) for p in parts if p not in (None, ""))
        return f"{text} (job {job})" if job is not None else text

    @property
    def status(self) -> str:
        raw = str(self.row.get("perf_parse_status") or "no_data").strip().lower()
        return STATUS_MAP.get(raw, raw)


def is_sqlite(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(len(MAGIC)) == MAGIC


def has_jobs_table(path: Path) -> bool:
    """An llmb-run ``jobs`` table is there. A view or virtual table named ``jobs`` is an
    error (:func:`cmax.reading.sqlitefile.table_columns`), not another format."""
    import sqlite3  # here: every bundle's ingest imports this module, few read a database

    try:
        with open_sqlite(path, what=WHAT) as con:
            cols = table_columns(con, "jobs", file=path)
    except sqlite3.Error:
        return False
    return cols is not None and all(c in cols for c in REQUIRED_COLUMNS)


def read_jobs(path: Path) -> list[Job]:
    """Every job, oldest first, read under the bounds of :mod:`cmax.reading.sqlitefile`; a table
    over
    :data:`~cmax.reading.limits.MAX_HISTORY_JOBS` rows is refused (rows are read whole)."""
    import sqlite3

    try:
        with open_sqlite(path, what=WHAT) as con:
            if table_columns(con, "jobs", file=path) is None:
                raise sqlite3.OperationalError("no such table: jobs")
            cursor = con.execute("SELECT rowid AS _rowid, * FROM jobs LIMIT ?",
                                 (MAX_HISTORY_JOBS + 1,))
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, r, strict=True)) for r in read_rows(cursor, file=path)]
    except sqlite3.Error as exc:
        raise EvidenceError(f"cannot read the llmb-run jobs table: {exc}", file=path,
                            expected="an llmb-run job-history database") from None
    if len(rows) > MAX_HISTORY_JOBS:
        raise limit_error(f"a jobs table of more than {MAX_HISTORY_JOBS:,} rows",
                          f"{MAX_HISTORY_JOBS:,} rows", file=path)
    jobs = [Job(row=r, order=i) for i, r in enumerate(rows)]
    return sorted(jobs, key=_age)


def _age(job: Job) -> tuple[int, int]:
    for key in _JOB_ID_COLUMNS:
        value = job.row.get(key)
        if value is not None:
            try:
                return int(str(value).split("_")[0]), job.order
            except ValueError:
                break
    return int(job.row.get("_rowid") or 0), job.order


def _alnum(text: object) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text or "").lower())


def select_job(jobs: list[Job], *, workload: str, precision: str, num_gpus: int,
               selector: str | None, file: Path, field: str) -> tuple[Job, list[str]]:
    """The job a manifest run means, and notes on what was passed over."""
    notes: list[str] = []
    pool = [j for j in jobs
            if _alnum(j.row.get("dtype", precision)) == _alnum(precision)
            and str(j.row.get("scale", num_gpus)).strip() == str(num_gpus)]
    if selector:
        pool = [j for j in pool if selector in j.label]
    else:
        wanted = _alnum(workload)
        named = [j for j in pool
                 if wanted and wanted in _alnum(f"{j.row.get('workload_key', '')}"
                                                f"{j.row.get('model_size', '')}")]
        pool = named or pool
    if not pool:
        raise EvidenceError(
            f"no job for {workload} {precision} at {num_gpus} GPUs in the jobs table",
            file=file, field=field,
            expected="a job with matching dtype and scale: "
            + ", ".join(j.label for j in jobs[:8]))
    keys = {(_alnum(j.row.get("workload_key")), _alnum(j.row.get("model_size"))) for j in pool}
    if len(keys) > 1:
        raise EvidenceError(
            f"{len(pool)} different workloads match; cannot tell which one this run is",
            file=file, field=field,
            fix="add `experiment = \"<workload key>\"` to the run: "
            + ", ".join(j.label for j in pool[:8]))
    chosen = pool[-1]
    refuse_not_for_rating(chosen, file=file, field=field)
    if len(pool) > 1:
        notes.append(f"{len(pool) - 1} earlier job(s) of the same configuration superseded by "
                     f"the latest, {chosen.label}")
    return chosen, notes


def refuse_not_for_rating(job: Job, *, file: Path, field: str) -> None:
    """A proxy, profiled or overridden job, or one whose node list cannot hold its scale, is
    one error naming the flag (:mod:`cmax.submission.intake.flags`), never a rated run."""
    from cmax.submission.intake.flags import FIX, blockers

    row = job.row
    node_list = row.get("node_list")
    hosts = expand_hostlist(str(node_list)) if node_list else None
    found = blockers(proxy=row.get("proxy"), profile_enabled=row.get("profile_enabled"),
                     env_overrides=row.get("env_overrides_json"),
                     model_overrides=row.get("model_overrides_json"),
                     hosts=len(hosts) if hosts else None, scale=row.get("scale"))
    if found:
        raise EvidenceError(f"llmb-run job {job.label} is not for rating: " + "; ".join(found),
                            file=file, field=field, fix=FIX)


def summary(jobs: list[Job]) -> dict[str, object]:
    return {
        "format": "llmb-sqlite",
        "jobs": [
            {"job": j.label, "status": j.status,
             "train_step_time_seconds": j.row.get("train_step_time_seconds"),
             "tflops_per_gpu": j.row.get("tflops_per_gpu")}
            for j in jobs
        ],
    }


# jobs-table column -> fact kind (research dgxc.md §3.3: workload_key, model_size, dtype, scale,
# node_list)
_FACT_COLUMNS = (("workload_key", "model"), ("model_size", "model"), ("dtype", "precision"),
                 ("scale", "gpu_count"))
MAX_HOSTS = 65536  # a hostlist that expands past this is recorded as no host facts
_HOSTLIST_PART = re.compile(r"([^,\[\]]*(?:\[[^\]]*\][^,\[\]]*)*)(?:,|$)")
_RANGE = re.compile(r"^(\d{1,18})(?:-(\d{1,18}))?$")  # a node number, never 5,000 digits


def expand_hostlist(expression: str, limit: int = MAX_HOSTS) -> list[str] | None:
    """Slurm's compressed host list (``node[001-003,007],login1``) as host names.

    Zero padding follows the range's first bound, as Slurm prints it. None for an expression
    this does not understand or that names more than ``limit`` hosts.
    """
    hosts: list[str] = []
    for match in _HOSTLIST_PART.finditer(expression.strip()):
        part = match.group(1)
        if not part:
            continue
        names = [""]
        for piece in re.split(r"(\[[^\]]*\])", part):
            if not piece.startswith("["):
                names = [n + piece for n in names]
                continue
            options: list[str] = []
            for item in piece[1:-1].split(","):
                bounds = _RANGE.match(item.strip())
                if bounds is None:
                    return None
                low, high = bounds.group(1), bounds.group(2) or bounds.group(1)
                if int(high) < int(low) or int(high) - int(low) >= limit:
                    return None
                options += [str(i).zfill(len(low)) for i in range(int(low), int(high) + 1)]
            if len(names) * len(options) > limit:
                return None
            names = [n + o for n in names for o in options]
        hosts += names
        if len(hosts) > limit:
            return None
    return hosts


def job_facts(jobs: list[Job]) -> tuple[Fact, ...]:
    """What each job row states about its run: name, model, precision, GPU count, hosts.

    SQLite has no lines: ``where`` names the job (``jobs row <rowid>``) instead.
    """
    facts: list[Fact] = []
    for job in jobs:
        where = f"jobs row {job.row.get('_rowid', job.order + 1)}"
        facts.append(Fact("experiment", job.label, None, where))
        for column, kind in _FACT_COLUMNS:
            value = job.row.get(column)
            if value is not None and str(value).strip():
                facts.append(Fact(kind, str(value).strip(), None, f"{where}: {column}"))
        node_list = job.row.get("node_list")
        hosts = expand_hostlist(str(node_list)) if node_list else None
        facts += [Fact("host", h, None, f"{where}: node_list") for h in dict.fromkeys(hosts or ())]
    return tuple(facts)


def job_id_of(job: Job) -> str | None:
    value = next((job.row[k] for k in _JOB_ID_COLUMNS if job.row.get(k) is not None), None)
    return str(value).strip() if value is not None and str(value).strip() else None


def jobs_frame(jobs: list[Job], source_file: str) -> pl.DataFrame:
    """Each job's clock as llmb-run recorded it from ``sacct -X -P --format=JobIDRaw,State,
    Elapsed,Submit,NodeList,ExitCode`` (NVIDIA/exemplar-performance cli/llmb-run/src/llmb_run/
    slurm_utils.py ``get_slurm_job_statuses`` @ e249aa3): rows of the ``jobs`` table."""
    rows = []
    for job in jobs:
        job_id = job_id_of(job)
        if job_id is None:
            continue
        nodes = job.row.get("node_list")
        hosts = expand_hostlist(str(nodes)) if nodes else None
        rows.append({"job_id": job_id, "name": job.label, "cluster": None,
                     "state": job.row.get("slurm_state"),
                     "submit_s": stamp(str(job.row.get("submit_time") or "")),
                     "elapsed_s": elapsed_seconds(str(job.row.get("elapsed") or "")),
                     "nodes": ",".join(hosts) if hosts else None,
                     "source_file": source_file})
    return conform(pl.DataFrame(rows, schema_overrides=JOBS_SCHEMA, strict=False) if rows
                   else pl.DataFrame(schema=JOBS_SCHEMA), JOBS_SCHEMA)


class LlmbSqlite(RunFormat[list[Job]]):
    id = "llmb-sqlite"
    title = "llmb-run job history (SQLite)"
    tool = "llmb-run (DGXC Benchmarking v26.05+), its `jobs` table"
    sample = "(built by tests/ingest/test_ingest_formats.py: make_llmb_db)"

    def sniff(self, probe: Probe) -> bool:
        if not probe.is_sqlite:
            return False
        if has_jobs_table(probe.path):
            return True
        probe.why.append("an SQLite database without an llmb-run `jobs` table")
        return False

    def parse(self, probe: Probe) -> list[Job]:
        return read_jobs(probe.path)

    def summarise(self, parsed: list[Job], probe: Probe) -> dict[str, Any]:
        return summary(parsed)

    def facts(self, parsed: list[Job]) -> tuple[Fact, ...]:
        return job_facts(parsed)

    def read_run(self, parsed: list[Job], request: RunRequest) -> RunPart:
        spec = request.spec
        job, notes = select_job(
            parsed, workload=spec.workload, precision=spec.precision, num_gpus=spec.num_gpus,
            selector=spec.experiment, file=request.path, field=request.key)
        row: dict[str, Any] = dict(status=job.status, job_id=job_id_of(job),
                   reported_step_time_s=as_float(job.row.get("train_step_time_seconds")),
                   reported_tflops_per_gpu=as_float(job.row.get("tflops_per_gpu")))
        return RunPart(row=row, notes=[f"llmb-run job {job.label}; no per-step data", *notes])


register(LlmbSqlite())
