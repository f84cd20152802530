"""GPU facts every stage recognises, from their one home, ``reference/gpus.toml``.

A printed GPU name ("NVIDIA H100 80GB HBM3", "NVIDIA B200-SXM-180GB", "128xNVIDIA GB200",
"ND_H200_v5") is compared with a claim by its *family*, the product token it carries. The
families, how many GPUs a node holds and how many share an NVLink domain are data in
``gpus.toml``: the catalogue GPUs (``[gpus.*]``, with reference rows) and the other GPUs
evidence may name (``[families.*]``). The identity rules, the claims ledger, the MLPerf
checks, the llmb-run intake and the NVL72 network notes all read them here, so a GPU added to
the file is recognised everywhere at once.

This module reads the TOML file only (no Polars, no checksum pass): the bundle opener and the
log readers need it before any reference is loaded. The full loader
(:func:`cmax.reference.load_reference`) verifies the same file against ``SHA256SUMS``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError
from cmax.reference._files import read_reference_toml
from cmax.resources import data_dir

FILE = "gpus.toml"


@dataclass(frozen=True)
class GpuFamily:
    """One GPU product as evidence names it."""

    id: str  # the family token: h100, gb200, mi300x, tpuv6e
    pattern: str  # the regular expression a normalised printed name matches
    catalogue_id: str | None  # its [gpus.*] id when the catalogue has reference rows
    gpus_per_node: int | None
    nvlink_domain_gpus: int | None


def _int(raw: dict[str, Any], key: str, where: str, path: Path) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ReferenceDataError(f"{key} must be a positive whole number", file=path,
                                 field=f"{where}.{key}")
    return value


def read_families(path: Path) -> tuple[GpuFamily, ...]:
    """Every family in ``path``, most specific pattern first (``gb200`` before ``b200``)."""
    data = read_reference_toml(path, what="GPU catalogue")
    found: list[GpuFamily] = []
    for section in ("gpus", "families"):
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise ReferenceDataError(f"[{section}] is not a table", file=path, field=section)
        for key, raw in table.items():
            where = f"{section}.{key}"
            if not isinstance(raw, dict):
                raise ReferenceDataError(f"{where} is not a table", file=path, field=where)
            family = str(raw.get("family", key)) if section == "gpus" else str(key)
            if not re.fullmatch(r"[a-z0-9]+", family):
                raise ReferenceDataError("a family is lower-case letters and digits",
                                         file=path, field=f"{where}.family")
            pattern = str(raw.get("pattern", family))
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ReferenceDataError(f"bad pattern: {exc}", file=path,
                                         field=f"{where}.pattern") from exc
            found.append(GpuFamily(family, pattern, str(key) if section == "gpus" else None,
                                   _int(raw, "gpus_per_node", where, path),
                                   _int(raw, "nvlink_domain_gpus", where, path)))
    ids = [f.id for f in found]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ReferenceDataError(f"GPU families named twice: {', '.join(twice)}", file=path)
    return tuple(sorted(found, key=lambda f: -len(f.id)))


@functools.cache
def families() -> tuple[GpuFamily, ...]:
    """The shipped families (read once per process)."""
    return read_families(data_dir("reference") / FILE)


@functools.cache
def _matcher() -> re.Pattern[str]:
    alternatives = "|".join(f"(?P<f{i}>{f.pattern})" for i, f in enumerate(families()))
    return re.compile(rf"(?:{alternatives})(?![a-z0-9])")


def gpu_family(name: str | None) -> str | None:
    """The GPU product a printed name or catalogue id means: 'NVIDIA H100 80GB HBM3' -> 'h100'.

    Form factor matters where it changes the product (an H100 PCIe or NVL card is not the SXM
    part), so such a name keeps it: 'NVIDIA H100 PCIe' -> 'h100-pcie'. None: no known GPU.
    """
    if not name:
        return None
    text = re.sub(r"[^a-z0-9]+", " ", name.lower())
    match = _matcher().search(text)
    if match is None or match.lastgroup is None:
        return None
    family = families()[int(match.lastgroup[1:])].id
    if family in ("h100", "h200"):
        if re.search(r"\bpcie\b", text):
            return f"{family}-pcie"
        if re.search(r"\bnvl\b", text):
            return f"{family}-nvl"
    return family


def gpus_per_node() -> dict[str, int]:
    """Family -> GPUs in one node, where the file states it."""
    return {f.id: f.gpus_per_node for f in families() if f.gpus_per_node is not None}


def rack_scale_families() -> tuple[str, ...]:
    """Families whose NVLink domain spans more than one node (a GB200/GB300 NVL72 rack)."""
    return tuple(f.id for f in families()
                 if f.nvlink_domain_gpus and f.gpus_per_node
                 and f.nvlink_domain_gpus > f.gpus_per_node)
