"""The slice of the reference data the scorer and pricer read, as a structural type.

Scoring needs only a handful of look-ups (the matched baseline, peaks, network and
reliability baselines, economics defaults). Typing them as a Protocol keeps the scorer testable
with a small fake and independent of how ``cmax.reference`` stores its tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from cmax.errors import CmaxError

T = TypeVar("T")


class ReferenceData(Protocol):
    @property
    def release(self) -> str: ...

    @property
    def economics(self) -> Mapping[str, Any]: ...

    def gpu(self, gpu_id: str, /) -> Any: ...

    def peak_tflops(self, gpu: str, precision: str, /) -> float | None: ...

    def model_flops_per_token(self, workload: str, seq_len: int, /) -> float: ...

    def match_baseline(
        self, workload: str, gpu: str, precision: str, num_gpus: int, /, *,
        gbs: int | None = None, seq_len: int | None = None,
    ) -> Mapping[str, Any] | None: ...

    def network_baseline(
        self, interconnect: str, collective: str, nodes: int, /,
    ) -> Mapping[str, Any] | None: ...

    def reliability_baseline(self) -> Mapping[str, Any]: ...

    def mlperf_baseline(self, benchmark: str, num_gpus: int, /) -> Mapping[str, Any] | None: ...


def optional_lookup(call: Callable[[], T]) -> T | None:
    """A reference look-up whose absence only drops a derived figure (MFU, J/token).

    Only "not in the catalogue" outcomes are absorbed; anything else is a bug and propagates.
    """
    try:
        return call()
    except (CmaxError, KeyError, LookupError, ValueError, AttributeError):
        return None


def num(mapping: Mapping[str, Any] | None, key: str) -> float | None:
    """A numeric field of a reference row, None when absent, null or NaN."""
    if mapping is None:
        return None
    value = mapping.get(key)
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if out != out else out


def text(mapping: Mapping[str, Any] | None, key: str) -> str | None:
    if mapping is None:
        return None
    value = mapping.get(key)
    return None if value is None else str(value)


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
