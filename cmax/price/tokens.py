"""$ per million training tokens: which offer trains the buyer's workload cheapest.

A price per GPU-hour only compares offers of one GPU type: an H100-hour and a GB200-hour do
different amounts of work. What the buyer pays for is tokens trained, so offers of different
generations are compared on

    $ per million tokens = quote ÷ (tokens/s/GPU × 3,600) × 10⁶ ÷ goodput ratio

for the buyer's workload (a ``workload:precision`` key, or a basket of them weighted by their
share of the tokens), with the throughput measured on that offer, or — where the offer has no
run of the workload — estimated as its measured throughput ratio on its other workloads × the
reference tokens/s/GPU for the workload on its GPU, labelled as an estimate with that basis.
Offers measured at different GPU counts are compared with the scaling the reference shows
between those counts for that GPU type (the two rows are named), or not at all.

In SemiAnalysis' terms (GB200 NVL72 costs about 1.6× an H100 per GPU, so it must train at least
1.6× faster per GPU to win): offer A beats offer B when A's speed-up per GPU over B exceeds
(quote A ÷ goodput A) ÷ (quote B ÷ goodput B), :func:`breakeven_speedup`.

The functions on plain numbers and on scorecard models import neither Polars nor the reference,
so the reports' document worker can rank finished scorecards; the throughput identities
(tokens/s/GPU from a step, MFU, $ per million tokens) are :mod:`cmax.throughput`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from cmax.score.verdicts import rated
from cmax.scorecard import ScalePoint, Scorecard, TokenCost, WorkloadResult
from cmax.submission.basket import basket_key
from cmax.throughput import usd_per_million_tokens

if TYPE_CHECKING:
    from cmax.reference.view import RefView

def breakeven_speedup(quote_a: float, quote_b: float, goodput_a: float = 1.0,
                      goodput_b: float = 1.0) -> float:
    """How many times faster per GPU offer A must train than B to cost the same per token.

    (quote A ÷ goodput A) ÷ (quote B ÷ goodput B): SemiAnalysis' "GB200 NVL72 must be at least
    1.6× faster per GPU" at a 1.6× cost per GPU, with interruptions priced in.
    """
    return (quote_a / goodput_a) / (quote_b / goodput_b)


def speedup(breakeven: float, usd_a: float, usd_b: float) -> float:
    """How many times faster per GPU offer B trains than offer A, from the break-even speed-up
    B needs (:func:`breakeven_speedup`, B over A) and what each costs per million tokens: at
    equal cost per token B's speed-up is the break-even, and it grows as A's cost does."""
    return breakeven * usd_a / usd_b


def breakeven_price(quote_b: float, tps_a: float, tps_b: float, goodput_a: float = 1.0,
                    goodput_b: float = 1.0) -> float:
    """The $/GPU-hour at which offer A costs the same per token as offer B at B's quote."""
    return quote_b * (tps_a * goodput_a) / (tps_b * goodput_b)


def weighted_cost(costs: Mapping[str, float], basket: Mapping[str, float]) -> float | None:
    """Σ share × $/M tokens over the basket (shares renormalised), None if a key is missing:
    a basket's price is only defined when every workload in it has one."""
    if not basket or any(k not in costs for k in basket):
        return None
    total = sum(basket.values())
    return sum(share * costs[k] for k, share in basket.items()) / total


# --- one offer: its token costs from its scorecard and the reference -------------------------

def measured(w: WorkloadResult) -> bool:
    """A run whose throughput may price tokens: a measured rate its judgement counts at the
    bar (:func:`cmax.score.verdicts.rated`: compared like with like, no error bears on it,
    its identity not resting on cmax.toml alone), the same rule as the price's cost table. A
    withheld or unverified run's rate would price tokens the evidence has not earned."""
    return (w.tokens_per_s_per_gpu is not None and w.tokens_per_s_per_gpu > 0 and rated(w))


