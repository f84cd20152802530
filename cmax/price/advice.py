"""Price advice: what the capacity is worth per GPU-hour, and what to ask for.

The principle: a GPU-hour is worth what it delivers. If a cluster trains at 90 % of the
reference speed and loses more time to interruptions than the reference would, paying the
quoted price means paying more per unit of useful work than the quote suggests. The parity
price — quote × throughput ratio × goodput ratio — is the price at which each dollar buys the
same useful work as a reference-grade cluster at the quoted price. Paying in proportion to
delivered performance is cmax's derivation, not a SemiAnalysis figure, and the reasoning says
so. The recommended target never exceeds the quote: a faster-than-reference cluster justifies
paying the quote, not volunteering more.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

from cmax.errors import CmaxError
from cmax.evidence import Evidence
from cmax.manifest import MANIFEST_NAME
from cmax.score.performance import COMPARABLE_VERDICTS, suite_throughput
from cmax.score.reference_api import ReferenceData, num, optional_lookup, text
from cmax.score.stats import geometric_mean
from cmax.scorecard import PriceAdvice, Scorecard, WorkloadEconomics, WorkloadResult

HOURS_PER_MONTH = 730.0
"""8,760 hours a year ÷ 12: the average month cloud bills are quoted against."""


def _cents(value: float) -> float:
    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _manifest_label(evidence: Evidence) -> str:
    if evidence.source.is_dir():
        return str(evidence.root / MANIFEST_NAME)
    return f"{evidence.source}:{MANIFEST_NAME}"


def _watts(evidence: Evidence, reference: ReferenceData) -> tuple[float | None, str]:
    """GPU power for J/token: the provider's metered figure, else the reference's all-in
    default (server power ÷ GPUs × PUE), else the GPU's TDP (board power only)."""
    pricing = evidence.manifest.pricing
    if pricing is not None and pricing.watts_per_gpu:
        return pricing.watts_per_gpu, "manifest [pricing] watts_per_gpu"
    gpu_id = evidence.manifest.system.gpu
    spec = optional_lookup(lambda: reference.gpu(gpu_id))
    canonical = str(getattr(spec, "id", gpu_id))
    econ = reference.economics
    table = econ.get("default_watts_per_gpu")
    allin = num(table, canonical) if isinstance(table, Mapping) else None
    if allin:
        sources = econ.get("default_watts_source")
        src = (text(sources, canonical) if isinstance(sources, Mapping)
               else text(econ, "default_watts_source")) or "reference economics"
        return allin, (f"the reference all-in default for {canonical} (server power ÷ GPUs × "
                       f"PUE; {src})")
    tdp = getattr(spec, "tdp_w", None)
    if isinstance(tdp, int | float) and tdp > 0:
        return float(tdp), f"the TDP of {canonical} (board power only: no host, network or cooling)"
    return None, "no GPU power figure in the manifest or the reference"


def _reference_tps(w: WorkloadResult) -> float | None:
    base = w.baseline
    if base is None:
        return None
    if base.tokens_per_s_per_gpu:
        return base.tokens_per_s_per_gpu
    if base.step_time_s and base.gbs and base.seq_len and w.num_gpus:
        return base.gbs * base.seq_len / base.step_time_s / w.num_gpus
    return None


def _economics(w: WorkloadResult, quoted: float, watts: float | None) -> WorkloadEconomics:
    tps = w.tokens_per_s_per_gpu
    ref_tps = _reference_tps(w)

    def per_million(rate: float | None) -> float | None:
        return round(quoted * 1e6 / (rate * 3600.0), 4) if rate else None

    return WorkloadEconomics(
        workload=w.workload, precision=w.precision, num_gpus=w.num_gpus,
        tokens_per_s_per_gpu=tps, usd_per_million_tokens=per_million(tps),
        reference_usd_per_million_tokens=per_million(ref_tps),
        joules_per_token=round(watts / tps, 4) if watts and tps else None,
    )


