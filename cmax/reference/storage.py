"""Storage references (``reference/storage.toml``): MLPerf Storage medians, checkpoint sizes
and the rules that decide whether a storage result is comparable with them.

Three tables and one rules section, every row with its source:

* ``[[training]]``: the closed division's median MiB/s per round, workload and emulated
  accelerator (a result is compared only with the median of its own round: the tool's version
  moves results, mlcommons/storage#682);
* ``[[checkpoint]]``: the full-run median save GiB/s per round and model at the closed process
  count, hence per GPU;
* ``[[size]]``: a model's checkpoint (weights + optimizer state) in GiB, with the model names
  cmax's runs use as aliases;
* ``[rules]``: the accelerator-utilisation bar per workload and the dataset-to-memory ratio.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError
from cmax.reference._files import read_reference_toml


@dataclass(frozen=True)
class TrainingMedian:
    round: str
    workload: str
    accelerator: str
    mib_per_s: float
    results: int
    submitters: int
    source: str


@dataclass(frozen=True)
class CheckpointMedian:
    round: str
    model: str
    save_gib_per_s: float
    gpus: int
    source: str

    @property
    def per_gpu(self) -> float:
        """Save GiB/s per GPU (per emulated accelerator) of the median run."""
        return self.save_gib_per_s / self.gpus


@dataclass(frozen=True)
class CheckpointSize:
    model: str
    aliases: tuple[str, ...]
    gib: float
    source: str


@dataclass(frozen=True)
class StorageReference:
    training: tuple[TrainingMedian, ...]
    checkpoint: tuple[CheckpointMedian, ...]
    sizes: tuple[CheckpointSize, ...]
    au_threshold_pct: dict[str, float]
    au_source: str
    dataset_to_memory: float
    dataset_source: str
    subset_source: str

    def training_median(self, round_: str | None, workload: str | None,
                        accelerator: str | None) -> TrainingMedian | None:
        return next((t for t in self.training if t.round == round_
                     and t.workload == workload and t.accelerator == accelerator), None)

    def training_rounds(self, workload: str | None) -> list[str]:
        """The rounds with a median for ``workload`` (what a result of another round lacks)."""
        return sorted({t.round for t in self.training if t.workload == workload})

    def checkpoint_median(self, model: str | None,
                          round_: str | None = None) -> CheckpointMedian | None:
        canonical = self.canonical_model(model)
        return next((c for c in self.checkpoint if c.model == canonical
                     and (round_ is None or c.round == round_)), None)

    def size(self, model: str | None) -> CheckpointSize | None:
        canonical = self.canonical_model(model)
        return next((s for s in self.sizes if s.model == canonical), None)

    def canonical_model(self, model: str | None) -> str | None:
        """The reference's model id for ``model`` (its own id or an alias), else ``model``."""
        if model is None:
            return None
        name = model.strip().lower()
        for s in self.sizes:
            if name == s.model or name in s.aliases:
                return s.model
        return name


def _entries(data: dict[str, Any], table: str, fields: dict[str, type],
             path: Path) -> list[dict[str, Any]]:
    rows = data.get(table, [])
    if not isinstance(rows, list):
        raise ReferenceDataError(f"[[{table}]] must be an array of tables", file=path)
    out = []
    for i, row in enumerate(rows):
        for name, kind in fields.items():
            value = row.get(name) if isinstance(row, dict) else None
            ok = (isinstance(value, int | float) and not isinstance(value, bool) and value > 0
                  if kind is float else isinstance(value, kind) and bool(value))
            if not ok:
                want = "positive number" if kind is float else kind.__name__
                raise ReferenceDataError(f"[[{table}]] #{i + 1}: {name} is {value!r}",
                                         file=path, field=f"{table}[{i}].{name}",
                                         expected=f"a {want}")
        out.append(row)
    return out


