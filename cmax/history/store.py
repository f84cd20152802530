"""The audit history: one Delta Lake table, partitioned by cluster, that only ever grows.

Where: ``<runs root>/.cmax-history`` by default, or any URI ``--history`` names, e.g.
``s3://bucket/cmax-history`` (credentials, region and endpoint from the standard AWS
environment and configuration, as every AWS tool reads them). The table is readable by any
Delta reader (Spark, DuckDB, Polars ``read_delta``, delta-rs) with ``cluster`` as the
partition column.

Rows (``ROW_SCHEMA``): every scored run contributes

* one ``row_kind = "run"`` row: tier, score, Exemplar verdict, the audit's FAIL and WARNING
  check ids, the SLA result (assessed per node and month: node-months below the contracted
  uptime, the worst one, the credit) and the reliability period with its incident series;
* one ``"workload"`` row per (workload, precision, num_gpus) as declared, and per identity
  the run's log states instead (``log_states``): ratio with its 95% CI, tokens/s/GPU, MFU,
  the baseline it was compared with, the verdict the scorecard gives the run (its
  judgement's ``withheld``, else the run's own verdict) and whether its ratio counts
  (``counted``: the price's rule, :func:`cmax.score.verdicts.rated`) with the validation
  errors on its evidence (``validation_errors``, the why of a run that does not count); of
  repeated runs, the worst of those whose ratio counts, else the worst of the rest;
* one ``"network"`` row per nccl-tests result: bus bandwidth and ratio to the fabric baseline.

All rows of a run share ``run_key`` = sha256(cluster, run folder, bundle digest): a run is
identified by its cluster, its timestamp folder and the bytes of its bundle.

Why it cannot lose or duplicate a row, on a local disk, NFS or object storage alike:

* Every append is one Delta commit (a new ``_delta_log/<version>.json`` that either appears
  whole or not at all; on S3 through a conditional put), so a run's rows are all there or
  none are, and a writer killed mid-way leaves at most data files no commit names, which no
  reader sees. Files no commit names, such as a stray copy of a data file, are never read.
* Appends are a MERGE that inserts only rows whose (cluster, run_key) is not in the table. Two
  writers that commit at once conflict (Delta's optimistic concurrency: "a concurrent
  transaction added new data"); the loser re-reads the table and retries, and then finds its
  runs already there. Re-running writes nothing, and so changes no byte.
* Every version stays readable: ``read(version=N)`` / ``read(as_of=...)`` return the table
  as it was, so a report can show what the record said on the day a contract was signed.

The hand-written Parquet store of cmax 0.1 (``cluster=<name>/part-*.parquet`` + ``.lock``)
is migrated once, on first use (:meth:`HistoryStore.migrate_parquet_v1`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import CmaxError, HistoryError
from cmax.history.discover import RunRef
from cmax.render.formatting import log_states_text
from cmax.score.verdicts import rated
from cmax.scorecard import Scorecard, WorkloadResult
from cmax.states import AT_THE_BAR

HISTORY_DIRNAME = ".cmax-history"
TABLE_DESCRIPTION = "cmax audit history (format 2: Delta Lake, one row per run/workload/network)"
PARTITION = "cluster"
COMMIT_RETRIES = 30

# cmax 0.1's Parquet store, kept only to migrate it
V1_VERSION_KEY = "cmax_history_version"
V1_PART = re.compile(r"part-[0-9a-f]{20}\.parquet")
V1_MOVED = "_parquet-v1-migrated"

ROW_KINDS = ("run", "workload", "network")

ROW_SCHEMA: dict[str, pl.DataType] = {
    # identity, on every row
    "run_key": pl.String(),
    "run_dir": pl.String(),
    "run_ts": pl.Datetime("us", "UTC"),
    "bundle_digest": pl.String(),
    "row_kind": pl.String(),
    # run rows
    "provider": pl.String(),
    "manifest_cluster": pl.String(),
    "gpu": pl.String(),
    "benchmark_date": pl.Date(),
    "cmax_version": pl.String(),
    "reference_release": pl.String(),
    "rubric": pl.String(),
    "tier": pl.String(),
    "score": pl.Float64(),
    "exemplar_pass": pl.Boolean(),
    "exemplar_bar": pl.Float64(),
    "finding_errors": pl.Int64(),
    "audit_fail": pl.List(pl.String()),
    "audit_warning": pl.List(pl.String()),
    "period_start": pl.Date(),
    "period_end": pl.Date(),
    "unexpected_interruptions": pl.Int64(),
    "per_1000_gpu_days": pl.Float64(),
    "goodput_ratio": pl.Float64(),
    "incident_dates": pl.List(pl.Date()),
    "incident_counts": pl.List(pl.Int64()),
    "sla_contracted_pct": pl.Float64(),
    "sla_measured_pct": pl.Float64(),
    "sla_met": pl.Boolean(),
    "sla_credit_pct": pl.Float64(),
    "sla_node_months": pl.Int64(),
    "sla_node_months_below": pl.Int64(),
    "sla_worst_pct": pl.Float64(),
    # workload and network rows
    "workload": pl.String(),
    "precision": pl.String(),
    "num_gpus": pl.Int64(),
    "verdict": pl.String(),
    "ratio": pl.Float64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "tokens_per_s_per_gpu": pl.Float64(),
    "mfu_pct": pl.Float64(),
    "baseline_id": pl.String(),
    "baseline_tokens_per_s_per_gpu": pl.Float64(),
    "busbw_gbps": pl.Float64(),
}

ADDED_COLUMNS: dict[str, pl.DataType] = {
    # run rows: what the SLA rests on (cmax/resolve/monitoring.py), so an audit over months
    # records which periods the buyer's monitoring witnessed
    "sla_witness": pl.String(),
    "sla_downtime_monitoring_h": pl.Float64(),
    "sla_unlogged_outages": pl.Int64(),
    "sla_nodes_in_breach": pl.List(pl.String()),
    # workload rows: what the run's judgement lets its ratio stand for, so the trend, drift and
    # expiry read it instead of deciding it again from a verdict
    "counted": pl.Boolean(),
    "log_states": pl.String(),
    # workload rows: the validation errors on the run's evidence, so drift can say why a run
    # whose ratio does not count was not compared
    "validation_errors": pl.List(pl.String()),
}
"""Columns added after the table format was first written: a history without them reads them
as null, and gains them with its next append (a Delta schema merge). A workload row recorded
before ``counted`` was (its ``verdict`` then the run's own, blind to the errors that withhold
a pass) is read as counted when that verdict is at the bar (:func:`with_legacy_counted`):
all such a row can say."""

ROW_SCHEMA.update(ADDED_COLUMNS)

DATASET_SCHEMA: dict[str, pl.DataType] = {"cluster": pl.String(), **ROW_SCHEMA}

_SORT = ["run_ts", "run_dir", "row_kind", "workload", "precision", "num_gpus"]


def network_label(collective: str, nodes: int) -> str:
    """How a nccl-tests result is named where a workload would be: ``nccl all_reduce 16n``."""
    return f"nccl {collective.removesuffix('_perf')} {nodes}n"


def rows_for_run(run: RunRef, card: Scorecard) -> list[dict[str, Any]]:
    """The history rows of one scored run (see the module docstring)."""
    ident = {"run_key": run.run_key, "run_dir": run.run_dir, "run_ts": run.timestamp,
             "bundle_digest": run.digest}
    audit_fail = audit_warning = None
    if card.audit is not None:
        audit_fail = sorted({c.check_id for c in card.audit.checks if c.status == "FAIL"})
        audit_warning = sorted({c.check_id for c in card.audit.checks if c.status == "WARNING"})
    rel, sla = card.reliability, card.sla
    run_row: dict[str, Any] = {
        **ident, "row_kind": "run",
        "provider": card.provider, "manifest_cluster": card.cluster, "gpu": card.gpu,
        "benchmark_date": card.benchmark_date, "cmax_version": card.cmax_version,
        "reference_release": card.reference_release, "rubric": card.rubric,
        "tier": card.tier, "score": card.score, "exemplar_pass": card.exemplar_pass,
        "exemplar_bar": card.exemplar_bar,
        "finding_errors": card.finding_counts.get("error", 0),
        "audit_fail": audit_fail, "audit_warning": audit_warning,
    }
    if rel is not None:
        series = sorted(rel.incident_series)
        run_row.update({
            "period_start": rel.period_start, "period_end": rel.period_end,
            "unexpected_interruptions": rel.unexpected_interruptions,
            "per_1000_gpu_days": rel.per_1000_gpu_days, "goodput_ratio": rel.goodput_ratio,
            "incident_dates": [d for d, _ in series], "incident_counts": [n for _, n in series],
        })
    if sla is not None:
        run_row.update({
            "sla_contracted_pct": sla.contracted_uptime_pct,
            "sla_measured_pct": sla.measured_uptime_pct,
            "sla_met": sla.met, "sla_credit_pct": sla.credit_pct,
            "sla_node_months": sla.node_months or None,
            "sla_node_months_below": sla.node_months_below if sla.node_months else None,
            "sla_worst_pct": sla.worst_uptime_pct,
            "sla_witness": sla.witness,
            "sla_downtime_monitoring_h": sla.downtime_node_hours_monitoring,
            "sla_unlogged_outages": sla.unlogged_outages,
            "sla_nodes_in_breach": sla.nodes_in_breach,
        })
    rows = [run_row]
    for w in kept_runs(card.workloads):
        judged = card.judgement("training_run", w.run_id or "")
        rows.append({
            **ident, "row_kind": "workload", "workload": w.workload, "precision": w.precision,
            "num_gpus": w.num_gpus,
            "verdict": "withheld" if judged is not None and judged.verdict == "withheld"
            else w.verdict,
            "counted": rated(w), "log_states": log_states_text(w),
            "validation_errors": sorted(w.validation_errors),
            "ratio": w.ratio,
            "ci_low": w.ci_low, "ci_high": w.ci_high,
            "tokens_per_s_per_gpu": w.tokens_per_s_per_gpu, "mfu_pct": w.mfu_pct,
            "baseline_id": w.baseline.baseline_id if w.baseline else None,
            "baseline_tokens_per_s_per_gpu":
                w.baseline.tokens_per_s_per_gpu if w.baseline else None,
        })
    seen: set[tuple[str, int]] = set()
    for n in card.network:
        label = network_label(n.collective, n.nodes)
        net_key = (label, n.ranks)
        if net_key in seen:
            continue
        seen.add(net_key)
        rows.append({
            **ident, "row_kind": "network", "workload": label, "precision": None,
            "num_gpus": n.ranks, "verdict": n.verdict, "ratio": n.ratio,
            "busbw_gbps": n.busbw_gbps,
        })
    return rows


def kept_runs(runs: Sequence[WorkloadResult]) -> list[WorkloadResult]:
    """The run the history keeps of each workload, in first-seen order: one per (workload,
    precision, num_gpus) as declared and identity its log states instead, so a log that
    states fp8 never shares a row with the bf16 runs it was declared beside. Of repeats
    (Exemplar v26.02 ran each 3x), the worst of those whose ratio counts (the one an
    Exemplar verdict hinges on); where none counts, the worst of the rest, recorded as not
    counting: a withheld run never displaces a counted one, nor stands in for it."""
    kept: dict[tuple[str, str, int, str], WorkloadResult] = {}
    for w in runs:
        key = (w.workload, w.precision, w.num_gpus, log_states_text(w))
        held = kept.get(key)
        if held is None or _worse(w, held):
            kept[key] = w
    return list(kept.values())


def _worse(w: WorkloadResult, than: WorkloadResult) -> bool:
    counts, other = rated(w), rated(than)
    if counts != other:
        return counts
    return w.ratio is not None and (than.ratio is None or w.ratio < than.ratio)


def frame_from_rows(rows: Sequence[dict[str, Any]], cluster: str | None = None) -> pl.DataFrame:
    """Rows -> a frame with exactly ``ROW_SCHEMA`` (plus ``cluster`` when given)."""
    frame = pl.DataFrame(
        [{name: row.get(name) for name in ROW_SCHEMA} for row in rows],
        schema=ROW_SCHEMA, orient="row",
    )
    if cluster is not None:
        frame = frame.with_columns(pl.lit(cluster, pl.String()).alias("cluster")).select(
            list(DATASET_SCHEMA))
    return frame


def with_added_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """A frame written before :data:`ADDED_COLUMNS` with them, null."""
    missing = [pl.lit(None, dtype).alias(name) for name, dtype in ADDED_COLUMNS.items()
               if name not in frame.columns]
    return frame.with_columns(missing) if missing else frame


def with_legacy_counted(frame: pl.DataFrame) -> pl.DataFrame:
    """Workload rows recorded before ``counted`` was, read as counted when their verdict is
    at the bar with a ratio (the run's own verdict: the errors that withheld a pass were not
    recorded; ``unverified`` never counted); rows that carry it keep what the judgement
    said."""
    legacy = (pl.col("verdict").is_in(list(AT_THE_BAR)) & pl.col("ratio").is_not_null())
    return frame.with_columns(
        pl.when((pl.col("row_kind") == "workload") & pl.col("counted").is_null())
        .then(legacy).otherwise(pl.col("counted")).alias("counted"))


def is_remote(location: str) -> bool:
    """An object-store URI (``s3://``, ``gs://``, ``az://``, ...) rather than a local folder."""
    scheme = urllib.parse.urlsplit(location).scheme
    return len(scheme) > 1 and scheme != "file"


def _refuse_credentials(uri: str) -> None:
    """A ``scheme://user:secret@bucket/...`` URI is refused, its secret never shown: the
    object store reads credentials only from the standard configuration, so these were
    silently ignored, and the URI was echoed into the JSON ``history`` field."""
    parts = urllib.parse.urlsplit(uri)
    if parts.username is None and parts.password is None:
        return
    shown = urllib.parse.urlunsplit(parts._replace(netloc=parts.hostname or ""))
    raise HistoryError("the history URI holds credentials (user:secret@), which are not used",
                       file=shown, field="--history",
                       fix="remove them from the URI and give them the standard way: "
                       "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE or "
                       "~/.aws/credentials, or an instance role (see `cmax docs fleet`)")


@contextlib.contextmanager
def _native_stderr_held() -> Iterator[None]:
    """Hold what native code writes to file descriptor 2 while the block runs: the Delta
    writer's Rust panics print a dozen lines there before the exception that
    :class:`HistoryStore` turns into one line. Replayed if the block succeeds, dropped if it
    fails (the one-line error says what happened)."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as held:
        try:
            sys.stderr.flush()
            os.dup2(held.fileno(), 2)
            yield
        except BaseException:
            os.dup2(saved, 2)
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        held.seek(0)
        if data := held.read():
            os.write(2, data)


@contextlib.contextmanager
def _creation_lock(folder: Path) -> Iterator[None]:
    """One creator at a time for a local history: the second of two first-time writers waits,
    then finds the table (without it, it would make a commit of its own; see
    :meth:`HistoryStore._create` for what keeps that commit from being a second table)."""
    import fcntl

    with (folder / ".cmax-create.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Recorded:
    """What the history already holds for one (cluster, run folder)."""

    digest: str
    run_key: str


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class HistoryStore:
    """The history table at one location (default ``<runs root>/.cmax-history``)."""

    def __init__(self, location: str | Path) -> None:
        text = str(location)
        self.remote = is_remote(text)
        if self.remote:
            _refuse_credentials(text)
        self.location = text if self.remote else str(Path(text).absolute())
        self.notes: list[str] = []  # one-off messages for the user (the migration)

    @property
    def local_path(self) -> Path | None:
        return None if self.remote else Path(self.location)

    def _fail(self, what: str, exc: Exception, fix: str) -> CmaxError:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return HistoryError(f"{what}: {detail[:300]}", file=self.location, fix=fix)

    # -- reading ---------------------------------------------------------------------------

    def _check_location(self) -> None:
        path = self.local_path
        if path is not None and path.exists() and not path.is_dir():
            raise HistoryError("history is a file, not a folder", file=path,
                            fix="pass --history a folder or a URI (it is created if missing)")

    def exists(self) -> bool:
        """Whether a Delta table is at the location."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        self._check_location()
        if self.local_path is not None and not (self.local_path / "_delta_log").is_dir():
            return False
        try:  # (DeltaTable.is_deltatable lists with another client that some S3 servers stall)
            DeltaTable(self.location)
            return True
        except TableNotFoundError:
            return False
        except Exception as exc:  # object-store errors come as several types
            raise self._fail("cannot reach the history", exc,
                             "check the URI and the AWS credentials, region and endpoint "
                             "in the environment") from None

    def version(self) -> int | None:
        """The newest version of the table, or None when there is none yet."""
        if not self.exists():
            return None
        from deltalake import DeltaTable

        return int(DeltaTable(self.location).version())

    def resolve_as_of(self, when: dt.datetime) -> int:
        """The version the table had at ``when`` (the newest commit at or before it)."""
        from deltalake import DeltaTable

        if not self.exists():
            raise HistoryError("no history to travel back in", file=self.location,
                            fix="run cmax audit once to create it")
        stamp_ms = when.timestamp() * 1000.0
        commits = sorted((int(h["version"]), int(h["timestamp"]))
                         for h in DeltaTable(self.location).history())
        before = [v for v, ts in commits if ts <= stamp_ms]
        if not before:
            first = dt.datetime.fromtimestamp(commits[0][1] / 1000.0, dt.UTC)
            raise HistoryError(f"the history did not exist yet at {when.isoformat()}",
                            file=self.location,
                            expected=f"a time from {first.isoformat(timespec='seconds')} on")
        return max(before)

    def read(self, version: int | None = None) -> pl.DataFrame:
        """The whole history (at ``version`` when given), with ``cluster``, in a stable order."""
        if not self.exists():
            if version is not None:
                raise HistoryError("no history to travel back in", file=self.location,
                                fix="run cmax audit once to create it")
            return pl.DataFrame(schema=DATASET_SCHEMA)
        if version is not None:
            newest = self.version()
            if newest is not None and not 0 <= version <= newest:
                raise HistoryError(f"the history has no version {version}", file=self.location,
                                expected=f"a version from 0 to {newest}")
        self._check_files(version)
        try:
            frame = pl.read_delta(self.location, version=version)
        except (Exception, pl.exceptions.PanicException) as exc:
            raise self._fail("unreadable history table", exc,
                             "restore the table's files (Delta keeps every version: "
                             "`cmax audit --history-version N` reads an older one)") from None
        frame = with_added_columns(frame).select(
            [c for c in DATASET_SCHEMA if c in frame.columns or c in ADDED_COLUMNS]
            + [c for c in frame.columns if c not in DATASET_SCHEMA])
        if dict(frame.schema) != DATASET_SCHEMA:
            raise HistoryError("history table has unexpected columns", file=self.location,
                            expected="the columns of cmax.history.store.DATASET_SCHEMA",
                            fix="use the cmax version that wrote this history, or start a "
                            "new --history")
        return with_legacy_counted(frame).sort([PARTITION, *_SORT], nulls_last=False,
                                               maintain_order=True)

    def _check_files(self, version: int | None) -> None:
        """On a local disk, every data file the log names is there with the logged size.

        A truncated or missing file would otherwise reach the Parquet reader, which can
        abort with a panic instead of an error; naming the file tells the user what to
        restore. (On object storage objects are written whole, so this is skipped.)
        """
        path = self.local_path
        if path is None:
            return
        from deltalake import DeltaTable

        actions = pl.DataFrame(DeltaTable(self.location, version=version)
                               .get_add_actions(flatten=True)).select("path", "size_bytes")
        for rel, size in actions.iter_rows():
            file = path / urllib.parse.unquote(rel)
            actual = file.stat().st_size if file.is_file() else None
            if actual != size:
                found = "missing" if actual is None else f"{actual} bytes, the log says {size}"
                raise HistoryError(f"history data file damaged ({found})", file=file,
                                fix="restore it from a backup, or read an older version with "
                                "`cmax audit --history-version N`")

    def recorded(self, frame: pl.DataFrame | None = None) -> dict[tuple[str, str], Recorded]:
        """(cluster, run folder) -> digest and key of every run in the history."""
        runs = (self.read() if frame is None else frame).filter(pl.col("row_kind") == "run")
        return {
            (c, d): Recorded(digest=g, run_key=k)
            for c, d, g, k in runs.select("cluster", "run_dir", "bundle_digest", "run_key")
            .iter_rows()
        }

    # -- writing ---------------------------------------------------------------------------

    def _create(self) -> None:
        """An empty table with the history's schema; a concurrent creator may win: fine.

        Two first-time writers that both find no table both commit version 0, and delta-rs
        retries the loser's as version 1 with a metadata action of its own: a history with
        two table ids (3 of 6 races on an S3 store). The creation commit is therefore never
        retried: the loser gets CommitFailedError and uses the winner's table. A local
        history also takes a file lock, so its second writer does not commit at all.
        """
        from deltalake import CommitProperties, write_deltalake
        from deltalake.exceptions import CommitFailedError

        lock: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
        if self.local_path is not None:
            self.local_path.mkdir(parents=True, exist_ok=True)
            lock = _creation_lock(self.local_path)
        with lock, contextlib.suppress(CommitFailedError):  # another writer created it first
            if self.local_path is not None and self.exists():
                return  # created while this writer waited for the lock
            write_deltalake(self.location, pl.DataFrame(schema=DATASET_SCHEMA),
                            partition_by=[PARTITION], mode="append",
                            name="cmax-history", description=TABLE_DESCRIPTION,
                            commit_properties=CommitProperties(max_commit_retries=0))

    def append(self, runs: Sequence[tuple[RunRef, list[dict[str, Any]]]]) -> list[RunRef]:
        """Add the runs not yet recorded (one commit); returns the ones this call wrote."""
        if not runs:
            return []
        self.migrate_parquet_v1()
        return self._merge(runs)

    def _merge(self, runs: Sequence[tuple[RunRef, list[dict[str, Any]]]]) -> list[RunRef]:
        from deltalake.exceptions import CommitFailedError

        last: Exception | None = None
        for attempt in range(COMMIT_RETRIES):
            try:
                with _native_stderr_held():
                    return self._merge_once(runs)
            except CommitFailedError as exc:  # a concurrent writer committed first: re-read
                last = exc
                time.sleep(min(0.05 * (attempt + 1), 0.5))
            except CmaxError:
                raise
            except Exception as exc:
                raise self._fail("cannot write the history", exc, self._write_fix()) from None
        raise self._fail(f"cannot write the history after {COMMIT_RETRIES} attempts "
                         "(other writers kept committing first)", last or RuntimeError(),
                         "run cmax audit again; nothing it recorded is lost") from None

    def _write_fix(self) -> str:
        """What to do about a failed write; for a local folder, the cause when it is plain
        (the Delta writer reports a read-only or full disk as 'Failed to parse parquet')."""
        fix = "the history is unchanged by this batch"
        path = self.local_path
        if path is not None:
            while not path.is_dir() and path.parent != path:  # the folder it would go in
                path = path.parent
            try:
                fs = os.statvfs(path)
            except OSError:
                return "check free space and permissions; " + fix
            if fs.f_flag & os.ST_RDONLY or not os.access(path, os.W_OK):
                return "the history folder is read-only: pass --history a writable folder; " + fix
            if fs.f_bavail * fs.f_frsize < (16 << 20):
                return "the disk holding the history is full: free space and retry; " + fix
            return "check free space and permissions; " + fix
        return "check credentials, permissions and the bucket; " + fix

    def _merge_once(self, runs: Sequence[tuple[RunRef, list[dict[str, Any]]]]) -> list[RunRef]:
        """One attempt: create the table if missing, insert the runs it lacks."""
        from deltalake import DeltaTable, WriterProperties

        if not self.exists():
            self._create()
        table = DeltaTable(self.location)
        have = set(pl.read_delta(table, columns=["run_key"])["run_key"].to_list())
        new = [(run, rows) for run, rows in runs if run.run_key not in have]
        if not new:
            return []
        source = pl.concat([frame_from_rows(rows, run.cluster) for run, rows in new])
        clusters = ", ".join(_sql_str(c) for c in sorted({r.cluster for r, _ in new}))
        (table.merge(source, source_alias="s", target_alias="t", merge_schema=True,
                     predicate=f"t.cluster IN ({clusters}) AND t.cluster = s.cluster "
                               "AND t.run_key = s.run_key",
                     writer_properties=WriterProperties(compression="ZSTD"))
         .when_not_matched_insert_all().execute())
        return [run for run, _ in new]

    # -- cmax 0.1's Parquet history --------------------------------------------------------

    def _v1_parts(self) -> list[tuple[str, Path]]:
        path = self.local_path
        if path is None or not path.is_dir():
            return []
        return sorted(
            (urllib.parse.unquote(folder.name.removeprefix("cluster=")), part)
            for folder in path.iterdir()
            if folder.is_dir() and folder.name.startswith("cluster=")
            for part in folder.iterdir() if V1_PART.fullmatch(part.name)
        )

    @staticmethod
    def _read_v1_part(path: Path) -> pl.DataFrame:
        try:
            meta = pl.read_parquet_metadata(path)
            frame = pl.read_parquet(path)
        except Exception as exc:  # polars raises several types for a damaged file
            raise HistoryError(f"unreadable file of the old Parquet history "
                            f"({type(exc).__name__})", file=path,
                            fix="move it out of the history folder and run cmax audit again: "
                            "the runs it held are re-scored from their bundles") from None
        frame = with_added_columns(frame)
        if meta.get(V1_VERSION_KEY) != "1" or dict(frame.schema) != ROW_SCHEMA:
            raise HistoryError("not a file of cmax's Parquet history", file=path,
                            expected=f"{V1_VERSION_KEY} = '1' and the columns of ROW_SCHEMA",
                            fix="move it out of the history folder")
        return frame

    def migrate_parquet_v1(self) -> int:
        """Move a cmax 0.1 Parquet history into the Delta table, once; returns runs moved.

        Safe to interrupt: the rows go in through the same idempotent append, and the old
        files are moved aside (into ``_parquet-v1-migrated/``, which Delta readers skip)
        only after that commit, so a second attempt finishes the job without duplicates.
        """
        parts = self._v1_parts()
        if not parts:
            return 0
        path = self.local_path
        assert path is not None
        frames = [self._read_v1_part(part).with_columns(pl.lit(cluster).alias("cluster"))
                  .select(list(DATASET_SCHEMA)) for cluster, part in parts]
        old = pl.concat(frames)
        entries: list[tuple[RunRef, list[dict[str, Any]]]] = []
        for (cluster, key), rows in old.group_by(["cluster", "run_key"], maintain_order=True):
            head = next(r for r in rows.iter_rows(named=True) if r["row_kind"] == "run")
            # same formula, same key: RunRef.run_key is what 0.1 recorded
            ref = RunRef(cluster=str(cluster), run_dir=head["run_dir"],
                         timestamp=head["run_ts"], path=path, digest=head["bundle_digest"])
            if ref.run_key != key:
                raise HistoryError(f"old history run {head['run_dir']} has a run_key that does "
                                "not match its cluster, folder and digest", file=path,
                                fix="move the old history aside and re-score the runs")
            entries.append((ref, list(rows.iter_rows(named=True))))
        self._merge(entries)
        moved = path / V1_MOVED
        for _, part in parts:
            target = moved / part.parent.name / part.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(part, target)
        (path / ".lock").unlink(missing_ok=True)
        self.notes.append(
            f"migrated {len(entries)} runs from the Parquet history of cmax 0.1 into a Delta "
            f"Lake table at {self.location}; the old files are kept in {moved} (delete them "
            "once you no longer need them)")
        return len(entries)