def price(evidence: Evidence, scorecard: Scorecard, reference: ReferenceData) -> PriceAdvice:
    """Parity and recommended $/GPU-hour, term cost, and every step of the arithmetic."""
    pricing = evidence.manifest.pricing
    if pricing is None:
        raise CmaxError(
            "the manifest has no [pricing] table, so there is no quote to advise on",
            file=_manifest_label(evidence), field="pricing",
            expected="[pricing] usd_per_gpu_hour = <quoted $/GPU-hour>",
            fix="add a [pricing] table with the quoted usd_per_gpu_hour (and term_months)",
        )
    quoted = pricing.usd_per_gpu_hour
    system = evidence.manifest.system
    gpus = system.nodes * system.gpus_per_node
    hours = HOURS_PER_MONTH * pricing.term_months
    steps: list[str] = [
        f"1. Quote: {_usd(quoted)}/GPU-hour for {gpus:,} GPUs ({system.nodes} × "
        f"{system.gpus_per_node} {system.gpu}) over {pricing.term_months} months "
        f"(manifest [pricing])."
    ]

    throughput, lines = suite_throughput(scorecard.workloads)
    if throughput is None:
        steps.append("2. Throughput ratio: no run could be compared with a reference baseline, "
                      "so there is no defensible parity price. Run the reference suite "
                      "(cmax validate lists what is missing).")
    else:
        joined = "; ".join(lines)
        how = ("the only comparable run" if len(lines) == 1
               else f"geometric mean of {len(lines)} comparable runs")
        steps.append(f"2. Throughput ratio (provider ÷ reference, steady-state window): "
                     f"{throughput:.4f}, {how} ({joined}).")

    rel = scorecard.reliability
    if rel is None:
        goodput = 1.0
        steps.append("3. Goodput ratio: no reliability evidence in the bundle, so 1.0 is "
                     "assumed (unverified): interruptions are not priced in.")
    else:
        goodput = rel.goodput_ratio
        steps.append(
            f"3. Goodput ratio: expected effective training time {rel.ettr:.4f} ÷ reference "
            f"{rel.reference_ettr:.4f} = {goodput:.4f}, for a {rel.job_gpus:,}-GPU job with "
            f"{rel.checkpoint_interval_min:g}-min checkpoints and {rel.restart_min:g}-min "
            f"restarts; measured {rel.per_1000_gpu_days:.4f} interruptions per 1,000 GPU-days "
            f"vs {rel.reference_per_1000_gpu_days:.4f} for Llama 3 405B "
            f"({rel.reference_source}).")

    parity = recommended = adjustment = None
    if throughput is not None:
        parity = round(quoted * throughput * goodput, 4)
        steps.append(
            f"4. Parity price = quote × throughput ratio × goodput ratio = {_usd(quoted)} × "
            f"{throughput:.4f} × {goodput:.4f} = ${parity:.4f}/GPU-hour: at this price each "
            "dollar buys the same useful training work as a reference-grade cluster at the "
            "quoted price.")
        recommended = _cents(min(quoted, parity))
        adjustment = round((recommended / quoted - 1.0) * 100.0, 2)
        if parity >= quoted:
            steps.append(
                f"5. Target: the cluster delivers at or above reference value, so no discount "
                f"is justified by performance: target = the quote, {_usd(recommended)}.")
        else:
            steps.append(
                f"5. Target = min(quote, parity) rounded to the cent = {_usd(recommended)}"
                f"/GPU-hour, {adjustment:+.2f}% against the quote. This is cmax's derivation "
                "(pay in proportion to delivered performance), not a SemiAnalysis figure.")
        low_high = [(w.ci_low, w.ci_high) for w in scorecard.workloads
                    if w.verdict in COMPARABLE_VERDICTS and w.ratio is not None
                    and w.ci_low is not None and w.ci_high is not None]
        if parity < quoted and low_high and len(low_high) == len(lines):
            lo = geometric_mean([a for a, _ in low_high])
            hi = geometric_mean([b for _, b in low_high])
            steps.append(
                f"   Using each run's 95% confidence bounds instead of its point ratio puts "
                f"parity between ${quoted * lo * goodput:.4f} and "
                f"${quoted * hi * goodput:.4f}/GPU-hour; a provider may argue for the upper "
                "end.")

    term_cost = quoted * gpus * hours
    if rel is None:
        loss = 0.0
        loss_text = "goodput loss not estimated (no reliability evidence)"
    else:
        loss = term_cost * (1.0 - rel.ettr)
        loss_text = (f"goodput loss = term cost × (1 − E[ETTR]) = {_usd(term_cost)} × "
                     f"{1.0 - rel.ettr:.4f} = {_usd(loss)}")
    sla = scorecard.sla
    if sla is None:
        credit = 0.0
        credit_text = "SLA credits not estimated (no [sla] terms or no incident log)"
    else:
        credit = term_cost * sla.credit_pct / 100.0
        credit_text = (f"SLA credits = term cost × {sla.credit_pct:.4f}% owed in the measured "
                       f"period (measured uptime {sla.measured_uptime_pct:.3f}% vs contracted "
                       f"{sla.contracted_uptime_pct:g}%, {sla.node_months_below} of "
                       f"{sla.node_months} node-months below) = {_usd(credit)}; credits are "
                       "claim-only at every major cloud, so keep the incident logs")
    effective = term_cost + loss - credit
    steps.append(
        f"6. Term cost at the quote: {_usd(quoted)} × {gpus:,} GPUs × {hours:,.0f} h "
        f"({pricing.term_months} × {HOURS_PER_MONTH:g} h) = {_usd(term_cost)}; {loss_text}; "
        f"{credit_text}. Effective term cost = term cost + goodput loss − SLA credits = "
        f"{_usd(effective)} (goodput loss is counted as an expense, as in SemiAnalysis' TCO "
        "model).")

    watts, watts_source = _watts(evidence, reference)
    economics = [_economics(w, quoted, watts) for w in scorecard.workloads
                 if w.tokens_per_s_per_gpu]
    if economics:
        steps.append(
            f"7. $ per million tokens = quote × 10^6 ÷ (tokens/s/GPU × 3,600); J/token = GPU "
            f"power ÷ tokens/s/GPU with {watts_source}"
            + (f": {watts:g} W." if watts else "."))
    steps.append(f"Context: tier {scorecard.tier} (score {scorecard.score:.1f}/100, rubric "
                 f"{scorecard.rubric}); Exemplar-style suite: "
                 f"{'pass' if scorecard.exemplar_pass else 'fail'}.")
    return PriceAdvice(
        quoted_usd_per_gpu_hour=quoted, throughput_ratio=(None if throughput is None
                                                          else round(throughput, 6)),
        goodput_ratio=round(goodput, 6), parity_usd_per_gpu_hour=parity,
        recommended_usd_per_gpu_hour=recommended, adjustment_pct=adjustment,
        term_months=pricing.term_months, contract_gpus=gpus, term_cost_usd=round(term_cost, 2),
        goodput_loss_usd=round(loss, 2), sla_credit_usd=round(credit, 2),
        effective_term_cost_usd=round(effective, 2), workloads=economics, reasoning=steps,
    )