def load_storage(path: Path) -> StorageReference | None:
    """The storage references, checked; None for a release that has no storage.toml."""
    if not path.is_file():
        return None
    data = read_reference_toml(path, what="storage references")
    rules = data.get("rules")
    if not isinstance(rules, dict):
        raise ReferenceDataError("no [rules] section", file=path)
    training = tuple(TrainingMedian(
        r["round"], r["workload"], r["accelerator"], float(r["mib_per_s"]), int(r["results"]),
        int(r["submitters"]), r["source"]) for r in _entries(data, "training", {
            "round": str, "workload": str, "accelerator": str, "mib_per_s": float,
            "results": int, "submitters": int, "source": str}, path))
    checkpoint = tuple(CheckpointMedian(
        r["round"], r["model"], float(r["save_gib_per_s"]), int(r["gpus"]), r["source"])
        for r in _entries(data, "checkpoint", {"round": str, "model": str,
                                               "save_gib_per_s": float, "gpus": int,
                                               "source": str}, path))
    sizes = tuple(CheckpointSize(r["model"], tuple(r.get("aliases", ())), float(r["gib"]),
                                 r["source"])
                  for r in _entries(data, "size", {"model": str, "gib": float, "source": str},
                                    path))
    thresholds = rules.get("au_threshold_pct")
    ratio = rules.get("dataset_to_memory")
    if not isinstance(thresholds, dict) or not all(
            isinstance(v, int | float) and 0 < v <= 100 for v in thresholds.values()):
        raise ReferenceDataError("[rules] au_threshold_pct must map workloads to 0-100",
                                 file=path, field="rules.au_threshold_pct")
    if not isinstance(ratio, int | float) or ratio <= 0:
        raise ReferenceDataError("[rules] dataset_to_memory must be positive", file=path,
                                 field="rules.dataset_to_memory")
    return StorageReference(training, checkpoint, sizes,
                            {str(k): float(v) for k, v in thresholds.items()},
                            str(rules.get("au_source", "")), float(ratio),
                            str(rules.get("dataset_source", "")),
                            str(rules.get("subset_source", "")))


def checkpoint_share(save_s: float, interval_min: float) -> float:
    """The share of wall time spent in blocking saves: one save of ``save_s`` after every
    ``interval_min`` of training, ``save_s ÷ (interval + save_s)``."""
    return save_s / (interval_min * 60.0 + save_s)


_BANDWIDTH = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(GiB|GB|TiB|TB|MiB|MB)/s\s*$", re.I)
_BYTES = {"mib": 2**20, "mb": 1e6, "gib": 2**30, "gb": 1e9, "tib": 2**40, "tb": 1e12}


def parse_bandwidth(text: str) -> float:
    """A bandwidth with its unit (``40GB/s``, ``156 GiB/s``) in GiB/s. The unit is required:
    GB/s and GiB/s differ by 7%, the size of the effect being priced."""
    match = _BANDWIDTH.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a bandwidth with a unit")
    return float(match.group(1)) * _BYTES[match.group(2).lower()] / 2**30


def checkpoint_what_if(ref: StorageReference, model: str | None, interval_min: float, *,
                       bandwidth_gib_s: float | None = None,
                       size_gib: float | None = None) -> dict[str, Any]:
    """Checkpoint time as a share of wall time: the model's checkpoint (or ``size_gib``) saved
    at ``bandwidth_gib_s`` (default: the reference's full-run median for the model) once per
    ``interval_min`` of training."""
    size_source = "given"
    if size_gib is None:
        known = ref.size(model)
        if known is None:
            raise ValueError(f"no checkpoint size for {model!r} in reference/storage.toml")
        size_gib, size_source = known.gib, f"{known.model} ({known.source})"
    bandwidth_source = "given"
    if bandwidth_gib_s is None:
        median = ref.checkpoint_median(model)
        if median is None:
            raise ValueError(f"no reference save bandwidth for {model!r}")
        bandwidth_gib_s = median.save_gib_per_s
        bandwidth_source = (f"MLPerf Storage {median.round} full-run median, {median.model} at "
                            f"{median.gpus} processes ({median.source})")
    save_s = size_gib / bandwidth_gib_s
    return {"size_gib": size_gib, "size_source": size_source,
            "bandwidth_gib_s": bandwidth_gib_s, "bandwidth_source": bandwidth_source,
            "save_s": save_s, "interval_min": interval_min,
            "share": checkpoint_share(save_s, interval_min)}
