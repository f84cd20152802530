"""Price advice: what the capacity is worth per GPU-hour, and what to ask for.

The principle: a GPU-hour is worth what it delivers. If a cluster trains at 90 % of the
reference speed and loses more time to interruptions than the reference would, paying the
quoted price means paying more per unit of useful work than the quote suggests. The parity
price — quote × throughput ratio × goodput ratio — is the price at which each dollar buys the
same useful work as a reference-grade cluster at the quoted price. Paying in proportion to
delivered performance is cmax's derivation, not a SemiAnalysis figure, and the reasoning says
so. The ask never exceeds the quote: a faster-than-reference cluster justifies
paying the quote, not volunteering more.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

from cmax.errors import CmaxError
from cmax.ingest.evidence import Evidence
from cmax.judgement.bar import bar_verdict
from cmax.price.drivers import HOURS_PER_MONTH
from cmax.price.drivers import drivers as _drivers
from cmax.price.drivers import usd as _usd
from cmax.price.tokens import (
    Offer,
    best_by_key,
    default_basket,
    token_costs,
    weighted_cost,
)
from cmax.price.units import check_quote_unit
from cmax.score.performance import suite_throughput
from cmax.score.reference_api import ReferenceData, RefView, num, optional_lookup, text
from cmax.score.stats import geometric_mean
from cmax.score.verdicts import rated, serving_rated, serving_standing, why_no_ratio
from cmax.scorecard import (
    PriceAdvice,
    Scorecard,
    WorkloadEconomics,
    WorkloadResult,
)
from cmax.states import NOT_ASSESSED
from cmax.submission.basket import parse_basket
from cmax.submission.manifest import MANIFEST_NAME
from cmax.throughput import tokens_per_s_per_gpu
from cmax.throughput import usd_per_million_tokens as _per_million

_STEP_NUMBER = re.compile(r"^\d+\. ")


def numbered(steps: list[str]) -> list[str]:
    """The reasoning's steps numbered 1, 2, 3 … in the order given: a step that does not apply
    (no parity price without a compared run) is left out, and the numbers shown must not skip
    (1, 2, 3, 6, 7 read as steps lost). Indented lines continue the step above."""
    out, n = [], 0
    for step in steps:
        if _STEP_NUMBER.match(step):
            n += 1
            step = _STEP_NUMBER.sub(f"{n}. ", step, count=1)
        out.append(step)
    return out

NO_RELIABILITY = "no incident log in the bundle ([reliability] in cmax.toml)"


def sla_gap(evidence: Evidence) -> str:
    """Why the SLA credit is not assessed, in the bundle's own terms."""
    if evidence.manifest.sla is None:
        return "no [sla] terms in cmax.toml"
    return f"{NO_RELIABILITY}: an outage nobody recorded is not a zero credit"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _cents(value: float) -> float:
    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


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
        return tokens_per_s_per_gpu(base.gbs, base.seq_len, base.step_time_s, w.num_gpus)
    return None


def _economics(card: Scorecard, w: WorkloadResult, quoted: float, watts: float | None,
               goodput: float) -> WorkloadEconomics:
    """A run's $ per million tokens with interruptions priced in (÷ the goodput ratio),
    the same figure as its token cost: the table printed 3.3611 and the basket 3.3647 for
    one workload. The reference's is at reference speed and the reference's goodput.

    Priced only as the price's throughput ratio counts the run (:func:`rated`, its
    judgement's verdict at the bar with no error bearing on it): a withheld, unverified or
    unrated run's measured rate would price tokens the evidence has not earned (an fp8 run
    declared bf16 read $2.15 against a bf16 reference's $3.29), so its $ and J figures are
    None and the row carries its judgement's verdict and the errors instead. The reference's
    figure is None when the log contradicts the identity the reference was looked up by: it
    is another workload's cost."""
    tps = w.tokens_per_s_per_gpu
    judged = card.judgement("training_run", w.run_id or "")
    verdict = (judged.verdict if judged is not None and judged.verdict is not None
               else bar_verdict(w.verdict, w.ratio, errors=bool(w.validation_errors)))
    counted = rated(w)
    ref_tps = None if w.log_states else _reference_tps(w)

    def per_million(rate: float | None, ratio: float = 1.0) -> float | None:
        return round(_per_million(quoted, rate) / ratio, 4) if rate and ratio > 0 else None

    return WorkloadEconomics(
        workload=w.workload, precision=w.precision, num_gpus=w.num_gpus, log=w.log,
        run_id=w.run_id, log_states=w.log_states, verdict=verdict,
        withheld_by=list(w.validation_errors), priced=counted, tokens_per_s_per_gpu=tps,
        usd_per_million_tokens=per_million(tps, goodput) if counted else None,
        reference_usd_per_million_tokens=per_million(ref_tps),
        joules_per_token=round(watts / tps, 4) if counted and watts and tps else None,
    )


