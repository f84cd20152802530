"""MLPerf Storage results as submitted: the DLIO ``summary.json`` of one benchmark run.

``mlpstorage`` (mlcommons/storage) runs DLIO, which writes one ``summary.json`` per run: the
run's start and end, ``num_accelerators`` (emulated accelerators: MPI processes), ``num_hosts``,
per-host arrays (``host_cpu_count``, ``host_memory_GB``, ``potential_caching``), one host's
``/proc/meminfo`` (``host_meminfo``), ``data_size_per_host_GB`` and ``metric``. A training run's
metric holds the per-epoch accelerator utilisation (``train_au_percentage``), its mean, DLIO's
own verdict against the workload's bar (``train_au_meet_expectation``), samples/s and
``train_io_mean_MB_per_second``; a checkpointing run's holds ``save_`` and
``load_checkpoint_io_mean_GB_per_second``, their mean durations and ``checkpoint_size_GB``.
(Published v1.0 results: mlcommons/storage_results_v1.0 @ 64c2ce4; v3.0:
mlcommons/storage_results_v3.0 @ 068d91f.)

The format's traps, each handled here once:

- units: ``*_MB_per_second`` is MiB/s and ``*_GB*`` is GiB (DLIO divides by 1024² and
  1024³); ``host_meminfo`` values are ``kB`` as the kernel prints them, i.e. KiB;
- ``host_memory_GB`` is filled per MPI rank, not per host: with several processes on a client
  the first entries hold sums and the rest zeros (DDN's 16-client v1.0 cosmoflow run: four
  entries of 370 GiB and twelve of 0 on hosts of 92.6 GiB). A host's memory is read from its
  ``MemTotal`` instead;
- the summary names neither the workload nor the emulated accelerator: v1.0 states them in
  the command-line overrides (``configs/overrides.yaml``, ``workload=resnet50_h100``), v3.0
  in the run's ``*_metadata.json`` (``model``, ``accelerator``) and in the result layout
  ``training/<model>/run/<time>/``, ``checkpointing/<model>/<time>/``; both are read beside
  the summary;
- the round (tool version) is not in the file: a ``v<round>`` folder in the path
  (``storage_results_v1.0``) states it, else it is null here and the ``[[storage]]`` entry's
  ``round`` is a declaration of the claims ledger (:mod:`cmax.resolve.entry_claims`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, StorageFormat, register
from cmax.reading.limits import load_json, read_bounded_text

KIB_PER_GIB = 1024**2
_ROUND_IN_PATH = re.compile(r"(?:^|_)v(\d+\.\d+)$")
_OVERRIDE_WORKLOAD = re.compile(r"^\s*-\s*workload=([a-z0-9]+)_([a-z0-9]+)\s*$", re.MULTILINE)
_LAYOUT = ("training", "checkpointing")
_TRAINING_KEYS = ("train_au_mean_percentage", "train_io_mean_MB_per_second")
_CHECKPOINT_KEYS = ("save_checkpoint_io_mean_GB_per_second", "checkpoint_size_GB")


def _looks_like(data: Any) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("metric"), dict):
        return False
    metric = data["metric"]
    return ("num_accelerators" in data and "host_meminfo" in data
            and (all(k in metric for k in _TRAINING_KEYS)
                 or all(k in metric for k in _CHECKPOINT_KEYS)))


@dataclass
class Summary:
    """One MLPerf Storage run as its summary and the files beside it state it."""

    benchmark: str  # training | checkpointing
    workload: str | None
    accelerator: str | None
    accelerator_from: str | None  # the file that named the accelerator
    round: str | None
    data: dict[str, Any]
    facts: list[Fact] = field(default_factory=list)

    @property
    def metric(self) -> dict[str, Any]:
        return dict(self.data["metric"])


def _number(value: Any, where: str, path: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            -(2**53) < value < 2**53):  # NaN, infinity and 1e308 fail this too
        raise EvidenceError(f"{where}: not a number ({str(value)[:40]!r})", file=path,
                            expected="the unmodified DLIO summary.json")
    return float(value)


def _mem_total_gib(data: dict[str, Any], path: Path) -> float:
    raw = data.get("host_meminfo", {}).get("MemTotal") if isinstance(
        data.get("host_meminfo"), dict) else None
    match = re.fullmatch(r"\s*(\d+)\s*kB\s*", str(raw or ""))
    if match is None:
        raise EvidenceError(f"host_meminfo.MemTotal is {raw!r}", file=path,
                            expected='"<KiB> kB" as /proc/meminfo prints it',
                            fix="submit the unmodified summary.json DLIO wrote")
    return int(match.group(1)) / KIB_PER_GIB


def _beside(path: Path) -> tuple[str | None, str | None, str | None]:
    """Workload, accelerator and the file naming them, from the run's folder (v3.0 metadata,
    v1.0 overrides) or the mlpstorage result layout."""
    folder = path.parent
    for meta in sorted(folder.glob("*_metadata.json")):
        try:
            data = load_json(read_bounded_text(meta), file=meta)
        except (EvidenceError, ValueError, UnicodeDecodeError):
            continue
        if isinstance(data, dict):
            args: dict[str, Any] = data["args"] if isinstance(data.get("args"), dict) else {}
            accel = data.get("accelerator") or args.get("accelerator_type")
            model = data.get("model") or args.get("model")
            return (str(model).lower() if model else None,
                    str(accel).lower() if accel else None, meta.name)
    overrides = folder / "configs" / "overrides.yaml"
    if overrides.is_file():
        match = _OVERRIDE_WORKLOAD.search(read_bounded_text(overrides))
        if match:
            return match.group(1), match.group(2), "configs/overrides.yaml"
    parts = folder.parts
    for i, part in enumerate(parts[:-1]):
        if part in _LAYOUT:
            return parts[i + 1].lower(), None, None
    return None, None, None


def detect_round(path: Path) -> str | None:
    """The MLPerf Storage round a ``v<round>`` folder of the path names (nearest first)."""
    for part in reversed(path.resolve().parent.parts):
        match = _ROUND_IN_PATH.search(part)
        if match:
            return f"v{match.group(1)}"
    return None


def read_summary(probe: Probe) -> Summary:
    data = probe.require_json("an MLPerf Storage (DLIO) summary.json")
    path = probe.path
    metric = data["metric"]
    benchmark = ("training" if all(k in metric for k in _TRAINING_KEYS) else "checkpointing")
    workload, accelerator, named_by = _beside(path)
    summary = Summary(benchmark, workload, accelerator, named_by, detect_round(path), data)
    # the emulated accelerator is a workload parameter, not the cluster's GPU: no gpu fact
    host = data.get("hostname")
    if isinstance(host, str) and host:
        summary.facts.append(Fact("host", host, None, where="hostname"))
    return summary


def _list(value: Any) -> list[Any]:
    """A JSON array of the summary, or none when the file has anything else there."""
    return value if isinstance(value, list) else []


def frame(summary: Summary, *, run_id: str, source_file: str, path: Path) -> pl.DataFrame:
    """The summary's rows: a training run's read, a checkpointing run's save and load."""
    data, metric = summary.data, summary.metric
    hosts = int(_number(data.get("num_hosts"), "num_hosts", path))
    common: dict[str, Any] = {
        "run_id": run_id, "tool": "mlperf-storage", "tool_version": summary.round,
        "benchmark": summary.benchmark, "workload": summary.workload,
        "accelerator": summary.accelerator,
        "accelerators": int(_number(data.get("num_accelerators"), "num_accelerators", path)),
        "hosts": hosts, "host_mem_gib": _mem_total_gib(data, path),
        "source_file": source_file, "line": 1,
    }
    if summary.benchmark == "training":
        per_epoch = [_number(v, "metric.train_au_percentage", path)
                     for v in _list(metric.get("train_au_percentage"))]
        caching = _list(data.get("potential_caching"))
        verdict = metric.get("train_au_meet_expectation")
        row = {**common, "direction": "read",
               "samples_per_s": _number(metric.get("train_throughput_mean_samples_per_second"),
                                        "metric.train_throughput_mean_samples_per_second", path),
               "mib_per_s": _number(metric["train_io_mean_MB_per_second"],
                                    "metric.train_io_mean_MB_per_second", path),
               "au_pct": _number(metric["train_au_mean_percentage"],
                                 "metric.train_au_mean_percentage", path),
               "au_min_pct": min(per_epoch) if per_epoch else None,
               "au_pass": None if verdict is None else verdict == "success",
               "dataset_gib": _number(data.get("data_size_per_host_GB"),
                                      "data_size_per_host_GB", path) * hosts,
               "caching": any(bool(c) for c in caching)}
        return pl.DataFrame([row], infer_schema_length=None)
    size = _number(metric["checkpoint_size_GB"], "metric.checkpoint_size_GB", path)
    rows = []
    for direction, prefix in (("save", "save_checkpoint"), ("load", "load_checkpoint")):
        rate = metric.get(f"{prefix}_io_mean_GB_per_second")
        if rate is None:
            continue
        rows.append({**common, "direction": direction, "size_gib": size,
                     "gib_per_s": _number(rate, f"metric.{prefix}_io_mean_GB_per_second", path),
                     "duration_s": _number(metric.get(f"{prefix}_duration_mean_seconds"),
                                           f"metric.{prefix}_duration_mean_seconds", path)})
    return pl.DataFrame(rows, infer_schema_length=None)


