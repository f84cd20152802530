"""Economics defaults: household energy, PUE, all-in watts per GPU, quoted price points.

All-in power is the whole server's rated maximum shared per GPU, times PUE, because a GPU
never draws power without its host and cooling; J/token and energy budgets built on board TDP
alone understate the bill a buyer actually pays.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError
from cmax.reference._files import read_reference_toml


def load_economics(path: Path) -> dict[str, Any]:
    data = read_reference_toml(path, what="economics defaults")
    try:
        household = float(data["household_kwh_per_year"])
        pue = float(data["pue"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ReferenceDataError(f"bad economics entry: {exc}", file=path) from exc
    if household <= 0 or pue < 1.0:
        raise ReferenceDataError("household kWh must be positive and PUE at least 1", file=path)
    watts: dict[str, float] = {}
    watts_source: dict[str, str] = {}
    for gpu, entry in data.get("system_power", {}).items():
        watts[gpu] = float(entry["system_w"]) / int(entry["gpus"]) * pue
        watts_source[gpu] = (f"{entry['source']}: {entry['system_w']} W / {entry['gpus']} GPUs "
                             f"x PUE {pue}")
    return {
        "price_bands": _price_bands(data.get("price_bands", {}), path),
        "household_kwh_per_year": household,
        "household_source": str(data.get("household_source", "")),
        "pue": pue,
        "pue_source": str(data.get("pue_source", "")),
        "default_watts_per_gpu": watts,
        "default_watts_source": watts_source,
        "price_points": [dict(p) for p in data.get("price_points", [])],
    }


def _price_bands(raw: Any, path: Path) -> dict[str, dict[str, Any]]:
    """``{gpu: {low, high, source, source_date}}``: the sourced plausible $/GPU-hour band."""
    if not isinstance(raw, dict):
        raise ReferenceDataError("price_bands is not a table", file=path, field="price_bands")
    bands: dict[str, dict[str, Any]] = {}
    for gpu, entry in raw.items():
        where = f"price_bands.{gpu}"
        try:
            low, high = float(entry["low"]), float(entry["high"])
            source = str(entry["source"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ReferenceDataError(f"bad price band: {exc}", file=path, field=where) from exc
        if not 0 < low < high or not source:
            raise ReferenceDataError("a band needs 0 < low < high and a source", file=path,
                                     field=where)
        bands[str(gpu)] = {"low": low, "high": high, "source": source,
                           "source_date": str(entry.get("source_date", ""))}
    return bands


def price_band(economics: Mapping[str, Any], gpu: str) -> Mapping[str, Any] | None:
    """The sourced plausible $/GPU-hour band for a canonical GPU id, or None."""
    bands = economics.get("price_bands")
    band = bands.get(gpu) if isinstance(bands, Mapping) else None
    return band if isinstance(band, Mapping) else None
