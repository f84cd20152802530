"""A forgiving view of the reference for the rules.

The validator must report on *any* submission, including ones naming a GPU, precision or model
the reference does not know. Those cases become findings ("no baseline", "unknown peak"), not
crashes, so every lookup here returns ``None`` instead of raising.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import polars as pl

from cmax.errors import CmaxError

_LOOKUP_ERRORS = (CmaxError, KeyError, LookupError, ValueError, TypeError, AttributeError)


class ReferenceLike(Protocol):
    """What the validator needs from ``cmax.reference.Reference``."""

    @property
    def release(self) -> str: ...

    @property
    def baselines(self) -> pl.DataFrame: ...


def _norm(value: object) -> str:
    return str(value).strip().lower()


def _finite(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) and out > 0 else None


class RefView:
    """Null-returning lookups over a Reference (duck-typed, see ReferenceLike)."""

    def __init__(self, reference: ReferenceLike) -> None:
        self.reference = reference
        self.release = str(getattr(reference, "release", "unknown"))
        try:
            frame = reference.baselines
        except _LOOKUP_ERRORS:
            frame = pl.DataFrame()
        self._baselines = frame if isinstance(frame, pl.DataFrame) else pl.DataFrame()
        self._peaks: dict[tuple[str, str], float | None] = {}
        self._flops: dict[tuple[str, int], float | None] = {}

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        method = getattr(self.reference, name, None)
        if method is None:
            return None
        try:
            return method(*args, **kwargs)
        except _LOOKUP_ERRORS:
            return None

    def peak_tflops(self, gpu: str | None, precision: str | None) -> float | None:
        """Dense peak TFLOP/s of ``gpu`` at ``precision``, or None if the catalogue lacks it."""
        if not gpu or not precision:
            return None
        key = (gpu, precision)
        if key not in self._peaks:
            self._peaks[key] = _finite(self._call("peak_tflops", gpu, precision))
        return self._peaks[key]

    def flops_per_sample(self, workload: str | None, seq_len: int | None) -> float | None:
        """Model FLOPs for one sequence (forward + backward), or None without a formula."""
        if not workload or not seq_len:
            return None
        key = (workload, seq_len)
        if key not in self._flops:
            value = None
            if self._call("has_model", workload) is not False:
                value = _finite(self._call("model_flops_per_sample", workload, seq_len))
            self._flops[key] = value
        return self._flops[key]

    def knows_gpu(self, gpu: str | None) -> bool:
        return self.gpu_id(gpu) is not None

    def gpu_id(self, gpu: str | None) -> str | None:
        """Canonical catalogue id for a GPU name or alias, or None if unknown."""
        if not gpu:
            return None
        spec = self._call("gpu", gpu)
        if spec is None:
            return None
        return str(getattr(spec, "id", gpu)).lower()

    def flops_candidates(self, workload: str | None, seq_len: int | None) -> dict[str, float]:
        """Per-sample model FLOPs under every convention a publisher of this workload uses.

        cmax's architecture-true count, Megatron-Bridge's, and the conventions the workload's
        reference rows were computed with: a framework printing TFLOP/s uses one of these.
        """
        out: dict[str, float] = {}
        base = self.flops_per_sample(workload, seq_len)
        if base is None or not workload or not seq_len:
            return out
        out["cmax"] = base
        conventions = {"megatron-bridge"}
        rows = self.baselines_for(workload)
        if "flops_convention" in rows.columns:
            conventions |= {str(c) for c in rows["flops_convention"].drop_nulls().to_list()}
        for name in sorted(conventions - {"cmax"}):
            per_token = _finite(self._call("source_flops_per_token", workload, seq_len, name))
            if per_token is not None:
                out[name] = per_token * seq_len
        return out

    def match_baseline(
        self, workload: str, gpu: str, precision: str, num_gpus: int,
        gbs: int | None = None, seq_len: int | None = None,
    ) -> dict[str, Any] | None:
        found = self._call("match_baseline", workload, gpu, precision, num_gpus,
                           gbs=gbs, seq_len=seq_len)
        return dict(found) if isinstance(found, dict) else None

    def baselines_for(self, workload: str, gpu: str | None = None,
                      precision: str | None = None) -> pl.DataFrame:
        """Baseline rows for a workload (optionally GPU and precision); aliases accepted."""
        if hasattr(self.reference, "select"):
            found = self._call("select", workload=workload, gpu=gpu, precision=precision)
            return found if isinstance(found, pl.DataFrame) else pl.DataFrame()
        frame = self._baselines
        if frame.is_empty() or "workload" not in frame.columns:
            return pl.DataFrame()
        conds = [pl.col("workload").cast(pl.String).str.to_lowercase() == _norm(workload)]
        if gpu is not None and "gpu" in frame.columns:
            conds.append(pl.col("gpu").cast(pl.String).str.to_lowercase() == _norm(gpu))
        if precision is not None and "precision" in frame.columns:
            conds.append(
                pl.col("precision").cast(pl.String).str.to_lowercase() == _norm(precision))
        return frame.filter(pl.all_horizontal(conds))
