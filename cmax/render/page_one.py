"""Page 1 of every report, built once from the scorecard: the decision, the tier and score,
the Exemplar state, the quote and the ask, the price drivers and the key figures.

The HTML scorecard, the negotiation brief, the text of ``cmax score`` and ``cmax price`` and
the table of ``cmax demo`` all read one :class:`PageOne` (:func:`page_one`), so they cannot
word or round a figure differently; templates and text renderers only lay its strings out.
Every figure is selected and phrased from the Scorecard and its PriceAdvice: money is computed
in :mod:`cmax.price`, verdicts in :mod:`cmax.judgement` and :mod:`cmax.score`.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, replace
from typing import Literal

from cmax.render import formatting as fmt
from cmax.render.provenance import Source, grouped, source
from cmax.score.verdicts import rated, serving_rated, why_no_ratio
from cmax.scorecard import (
    POWER_CLAIM,
    TIERS,
    ClaimKind,
    Gate,
    Scorecard,
    SlaResult,
    Tier,
    WorkloadResult,
    tier_rank,
)
from cmax.states import AT_THE_BAR, State, Tone, verdict_label

Decision = Literal["buy", "buy at the ask", "do not sign without fixes", "not rated"]

_SLA_WITNESS = {"monitoring": "the buyer's monitoring",
                "both": "the buyer's monitoring and the incident log"}
"""What an SLA figure rests on where the buyer's monitoring is a witness, in the report's words
(cmax/resolve/monitoring.py); a figure from the incident log alone reads as it always did."""


def _sla_witness(sla: SlaResult) -> str:
    """``; witness: ...; in breach: ...`` for an SLA the monitoring witnessed, else nothing."""
    if sla.witness not in _SLA_WITNESS:
        return ""
    nodes = sla.nodes_in_breach
    breach = (f"; in breach: {', '.join(nodes[:3])}"
              + (f" and {len(nodes) - 3} more" if len(nodes) > 3 else "")) if nodes else ""
    return f"; witness: {_SLA_WITNESS[sla.witness]}{breach}"


@dataclass(frozen=True)
class Figure:
    """One figure a buyer reads: its name, the value and the evidence behind it in words, and
    the tone its tile is drawn in."""

    label: str
    value: str
    detail: str
    tone: Tone
    source: Source | None = None
    """what the figure rests on (its claim's judgement); None for a figure of no claim"""

def why_not_compared(card: Scorecard) -> str:
    """'no reference', 'not comparable, no reference': why the runs were not compared."""
    return ", ".join(sorted({
        verdict_label(w.verdict).removeprefix("not evaluated (").removesuffix(")")
        for w in card.workloads}))


def uncompared_runs(card: Scorecard) -> str:
    """What happened to runs none of which is at the bar: those measured against a reference
    but held off it (not verified) say so, with their ratio and why; only the rest are said
    not to have been compared."""
    total = len(card.workloads)
    held = [w for w in card.workloads if w.ratio is not None]
    missed = [w for w in card.workloads if w.ratio is None]

    def runs(n: int) -> str:
        noun = "training run" if total == 1 else "training runs"
        return f"the {total} {noun}" if n == total else f"{n} of the {total} {noun}"

    parts = []
    if held:
        labels = ", ".join(sorted({verdict_label(w.verdict) for w in held}))
        reasons = "; ".join(dict.fromkeys(
            j.reason for w in held
            if (j := card.judgement("training_run", w.run_id or "")) is not None and j.reason))
        one = len(held) == 1
        parts.append(f"{runs(len(held))} {'was' if one else 'were'} compared with a reference "
                     f"({', '.join(fmt.pct(w.ratio) for w in held)}) but "
                     f"{'is' if one else 'are'} {labels}" + (f": {reasons}" if reasons else ""))
    if missed:
        why = ", ".join(sorted({verdict_label(w.verdict).removeprefix("not evaluated (")
                                .removesuffix(")") for w in missed}))
        parts.append(f"none of the {total} training runs could be compared with a reference "
                     f"({why})" if len(missed) == total > 1 else
                     f"{runs(len(missed))} could not be compared with a reference ({why})")
    so = ("so no throughput figure counts toward the rating or the price" if held else
          "so nothing about throughput or its price is measured")
    return "; ".join(parts) + f", {so}"


def compared_runs(card: Scorecard) -> list[WorkloadResult]:
    """Runs measured against a reference (passed, failed or inconclusive)."""
    return [w for w in card.workloads
            if w.ratio is not None and w.verdict in AT_THE_BAR]


@dataclass(frozen=True)
class EvidenceGap:
    """Page 1's warning when the evidence is too thin to rate: why, the validation errors,
    and what to submit to earn a rating."""

    headline: str
    errors: int
    submit: list[str]


def evidence_gap(card: Scorecard) -> EvidenceGap | None:
    """None when the evidence supports a rating; otherwise what is missing. Thin means no
    category could be scored, or runs were submitted and none could be compared."""
    errors = card.finding_counts.get("error", 0)
    if card.score_state is State.NOT_SCORED:
        headline = ("Not rated: no category could be scored from the evidence submitted. "
                    f"{card.tier} is where the rules leave a bundle without evidence, not a "
                    "measurement.")
    elif card.workloads and not compared_runs(card):
        headline = f"Thin evidence: {uncompared_runs(card)}."
    else:
        return None
    return EvidenceGap(headline + _uncompared_mlperf(card), errors, missing_evidence(card))


def _uncompared_mlperf(card: Scorecard) -> str:
    """The MLPerf results a thin bundle did submit and why they count for nothing: an
    MLPerf-only bundle otherwise read as if it held no evidence at all."""
    missed = [m for m in card.mlperf if m.ratio is None]
    if not missed:
        return ""
    why = next((n for m in missed for n in m.notes if n.startswith("no ")), None)
    n = len(card.mlperf)
    which = ("The MLPerf result submitted" if n == 1 else
             f"None of the {n} MLPerf results submitted" if len(missed) == n else
             f"{len(missed)} of the {n} MLPerf results submitted")
    verb = "could be" if which.startswith("None") else "could not be"
    return f" {which} {verb} compared with a reference" + (f": {why}." if why else ".")

def workload_line(w: WorkloadResult) -> str:
    return fmt.run_label(w)


EXEMPLAR_SCOPE = ("Exemplar covers training throughput only (every suite workload above the "
                  "bar with 95% confidence); it says nothing about networking, reliability, "
                  "security or price and is not a recommendation: the tier is.")


def exemplar_text(card: Scorecard) -> str:
    """Why the Exemplar suite is in its state (the state itself is ``card.exemplar_state``):
    the judgement's own reason, so every report says the same."""
    return f"{card.exemplar.reason}."


def _serving_key(card: Scorecard) -> Figure:
    """A serving bundle's first tile: its results compared like with like, the lowest ratio."""
    compared = [r for r in card.inference if serving_rated(r)]
    if not compared:
        return Figure("Serving throughput", "none compared",
                         f"{len(card.inference)} serving result(s), none compared like with "
                         "like on a GPU count its own file states", "warn")
    worst = min(compared, key=lambda r: r.ratio or 0.0)
    passed = sum(1 for r in compared if r.verdict == "pass")
    tone: Tone = ("good" if passed == len(compared)
                  else "bad" if any(r.verdict == "fail" for r in compared) else "warn")
    return Figure("Serving throughput", f"{passed} of {len(compared)} results pass",
                     f"lowest {fmt.pct(worst.ratio)} of reference, {worst.model} "
                     f"{worst.precision} {worst.input_len}/{worst.output_len}", tone)


def _key_source(card: Scorecard, key: Figure) -> Source | None:
    """The judgement behind a key figure: the run or serving result its value names (the
    lowest), or the kind's one claim; none for a figure with nothing provided or compared."""
    if key.value in ("not provided", "none compared"):
        return None
    if key.label == "Training throughput":
        runs = [w for w in card.workloads if w.ratio is not None]
        worst = min(runs, key=lambda w: w.ratio or 0.0)
        return source(card, "training_run", worst.run_id or "")
    if key.label == "Serving throughput":
        rated = [r for r in card.inference if serving_rated(r)]
        lowest = min(rated, key=lambda r: r.ratio or 0.0)
        return source(card, "serving_result", lowest.entry)
    kind = _KEY_CLAIMS.get(key.label)
    return source(card, kind, kind) if kind is not None else None


_KEY_CLAIMS: dict[str, ClaimKind] = {"Network bus bandwidth": "fabric",
                                     "Interruptions": "reliability", "SLA uptime": "sla",
                                     "ClusterMAX audit": "audit"}


def key_numbers(card: Scorecard) -> list[Figure]:
    """Six numbers a buyer reads first; each says 'not provided' rather than disappearing,
    and each measured one what it rests on."""
    return [replace(k, source=_key_source(card, k)) for k in _key_numbers(card)]


def _key_numbers(card: Scorecard) -> list[Figure]:
    out: list[Figure] = []
    compared = [w for w in card.workloads if w.ratio is not None]
    if compared:
        worst = min(compared, key=lambda w: w.ratio or 0.0)
        passed = sum(1 for w in card.workloads if w.verdict == "pass")
        tone: Tone = ("good" if passed == len(card.workloads)
                      else "bad" if any(w.verdict == "fail" for w in card.workloads) else "warn")
        out.append(Figure(
            "Training throughput",
            f"{passed} of {len(card.workloads)} "
            + ("run passes" if len(card.workloads) == 1 else "runs pass"),
            f"lowest {fmt.pct(worst.ratio)} of reference "
            f"(CI {fmt.pct_range(worst.ci_low, worst.ci_high)}), {workload_line(worst)}",
            tone,
        ))
    elif card.workloads:
        out.append(Figure("Training throughput", "none compared",
                             f"{len(card.workloads)} run(s) submitted, none could be compared "
                             f"with a reference ({why_not_compared(card)})", "warn"))
    elif card.inference:
        out.append(_serving_key(card))
    else:
        out.append(Figure("Training throughput", "not provided",
                             "no training runs in the bundle", "neutral"))

    nets = [n for n in card.network if n.ratio is not None]
    if nets:
        worst_net = min(nets, key=lambda n: n.ratio or 0.0)
        out.append(Figure(
            "Network bus bandwidth",
            f"{fmt.pct(worst_net.ratio)} of reference",
            f"{worst_net.collective} at {fmt.binary_bytes(worst_net.large_message_bytes)}, "
            f"{worst_net.nodes} nodes: {fmt.num(worst_net.busbw_gbps)} vs "
            f"{fmt.num(worst_net.reference_busbw_gbps)} GB/s",
            "good" if worst_net.verdict == "pass" else "bad" if worst_net.verdict == "fail"
            else "warn",
        ))
    elif card.network:
        n = card.network[0]
        out.append(Figure("Network bus bandwidth", f"{fmt.num(n.busbw_gbps)} GB/s",
                             "no reference for this fabric", "neutral"))
    else:
        out.append(Figure("Network bus bandwidth", "not provided",
                             "no nccl-tests output in the bundle", "neutral"))

    rel = card.reliability
    if rel is not None:
        ratio = rel.ratio_vs_reference
        out.append(Figure(
            "Interruptions",
            f"{fmt.num(rel.per_1000_gpu_days, 2)} / 1,000 GPU-days",
            f"reference {fmt.num(rel.reference_per_1000_gpu_days, 2)}; "
            f"MTBF {fmt.integer(rel.mtbf_gpu_hours)} GPU-hours; "
            f"goodput {fmt.pct(rel.goodput_ratio)} of reference",
            "neutral" if ratio is None else "good" if ratio <= 1.0
            else "warn" if ratio <= 1.5 else "bad",
        ))
    else:
        out.append(Figure("Interruptions", "not provided",
                             "no incident log in the bundle", "neutral"))

    sla = card.sla
    if sla is not None:
        out.append(Figure(
            "SLA uptime",
            f"{fmt.pct_value(sla.measured_uptime_pct, None)} measured",
            f"contracted {fmt.pct_value(sla.contracted_uptime_pct, None)}: "
            + ("met" if sla.met
               else f"missed, {fmt.pct_value(sla.credit_pct, None)} service credit owed")
            + (f"; {sla.node_months_below} of {sla.node_months} node-months below"
               if sla.node_months else "")
            + _sla_witness(sla),
            "good" if sla.met else "bad",
        ))
    else:
        out.append(Figure("SLA uptime", "not provided", "no SLA terms in the manifest",
                             "neutral"))

    audit = card.audit
    if audit is not None:
        counts = audit.counts
        fails, warns = counts.get("FAIL", 0), counts.get("WARNING", 0)
        out.append(Figure(
            "ClusterMAX audit",
            f"{fails} fail · {warns} warn · {counts.get('PASS', 0)} pass",
            f"{sum(counts.values())} checks, {counts.get('SKIPPED', 0)} skipped",
            "bad" if fails else "warn" if warns else "good",
        ))
    else:
        out.append(Figure("ClusterMAX audit", "not provided",
                             "no audit.values.json in the bundle", "neutral"))

    advice = card.price
    if advice is not None and advice.recommended_usd_per_gpu_hour is not None:
        adj = advice.adjustment_pct
        out.append(Figure(
            "Price per GPU-hour",
            f"{fmt.usd(advice.quoted_usd_per_gpu_hour)} quoted → "
            f"{fmt.usd(advice.recommended_usd_per_gpu_hour)}",
            f"parity {fmt.usd(advice.parity_usd_per_gpu_hour)}; "
            f"{fmt.signed_pct(adj)} vs quoted",
            "neutral" if adj is None else "good" if adj >= -2 else "warn" if adj >= -10
            else "bad",
        ))
    elif advice is not None:
        out.append(Figure("Price per GPU-hour", fmt.usd(advice.quoted_usd_per_gpu_hour),
                             "no recommendation: throughput could not be compared", "neutral"))
    else:
        out.append(Figure("Price per GPU-hour", "not provided",
                             "no [pricing] section in the manifest", "neutral"))
    return out


def missing_evidence(card: Scorecard) -> list[str]:
    """What to submit: each kind of evidence the bundle lacks, or submitted but could not
    compare, in the words of a request to the provider."""
    sla = card.sla
    none_compared = bool(card.workloads) and not compared_runs(card)
    serving = bool(card.inference)
    serving_rated_any = any(serving_rated(r) for r in card.inference)
    serving_only = serving and not card.workloads and not card.mlperf
    declared = [f"{r.model} {r.precision} {r.input_len}/{r.output_len}" for r in card.inference
                if r.gpus_basis == "declared"]
    missing = [
        (not card.workloads and not serving, "Provide training runs matched to NVIDIA's "
                                             "reference recipes before a price is agreed."),
        (not card.workloads and serving and not serving_rated_any,
         "Provide serving results a public reference can be compared with, from a tool that "
         "states its GPU count (trtllm-bench --report_json, InferenceX rows), before a price "
         "is agreed."),
        (none_compared, "Provide training runs whose throughput a reference can rate: "
                        + uncompared_runs(card).split(", so ")[0] + "; the findings say why."),
        (not card.network and not serving_only,
         "Provide an nccl-tests all_reduce sweep up to 16 GiB across the contracted nodes."),
        (serving_only and bool(declared), "Provide serving results whose own file states the "
                                          "GPUs that served them (trtllm-bench --report_json, "
                                          "InferenceX rows): the GPU count of "
                                          + ", ".join(declared) + " is only declared."),
        (card.reliability is None, "Provide the interruption log for the last quarter."),
        (sla is None, "Agree per-node monthly uptime and a credit table in the contract."),
        (card.audit is None, "Provide a ClusterMAX audit (`cmax audit` output) of the cluster."),
    ]
    return [text for absent, text in missing if absent]


TIER_MEANING = {
    "Platinum": "excellent on every criterion: buy at the quoted price or negotiate on term",
    "Gold": "strong; buy, and hold the provider to the price the evidence supports",
    "Silver": "usable with gaps; buy only at the price the evidence supports and fix the gaps "
              "in the contract",
    "Bronze": "weak; buy only at a discount, with the fixes below written into the contract",
    "Underperforming": "not recommended: do not sign until the gaps below are fixed",
}



def decision(card: Scorecard) -> Decision:
    """The buyer's decision in three words, read from the scorecard: not rated without any
    scored evidence; do not sign without fixes when the tier is Underperforming or a gate
    holds the tier down; not rated either when a price is quoted but no result could be
    compared with a reference (there is no ask to buy at: a tier earned on the other
    categories says nothing of what the GPU-hour is worth); buy at the ask when the evidence
    supports less than the quote or the tier is below Gold; buy otherwise."""
    if card.score_state is State.NOT_SCORED:
        return "not rated"
    if card.tier == TIERS[-1] or capping_gates(card):
        return "do not sign without fixes"
    p = card.price
    if p is not None and p.ask_usd_per_gpu_hour is None:
        return "not rated"
    below_quote = p is not None and p.adjustment_pct is not None and p.adjustment_pct < 0
    if below_quote or tier_rank(card.tier) > tier_rank("Gold"):
        return "buy at the ask"
    return "buy"


@dataclass(frozen=True)
class Opening:
    """The brief's first lines: the decision, then the ask, before any reason (a buyer who
    reads one line must not leave with a price for an offer the rating says not to sign)."""

    decision: Decision
    headline: str
    ask: str
    detail: str | None


HEADLINES: dict[Decision, str] = {
    "do not sign without fixes": "Do not sign without the fixes below",
    "buy at the ask": "Buy at the ask",
    "buy": "Buy",
    "not rated": "Not rated: do not negotiate on this evidence",
}


def opening(card: Scorecard) -> Opening:
    """The decision and the ask in words (:func:`decision`, the price advice)."""
    said = decision(card)
    p = card.price
    blocked = said in ("do not sign without fixes", "not rated")
    if p is None:
        return Opening(said, HEADLINES[said], "No quote in the bundle, so no price to ask for.",
                       None)
    quoted = fmt.usd(p.quoted_usd_per_gpu_hour)
    if p.ask_usd_per_gpu_hour is None:
        why = ("no serving result could be compared with a reference"
               if card.inference and not card.workloads else why_no_ratio(card.workloads))
        return Opening(said, HEADLINES[said],
                       f"No evidence-based ask against {quoted} quoted: {why}. Do not agree a "
                       "price on the quote alone.", None)
    detail = (f"Parity, the price at which each dollar buys reference-grade work, is "
              f"{fmt.usd(p.parity_usd_per_gpu_hour)}; at the quoted price one reference-grade "
              f"GPU-hour of work costs {fmt.usd(p.usd_per_reference_gpu_hour)}.")
    if p.adjustment_pct is not None and p.adjustment_pct < 0:
        then = "Once they are fixed, ask" if blocked else "Ask"
        return Opening(said, HEADLINES[said],
                       f"{then} for {fmt.usd(p.ask_usd_per_gpu_hour)} per GPU-hour against "
                       f"{quoted} quoted ({fmt.signed_pct(p.adjustment_pct)}).", detail)
    then = "Once they are fixed, the" if blocked else "The"
    return Opening(said, HEADLINES[said],
                   f"{then} quoted {quoted} per GPU-hour is fair on performance: the cluster "
                   "delivers reference value; negotiate on term.", detail)


def verdict_line(card: Scorecard) -> str:
    """One sentence: what to do, from the tier and the ask."""
    meaning = TIER_MEANING.get(card.tier, "")
    p = card.price
    if card.score_state is State.NOT_SCORED:
        return ("Not rated: the bundle holds too little evidence to rate. Do not negotiate on "
                "it: ask for the evidence listed below first."
                + (" No quote in the bundle, so no price to ask for." if p is None else ""))
    if p is None:
        return f"{card.tier}: {meaning}. No quote in the bundle, so no price to ask for."
    if p.ask_usd_per_gpu_hour is None:
        no_run = why_no_ratio(card.workloads)
        no_run = no_run[0].upper() + no_run[1:]
        return (f"{card.tier}: {meaning}. {no_run}, so there is no evidence-based price: ask "
                "for reference-matched runs first.")
    if p.adjustment_pct is not None and p.adjustment_pct < 0:
        then = "Once they are fixed, ask" if card.tier == "Underperforming" else "Ask"
        return (f"{card.tier}: {meaning}. {then} for {fmt.usd(p.ask_usd_per_gpu_hour)} per "
                f"GPU-hour, {fmt.signed_pct(p.adjustment_pct)} against the "
                f"{fmt.usd(p.quoted_usd_per_gpu_hour)} quoted.")
    return (f"{card.tier}: {meaning}. The cluster delivers reference value: the quoted "
            f"{fmt.usd(p.quoted_usd_per_gpu_hour)} per GPU-hour is fair on performance.")


@dataclass(frozen=True)
class Driver:
    name: str
    usd_per_gpu_hour: float
    detail: str
    credit: bool


DRIVER_LEGEND = ("$ per GPU-hour: how much less a GPU-hour is worth than the quote because "
                 "of this; a minus sign means worth more (in the provider's favour); credits "
                 "are owed back on the bill.")


def top_drivers(card: Scorecard, limit: int = 3) -> list[Driver]:
    """The largest effects on what a GPU-hour is worth, as computed by the price advice."""
    from cmax.price.drivers import card_drivers

    ranked = sorted(card_drivers(card), key=lambda d: -abs(d.usd_per_gpu_hour))
    return [Driver(d.name, d.usd_per_gpu_hour, d.detail, d.kind == "credit")
            for d in ranked[:limit]]


_COVERED_BY = {"Training throughput": "Training throughput",
               "Serving throughput": "Serving throughput",
               "Interruptions (goodput)": "Interruptions",
               "Goodput (interruptions and checkpoint time)": "Interruptions",
               "SLA credit owed": "SLA uptime"}


def _uncovered(keys: list[Figure], drivers: list[Driver]) -> list[Figure]:
    """The key-number tiles page 1 still needs once the price drivers are shown: a tile whose
    evidence a driver row already states is left to its section, so page 1 holds on one page."""
    covered = {_COVERED_BY[d.name] for d in drivers if d.name in _COVERED_BY}
    covered.add("Price per GPU-hour")
    return [k for k in keys if k.label not in covered]


def capping_gates(card: Scorecard) -> list[Gate]:
    """The gates that hold the tier where it is: their binding cap is the tier awarded, and
    the tier is below what the score alone reaches (a gate whose cap is above the tier, or one
    that caps at the tier the score gives anyway, changes nothing today)."""
    score_tier = card.score_tier or card.tier
    if tier_rank(card.tier) <= tier_rank(score_tier):
        return []
    return [g for g in card.gates if g.binding_cap == card.tier]




@dataclass(frozen=True)
class Prices:
    """The quote and what the evidence makes of it, as the price tiles state them."""

    quoted: Figure
    parity: Figure
    ask: Figure
    value: Figure
    inputs: str
    """what the price's measured inputs (throughput, goodput) rest on"""


def _labels(sources: list[Source | None]) -> str:
    """'provider-attested', or '2 independently witnessed, 1 provider-attested' when the
    sources differ."""
    counts = Counter(s.provenance for s in sources if s is not None)
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{n} {label}" for label, n in counts.most_common())


def price_inputs(card: Scorecard) -> str:
    """What the price's measured inputs rest on: the runs (or serving results) whose ratios
    make its throughput ratio (:func:`cmax.score.verdicts.rated`), the incident evidence its
    goodput ratio comes from, the quote, and the power per GPU its J/token divides by."""
    runs = [w for w in card.workloads if rated(w)]
    served = [r for r in card.inference if serving_rated(r) and r.ratio is not None]
    if runs:
        throughput = (f"throughput from {len(runs)} run{'s' if len(runs) > 1 else ''}, "
                      + _labels([source(card, "training_run", w.run_id or "") for w in runs]))
    elif served:
        throughput = (f"throughput from {len(served)} serving result"
                      f"{'s' if len(served) > 1 else ''}, "
                      + _labels([source(card, "serving_result", r.entry) for r in served]))
    else:
        throughput = "throughput not measured"
    rel = source(card, "reliability", "reliability") if card.reliability is not None else None
    goodput = (f"goodput {rel.text}" if rel is not None
               else "goodput not assessed (counted as 100%)")
    quote = source(card, "quote", "pricing")
    power = source(card, "energy", POWER_CLAIM)
    return (f"Price inputs: {throughput}; {goodput}"
            + (f"; the quote {quote.text}" if quote is not None else "")
            + (f"; J/token's power per GPU {power.text}." if power is not None else "."))


def _prices(card: Scorecard) -> Prices | None:
    p = card.price
    if p is None:
        return None
    goodput = fmt.pct(p.goodput_ratio) if card.reliability is not None else "not measured"
    adj = p.adjustment_pct
    return Prices(
        quoted=Figure("Quoted", fmt.usd(p.quoted_usd_per_gpu_hour),
                      f"per GPU-hour, {p.term_months} months × {fmt.integer(p.contract_gpus)} "
                      "GPUs", "neutral"),
        parity=Figure("Parity", fmt.usd(p.parity_usd_per_gpu_hour),
                      f"quoted × throughput {fmt.pct(p.throughput_ratio)} × goodput {goodput}",
                      "neutral"),
        ask=Figure("Ask", fmt.usd(p.ask_usd_per_gpu_hour),
                   f"{fmt.signed_pct(adj)} vs quoted: the lower of the two" if adj is not None
                   else "no comparable run, so no evidence-based ask",
                   "neutral" if adj is None else "good" if adj >= 0 else "bad"),
        value=Figure("Value", fmt.usd(p.usd_per_reference_gpu_hour),
                     "per reference-grade GPU-hour of work: quoted ÷ (throughput × goodput)",
                     "neutral"),
        inputs=price_inputs(card))


def _score_line(card: Scorecard) -> str:
    """The line under the tier badge: the weighted score and the gates holding the tier."""
    if card.score_state is State.NOT_SCORED:
        return f"weighted score {card.score_state.label}"
    capping = capping_gates(card)
    unevaluated = sum(1 for g in capping if g.state is State.NOT_EVALUATED)
    held = (f", held at {card.tier} by {len(capping)} gate{'s' if len(capping) > 1 else ''}"
            + (f" ({unevaluated} not evaluated)" if unevaluated else "")) if capping else ""
    return f"weighted score {fmt.num(card.score, 1)} / 100{held}"


@dataclass(frozen=True)
class PageOne:
    """What page 1 says, built once (:func:`page_one`) and read by every surface: the HTML
    scorecard and brief, the text of ``cmax score`` and ``cmax price``, ``cmax demo``'s
    table. Every value is a finished string; a surface that needs a number reads the
    Scorecard, not this."""

    provider: str
    cluster: str
    region: str | None
    gpu: str
    nodes: int
    gpus_per_node: int
    gpus: str
    """the cluster's GPUs (nodes × GPUs per node), formatted"""
    interconnect: str | None
    benchmark_date: dt.date
    rated: bool
    """False when no category could be scored: the tier is then where the rules leave a
    bundle without evidence, not a measurement"""
    tier: Tier
    score: str
    """the weighted score ('72.3') or 'not scored'"""
    score_line: str
    tier_without_declarations: Tier | None
    """the tier with every self-declaration left out, when it differs"""
    decision: Decision
    headline: str
    """the decision in a few words ('Buy at the ask')"""
    verdict: str
    """the tier's meaning and the ask in one sentence"""
    ask: str
    """the ask (or why there is none) in one sentence"""
    ask_detail: str | None
    exemplar: State
    exemplar_reason: str
    exemplar_bar: str
    exemplar_source: Source | None
    prices: Prices | None
    drivers: tuple[Driver, ...]
    keys: tuple[Figure, ...]
    """every key figure, in page order"""
    shown_keys: tuple[Figure, ...]
    """the key figures the scorecard's page 1 shows beside the drivers (:func:`page1_keys`)"""
    gap: EvidenceGap | None
    no_ratio: str
    """why no training run's ratio counts, when none does (:func:`why_no_ratio`)"""
    ratio_held: bool
    """runs were compared with a reference but none earned its figure"""
    basis: tuple[str, ...] = ()
    """the figures above grouped by what they rest on, one sentence per provenance"""


def page_one(card: Scorecard) -> PageOne:
    """Page 1 of ``card``'s reports (its ``price`` is the advice it states)."""
    said = opening(card)
    drivers = top_drivers(card)
    keys = key_numbers(card)
    without = card.tier_without_declarations
    return PageOne(
        provider=card.provider, cluster=card.cluster, region=card.region, gpu=card.gpu,
        nodes=card.nodes, gpus_per_node=card.gpus_per_node,
        gpus=fmt.integer(card.nodes * card.gpus_per_node), interconnect=card.interconnect,
        benchmark_date=card.benchmark_date, rated=card.score_state is not State.NOT_SCORED,
        tier=card.tier,
        score=(card.score_state.label if card.score_state is State.NOT_SCORED
               else fmt.num(card.score, 1)),
        score_line=_score_line(card),
        tier_without_declarations=without if without != card.tier else None,
        decision=said.decision, headline=said.headline, verdict=verdict_line(card),
        ask=said.ask, ask_detail=said.detail, exemplar=card.exemplar_state,
        exemplar_reason=exemplar_text(card), exemplar_bar=fmt.pct(card.exemplar_bar, 0),
        exemplar_source=source(card, "exemplar_suite", "exemplar"),
        prices=_prices(card), drivers=tuple(drivers), keys=tuple(keys),
        shown_keys=tuple(_uncovered(keys, drivers)), gap=evidence_gap(card),
        no_ratio=why_no_ratio(card.workloads),
        ratio_held=any(w.ratio is not None for w in card.workloads),
        basis=tuple(_basis(card, keys)))


def _basis(card: Scorecard, keys: list[Figure]) -> list[str]:
    named = [(_BASIS_NAMES.get(k.label, k.label), k.source) for k in keys
             if k.source is not None]
    exemplar = source(card, "exemplar_suite", "exemplar")
    if exemplar is not None and exemplar.provenance != "not assessed":
        named.append(("Exemplar", exemplar))
    return grouped(named)


_BASIS_NAMES = {"Training throughput": "training throughput", "Serving throughput":
                "serving throughput", "Network bus bandwidth": "fabric",
                "Interruptions": "interruptions", "SLA uptime": "SLA", "ClusterMAX audit": "audit"}
"""The key figures' names in the one-line summary of what they rest on."""