def _row_tps(row: Mapping[str, Any]) -> float | None:
    from cmax.throughput import tokens_per_s_per_gpu

    tps = row.get("tokens_per_s_per_gpu")
    if isinstance(tps, int | float) and tps > 0:
        return float(tps)
    values = [v for k in ("gbs", "seq_len", "step_time_s", "num_gpus")
              if isinstance(v := row.get(k), int | float) and v > 0]
    if len(values) < 4:
        return None
    gbs, seq, step, n = (float(v) for v in values)
    return tokens_per_s_per_gpu(gbs, seq, step, n)


def reference_scaling(ref: RefView, workload: str, gpu: str, precision: str) -> list[ScalePoint]:
    """The reference's tokens/s/GPU for the workload on the GPU type at each published scale
    (the latest comparable row at each GPU count, the rule every baseline match uses)."""
    frame = ref.baselines_for(workload, gpu, precision)
    if frame.is_empty() or "num_gpus" not in frame.columns:
        return []
    points = []
    for n in sorted({int(v) for v in frame["num_gpus"].drop_nulls().to_list()}):
        row = ref.match_baseline(workload, gpu, precision, n)
        tps = _row_tps(row) if row is not None else None
        if row is not None and tps is not None:
            points.append(ScalePoint(num_gpus=n, tokens_per_s_per_gpu=round(tps, 4),
                                     baseline_id=str(row["baseline_id"])))
    return points


@dataclass(frozen=True)
class Offer:
    """What pricing tokens needs from one offer besides its runs."""

    gpu: str
    quote: float
    goodput_ratio: float
    throughput_ratio: float | None
    watts_per_gpu: float | None
    scale: int
    """the GPUs a workload is estimated at when the offer has no run of it"""


def _cost(offer: Offer, workload: str, precision: str, num_gpus: int, tps: float,
          basis: Literal["measured", "estimate"], detail: str,
          scaling: list[ScalePoint]) -> TokenCost:
    return TokenCost(
        workload=workload, precision=precision, gpu=offer.gpu, num_gpus=num_gpus,
        basis=basis,
        basis_detail=detail, tokens_per_s_per_gpu=round(tps, 4),
        goodput_ratio=round(offer.goodput_ratio, 6),
        usd_per_million_tokens=round(
            usd_per_million_tokens(offer.quote, tps, offer.goodput_ratio), 4),
        joules_per_token=(round(offer.watts_per_gpu / tps, 4) if offer.watts_per_gpu else None),
        reference_scaling=scaling)


def token_costs(workloads: Sequence[WorkloadResult], offer: Offer, ref: RefView,
                basket: Iterable[str] = ()) -> list[TokenCost]:
    """The offer's $/M tokens on every workload it measured, and an estimate for every basket
    key it did not (none when its throughput ratio or the reference row is missing)."""
    out: list[TokenCost] = []
    seen: set[str] = set()
    for w in workloads:
        if not measured(w):
            continue
        assert w.tokens_per_s_per_gpu is not None
        key = basket_key(w.workload, w.precision)
        seen.add(key)
        out.append(_cost(offer, w.workload, w.precision, w.num_gpus, w.tokens_per_s_per_gpu,
                         "measured", f"{w.log}: steady-state window",
                         reference_scaling(ref, w.workload, offer.gpu, w.precision)))
    for key in basket:
        if key in seen:
            continue
        workload, _, precision = key.partition(":")
        estimate = estimate_cost(offer, workload, precision, ref)
        if estimate is not None:
            out.append(estimate)
    return out


def estimate_cost(offer: Offer, workload: str, precision: str, ref: RefView) -> TokenCost | None:
    """ratio on the offer's other workloads × the reference tokens/s/GPU on its GPU, at the
    offer's scale or, if the reference has none there, the nearest published one."""
    if offer.throughput_ratio is None:
        return None
    scaling = reference_scaling(ref, workload, offer.gpu, precision)
    if not scaling:
        return None
    point = min(scaling, key=lambda p: (abs(p.num_gpus - offer.scale), -p.num_gpus))
    tps = offer.throughput_ratio * point.tokens_per_s_per_gpu
    at = ("" if point.num_gpus == offer.scale
          else f"; the reference has no {offer.scale}-GPU row, nearest published scale")
    detail = (f"estimate: throughput ratio {offer.throughput_ratio:.4f} on the offer's measured "
              f"workloads × reference {point.tokens_per_s_per_gpu:,.1f} tokens/s/GPU "
              f"({point.baseline_id}, {point.num_gpus} GPUs{at})")
    return _cost(offer, workload, precision, point.num_gpus, tps, "estimate", detail, scaling)


