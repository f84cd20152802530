"""The price drivers: what moves a GPU-hour's worth away from the quote, in $/GPU-hour.

Computed by :func:`cmax.price.advice.price` for the advice, and read back from finished
scorecards by the reports (:func:`card_drivers`); this module needs the scorecard models only,
so the report's document worker (cmax.render.worker) does not import the rating stack
(Polars, NumPy, the case) to draw page 1.
"""

from __future__ import annotations

from cmax.score.verdicts import rated, serving_rated
from cmax.scorecard import PriceDriver, Scorecard, WorkloadResult

GOODPUT_BOTH = "Goodput (interruptions and checkpoint time)"
"""The driver's name when both goodput factors are measured (cmax.render.views maps it to the
interruptions tile)."""

HOURS_PER_MONTH = 730.0
"""8,760 hours a year ÷ 12: the average month cloud bills are quoted against."""



def card_drivers(card: Scorecard) -> list[PriceDriver]:
    """The price drivers of a scorecard's advice; recomputed from its own figures when the
    advice predates the ``drivers`` field (older scorecard JSON)."""
    p = card.price
    if p is None:
        return []
    if p.drivers:
        return list(p.drivers)
    period_gpu_hours = card.sla.node_hours * card.gpus_per_node if card.sla else 0.0
    return drivers(p.quoted_usd_per_gpu_hour, p.throughput_ratio, p.goodput_ratio, card,
                    p.sla_credit_usd, period_gpu_hours)


def drivers(quoted: float, throughput: float | None, goodput: float, scorecard: Scorecard,
            credit: float | None, period_gpu_hours: float) -> list[PriceDriver]:
    """What moves a GPU-hour's worth away from the quote, each in $/GPU-hour, largest first.

    The throughput and goodput effects add up exactly to quote − parity (quote × (1 − T) +
    quote × T × (1 − G)); the SLA credit is money owed back, spread over the GPU-hours of the
    period it was measured in, so a buyer can compare it with the other two on one scale.
    """
    out: list[PriceDriver] = []
    compared = [w for w in scorecard.workloads if rated(w)]
    serving = [r for r in scorecard.inference if serving_rated(r)]
    if throughput is not None and not compared and serving:
        # an inference contract: the serving results set the throughput ratio
        out.append(PriceDriver(
            name="Serving throughput",
            usd_per_gpu_hour=round(quoted * (1.0 - throughput), 4),
            detail=(f"{100 * throughput:.1f}% of the public per-GPU serving reference over "
                    f"{plural(len(serving), 'result')}: each GPU-hour serves "
                    + _more_or_less(1 - throughput, "output than the quote assumes"))))
    elif throughput is not None:
        worst = min(compared, key=lambda w: w.ratio or 0.0) if compared else None
        worst_text = (f"; slowest {_w_label(worst)} at {100 * (worst.ratio or 0):.1f}%"
                      if worst is not None and len(compared) > 1 else "")
        out.append(PriceDriver(
            name="Training throughput",
            usd_per_gpu_hour=round(quoted * (1.0 - throughput), 4),
            detail=(f"{100 * throughput:.1f}% of NVIDIA's reference speed over "
                    f"{plural(len(compared), 'run')}{worst_text}: each GPU-hour does "
                    + _more_or_less(1 - throughput, "work than the quote assumes"))))
    rel = scorecard.reliability
    ckpt = scorecard.checkpoint
    # the goodput ratio is interruptions × checkpoint time; with both measured they are one
    # driver (one goodput), its detail naming each factor
    interruptions = goodput / ckpt.ratio if ckpt is not None else goodput
    saves = (f"a {ckpt.model} checkpoint saves in {ckpt.save_s:.0f} s here vs "
             f"{ckpt.reference_save_s:.0f} s at the reference bandwidth: "
             f"{100 * ckpt.share:.2f}% of wall time at one save per {ckpt.interval_min:g} min vs "
             f"{100 * ckpt.reference_share:.2f}%") if ckpt is not None else ""
    if throughput is not None and rel is not None:
        detail = (f"{rel.per_1000_gpu_days:.2f} interruptions per 1,000 GPU-days vs "
                  f"{rel.reference_per_1000_gpu_days:.2f} at the reference: a "
                  f"{rel.job_gpus:,}-GPU job keeps {100 * interruptions:.2f}% of the "
                  "reference's useful time")
        out.append(PriceDriver(
            name=GOODPUT_BOTH if ckpt is not None else "Interruptions (goodput)",
            usd_per_gpu_hour=round(quoted * throughput * (1.0 - goodput), 4),
            detail=detail + (f"; {saves}" if ckpt is not None else "")))
    elif throughput is not None and ckpt is not None:
        out.append(PriceDriver(
            name="Checkpoint time (goodput)",
            usd_per_gpu_hour=round(quoted * throughput * (1.0 - ckpt.ratio), 4), detail=saves))
    sla = scorecard.sla
    if sla is not None and credit and period_gpu_hours > 0:
        out.append(PriceDriver(
            name="SLA credit owed", kind="credit",
            usd_per_gpu_hour=round(credit / period_gpu_hours, 4),
            detail=((f"{sla.node_months_below} of {sla.node_months} node-months below "
                     if sla.node_months else f"measured {sla.measured_uptime_pct:.3f}% against ")
                    + f"the contracted {sla.contracted_uptime_pct:g}% uptime: "
                    f"{usd(credit)} owed on the measured period's bill")))
    suspects = scorecard.suspect_nodes
    contract_gpus = scorecard.nodes * scorecard.gpus_per_node
    if suspects and contract_gpus > 0:
        gpus = sum(s.gpus for s in suspects)
        out.append(PriceDriver(
            name="Suspect nodes", kind="credit",
            usd_per_gpu_hour=round(quoted * gpus / contract_gpus, 4),
            detail=(f"{plural(len(suspects), 'node')} ({gpus:,} GPUs) the network evidence "
                    "singles out as slow: exclude them from the contract or credit them, "
                    f"{gpus:,} GPUs × {usd(quoted)} × {HOURS_PER_MONTH:g} h = "
                    f"{usd(gpus * quoted * HOURS_PER_MONTH)} a month")))
    return sorted(out, key=lambda d: -abs(d.usd_per_gpu_hour))


def _more_or_less(shortfall: float, what: str) -> str:
    """'1.6% less work …' for a shortfall, '0.1% more work …' for a surplus: never a signed
    percentage in a sentence (no 'does -0.1% less')."""
    word = "less" if shortfall >= 0 else "more"
    return f"{100 * abs(shortfall):.1f}% {word} {what}"


def _w_label(w: WorkloadResult) -> str:
    return f"{w.workload} {w.precision} {w.num_gpus:,} GPUs"


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def usd(value: float) -> str:
    return f"${value:,.2f}"
