"""The one adapter between the reference data and the stages that read it.

Validation, scoring and pricing all ask the reference the same few questions (the matched
baseline, a GPU's peak, a model's FLOPs, the network / reliability / economics baselines).
:class:`ReferenceData` is the structural type of :class:`cmax.reference.Reference` those
stages are typed against (so tests can pass a small fake), and :class:`RefView` wraps it for
code that must report on *any* submission: a GPU, precision or model the reference does not
know becomes ``None`` (a finding, a dropped MFU), never a crash. Only the typed "not in the
catalogue" answer (:class:`cmax.errors.NotInCatalogue`) is absorbed; any other exception is a
bug and propagates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import polars as pl

from cmax.errors import NotInCatalogue
from cmax.reading.coerce import as_float
from cmax.reference.catalog import canonical_precision
from cmax.reference.inference import model_names
from cmax.reference.storage import StorageReference

if TYPE_CHECKING:
    from cmax.reference.known_logs import KnownEvidence
    from cmax.reference.mlperf import MlperfReference

T = TypeVar("T")



class ReferenceData(Protocol):
    """What the stages read from a reference release (``cmax.reference.Reference``)."""

    @property
    def release(self) -> str: ...

    @property
    def baselines(self) -> pl.DataFrame: ...

    @property
    def economics(self) -> Mapping[str, Any]: ...

    def gpu(self, gpu_id: str, /) -> Any: ...

    def peak_tflops(self, gpu: str, precision: str, /) -> float | None: ...

    def has_model(self, workload: str, /) -> bool: ...

    def model_flops_per_token(self, workload: str, seq_len: int, /) -> float: ...

    def model_flops_per_sample(self, workload: str, seq_len: int, /) -> float: ...

    def source_flops_per_token(self, workload: str, seq_len: int, convention: str, /
                               ) -> float: ...

    def select(self, *, workload: str | None = None, gpu: str | None = None,
               precision: str | None = None) -> pl.DataFrame: ...

    def match_baseline(
        self, workload: str, gpu: str, precision: str, num_gpus: int, /, *,
        gbs: int | None = None, seq_len: int | None = None,
    ) -> Mapping[str, Any] | None: ...

    def network_baseline(
        self, interconnect: str, collective: str, nodes: int, /, *, sizes: Collection[int] = (),
        nvlink_domain: bool = False, gpu: str | None = None,
    ) -> Mapping[str, Any] | None: ...

    def reliability_baseline(self) -> Mapping[str, Any]: ...

    def mlperf_reference(self) -> MlperfReference | None: ...

    def known_evidence(self) -> KnownEvidence: ...

    def match_inference(self, model: str, gpu: str, precision: str, input_len: int,
                        output_len: int, /) -> Mapping[str, Any] | None: ...


def optional_lookup(call: Callable[[], T]) -> T | None:
    """A reference look-up whose absence only drops a derived figure (MFU, J/token)."""
    try:
        return call()
    except NotInCatalogue:
        return None


def num(mapping: Mapping[str, Any] | None, key: str) -> float | None:
    """A numeric field of a reference row, None when absent, null or NaN."""
    value = as_float(mapping.get(key)) if mapping is not None else None
    return None if value is None or value != value else value


def text(mapping: Mapping[str, Any] | None, key: str) -> str | None:
    """A text field of a reference row, None when absent or null."""
    if mapping is None:
        return None
    value = mapping.get(key)
    return None if value is None else str(value)


def _positive(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


def market_price(reference: ReferenceData, gpu: str) -> tuple[float | None, str | None]:
    """The reference's market $/GPU-hour for a GPU and its source, when the release has one.

    Accepts ``economics["market_usd_per_gpu_hour"]`` as a number or a mapping by GPU id, or a
    per-GPU table ``economics["gpus"][gpu]["market_usd_per_gpu_hour"]``.
    """
    econ = reference.economics
    source = text(econ, "market_source") or text(econ, "source")
    value = econ.get("market_usd_per_gpu_hour")
    if isinstance(value, Mapping):
        per_gpu = value.get(gpu)
        if isinstance(per_gpu, Mapping):
            return num(per_gpu, "usd_per_gpu_hour"), text(per_gpu, "source") or source
        return num(value, gpu), source
    if value is not None:
        return num(econ, "market_usd_per_gpu_hour"), source
    gpus = econ.get("gpus")
    if isinstance(gpus, Mapping) and isinstance(gpus.get(gpu), Mapping):
        row = gpus[gpu]
        return num(row, "market_usd_per_gpu_hour"), text(row, "source") or source
    return None, None


def canonical_gpu(reference: ReferenceData, gpu: str | None) -> str | None:
    """The catalogue id of a GPU name or alias (``h100`` -> ``h100-sxm``), None if unknown.

    Every stage that compares a GPU with reference rows goes through this (the catalogue's
    one resolver, :func:`cmax.reference.catalog.resolve_gpu`, behind ``reference.gpu``): a
    stage comparing the raw manifest string left a documented alias unrated.
    """
    if not gpu:
        return None
    spec = optional_lookup(lambda: reference.gpu(gpu))
    return None if spec is None else str(getattr(spec, "id", gpu)).lower()


class RefView:
    """Null-returning, memoised look-ups over a :class:`ReferenceData`."""

    def __init__(self, reference: ReferenceData) -> None:
        self.reference = reference
        self.release = str(reference.release)
        self._peaks: dict[tuple[str, str], float | None] = {}
        self._flops: dict[tuple[str, int], float | None] = {}
        self._candidates: dict[tuple[str, int], dict[str, float]] = {}
        self._all: pl.DataFrame | None = None

    def peak_tflops(self, gpu: str | None, precision: str | None) -> float | None:
        """Dense peak TFLOP/s of ``gpu`` at ``precision``, or None if the catalogue lacks it."""
        if not gpu or not precision:
            return None
        key = (gpu, precision)
        if key not in self._peaks:
            found = optional_lookup(lambda: self.reference.peak_tflops(gpu, precision))
            self._peaks[key] = _positive(as_float(found))
        return self._peaks[key]

    def flops_per_sample(self, workload: str | None, seq_len: int | None) -> float | None:
        """Model FLOPs for one sequence (forward + backward), or None without a formula."""
        if not workload or not seq_len:
            return None
        key = (workload, seq_len)
        if key not in self._flops:
            value = None
            if optional_lookup(lambda: self.reference.has_model(workload)) is not False:
                found = optional_lookup(
                    lambda: self.reference.model_flops_per_sample(workload, seq_len))
                value = _positive(as_float(found))
            self._flops[key] = value
        return self._flops[key]

    def flops_per_token(self, workload: str | None, seq_len: int | None) -> float | None:
        """Model FLOPs per token under cmax's convention, or None without a formula."""
        per_sample = self.flops_per_sample(workload, seq_len)
        return per_sample / seq_len if per_sample is not None and seq_len else None

    def gpu_id(self, gpu: str | None) -> str | None:
        """Canonical catalogue id for a GPU name or alias, or None if unknown."""
        return canonical_gpu(self.reference, gpu)

    def flops_candidates(self, workload: str | None, seq_len: int | None) -> dict[str, float]:
        """Per-sample model FLOPs under every convention a publisher of this workload uses.

        cmax's architecture-true count, Megatron-Bridge's, and the conventions the workload's
        reference rows were computed with: a framework printing TFLOP/s uses one of these.
        Worked out once per workload and sequence length (each rule asks it per run).
        """
        if not workload or not seq_len:
            return {}
        key = (workload, seq_len)
        if key not in self._candidates:
            self._candidates[key] = self._flops_candidates(workload, seq_len)
        return dict(self._candidates[key])

    def _flops_candidates(self, workload: str, seq_len: int) -> dict[str, float]:
        out: dict[str, float] = {}
        base = self.flops_per_sample(workload, seq_len)
        if base is None:
            return out
        out["cmax"] = base
        conventions = {"megatron-bridge"}
        rows = self.baselines_for(workload)
        if "flops_convention" in rows.columns:
            conventions |= {str(c) for c in rows["flops_convention"].drop_nulls().to_list()}
        for name in sorted(conventions - {"cmax"}):
            found = self._source_flops(workload, seq_len, name)
            per_token = _positive(as_float(found))
            if per_token is not None:
                out[name] = per_token * seq_len
        return out

    def _source_flops(self, workload: str, seq_len: int, convention: str) -> float | None:
        return optional_lookup(
            lambda: self.reference.source_flops_per_token(workload, seq_len, convention))

    def match_baseline(
        self, workload: str, gpu: str, precision: str, num_gpus: int,
        gbs: int | None = None, seq_len: int | None = None,
    ) -> dict[str, Any] | None:
        """The reference's matched baseline row, or None (unknown ids included)."""
        found = optional_lookup(lambda: self.reference.match_baseline(
            workload, gpu, precision, num_gpus, gbs=gbs, seq_len=seq_len))
        return dict(found) if isinstance(found, Mapping) else None

    def match_inference(self, model: str, gpu: str, precision: str, input_len: int,
                        output_len: int) -> dict[str, Any] | None:
        """The serving reference row at exactly this setup, or None (unknown ids included)."""
        found = optional_lookup(lambda: self.reference.match_inference(
            model, gpu, precision, input_len, output_len))
        return dict(found) if isinstance(found, Mapping) else None

    def match_mlperf_inference(self, model: str, gpu: str,
                               scenario: str) -> dict[str, Any] | None:
        """The MLPerf Inference row of this model, GPU and scenario, or None."""
        find = getattr(self.reference, "match_mlperf_inference", None)
        found = optional_lookup(lambda: find(model, gpu, scenario)) if find else None
        return dict(found) if isinstance(found, Mapping) else None

    def storage(self) -> StorageReference | None:
        """The storage references (None when the release, or a test's fake, has none)."""
        found = getattr(self.reference, "storage", None)
        return found if isinstance(found, StorageReference) else None

    def reference_inference(self) -> list[dict[str, Any]]:
        """The serving reference rows (empty when the release has none)."""
        table = getattr(self.reference, "inference", None)
        return table.to_dicts() if isinstance(table, pl.DataFrame) else []

    def shape(self, workload: str | None) -> tuple[int, int] | None:
        """(layers, hidden size) of a workload's network, or None when the catalogue has no
        architecture for it."""
        find = getattr(self.reference, "architecture", None)
        if not workload or find is None:
            return None
        arch = optional_lookup(lambda: find(workload))
        layers, hidden = getattr(arch, "layers", 0), getattr(arch, "hidden", 0)
        return (int(layers), int(hidden)) if layers and hidden else None

    def shaped(self, hidden: int, layers: int | None = None) -> list[str]:
        """The catalogue's models of this hidden size (and layer count, when given)."""
        models = getattr(self.reference, "models", None)
        if not isinstance(models, Mapping):
            return []
        return sorted(str(k) for k, a in models.items()
                      if getattr(a, "hidden", None) == hidden
                      and layers in (None, getattr(a, "layers", None)))

    def training_rows(self, gbs: int, seq_len: int) -> pl.DataFrame:
        """Every measured (not proxy) baseline row at this GBS and sequence length: the
        configurations a training log with these numbers may be a run of."""
        if self._all is None:
            found = optional_lookup(lambda: self.reference.baselines)
            self._all = found if isinstance(found, pl.DataFrame) else pl.DataFrame()
        rows = self._all
        if not {"gbs", "seq_len", "workload", "num_gpus"} <= set(rows.columns):
            return rows.clear()
        keep = (pl.col("gbs") == gbs) & (pl.col("seq_len") == seq_len)
        if "proxy" in rows.columns:
            proxy = pl.col("proxy").cast(pl.String).str.to_lowercase().is_in(["true", "1"])
            keep &= ~proxy.fill_null(False)
        return rows.filter(keep)

    def inference_curve(self, model: str, gpu: str, precision: str, input_len: int,
                        output_len: int) -> list[dict[str, Any]]:
        """The reference's throughput-vs-interactivity points (rows stating
        ``interactivity_tok_s_user``) at this model (id or alias), GPU, precision and exact
        input/output length; empty when the release publishes no such curve."""
        prec = optional_lookup(lambda: canonical_precision(precision))
        wanted = model.strip().lower()
        return [r for r in self.reference_inference()
                if r.get("interactivity_tok_s_user") is not None and r["gpu"] == gpu
                and r["precision"] == prec and r["input_len"] == input_len
                and r["output_len"] == output_len and wanted in model_names(r)]

    def baselines_for(self, workload: str, gpu: str | None = None,
                      precision: str | None = None) -> pl.DataFrame:
        """Baseline rows for a workload (optionally GPU and precision); aliases accepted."""
        found = optional_lookup(
            lambda: self.reference.select(workload=workload, gpu=gpu, precision=precision))
        return found if isinstance(found, pl.DataFrame) else pl.DataFrame()
