"""The audit history: a Parquet dataset, partitioned by cluster, that only ever grows.

Layout (hive style, readable by Polars, DuckDB, Spark or pyarrow as one dataset)::

    <history>/
      .lock                              flock target; serialises writers
      cluster=<name>/part-<hash>.parquet one file per `cmax audit` invocation and cluster

Cluster names are percent-encoded in the folder name (anything outside ``[A-Za-z0-9._-]``),
and the ``cluster`` column is not stored inside the files: the folder is the partition value.
Every file carries ``cmax_history_version`` in its key-value metadata.

Rows (``ROW_SCHEMA``): every scored run contributes

* one ``row_kind = "run"`` row: tier, score, Exemplar verdict, the audit's FAIL and WARNING
  check ids, the SLA result (assessed per node and month: node-months below the contracted
  uptime, the worst one, the credit) and the reliability period with its incident series;
* one ``"workload"`` row per (workload, precision, num_gpus): ratio with its 95% CI,
  tokens/s/GPU, MFU and the baseline it was compared with (of repeated runs, the worst);
* one ``"network"`` row per nccl-tests result: bus bandwidth and ratio to the fabric baseline.

All rows of a run share ``run_key`` = sha256(cluster, run folder, bundle digest).

Why it cannot lose or duplicate a row:

* Writers hold an exclusive ``fcntl.flock`` on ``.lock`` for the whole read-check-write, and
  re-read the recorded runs under the lock, so two concurrent ``cmax audit`` processes that
  scored the same runs write them once.
* A part file is written to a temp name in the same folder, fsynced and ``os.replace``-d into
  place, so a crash leaves either the old dataset or the new one, never a torn file. Readers
  ignore temp files; the next writer (holding the lock) removes them.
* A run already in the history is never written again; re-running changes no byte.
* A run's rows go to a single file, so a run is either wholly present or wholly absent.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import CmaxError
from cmax.history.discover import RunRef
from cmax.scorecard import Scorecard, WorkloadResult

STORE_VERSION = "1"
VERSION_KEY = "cmax_history_version"
HISTORY_DIRNAME = ".cmax-history"
LOCK_NAME = ".lock"
PART_PREFIX = "part-"
PART_SUFFIX = ".parquet"
TMP_MARK = ".tmp-"

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
        })
    rows = [run_row]
    # repeats of one workload (Exemplar v26.02 ran each 3x): the history keeps the worst,
    # the one an Exemplar verdict hinges on
    worst: dict[tuple[str, str, int], WorkloadResult] = {}
    for w in card.workloads:
        key = (w.workload, w.precision, w.num_gpus)
        kept = worst.get(key)
        if kept is None or (w.ratio is not None and (kept.ratio is None or w.ratio < kept.ratio)):
            worst[key] = w
    for w in worst.values():
        rows.append({
            **ident, "row_kind": "workload", "workload": w.workload, "precision": w.precision,
            "num_gpus": w.num_gpus, "verdict": w.verdict, "ratio": w.ratio,
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


def encode_cluster(cluster: str) -> str:
    return "cluster=" + urllib.parse.quote(cluster, safe="._-")


def _decode_cluster(folder: str) -> str:
    return urllib.parse.unquote(folder.removeprefix("cluster="))


@dataclass(frozen=True)
class Recorded:
    """What the history already holds for one (cluster, run folder)."""

    digest: str
    run_key: str


class HistoryStore:
    """The history dataset under one folder (default ``<runs root>/.cmax-history``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- reading ---------------------------------------------------------------------------

    def _partitions(self) -> list[tuple[str, Path]]:
        if not self.path.exists():
            return []
        if not self.path.is_dir():
            raise CmaxError("history is not a folder", file=self.path,
                            fix="pass --history a folder (it is created if missing)")
        return sorted(
            (_decode_cluster(p.name), p)
            for p in self.path.iterdir()
            if p.is_dir() and p.name.startswith("cluster=")
        )

    @staticmethod
    def _part_files(partition: Path) -> list[Path]:
        return sorted(
            p for p in partition.iterdir()
            if p.name.startswith(PART_PREFIX) and p.name.endswith(PART_SUFFIX)
            and TMP_MARK not in p.name
        )

    @staticmethod
    def _read_part(path: Path) -> pl.DataFrame:
        fix = ("move this file out of the history folder and run `cmax audit` again: "
               "the runs it held are re-scored from their bundles")
        try:
            meta = pl.read_parquet_metadata(path)
            frame = pl.read_parquet(path)
        except Exception as exc:  # polars raises several types for a damaged file
            raise CmaxError(f"unreadable history file ({type(exc).__name__})", file=path,
                            fix=fix) from None
        version = meta.get(VERSION_KEY)
        if version != STORE_VERSION:
            raise CmaxError(
                f"history file has format version {version!r}", file=path,
                expected=f"version {STORE_VERSION!r} (written by this cmax)",
                fix="use the cmax version that wrote this history, or start a new --history",
            )
        if dict(frame.schema) != ROW_SCHEMA:
            raise CmaxError("history file has unexpected columns", file=path,
                            expected="the columns of cmax.history.store.ROW_SCHEMA", fix=fix)
        return frame

    def read(self) -> pl.DataFrame:
        """The whole history, one frame with a ``cluster`` column, in a stable order."""
        frames = []
        for cluster, partition in self._partitions():
            for part in self._part_files(partition):
                frames.append(self._read_part(part).with_columns(
                    pl.lit(cluster, pl.String()).alias("cluster")))
        if not frames:
            return pl.DataFrame(schema=DATASET_SCHEMA)
        frame = pl.concat(frames, how="vertical").select(list(DATASET_SCHEMA))
        return frame.sort(["cluster", *_SORT], nulls_last=False, maintain_order=True)

    def recorded(self) -> dict[tuple[str, str], Recorded]:
        """(cluster, run folder) -> digest and key of every run in the history."""
        runs = self.read().filter(pl.col("row_kind") == "run")
        return {
            (c, d): Recorded(digest=g, run_key=k)
            for c, d, g, k in runs.select("cluster", "run_dir", "bundle_digest", "run_key")
            .iter_rows()
        }

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive writer lock (blocks until any other `cmax audit` is done writing)."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise CmaxError(f"cannot open the history: {exc.strerror}", file=self.path,
                            fix="pass --history a writable folder") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _remove_leftovers(self) -> None:
        """Temp files of writers that crashed; only called while holding the lock."""
        for _, partition in self._partitions():
            for p in partition.iterdir():
                if TMP_MARK in p.name:
                    p.unlink(missing_ok=True)

    def append(self, runs: Sequence[tuple[RunRef, list[dict[str, Any]]]]) -> list[RunRef]:
        """Add the runs not yet recorded; returns the ones this call actually wrote."""
        if not runs:
            return []
        with self.lock():
            self._remove_leftovers()
            recorded = self.recorded()
            by_cluster: dict[str, list[tuple[RunRef, list[dict[str, Any]]]]] = {}
            for run, rows in runs:
                if (run.cluster, run.run_dir) in recorded:
                    continue
                recorded[(run.cluster, run.run_dir)] = Recorded(run.digest, run.run_key)
                by_cluster.setdefault(run.cluster, []).append((run, rows))
            written: list[RunRef] = []
            for cluster in sorted(by_cluster):
                batch = sorted(by_cluster[cluster], key=lambda item: item[0].run_key)
                frame = frame_from_rows([row for _, rows in batch for row in rows])
                frame = frame.sort(_SORT, nulls_last=False, maintain_order=True)
                name = hashlib.sha256(
                    "\n".join(r.run_key for r, _ in batch).encode()).hexdigest()[:20]
                self._write_part(self.path / encode_cluster(cluster),
                                 f"{PART_PREFIX}{name}{PART_SUFFIX}", frame)
                written.extend(run for run, _ in batch)
            return written

    @staticmethod
    def _write_part(partition: Path, name: str, frame: pl.DataFrame) -> None:
        target = partition / name
        tmp = partition / f".{name}{TMP_MARK}{os.getpid()}"
        try:
            partition.mkdir(parents=True, exist_ok=True)
            frame.write_parquet(tmp, compression="zstd", statistics=True,
                                metadata={VERSION_KEY: STORE_VERSION})
            with tmp.open("rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, target)
            dir_fd = os.open(partition, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise CmaxError(f"cannot write the history: {exc.strerror or exc}", file=target,
                            fix="check free space and permissions; the history is unchanged "
                            "for this cluster") from None
        finally:
            tmp.unlink(missing_ok=True)