def default_basket(costs: Sequence[TokenCost]) -> dict[str, float]:
    """Every workload the offer measured, equal token shares (for an Exemplar package these
    are its suite runs)."""
    keys = sorted({basket_key(c.workload, c.precision) for c in costs if c.basis == "measured"})
    return {k: 1.0 / len(keys) for k in keys} if keys else {}


def best_by_key(costs: Sequence[TokenCost]) -> dict[str, TokenCost]:
    """One cost per workload key: the measured one at the largest scale, else the estimate."""
    out: dict[str, TokenCost] = {}
    for c in costs:
        k = basket_key(c.workload, c.precision)
        old = out.get(k)
        if old is None or (c.basis, c.num_gpus) > (old.basis, old.num_gpus):
            # "measured" sorts after "estimate"
            out[k] = c
    return out


# --- several offers: ranking across GPU types ---------------------------------------------

@dataclass(frozen=True)
class Scaled:
    """An offer's cost on one workload brought to a common scale, with the rows used."""

    cost: float
    tokens_per_s_per_gpu: float
    num_gpus: int
    note: str | None
    joules_per_token: float | None = None


def at_scale(c: TokenCost, num_gpus: int) -> Scaled | None:
    """The cost at ``num_gpus`` GPUs: as measured at that scale, or scaled by the reference's
    throughput ratio between the two scales on the same GPU type; None without both rows."""
    if c.num_gpus == num_gpus:
        return Scaled(c.usd_per_million_tokens, c.tokens_per_s_per_gpu, num_gpus, None,
                      c.joules_per_token)
    points = {p.num_gpus: p for p in c.reference_scaling}
    have, want = points.get(c.num_gpus), points.get(num_gpus)
    if have is None or want is None:
        return None
    factor = want.tokens_per_s_per_gpu / have.tokens_per_s_per_gpu
    note = (f"{c.gpu} {c.workload} {c.precision} scaled from {c.num_gpus} to {num_gpus} GPUs "
            f"by the reference's {factor:.4f} ({have.baseline_id} → {want.baseline_id})")
    return Scaled(c.usd_per_million_tokens / factor, c.tokens_per_s_per_gpu * factor,
                  num_gpus, note,
                  c.joules_per_token / factor if c.joules_per_token is not None else None)


@dataclass(frozen=True)
class Ranked:
    """One offer's $/M tokens on the common basket of a comparison."""

    index: int
    usd_per_million_tokens: float
    per_key: dict[str, Scaled]
    joules_per_token: float | None = None
    """the basket's token-weighted J/token, None unless every workload's energy is known"""


@dataclass(frozen=True)
class Comparison:
    basket: dict[str, float]
    scales: dict[str, int]
    ranked: list[Ranked]
    unranked: dict[int, str]
    """offer index → why it is not on the common footing"""

    @property
    def by_energy(self) -> list[Ranked]:
        """The ranked offers whose J/token is known, least energy per token first."""
        known = [r for r in self.ranked if r.joules_per_token is not None]
        return sorted(known, key=lambda r: (r.joules_per_token or 0.0, r.index))


def _why_unpriced(card: Scorecard) -> str:
    """Why an offer has no $ per million training tokens, in the words a buyer needs."""
    if card.price is None:
        return "no quoted price"
    if card.inference:
        return ("no training run to price per training token (its serving results are priced "
                "per million output tokens on its scorecard)")
    return "no measured training throughput on a workload the reference publishes"


