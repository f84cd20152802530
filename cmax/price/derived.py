"""Money the reports state beside the advice, derived from a finished scorecard's figures.

The price advice (:mod:`cmax.price.advice`) holds what a negotiation turns on; these are the
few amounts a report adds to it (the suspect nodes' cost, the goodput loss at the reference's
interruption rate, a serving token at the ask). They are pricing, so they live here and the
renderers only format them. Scorecard models only: the reports' document worker draws page 1
without the rating stack.
"""

from __future__ import annotations

from dataclasses import dataclass

from cmax.price.drivers import HOURS_PER_MONTH
from cmax.scorecard import PriceAdvice, ReliabilityResult
from cmax.throughput import usd_per_million_tokens


def serving_usd_per_million(usd_per_gpu_hour: float | None,
                            output_tok_s_per_gpu: float | None) -> float | None:
    """$ per million output tokens at ``usd_per_gpu_hour`` (the whole GPU-hour charged to
    output tokens, as the advice's serving figures are); None without a price or a rate."""
    if usd_per_gpu_hour is None or not output_tok_s_per_gpu:
        return None
    return usd_per_million_tokens(usd_per_gpu_hour, output_tok_s_per_gpu)


def goodput_loss_at_reference(advice: PriceAdvice, reliability: ReliabilityResult) -> float:
    """The term's goodput loss had the cluster been interrupted at the reference fleet's rate:
    term cost × (1 − reference E[ETTR]), the basis the goodput price driver compares with."""
    return advice.term_cost_usd * (1.0 - reliability.reference_ettr)


@dataclass(frozen=True)
class NodeCost:
    """What some GPUs cost at the quoted price: per month (730 h) and over the term."""

    gpus: int
    usd_per_month: float
    usd_per_term: float


def node_cost(gpus: int, advice: PriceAdvice) -> NodeCost:
    """GPUs × quoted $/GPU-hour × 730 h a month, and × the term's months: the credit a buyer
    asks for nodes it cannot use (suspect nodes)."""
    month = gpus * advice.quoted_usd_per_gpu_hour * HOURS_PER_MONTH
    return NodeCost(gpus, round(month, 2), round(month * advice.term_months, 2))