def _standing(e: WorkloadEconomics) -> str:
    """Why a run is not priced, as the reasoning says it."""
    errors = ", ".join(e.withheld_by)
    if e.verdict == "withheld":
        return f"withheld by {errors}" if errors else "withheld"
    if errors:
        return f"{e.verdict}, contested by {errors}"
    return ("not verified: its identity rests on cmax.toml" if e.verdict == "unverified"
            else "not rated against a reference")


def serving_lines(scorecard: Scorecard) -> list[str]:
    """One line per serving result whose ratio may set an inference contract's price."""
    out = []
    for r in scorecard.inference:
        if not serving_rated(r) or r.ratio is None:
            continue
        ci = (f", 95% CI {r.ci_low:.4f}-{r.ci_high:.4f}"
              if r.ci_low is not None and r.ci_high is not None else "")
        out.append(f"{r.model} {r.precision} {r.input_len}/{r.output_len} on {r.gpus} GPUs "
                   f"({r.comparison}): {r.ratio:.4f}{ci} ({r.verdict})")
    return out


def _serving_money(scorecard: Scorecard, quoted: float, ask: float | None) -> list[str]:
    """$ per million output and input tokens of each priced serving result, at the quote, at
    the ask and at reference speed: what a serving buyer compares offers on. A result with a
    measured rate that is not priced (its figure not earned: ``InferenceResult.priced``) is
    named with why, as an unpriced training run is."""
    out = []
    unpriced = [r for r in scorecard.inference if not r.priced and r.output_tok_s_per_gpu]
    for r in scorecard.inference:
        if not r.priced or r.usd_per_million_output_tokens is None or not r.output_tok_s_per_gpu:
            continue
        at_ask = (f", at the ask ${_per_million(ask, r.output_tok_s_per_gpu):.3f}"
                  if ask is not None and ask < quoted else "")
        ref = (f", at reference speed ${r.usd_per_million_output_tokens_at_reference:.3f}"
               if r.usd_per_million_output_tokens_at_reference is not None else "")
        inp = (f"; input tokens ${r.usd_per_million_input_tokens:.3f} per million"
               if r.usd_per_million_input_tokens is not None else "")
        out.append(f"   Serving {r.model} {r.precision} {r.input_len}/{r.output_len}: "
                   f"${r.usd_per_million_output_tokens:.3f} per million output tokens at the "
                   f"quote ({r.output_tok_s_per_gpu:,.0f} tok/s per GPU){at_ask}{ref}{inp} "
                   "(each figure charges the whole GPU-hour to that token kind).")
    if unpriced:
        out.append("   Not priced, their figures not earned (the scorecard shows their measured "
                   "rate and why): " + "; ".join(
                       f"{r.model} {r.precision} {r.input_len}/{r.output_len} on {r.gpus} "
                       f"GPU{'s' if r.gpus != 1 else ''} "
                       f"({r.source_file}): {serving_standing(scorecard, r)}" for r in unpriced)
                   + ".")
    if out:
        out.insert(0, "9. $ per million serving tokens = quoted × 10^6 ÷ (tokens/s per GPU × "
                      "3,600):")
    return out


