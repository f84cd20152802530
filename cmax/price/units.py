"""Is the quote a per-GPU-hour price? The unit check on ``[pricing] usd_per_gpu_hour``.

A quote typed in the wrong unit is not a price: $16.80 per node-hour read as $/GPU-hour makes
a cluster look eight times dearer, and $0.2625 (a per-GPU price divided by the node's GPUs
once more) topped a value-ranked leaderboard. The manifest's own bounds only catch absurd
figures; this check holds the quote to the band the market actually quotes for *this* GPU
(``[price_bands]`` in reference/economics.toml, each with its source) and, outside it, names
the unit mistakes that would bring the figure back into the band and how to state it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cmax.errors import ManifestError
from cmax.reference.economics import price_band
from cmax.submission.manifest import Manifest


@dataclass(frozen=True)
class UnitMistake:
    """One way a figure in another unit ends up typed as $/GPU-hour."""

    what: str
    factor: float
    """per-GPU-hour price = typed figure ÷ factor"""


def _mistakes(gpus_per_node: int) -> list[UnitMistake]:
    # here, not at the top: every command checks the quote, and only a quote outside its
    # band comes this far; the drivers module brings in the scorecard models
    from cmax.price.drivers import HOURS_PER_MONTH

    g = gpus_per_node
    return [
        UnitMistake(f"a per-node-hour price ({g} GPUs per node)", g),
        UnitMistake("a per-GPU-month price", HOURS_PER_MONTH),
        UnitMistake(f"a per-node-month price ({g} GPUs x {HOURS_PER_MONTH:g} h)",
                    g * HOURS_PER_MONTH),
        UnitMistake("a per-GPU-day price", 24.0),
        UnitMistake("a price in cents", 100.0),
        UnitMistake(f"a per-GPU price divided by the node's {g} GPUs again", 1.0 / g),
        UnitMistake("a per-GPU-minute price", 1.0 / 60.0),
        UnitMistake("a digit missing (the decimal point one place left)", 0.1),
        UnitMistake("a digit too many (the decimal point one place right)", 10.0),
    ]


def _op(factor: float) -> str:
    return f"× {1.0 / factor:g}" if factor < 1 else f"÷ {factor:g}"


def check_quote_unit(manifest: Manifest, economics: Mapping[str, Any], gpu: str, *,
                     source: str | Callable[[], str]) -> None:
    """Raise a ManifestError when the quote lies outside the GPU's market band.

    ``gpu`` is the canonical catalogue id (aliases resolved). The error lists every unit
    mistake that would put the figure inside the band, with the per-GPU-hour figure to state.
    ``source`` names the manifest (a callable is asked only when there is an error, so a
    stage that must not touch the file system never does).
    """
    pricing = manifest.pricing
    band = price_band(economics, gpu)
    if pricing is None or band is None:
        return
    quoted = pricing.usd_per_gpu_hour
    low, high = float(band["low"]), float(band["high"])
    if low <= quoted <= high:
        return
    side = "below the cheapest" if quoted < low else "above the dearest"
    likely = [(m, quoted / m.factor) for m in _mistakes(manifest.system.gpus_per_node)
              if low <= quoted / m.factor <= high]
    if likely:
        guesses = "; ".join(f"{m.what}: ${quoted:g} {_op(m.factor)} = ${fixed:.4g}/GPU-hour"
                            for m, fixed in likely)
        fix = (f"likely {guesses}. State the price per GPU per hour, e.g. "
               f"usd_per_gpu_hour = {likely[0][1]:.4g}")
    else:
        fix = ("state the price per GPU per hour (a node-hour price ÷ GPUs per node, a "
               "month price ÷ 730 h); if the quote really is outside the market, say so with "
               "the contract, it cannot be rated as a market price")
    raise ManifestError(
        f"quoted ${quoted:g}/GPU-hour is {side} published {gpu} quote (${low:g}-${high:g} "
        f"per GPU-hour): a figure in another unit, not a per-GPU-hour price",
        file=source() if callable(source) else source, field="pricing.usd_per_gpu_hour",
        expected=f"a {gpu} price per GPU-hour within ${low:g}-${high:g} ({band['source']})",
        fix=fix,
    )
