"""Slurm accounting: ``sacct --json`` and ``sacct -P`` / ``-p`` output, a clock the training log
does not write.

The scheduler's database records when each job started and ended, where it ran and on which
cluster; the provider's log cannot move those. ``[[accounting]] path`` names the file; its
rows fill the ``jobs`` table (:data:`cmax.ingest.evidence.JOBS_SCHEMA`), which the cross-file clock
rules compare with each run's printed steps (:mod:`cmax.validate.clocks`).

``sacct --json`` (SchedMD/slurm ``src/plugins/data_parser/v0.0.44/parsers.c`` @
284c3b95f08a2dc2478499837b03355e1b9c5c75, ``PARSER_ARRAY(JOB)``; the reply
``OPENAPI_SLURMDBD_JOBS_RESP`` holds ``"jobs"``): per job ``job_id``, ``name``, ``cluster``,
``nodes`` (a host list such as ``node[001-004]``), ``state.current`` (a list of flags) and
``time.{submission,start,end,elapsed}``; the stamps are UNIX seconds (``DUMP_FUNC(TIMESTAMP)``
dumps a plain integer), 0 for a time not reached.

``sacct -P`` (``--parsable2``) prints a header of the field names and ``|``-separated rows;
``-p`` ends every field with ``|`` (``src/common/print_fields.c``). Field names as
``src/sacct/sacct.c`` ``fields[]`` spells them: ``JobID`` / ``JobIDRaw``, ``JobName``,
``Cluster``, ``NodeList``, ``State``, ``Submit``, ``Start``, ``End``, ``Elapsed`` /
``ElapsedRaw``. Dates are ``%FT%T`` in the host's local zone (``parse_time.c``
``_make_time_str_internal``; ``Unknown`` for none), read here as UTC, as cmax reads log
stamps; ``Elapsed`` is ``[D-]HH:MM:SS`` (``secs2time_str``). Step rows (``123.batch``,
``123.0``) are left out: the clock is the job's allocation. A file of neither shape, or a job
row without an id, is one error naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.evidence import JOBS_SCHEMA, conform
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import AccountingFormat, Probe, register
from cmax.ingest.formats._slurm import elapsed_seconds, stamp
from cmax.ingest.formats.llmb_sqlite import expand_hostlist
from cmax.reading.limits import read_bounded_lines

_JOB_ID = re.compile(r"^(\d+)(?:_(\d+|\[[^\]]*\]))?(?:\+(\d+))?$")  # 123, 123_4 (array), 123+0
_ID_FIELDS = ("JobIDRaw", "JobID")


@dataclass
class Accounting:
    """The jobs one accounting file records, in file order."""

    jobs: list[dict[str, Any]] = field(default_factory=list)
    line_count: int | None = None


def _job(job_id: str, *, name: Any, cluster: Any, nodes: Any, state: Any, submit: float | None,
         start: float | None, end: float | None, elapsed: float | None,
         line: int | None) -> dict[str, Any]:
    hosts = expand_hostlist(str(nodes)) if nodes and str(nodes) not in ("None assigned",) \
        else None
    if elapsed is None and start is not None and end is not None and end >= start:
        elapsed = end - start
    return {"job_id": job_id, "name": str(name) if name else None,
            "cluster": str(cluster) if cluster else None, "state": str(state) if state else None,
            "submit_s": submit, "start_s": start, "end_s": end, "elapsed_s": elapsed,
            "nodes": ",".join(hosts) if hosts else (str(nodes) if nodes else None),
            "line": line}


# ---------------------------------------------------------------------------------------------
# sacct --json


def _is_sacct_json(data: Any) -> bool:
    jobs = data.get("jobs") if isinstance(data, dict) else None
    return (isinstance(jobs, list) and bool(jobs) and all(
        isinstance(j, dict) and "job_id" in j and isinstance(j.get("time"), dict)
        for j in jobs))


def _epoch(value: Any) -> float | None:
    """A data_parser TIMESTAMP (an integer; older plugins: {"set", "number"}); 0 is none."""
    if isinstance(value, dict):
        value = value.get("number") if value.get("set", True) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return float(value)


def parse_json(probe: Probe) -> Accounting:
    out = Accounting()
    for i, job in enumerate(probe.json["jobs"]):
        times = job["time"]
        state = job.get("state")
        current = state.get("current") if isinstance(state, dict) else state
        if isinstance(current, list):
            current = ",".join(str(c) for c in current)
        job_id = job.get("job_id")
        if isinstance(job_id, bool) or not isinstance(job_id, int) or job_id <= 0:
            raise EvidenceError(f"jobs[{i}]: job_id {job_id!r} is not a Slurm job id",
                                file=probe.path, expected="a positive integer job_id",
                                fix="export the unmodified `sacct --json` output")
        elapsed = times.get("elapsed")
        out.jobs.append(_job(
            str(job_id), name=job.get("name"), cluster=job.get("cluster"),
            nodes=job.get("nodes"), state=current, submit=_epoch(times.get("submission")),
            start=_epoch(times.get("start")), end=_epoch(times.get("end")),
            elapsed=float(elapsed) if isinstance(elapsed, int) and not isinstance(
                elapsed, bool) and elapsed > 0 else None, line=None))
    return out


class SacctJson(AccountingFormat[Accounting]):
    id = "sacct-json"
    title = "Slurm accounting (sacct --json)"
    tool = ("sacct --json (SchedMD/slurm src/plugins/data_parser/v0.0.44/parsers.c "
            "PARSER_ARRAY(JOB) @ 284c3b95)")
    sample = "ingest/slurm/sacct.json"
    json_shape = staticmethod(_is_sacct_json)

    def parse(self, probe: Probe) -> Accounting:
        return parse_json(probe)

    def summarise(self, parsed: Accounting, probe: Probe) -> dict[str, Any]:
        return summary(self.id, parsed)

    def facts(self, parsed: Accounting) -> tuple[Fact, ...]:
        return job_facts(parsed)

    def frame(self, parsed: Accounting, *, source_file: str) -> pl.DataFrame:
        return jobs_frame(parsed, source_file)


# ---------------------------------------------------------------------------------------------
# sacct -P / -p


def _header(text: str) -> list[str] | None:
    cells = text.rstrip("|").split("|")
    names = [c.strip() for c in cells]
    if any(n in names for n in _ID_FIELDS) and ("Start" in names or "Elapsed" in names
                                                 or "ElapsedRaw" in names):
        return names
    return None


def parse_parsable(probe: Probe) -> Accounting:
    out = Accounting()
    names: list[str] | None = None
    count = 0
    for count, raw in enumerate(read_bounded_lines(probe.path), start=1):
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not text.strip():
            continue
        if names is None:
            names = _header(text.lstrip("\ufeff"))
            if names is None:
                raise EvidenceError("no sacct header naming JobID and Start or Elapsed",
                                    file=probe.path, line=count,
                                    expected="sacct -P --format=JobID,JobName,Cluster,NodeList,"
                                    "State,Submit,Start,End,Elapsed output, its header first",
                                    fix="run sacct without --noheader")
            continue
        cells = text.split("|")
        if cells and cells[-1] == "" and len(cells) == len(names) + 1:
            cells = cells[:-1]  # -p ends every field with the delimiter
        if len(cells) != len(names):
            raise EvidenceError(f"a sacct row with {len(cells)} fields under a header of "
                                f"{len(names)}", file=probe.path, line=count,
                                expected="one value per header field, separated by |",
                                fix="use the unmodified sacct -P output (a | inside a job name "
                                "needs --delimiter)")
        row = dict(zip(names, (c.strip() for c in cells), strict=True))
        raw_id = next((row[k] for k in _ID_FIELDS if row.get(k)), "")
        if "." in raw_id:
            continue  # a job step (123.batch, 123.0): the job's own row is the clock
        match = _JOB_ID.match(raw_id)
        if not match:
            raise EvidenceError(f"job id {raw_id!r} is not a Slurm job id", file=probe.path,
                                line=count, expected="JobID such as 4242, 4242_7 or 4242+0",
                                fix="use the unmodified sacct -P output")
        raw_elapsed = row.get("ElapsedRaw")
        elapsed = (float(raw_elapsed) if raw_elapsed and raw_elapsed.isdigit()
                   else elapsed_seconds(row.get("Elapsed", "")))
        out.jobs.append(_job(
            match.group(1) if match.group(2) is None and match.group(3) is None else raw_id,
            name=row.get("JobName"), cluster=row.get("Cluster"), nodes=row.get("NodeList"),
            state=row.get("State"), submit=stamp(row.get("Submit", "")),
            start=stamp(row.get("Start", "")), end=stamp(row.get("End", "")),
            elapsed=elapsed, line=count))
    out.line_count = count
    return out


class SacctParsable(AccountingFormat[Accounting]):
    id = "sacct-parsable"
    title = "Slurm accounting (sacct -P / -p)"
    tool = ("sacct -P or -p --format=JobID,JobName,Cluster,NodeList,State,Submit,Start,End,"
            "Elapsed (SchedMD/slurm src/sacct/sacct.c fields[], src/common/print_fields.c "
            "@ 284c3b95)")
    sample = "ingest/slurm/sacct_parsable.txt"

    def sniff(self, probe: Probe) -> bool:
        return "|" in probe.first_line and _header(probe.first_line.lstrip("\ufeff")) is not None

    def parse(self, probe: Probe) -> Accounting:
        return parse_parsable(probe)

    def summarise(self, parsed: Accounting, probe: Probe) -> dict[str, Any]:
        return summary(self.id, parsed)

    def facts(self, parsed: Accounting) -> tuple[Fact, ...]:
        return job_facts(parsed)

    def frame(self, parsed: Accounting, *, source_file: str) -> pl.DataFrame:
        return jobs_frame(parsed, source_file)


# ---------------------------------------------------------------------------------------------


def job_facts(parsed: Accounting) -> tuple[Fact, ...]:
    """The hosts the jobs ran on (each a witness of the cluster: cmax.resolve.hosts)."""
    facts: list[Fact] = []
    seen: set[str] = set()
    for job in parsed.jobs:
        for host in str(job.get("nodes") or "").split(","):
            if host and host not in seen and "[" not in host:
                seen.add(host)
                facts.append(Fact("host", host, job["line"], f"job {job['job_id']}: nodes"))
    return tuple(facts)


def jobs_frame(parsed: Accounting, source_file: str) -> pl.DataFrame:
    rows = [{**job, "source_file": source_file} for job in parsed.jobs]
    return conform(pl.DataFrame(rows, schema_overrides=JOBS_SCHEMA, strict=False) if rows
                   else pl.DataFrame(schema=JOBS_SCHEMA), JOBS_SCHEMA)


def summary(fmt: str, parsed: Accounting) -> dict[str, Any]:
    spans = [j["elapsed_s"] for j in parsed.jobs if j["elapsed_s"] is not None]
    return {"format": fmt, "jobs": len(parsed.jobs),
            "clusters": sorted({str(j["cluster"]) for j in parsed.jobs if j["cluster"]}),
            "longest_job_s": max(spans) if spans else None}


register(SacctJson())
register(SacctParsable())