class MlperfStorageSummary(StorageFormat[Summary]):
    id = "mlperf-storage"
    title = "MLPerf Storage result (DLIO summary.json: training or checkpointing)"
    tool = ("mlpstorage / DLIO (mlcommons/storage); published results "
            "mlcommons/storage_results_v1.0 @ 64c2ce4, storage_results_v3.0 @ 068d91f")
    sample = "storage/mlperf_storage_v1.0/HPE/summary.json"
    json_shape = staticmethod(_looks_like)

    def parse(self, probe: Probe) -> Summary:
        return read_summary(probe)

    def summarise(self, parsed: Summary, probe: Probe) -> dict[str, Any]:
        rows = frame(parsed, run_id="-", source_file=str(probe.path), path=probe.path)
        keep = ("direction", "mib_per_s", "gib_per_s", "au_pct", "au_pass", "duration_s",
                "size_gib", "host_mem_gib", "dataset_gib", "caching")
        return {"format": self.id, "benchmark": parsed.benchmark, "workload": parsed.workload,
                "accelerator": parsed.accelerator, "round": parsed.round,
                "rows": [{k: r[k] for k in keep if k in r and r[k] is not None}
                         for r in rows.to_dicts()]}

    def frame(self, parsed: Summary, *, run_id: str, source_file: str) -> pl.DataFrame:
        return frame(parsed, run_id=run_id, source_file=source_file,
                     path=Path(source_file))


register(MlperfStorageSummary())
