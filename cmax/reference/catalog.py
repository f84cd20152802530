"""The GPU catalogue and the id normalisation every lookup goes through.

Evidence names GPUs and precisions however its tools print them ("H100 80GB HBM3", "FP8-CS",
"MXFP8"); tables hold one canonical lowercase id each, so a lookup never fails on spelling and
never matches the wrong part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cmax.errors import NotInCatalogue, ReferenceDataError
from cmax.reference._files import read_reference_toml

PRECISIONS = ("bf16", "fp8", "nvfp4")

# spelled precision -> (canonical precision, recipe or None)
_PRECISION_ALIASES: dict[str, tuple[str, str | None]] = {
    "bf16": ("bf16", None), "bfloat16": ("bf16", None),
    "fp8": ("fp8", None), "float8": ("fp8", None),
    "fp8-cs": ("fp8", "fp8-cs"), "fp8cs": ("fp8", "fp8-cs"),
    "fp8-mx": ("fp8", "mxfp8"), "mxfp8": ("fp8", "mxfp8"),
    "fp8-blockwise": ("fp8", "fp8-blockwise"), "fp8-ds": ("fp8", "fp8-ds"),
    "fp8-ss": ("fp8", "fp8-ss"), "fp8-delayed": ("fp8", "fp8"),
    "nvfp4": ("nvfp4", "nvfp4"), "fp4": ("nvfp4", "nvfp4"),
}


def normalize_precision(value: str) -> tuple[str, str | None]:
    """Canonical precision and, when the spelling names one, the quantisation recipe."""
    key = value.strip().lower().replace("_", "-")
    if key in _PRECISION_ALIASES:
        return _PRECISION_ALIASES[key]
    raise NotInCatalogue(
        f"unknown precision {value!r}", field="precision",
        expected="bf16, fp8 or nvfp4 (also fp8-cs, mxfp8, fp8-blockwise)",
    )


def canonical_precision(value: str) -> str:
    return normalize_precision(value)[0]


@dataclass(frozen=True)
class GpuSpec:
    """One GPU type: dense peak TFLOP/s per precision, memory, HBM bandwidth, TDP, source."""

    id: str
    name: str
    peak_tflops: dict[str, float]
    memory_gb: float
    hbm_tbps: float
    tdp_w: float
    source: str
    peak_source: str = ""
    architecture: str = ""
    aliases: tuple[str, ...] = field(default=())
    source_date: str = ""

    def peak(self, precision: str) -> float | None:
        return self.peak_tflops.get(canonical_precision(precision))


def _gpu_key(value: str) -> str:
    return value.strip().lower().replace("_", "-").replace(" ", "-")


def load_gpus(path: Path) -> dict[str, GpuSpec]:
    data = read_reference_toml(path, what="GPU catalogue")
    gpus = data.get("gpus")
    if not isinstance(gpus, dict) or not gpus:
        raise ReferenceDataError("no [gpus.*] tables", file=path)
    out: dict[str, GpuSpec] = {}
    for gid, raw in gpus.items():
        out[gid] = _parse_gpu(str(gid), raw, path)
    return out


def _parse_gpu(gid: str, raw: Any, path: Path) -> GpuSpec:
    where = f"gpus.{gid}"
    if not isinstance(raw, dict):
        raise ReferenceDataError(f"{where} is not a table", file=path)
    peaks = raw.get("peak_tflops")
    if not isinstance(peaks, dict) or not peaks:
        raise ReferenceDataError("missing peak_tflops", file=path, field=f"{where}.peak_tflops")
    try:
        spec = GpuSpec(
            id=gid, name=str(raw["name"]),
            peak_tflops={str(k): float(v) for k, v in peaks.items()},
            memory_gb=float(raw["memory_gb"]), hbm_tbps=float(raw["hbm_tbps"]),
            tdp_w=float(raw["tdp_w"]), source=str(raw["source"]),
            peak_source=str(raw.get("peak_source", "")),
            architecture=str(raw.get("architecture", "")),
            aliases=tuple(_gpu_key(a) for a in raw.get("aliases", [])),
            source_date=str(raw.get("source_date", "")),
        )
    except KeyError as exc:
        raise ReferenceDataError(f"missing key {exc.args[0]!r}", file=path, field=where) from exc
    except (TypeError, ValueError) as exc:
        raise ReferenceDataError(f"bad value: {exc}", file=path, field=where) from exc
    if any(v <= 0 for v in spec.peak_tflops.values()) or not spec.source:
        raise ReferenceDataError("peaks must be positive and a source given", file=path,
                                 field=where)
    return spec


def gpu_alias_table(gpus: dict[str, GpuSpec]) -> dict[str, str]:
    table: dict[str, str] = {}
    for spec in gpus.values():
        for name in (spec.id, *spec.aliases):
            table[_gpu_key(name)] = spec.id
    return table


def resolve_gpu(value: str, gpus: dict[str, GpuSpec], aliases: dict[str, str]) -> GpuSpec:
    gid = aliases.get(_gpu_key(value))
    if gid is None:
        raise NotInCatalogue(
            f"unknown GPU {value!r}", field="gpu",
            expected="one of " + ", ".join(sorted(gpus)),
            fix="use a GPU id from `cmax reference list --what gpus`",
        )
    return gpus[gid]