def compare(cards: Sequence[Scorecard], basket: Mapping[str, float] | None = None) -> Comparison:
    """Rank offers by $/M tokens on one basket at one scale per workload.

    The basket defaults to the workloads every priced offer carries a cost for (measured or
    estimated); each workload is compared at the largest scale any offer ran it at, offers at
    other scales brought there with their own GPU type's reference scaling, or left unranked.
    """
    priced = {i: best_by_key(c.price.token_costs) for i, c in enumerate(cards)
              if c.price is not None and c.price.token_costs}
    unranked = {i: _why_unpriced(c) for i, c in enumerate(cards) if i not in priced}
    if basket is None:
        common = set.intersection(*(set(v) for v in priced.values())) if priced else set()
        basket = {k: 1.0 / len(common) for k in sorted(common)}
    scales = {k: max((v[k].num_gpus for v in priced.values() if k in v), default=0)
              for k in basket}
    ranked: list[Ranked] = []
    for i, costs in priced.items():
        missing = [k for k in basket if k not in costs]
        if missing:
            unranked[i] = f"no measured or estimated cost for {', '.join(missing)}"
            continue
        per_key = {k: at_scale(costs[k], scales[k]) for k in basket}
        off = [k for k, s in per_key.items() if s is None]
        if off:
            wanted = ", ".join(f"{k} at {scales[k]} GPUs" for k in off)
            unranked[i] = (f"measured at another scale than {wanted}, and the reference "
                           "publishes no scaling between the two scales for its GPU type")
            continue
        shares = {k: s.cost for k, s in per_key.items() if s is not None}
        total = weighted_cost(shares, basket)
        energy = weighted_cost({k: s.joules_per_token for k, s in per_key.items()
                                if s is not None and s.joules_per_token is not None}, basket)
        if total is not None:
            ranked.append(Ranked(i, total, {k: s for k, s in per_key.items() if s is not None},
                                 energy))
    ranked.sort(key=lambda r: (r.usd_per_million_tokens, r.index))
    return Comparison(dict(basket), scales, ranked, unranked)


@dataclass(frozen=True)
class PricedOffer:
    """One offer of ``cmax calc --offer``: a GPU type at a price, with the training speed per
    GPU when it was measured (or worked out from an MFU)."""

    gpu: str
    usd_per_gpu_hour: float
    tokens_per_s_per_gpu: float | None = None
    speed_basis: str = ""


def offer_comparison(a: PricedOffer, b: PricedOffer) -> dict[str, Any]:
    """Two offers side by side, in the seed's terms: each one's $ per million tokens (when
    its speed is known) and how many times faster per GPU the dearer offer must train than the
    cheaper to cost the same per token (their price ratio); with both speeds, the speed-up it
    has and which is cheaper per token."""
    dear, cheap = (a, b) if a.usd_per_gpu_hour >= b.usd_per_gpu_hour else (b, a)
    need = breakeven_speedup(dear.usd_per_gpu_hour, cheap.usd_per_gpu_hour)
    offers = [{"gpu": o.gpu, "usd_per_gpu_hour": o.usd_per_gpu_hour,
               "tokens_per_s_per_gpu": o.tokens_per_s_per_gpu, "speed_basis": o.speed_basis,
               "usd_per_million_tokens": (None if not o.tokens_per_s_per_gpu else round(
                   usd_per_million_tokens(o.usd_per_gpu_hour, o.tokens_per_s_per_gpu), 4))}
              for o in (a, b)]
    out: dict[str, Any] = {"offers": offers, "dearer": dear.gpu, "cheaper": cheap.gpu,
                           "breakeven_speedup": round(need, 4), "speedup": None,
                           "cheaper_per_token": None}
    if dear.tokens_per_s_per_gpu and cheap.tokens_per_s_per_gpu:
        has = dear.tokens_per_s_per_gpu / cheap.tokens_per_s_per_gpu
        out["speedup"] = round(has, 4)
        out["cheaper_per_token"] = (dear.gpu if has > need else cheap.gpu if has < need
                                    else "neither")
    return out