def price(evidence: Evidence, scorecard: Scorecard, reference: ReferenceData, *,
          workload: str | None = None) -> PriceAdvice:
    """Parity price and ask per GPU-hour, term cost, credit owed, and the arithmetic.

    Effective-cost model (docs/scoring.md): effective term cost = term cost at the quote +
    goodput loss. SLA credit owed is the measured period's bill × the credit percentage, per
    node-month as contracted; it is reported beside, never subtracted, so a less reliable
    provider can never look cheaper. A projection of the credit rate over the term is
    labelled as one.
    """
    pricing = evidence.manifest.pricing
    if pricing is None:
        raise CmaxError(
            "the manifest has no [pricing] table, so there is no quote to advise on",
            file=_manifest_label(evidence), field="pricing",
            expected="[pricing] usd_per_gpu_hour = <quoted $/GPU-hour>",
            fix="add a [pricing] table with the quoted usd_per_gpu_hour (and term_months)",
        )
    system = evidence.manifest.system
    canonical = optional_lookup(lambda: reference.gpu(system.gpu))
    check_quote_unit(evidence.manifest, reference.economics,
                     str(getattr(canonical, "id", system.gpu)),
                     source=lambda: _manifest_label(evidence))
    quoted = pricing.usd_per_gpu_hour
    gpus = system.nodes * system.gpus_per_node
    hours = HOURS_PER_MONTH * pricing.term_months
    converted = ""
    if pricing.currency != "USD" and pricing.quote_per_gpu_hour and pricing.usd_per_currency_unit:
        source = f", {pricing.rate_source}" if pricing.rate_source else ""
        converted = (f": {pricing.quote_per_gpu_hour:g} {pricing.currency} × "
                     f"{pricing.usd_per_currency_unit:g} USD per {pricing.currency} (the rate "
                     f"the manifest states{source})")
    steps: list[str] = [
        f"1. Quoted price: {_usd(quoted)}/GPU-hour{converted} for {gpus:,} GPUs "
        f"({system.nodes} × {system.gpus_per_node} {system.gpu}) over {pricing.term_months} "
        "months (manifest [pricing])."
    ]

    throughput, lines = suite_throughput(scorecard.workloads)
    serving = throughput is None and bool(lines := serving_lines(scorecard))
    if serving:
        throughput = geometric_mean([r.ratio for r in scorecard.inference
                                     if serving_rated(r) and r.ratio is not None])
        how = ("the only comparable serving result" if len(lines) == 1
               else f"geometric mean of {len(lines)} comparable serving results")
        steps.append(f"2. Throughput ratio (an inference contract: provider output tok/s per GPU "
                     f"÷ the public reference at the same model, GPU, precision and lengths): "
                     f"{throughput:.4f}, {how} ({'; '.join(lines)}).")
    elif throughput is None:
        steps.append(f"2. Throughput ratio: {why_no_ratio(scorecard.workloads)}, so there is "
                     "no defensible parity price. Run the reference suite (cmax validate lists "
                     "what is missing).")
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
            f"3. Goodput ratio: expected effective training time ratio (E[ETTR], the share of "
            f"paid time that is useful training) {rel.ettr:.4f} ÷ reference "
            f"{rel.reference_ettr:.4f} = {goodput:.4f}, for a {rel.job_gpus:,}-GPU job with "
            f"{rel.checkpoint_interval_min:g}-min checkpoints and {rel.restart_min:g}-min "
            f"restarts; measured {rel.per_1000_gpu_days:.4f} interruptions per 1,000 GPU-days "
            f"vs {rel.reference_per_1000_gpu_days:.4f} for Llama 3 405B "
            f"({rel.reference_source}).")
    ckpt = scorecard.checkpoint
    if ckpt is not None:
        goodput *= ckpt.ratio
        steps.append(
            f"   Checkpoint time (a goodput term): a {ckpt.model} checkpoint of "
            f"{ckpt.size_gib:,.0f} GiB takes {ckpt.save_s:.1f} s to save here ({ckpt.basis}), "
            f"{ckpt.share:.2%} of wall time at one save per {ckpt.interval_min:g} min "
            f"({ckpt.interval_basis}), against {ckpt.reference_save_s:.1f} s, "
            f"{ckpt.reference_share:.2%}, at the reference ({ckpt.reference_source}): "
            f"× (1 − {ckpt.share:.4f}) ÷ (1 − {ckpt.reference_share:.4f}) = × {ckpt.ratio:.4f}, "
            f"goodput ratio {goodput:.4f}.")

    parity = ask = adjustment = per_reference = None
    if throughput is not None:
        parity = round(quoted * throughput * goodput, 4)
        if throughput * goodput > 0:
            per_reference = round(quoted / (throughput * goodput), 4)
        steps.append(
            f"4. Parity price = quoted × throughput ratio × goodput ratio = {_usd(quoted)} × "
            f"{throughput:.4f} × {goodput:.4f} = ${parity:.4f}/GPU-hour: at this price each "
            f"dollar buys the same useful {'serving' if serving else 'training'} work as a "
            "reference-grade cluster at the quoted price.")
        ask = _cents(min(quoted, parity))
        adjustment = round((ask / quoted - 1.0) * 100.0, 2)
        if parity >= quoted:
            steps.append(
                f"5. Ask: the cluster delivers at or above reference value, so performance "
                f"justifies no discount: ask = the quoted price, {_usd(ask)}.")
        else:
            steps.append(
                f"5. Ask = min(quoted, parity) rounded to the cent = {_usd(ask)}"
                f"/GPU-hour, {adjustment:+.2f}% against the quoted price (cmax's model: pay "
                "in proportion to delivered work).")
        if per_reference is not None:
            steps.append(
                f"   Value: quoted ÷ (throughput ratio × goodput ratio) = "
                f"${per_reference:.4f} per reference-grade GPU-hour of work, the figure to "
                "compare providers on.")
        low_high = ([(r.ci_low, r.ci_high) for r in scorecard.inference
                     if serving_rated(r) and r.ci_low is not None and r.ci_high is not None]
                    if serving else
                    [(w.ci_low, w.ci_high) for w in scorecard.workloads
                     if rated(w) and w.ci_low is not None and w.ci_high is not None])
        if parity < quoted and low_high and len(low_high) == len(lines):
            lo = geometric_mean([a for a, _ in low_high])
            hi = geometric_mean([b for _, b in low_high])
            steps.append(
                f"   Each run's 95% confidence bounds instead of its point ratio put parity "
                f"between ${quoted * lo * goodput:.4f} and ${quoted * hi * goodput:.4f}"
                "/GPU-hour.")

    term_cost = quoted * gpus * hours
    loss: float | None = None
    effective: float | None = None
    term_text = (f"6. Term cost at the quoted price: {_usd(quoted)} × {gpus:,} GPUs × "
                 f"{hours:,.0f} h ({pricing.term_months} × {HOURS_PER_MONTH:g} h) = "
                 f"{_usd(term_cost)}; ")
    if rel is None:
        steps.append(
            term_text + f"goodput loss {NOT_ASSESSED} ({NO_RELIABILITY}), so the effective "
            "term cost (term cost + goodput loss) is not assessed either: the term cost is a "
            "floor, not an estimate.")
    else:
        loss = term_cost * (1.0 - rel.ettr)
        effective = term_cost + loss
        steps.append(
            term_text + f"goodput loss = term cost × (1 − E[ETTR]) = {_usd(term_cost)} × "
            f"{1.0 - rel.ettr:.4f} = {_usd(loss)}. Effective term cost = term cost + goodput "
            f"loss = {_usd(effective)} (lost time is counted as an expense, as in "
            "SemiAnalysis' TCO model; SLA credits are not subtracted, so lower reliability "
            "can only raise it).")

    sla = scorecard.sla
    period_bill: float | None = None
    credit: float | None = None
    projection: float | None = None
    period_gpu_hours = 0.0
    if sla is None:
        steps.append(f"7. SLA credit: {NOT_ASSESSED} ({sla_gap(evidence)}).")
    else:
        period_gpu_hours = sla.node_hours * system.gpus_per_node
        period_bill = quoted * period_gpu_hours
        credit = period_bill * sla.credit_pct / 100.0
        projection = term_cost * sla.credit_pct / 100.0
        steps.append(
            f"7. SLA credit owed = the measured period's bill × the credit percentage: "
            f"{_usd(quoted)} × {system.gpus_per_node} GPUs/node × {sla.node_hours:,.0f} "
            f"node-hours = {_usd(period_bill)}; × {sla.credit_pct:.4f}% (credit tiers applied "
            f"per node-month, {sla.node_months_below} of {sla.node_months} node-months below "
            f"the contracted {sla.contracted_uptime_pct:g}%) = {_usd(credit)} owed. "
            f"Projection only, not owed: the same rate over the {pricing.term_months}-month "
            f"term would be {_usd(projection)}. Credits are claim-only at every major cloud: "
            "keep the incident logs.")

    watts, watts_source = _watts(evidence, reference)
    economics = [_economics(scorecard, w, quoted, watts, goodput) for w in scorecard.workloads
                 if w.tokens_per_s_per_gpu]
    if economics:
        steps.append(
            f"8. $ per million tokens = quoted × 10^6 ÷ (tokens/s/GPU × 3,600) ÷ goodput ratio "
            f"(interruptions priced in); J/token = GPU "
            f"power ÷ tokens/s/GPU with {watts_source}"
            + (f": {watts:g} W." if watts else "."))
        unpriced = [e for e in economics if not e.priced]
        if unpriced:
            steps.append("   Not priced, their figures not earned (the table shows their "
                         "measured rate and why): " + "; ".join(
                             f"{e.log} ({_standing(e)})" for e in unpriced) + ".")
    steps.extend(_serving_money(scorecard, quoted, ask))
    gpu_id = str(getattr(canonical, "id", system.gpu))
    scales = [w.num_gpus for w in scorecard.workloads if w.tokens_per_s_per_gpu]
    offer = Offer(gpu=gpu_id, quote=quoted, goodput_ratio=goodput, throughput_ratio=throughput,
                  watts_per_gpu=watts, scale=max(scales, default=gpus))
    # the buyer's workload: --workload, else [pricing] workloads, else what the offer measured
    wanted = (parse_basket(workload) if workload
              else parse_basket(pricing.workloads, field="[pricing] workloads")
              if pricing.workloads else {})
    costs = token_costs(scorecard.workloads, offer, RefView(reference), basket=wanted)
    basket = wanted or default_basket(costs)
    basket_usd = weighted_cost(
        {k: c.usd_per_million_tokens for k, c in best_by_key(costs).items()}, basket)
    steps.append(f"Context: tier {scorecard.tier} (score {scorecard.score:.1f}/100, rubric "
                 f"{scorecard.rubric}); Exemplar (performance only): "
                 f"{scorecard.exemplar_state.label}.")
    return PriceAdvice(
        quoted_usd_per_gpu_hour=quoted, quote_currency=pricing.currency,
        quote_in_currency=(pricing.quote_per_gpu_hour if pricing.currency != "USD" else None),
        usd_per_currency_unit=pricing.usd_per_currency_unit,
        throughput_ratio=None if throughput is None else round(throughput, 6),
        goodput_ratio=round(goodput, 6), parity_usd_per_gpu_hour=parity,
        ask_usd_per_gpu_hour=ask, adjustment_pct=adjustment,
        usd_per_reference_gpu_hour=per_reference,
        term_months=pricing.term_months, contract_gpus=gpus, term_cost_usd=round(term_cost, 2),
        ask_term_cost_usd=None if ask is None else round(ask * gpus * hours, 2),
        goodput_loss_usd=_rounded(loss), sla_period_bill_usd=_rounded(period_bill),
        sla_credit_usd=_rounded(credit), sla_credit_pct=None if sla is None else sla.credit_pct,
        sla_credit_term_projection_usd=_rounded(projection),
        effective_term_cost_usd=_rounded(effective),
        drivers=_drivers(quoted, throughput, goodput, scorecard, credit, period_gpu_hours),
        workloads=economics, token_costs=costs,
        usd_per_million_tokens=None if basket_usd is None else round(basket_usd, 4),
        token_basket=basket, reasoning=numbered(steps),
    )
