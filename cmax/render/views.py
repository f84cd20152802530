"""What the reports say beyond page 1 (:mod:`cmax.render.page_one`): the findings that matter
most, the brief's reasons and demands, the leaderboard rows, what would change the tier.

These only select and phrase what is already in the Scorecard; money is computed in
:mod:`cmax.price`, so every number in a report is the number in the attached scorecard JSON.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cmax.findings import SEVERITY_ORDER, Finding, sort_findings
from cmax.render import formatting as fmt
from cmax.render.page_one import (
    Decision,
    capping_gates,
    decision,
    evidence_gap,
    missing_evidence,
    top_drivers,
    workload_line,
)
from cmax.render.provenance import Source, Sources
from cmax.score.tier_changes import CategoryGain, mixed
from cmax.score.tier_changes import tier_changes as decide_tier_changes
from cmax.score.verdicts import rated, serving_rated, serving_standing, withheld_label
from cmax.scorecard import (
    AuditCheck,
    CategoryScore,
    Gate,
    Scorecard,
    WorkloadEconomics,
    WorkloadResult,
    tier_rank,
)
from cmax.states import State, bar_state

AUDIT_ORDER = {"FAIL": 0, "WARNING": 1, "SKIPPED": 2, "PASS": 3}



def run_withheld(card: Scorecard, w: WorkloadResult) -> bool:
    """Whether the run's judgement withholds its pass (errors bear on its evidence)."""
    judged = card.judgement("training_run", w.run_id or "")
    return judged is not None and judged.verdict == "withheld"


def run_verdict(card: Scorecard, w: WorkloadResult) -> str:
    """A training run's verdict as every report prints it: its judgement's ``withheld`` with
    the errors that withhold it (the run's own verdict reads inconclusive or pass, which no
    gate counts), else the run's verdict in words."""
    if run_withheld(card, w):
        return withheld_label(w.validation_errors)
    return fmt.verdict_label(w.verdict)


def cost_standing(e: WorkloadEconomics) -> str:
    """Why a run's $ per million tokens and J/token are not priced, in the words its verdict
    reads everywhere else: 'withheld (identity.precision, …)', 'failed, contested (…)', 'not
    verified', 'not rated'."""
    if e.verdict == "withheld":
        return withheld_label(e.withheld_by)
    if e.withheld_by:  # a fail an error contests: counted by the gates, priced by nothing
        return f"{fmt.verdict_label(e.verdict)}, contested ({', '.join(e.withheld_by)})"
    if e.verdict == "not_rated":
        return "not rated"
    return fmt.verdict_label(e.verdict)

def headline_findings(card: Scorecard, limit: int = 3) -> list[Finding]:
    """The findings that matter most: by severity, then in the order the validator raised them
    (rules run from the most to the least fundamental), not alphabetically by file."""
    ranked = sorted(enumerate(card.findings), key=lambda p: (SEVERITY_ORDER[p[1].severity], p[0]))
    return [f for _, f in ranked[:limit]]


def all_findings(card: Scorecard) -> list[Finding]:
    return sort_findings(card.findings)


def failed_gates(card: Scorecard) -> list[Gate]:
    """Gates the evidence failed (a gate that was not evaluated is not among them)."""
    return [g for g in card.gates if g.state is State.FAILED]


def audit_checks_sorted(card: Scorecard) -> list[AuditCheck]:
    if card.audit is None:
        return []
    return sorted(card.audit.checks,
                  key=lambda c: (AUDIT_ORDER[c.status], c.category, c.check_id))



def evidence_warning(card: Scorecard) -> str | None:
    """The one-line stderr warning `cmax report` gives, as `cmax price` does."""
    errors = card.finding_counts.get("error", 0)
    gap = evidence_gap(card)
    if not errors and gap is None:
        return None
    parts = [f"{card.provider} / {card.cluster}:"]
    if errors:
        parts.append(f"{errors} validation error(s) in this bundle;")
    if gap is not None:
        parts.append("not rated (no category scored);" if card.score_state is State.NOT_SCORED
                     else "no training run could be compared with a reference;")
    parts.append("the reports rest on evidence that failed validation or is missing "
                 "(run `cmax validate`)")
    return " ".join(parts)


def gate_state(gate: Gate) -> State:
    """What a gate's row may honestly say, in the one vocabulary of states: read from the
    gate's typed ``status``, never from the words of its reason."""
    return gate.state


def unevaluated_gates(card: Scorecard) -> list[Gate]:
    return [g for g in card.gates if g.state is State.NOT_EVALUATED]


_LIST_MARKER = re.compile(r"^\s*\d{1,3}[.)]\s+")


@dataclass(frozen=True)
class Reason:
    text: str
    continued: bool  # an indented line that belongs to the reason before it


@dataclass(frozen=True)
class Reasoning:
    items: list[Reason]
    numbered_by_writer: bool  # the text carries its own "1." markers: don't number twice


def reasoning(card: Scorecard) -> Reasoning:
    """The price reasoning as written, with its own numbering and continuation lines kept."""
    items = card.price.reasoning if card.price is not None else []
    return Reasoning(
        items=[Reason(r.strip(), continued=r[:1].isspace()) for r in items if r.strip()],
        numbered_by_writer=any(_LIST_MARKER.match(r) for r in items),
    )


@dataclass(frozen=True)
class Point:
    text: str
    severity: str | None = None


RankBy = Literal["tier", "value"]


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    slug: str
    card: Scorecard
    workloads_passed: int
    lowest_ratio: float | None  # the lowest ratio that counts (cmax.score.verdicts.rated)
    network_ratio: float | None
    audit_fails: int | None
    value: float | None  # $ per reference-grade GPU-hour (price advice)
    value_rank: int | None  # 1 = cheapest reference-grade GPU-hour of its GPU type
    decision: Decision
    tokens_usd: float | None = None  # $ per million training tokens on the board's basket
    tokens_rank: int | None = None  # 1 = cheapest per token, across GPU types
    joules_per_token: float | None = None  # J per token on the same basket, energy known
    joules_rank: int | None = None  # 1 = least energy per token, among those with energy
    serving_ratio: float | None = None  # lowest serving ratio compared like with like
    serving_usd: float | None = None  # cheapest $ per million output tokens of those results
    gpus: int = 0  # the cluster's GPUs
    measured_joules: float | None = None  # mean J/token the runs measured themselves
    measured_runs: int = 0  # runs with their own energy readings
    power: Source | None = None  # what the power per GPU of joules_per_token rests on


def _value(card: Scorecard) -> float | None:
    return card.price.usd_per_reference_gpu_hour if card.price is not None else None


#: within a tier: the Exemplar bar met, then not evaluated, then not met
_EXEMPLAR_ORDER = {State.MET: 0, State.NOT_EVALUATED: 1, State.NOT_MET: 2}


def leaderboard_order(cards: list[tuple[str, Scorecard]],
                      by: RankBy = "tier") -> list[tuple[str, Scorecard]]:
    """By tier (gates can cap a high score); within a tier, clusters that met the Exemplar
    bar, then those it could not be evaluated on, then those that did not meet it; then score.
    So a cloud whose runs all fall short is never ranked above one of its tier whose runs all
    pass, whatever its other categories add. Or by value, the cheapest reference-grade
    GPU-hour first (clusters without one last, in tier order). Names break ties so the order
    never depends on input order."""
    def tier_key(p: tuple[str, Scorecard]) -> tuple[int, int, float, str, str, str]:
        return (tier_rank(p[1].tier), _EXEMPLAR_ORDER[p[1].exemplar_state], -p[1].score,
                p[1].provider, p[1].cluster, p[0])

    if by == "value" and len({c.gpu for _, c in cards}) > 1:
        # per-GPU-hour value is measured against each GPU type's own reference: across types
        # the board ranks by $ per million training tokens (docs/scoring.md section 7)
        tokens = _tokens(cards)
        return sorted(cards, key=lambda p: (tokens.get(p[0]) is None,
                                            tokens.get(p[0], (0.0, 0))[0], *tier_key(p)))
    if by == "value":
        return sorted(cards, key=lambda p: (_value(p[1]) is None, _value(p[1]) or 0.0,
                                            *tier_key(p)))
    return sorted(cards, key=tier_key)


def _tokens(cards: list[tuple[str, Scorecard]]) -> dict[str, tuple[float, int]]:
    """slug -> ($ per million training tokens on the common basket, rank), ranked offers only."""
    from cmax.price.tokens import compare

    result = compare([c for _, c in cards])
    return {cards[r.index][0]: (r.usd_per_million_tokens, rank)
            for rank, r in enumerate(result.ranked, start=1)}


def _energy(cards: list[tuple[str, Scorecard]]) -> dict[str, tuple[float, int]]:
    """slug -> (J per token on the common basket, rank), offers whose energy is known."""
    from cmax.price.tokens import compare

    result = compare([c for _, c in cards])
    return {cards[r.index][0]: (r.joules_per_token, rank)
            for rank, r in enumerate(result.by_energy, start=1)
            if r.joules_per_token is not None}


def _serving_columns(card: Scorecard) -> dict[str, float | None]:
    """The board's serving figures: the lowest ratio of the results that count (compared like
    with like on a stated GPU count) and the cheapest $ per million output tokens among them."""
    rated = [r for r in card.inference if serving_rated(r)]
    costs = [r.usd_per_million_output_tokens for r in rated
             if r.usd_per_million_output_tokens is not None]
    return {"serving_ratio": min((r.ratio for r in rated if r.ratio is not None), default=None),
            "serving_usd": min(costs, default=None)}


def leaderboard_rows(cards: list[tuple[str, Scorecard]],
                     by: RankBy = "tier") -> list[LeaderboardRow]:
    value_rank: dict[str, int] = {}
    for gpu in sorted({c.gpu for _, c in cards}):
        same = [(slug, c) for slug, c in cards if c.gpu == gpu]
        valued = [slug for slug, c in leaderboard_order(same, "value") if _value(c) is not None]
        value_rank.update({slug: i for i, slug in enumerate(valued, start=1)})
    tokens = _tokens(cards)
    energy = _energy(cards)
    rows = []
    for rank, (slug, card) in enumerate(leaderboard_order(cards, by), start=1):
        # the runs whose ratio counts (the price's throughput ratio, the gates): a withheld
        # run's 152.7 % alone on a card read as its lowest ratio
        ratios = [w.ratio for w in card.workloads if w.ratio is not None and rated(w)]
        nets = [n.ratio for n in card.network if n.ratio is not None]
        joules = [w.measured_joules_per_token for w in card.workloads
                  if w.measured_joules_per_token]
        rows.append(LeaderboardRow(
            rank=rank, slug=slug, card=card,
            workloads_passed=sum(1 for w in card.workloads if w.verdict == "pass"),
            lowest_ratio=min(ratios) if ratios else None,
            network_ratio=min(nets) if nets else None,
            audit_fails=card.audit.counts.get("FAIL", 0) if card.audit else None,
            value=_value(card), value_rank=value_rank.get(slug), decision=decision(card),
            tokens_usd=tokens[slug][0] if slug in tokens else None,
            tokens_rank=tokens[slug][1] if slug in tokens else None,
            joules_per_token=energy[slug][0] if slug in energy else None,
            joules_rank=energy[slug][1] if slug in energy else None,
            **_serving_columns(card), gpus=card.nodes * card.gpus_per_node,
            measured_joules=sum(joules) / len(joules) if joules else None,
            measured_runs=len(joules), power=Sources(card).power(),
        ))
    return rows


# ------------------------------------------------------------------ negotiation brief
# The brief is the buyer's document, handed across the table: the ask, the reasons in plain
# words with their evidence, and what the provider must fix or credit. No derivation (that is
# in the scorecard's appendix) and no arguments for the other side.


@dataclass(frozen=True)
class ServingCost:
    """One serving result as the brief states it: speed against the reference and what a
    million output tokens cost at the quote, at the ask and at reference speed."""

    label: str
    ratio: float | None
    verdict: str
    at_quote: float | None
    at_ask: float | None
    at_reference: float | None
    input_at_quote: float | None
    #: why it is not priced (its verdict and the errors withholding it); None when priced
    standing: str | None = None


def serving_costs(card: Scorecard) -> list[ServingCost]:
    """Every serving result with a measured rate, in manifest order; one whose figure is not
    earned keeps its row, without a cost, and says why."""
    from cmax.price.derived import serving_usd_per_million

    ask = card.price.ask_usd_per_gpu_hour if card.price is not None else None
    out = []
    for r in card.inference:
        if not r.output_tok_s_per_gpu:
            continue
        at_ask = (serving_usd_per_million(ask, r.output_tok_s_per_gpu)
                  if r.usd_per_million_output_tokens is not None else None)
        out.append(ServingCost(
            f"{r.model} {r.precision} {r.input_len:,}/{r.output_len:,} on {r.gpus} GPU"
            f"{'s' if r.gpus != 1 else ''}", r.ratio if serving_rated(r) else None, r.verdict,
            r.usd_per_million_output_tokens, at_ask,
            r.usd_per_million_output_tokens_at_reference, r.usd_per_million_input_tokens,
            None if r.priced or card.price is None else serving_standing(card, r)))
    return out


def brief_reasons(card: Scorecard) -> list[Point]:
    """Why the ask is what it is: each price driver as a sentence, then the measured
    shortfalls that do not move the price but weaken the provider's position."""
    points: list[Point] = []
    for d in top_drivers(card, limit=5):
        if d.credit or abs(d.usd_per_gpu_hour) < 0.0005:
            continue
        worth = (f"Worth {fmt.usd(d.usd_per_gpu_hour, 3)} less per GPU-hour."
                 if d.usd_per_gpu_hour > 0
                 else f"In the provider's favour: worth {fmt.usd(-d.usd_per_gpu_hour, 3)} more "
                      "per GPU-hour.")
        points.append(Point(f"{d.name}: {d.detail}. {worth}"))
    held = [w for w in card.workloads if run_withheld(card, w)]
    short = [w for w in card.workloads
             if bar_state(w.verdict) is State.NOT_MET and w not in held]
    if held:
        # measured against the bar and not shown below it: its pass is withheld, it is not
        # "not clearly above" (an fp8 run declared bf16 at 152.7 % read so)
        each = "; ".join(f"{workload_line(w)} at {fmt.pct(w.ratio)} "
                         f"({', '.join(w.validation_errors)})" for w in held)
        points.append(Point(
            f"{len(held)} of the {len(card.workloads)} "
            f"{'runs does' if len(held) == 1 else 'runs do'} not count, "
            f"{'its pass' if len(held) == 1 else 'their passes'} withheld by errors in "
            f"{'its' if len(held) == 1 else 'their'} evidence: {each}."))
    if short:
        each = "; ".join(f"{workload_line(w)} {fmt.pct(w.ratio)} "
                         f"({fmt.pct_range(w.ci_low, w.ci_high)})" for w in short)
        points.append(Point(
            f"{len(short)} of the {len(card.workloads)} "
            f"{'runs is' if len(short) == 1 else 'runs are'} not clearly above "
            f"{fmt.pct(card.exemplar_bar, 0)} of NVIDIA's reference (95% confidence range in "
            f"brackets): {each}."))
    for n in card.network:
        if bar_state(n.verdict) is State.NOT_MET and n.ratio is not None:
            points.append(Point(
                f"The network's {n.collective} bus bandwidth is {fmt.num(n.busbw_gbps)} GB/s on "
                f"{n.nodes} nodes, {fmt.pct(n.ratio)} of what this fabric delivers at reference "
                f"({fmt.num(n.reference_busbw_gbps)} GB/s): multi-node training waits on it."))
    rel = card.reliability
    if rel is not None and rel.ratio_vs_reference is not None and rel.ratio_vs_reference > 1:
        points.append(Point(
            f"Jobs are interrupted {fmt.num(rel.ratio_vs_reference, 1)}× as often as on Meta's "
            f"Llama 3 fleet ({fmt.num(rel.per_1000_gpu_days, 2)} vs "
            f"{fmt.num(rel.reference_per_1000_gpu_days, 2)} per 1,000 GPU-days, "
            f"{rel.unexpected_interruptions} interruptions from {fmt.date(rel.period_start)} to "
            f"{fmt.date(rel.period_end)})."))
    return points


def _audit_fail_summary(card: Scorecard) -> str | None:
    if card.audit is None:
        return None
    fails = [c for c in card.audit.checks if c.status == "FAIL"]
    count = card.audit.counts.get("FAIL", len(fails))
    if not count:
        return None
    by_cat: dict[str, int] = {}
    for c in fails:
        by_cat[c.category] = by_cat.get(c.category, 0) + 1
    cats = ", ".join(f"{n} {cat}" for cat, n in sorted(by_cat.items(), key=lambda p: (-p[1], p[0])))
    return (f"Fix the {count} failed configuration and security audit check"
            f"{'s' if count != 1 else ''}{f' ({cats})' if cats else ''} and re-run the "
            "ClusterMAX audit before signing; the scorecard lists each one.")


def brief_demands(card: Scorecard) -> list[Point]:
    """What the provider must fix or credit, most binding first."""
    out: list[Point] = []
    p = card.price
    sla = card.sla
    if sla is not None and not sla.met:
        owed = (f" ({fmt.usd(p.sla_credit_usd)} of {fmt.usd(p.sla_period_bill_usd, 0)})"
                if p is not None and p.sla_credit_usd is not None else "")
        out.append(Point(
            "Credit the SLA breach: "
            + (f"{sla.node_months_below} of {sla.node_months} node-months were below"
               if sla.node_months else
               f"measured uptime {fmt.pct_value(sla.measured_uptime_pct, None)} is below")
            + f" the contracted {fmt.pct_value(sla.contracted_uptime_pct, None)} uptime; "
            f"the contract owes {fmt.pct_value(sla.credit_pct, None)} of the measured period's "
            f"bill{owed}. Credits must be claimed: keep the incident log."))
    offer = suspect_offer(card)
    if offer is not None:
        out.append(Point(offer.text))
    for g in decisive_gates(card):
        out.append(Point(f"Fix “{g.name}”: until it passes the rating is capped at "
                         f"{g.binding_cap}." if g.state is State.FAILED else
                         f"Show conclusive evidence for “{g.name}”: it could not be evaluated "
                         f"from what was submitted, and caps the rating at {g.binding_cap}."))
    audit = _audit_fail_summary(card)
    if audit:
        out.append(Point(audit))
    if any(w.verdict == "fail" for w in card.workloads):
        out.append(Point("Either accept the ask, or tune the cluster and re-run the reference "
                         "suite: the price follows the measured throughput."))
    out += [Point(text) for text in missing_evidence(card)]
    return out


def loss_basis(card: Scorecard) -> str | None:
    """What the goodput loss is measured against, beside the figure: the loss counts every
    interrupted hour (against none), while the price driver compares with the reference
    fleet's rate; side by side, "$34,834 lost" and "interruptions in the provider's favour"
    read as a contradiction unless each names its basis."""
    from cmax.price.derived import goodput_loss_at_reference

    p, rel = card.price, card.reliability
    if p is None or rel is None or p.goodput_loss_usd is None:
        return None
    at_reference = goodput_loss_at_reference(p, rel)
    side = ("in the provider's favour" if at_reference > p.goodput_loss_usd
            else "against the provider")
    return f"against none ({fmt.usd(at_reference, 0)} at the reference's rate: {side})"


TRAINING_GATES = frozenset({"training", "network", "exemplar"})
"""Gate kinds a serving contract is not asked about: training throughput and the fabric a
multi-node training job waits on."""


def decisive_gates(card: Scorecard) -> list[Gate]:
    """Failed or unevaluated gates whose passing could change the decision: those that cap
    the rating at the tier awarded or below. A gate capping above it cannot move it (Cinder,
    Underperforming by its score, was asked to fix a gate capping at Gold), and none moves a
    decision to buy."""
    if decision(card) == "buy":
        return []
    held = {g.id for g in capping_gates(card)}
    return [g for g in _open_gates(card)
            if g.id in held or tier_rank(g.binding_cap or card.tier) >= tier_rank(card.tier)]


def _open_gates(card: Scorecard) -> list[Gate]:
    """Failed or unevaluated gates that apply to the contract (a serving contract is not
    asked about training gates)."""
    serving_only = bool(card.inference) and not card.workloads and not card.mlperf
    return [g for g in card.gates if g.state in (State.FAILED, State.NOT_EVALUATED)
            and g.binding_cap is not None
            and not (serving_only and g.kind in TRAINING_GATES)]


def other_gates(card: Scorecard) -> list[Gate]:
    """Failed or unevaluated gates left out of the fix list (:func:`decisive_gates`)."""
    decisive = {g.id for g in decisive_gates(card)}
    return [g for g in _open_gates(card) if g.id not in decisive]


def other_gates_note(card: Scorecard) -> str | None:
    """One line naming the gates the fix list leaves out, and why."""
    others = other_gates(card)
    if not others:
        return None
    names = ", ".join(f"“{g.name}” ({g.state.label}, caps at {g.binding_cap})" for g in others)
    why = ("the decision is to buy" if decision(card) == "buy"
           else f"each caps above {card.tier}, so fixing it alone does not change the decision")
    return f"Not asked for here, because {why}: {names}. The scorecard lists them."


@dataclass(frozen=True)
class ValueRow:
    provider: str
    cluster: str
    tier: str
    quoted: float | None
    ask: float | None
    throughput_ratio: float | None
    value: float | None
    this: bool
    decision: Decision


def value_comparison(card: Scorecard, peers: list[Scorecard]) -> list[ValueRow]:
    """Every bundle of the card's GPU type rated together, cheapest reference-grade GPU-hour
    first (no value last): a reference-grade GPU-hour of another type is other work."""
    rows = []
    for c in peers:
        if c.gpu != card.gpu:
            continue
        p = c.price
        rows.append(ValueRow(
            c.provider, c.cluster, c.tier, p.quoted_usd_per_gpu_hour if p else None,
            p.ask_usd_per_gpu_hour if p else None, p.throughput_ratio if p else None,
            p.usd_per_reference_gpu_hour if p else None, c is card, decision(c)))
    return sorted(rows, key=lambda r: (r.value is None, r.value or 0.0, r.provider, r.cluster))


def value_sentence(rows: list[ValueRow]) -> str | None:
    """One line a negotiator can say: the best value on the table against this provider's."""
    mine = next((r for r in rows if r.this), None)
    signable = [r for r in rows if r.decision not in ("do not sign without fixes", "not rated")]
    best = next((r for r in signable if r.value is not None and not r.this), None)
    if mine is None or mine.value is None or best is None or best.value is None:
        return None
    if mine.decision in ("do not sign without fixes", "not rated"):
        cheaper = best.value >= mine.value
        return (f"{'The lowest' if cheaper else 'A'} price per reference-grade GPU-hour "
                f"{'of' if cheaper else 'among'} the {len(rows)} clusters rated together "
                f"({fmt.usd(mine.value)}), but rated {mine.tier}: value counts only once the "
                f"fixes above are made. The best value you can sign today is {best.provider} "
                f"({best.tier}: {best.decision}) at {fmt.usd(best.value)}.")
    if best.value >= mine.value:
        return (f"This is the best value of the {len(rows)} clusters rated together: "
                f"{fmt.usd(mine.value)} per reference-grade GPU-hour against "
                f"{fmt.usd(best.value)} at the next best, {best.provider} ({best.tier}: "
                f"{best.decision}).")
    return (f"{best.provider} ({best.tier}: {best.decision}) delivers "
            f"{fmt.pct(best.throughput_ratio)} of reference throughput at {fmt.usd(best.quoted)} "
            f"quoted: {fmt.usd(best.value)} per reference-grade GPU-hour, against "
            f"{fmt.usd(mine.value)} here.")


def tokens_sentence(card: Scorecard, peers: list[Scorecard]) -> str | None:
    """Against the cheapest offer per token of another GPU type rated together, in the seed's
    terms: how much faster per GPU one must train to beat the other at their quotes, and
    whether it does. None when no other GPU type is on the table or either is unranked."""
    from cmax.price.tokens import breakeven_speedup, compare, speedup

    if all(c.gpu == card.gpu for c in peers) or card not in peers:
        return None
    result = compare(peers)
    here = next((r for r in result.ranked if peers[r.index] is card), None)
    other = next((r for r in result.ranked if peers[r.index].gpu != card.gpu), None)
    if here is None or other is None or card.price is None:
        return None
    o = peers[other.index]
    assert o.price is not None
    basket = ", ".join(f"{k.replace(':', ' ')} at {result.scales[k]:,} GPUs"
                       for k in result.basket)
    # how much faster per GPU the other offer must train than this one, and how much it does
    need = breakeven_speedup(o.price.quoted_usd_per_gpu_hour, card.price.quoted_usd_per_gpu_hour,
                             o.price.goodput_ratio, card.price.goodput_ratio)
    has = speedup(need, here.usd_per_million_tokens, other.usd_per_million_tokens)
    verdict = "it does" if has > need else "it does not"
    return (f"Per million training tokens ({basket}, interruptions priced in) this offer costs "
            f"{fmt.usd(here.usd_per_million_tokens)} against "
            f"{fmt.usd(other.usd_per_million_tokens)} at {o.provider} ({o.gpu}, {o.tier}: "
            f"{decision(o)}). At their "
            f"quotes ({fmt.usd(o.price.quoted_usd_per_gpu_hour)} against "
            f"{fmt.usd(card.price.quoted_usd_per_gpu_hour)} per GPU-hour) {o.provider} must "
            f"train {need:.2f}x as fast per GPU as this offer to be cheaper per token; it trains "
            f"{has:.2f}x: {verdict}."
            + (f" Energy per token (all-in): {here.joules_per_token:.2f} J here"
               f"{_power_label(card, ',')} against {other.joules_per_token:.2f} J at {o.provider}"
               f"{_power_label(o)}."
               if here.joules_per_token is not None and other.joules_per_token is not None
               else ""))


def _power_label(card: Scorecard, end: str = "") -> str:
    """', assumed (reference default power)' (then ``end``): what the power per GPU of a
    card's J/token rests on, set off in a sentence; empty without its judgement."""
    power = Sources(card).power()
    return f", {power.text}{end}" if power is not None else ""


_GATE_NOTES = ("gate failed: ", "gate not evaluated: ", "gate declared: ")


def rating_notes(card: Scorecard) -> list[str]:
    """The scorer's notes for the appendix, without the one-line gate summaries: the gates
    table below states each gate's result and cap once."""
    return [n for n in card.notes if not n.startswith(_GATE_NOTES)]


def _gate_fix(g: Gate) -> str:
    if g.state is State.NOT_EVALUATED:
        return (f"Show conclusive evidence for the “{g.name}” gate: not evaluated, it caps "
                f"the tier at {g.binding_cap}.")
    return f"Pass the “{g.name}” gate: {g.state.label}, it caps the tier at {g.binding_cap}."


def components_line(category: CategoryScore) -> str:
    """What a mixed category's score is made of, e.g. 'training throughput 59.9 ×5 · fabric
    bus bandwidth 20.9 ×2 · audit checks 87.5 ×1 · declarations 40.0 ×1'; empty for one of a
    single measured kind."""
    if not mixed(category):
        return ""
    return " · ".join(f"{p.label} {fmt.num(p.score, 1)} ×{fmt.num_trim(p.weight)}"
                      for p in category.components)


def category_columns(categories: Sequence[CategoryScore]) -> list[list[CategoryScore]]:
    """The categories in order, split into two columns of about equal text (a heading is
    counted as 80 characters of evidence), so neither column runs on far below the other."""
    sizes = [80 + sum(len(e) + 3 for e in c.evidence) for c in categories]
    if len(sizes) < 2:
        return [list(categories)]
    cut = min(range(1, len(sizes)), key=lambda i: (max(sum(sizes[:i]), sum(sizes[i:])), i))
    return [list(categories[:cut]), list(categories[cut:])]


def _gain(gain: CategoryGain) -> str:
    c = gain.category
    where = (f": weakest {', '.join(f'{p.label} {fmt.num(p.score, 0)}' for p in gain.weakest)}"
             if gain.weakest else "")
    return (f"{c.heading[:1].lower()}{c.heading[1:]} {fmt.num(c.score, 0)} → 100 would add "
            f"{fmt.num(gain.points, 1)}{where}")


def tier_changes(card: Scorecard) -> list[str]:
    """What can change the tier, in sentences (decided in ``cmax/score/tier_changes.py``):
    what lifts it one step (every gate whose binding cap holds it there, and the points to
    the next threshold when the score holds it there), then the margin before it drops."""
    changes = decide_tier_changes(card)
    if changes is None:
        return []
    out: list[str] = []
    if changes.next_tier is not None:
        needed = [_gate_fix(g) for g in changes.holding]
        if changes.next_threshold is not None and changes.points_needed is not None:
            ways = "; ".join(_gain(g) for g in changes.gains)
            needed.append(f"{changes.next_tier} needs {fmt.num(changes.next_threshold, 0)} "
                          f"points, {fmt.num(changes.points_needed, 1)} more than today"
                          + (f" ({ways})." if ways else "."))
        if len(needed) > 1:
            out.append(f"To rise above {changes.tier}, all of these are needed:")
        out += needed
    if changes.threshold is not None and changes.margin is not None:
        out.append(f"A drop of {fmt.num(changes.margin, 1)} points (below "
                   f"{fmt.num(changes.threshold, 0)}) would lose {changes.tier}.")
    return out


@dataclass(frozen=True)
class Term:
    name: str
    meaning: str


GLOSSARY: dict[str, str] = {
    "reference": "NVIDIA's published result for the same GPU, model, precision and scale "
                 "(DGX Cloud benchmarking recipes, EOS cluster).",
    "throughput ratio": "provider tokens per second ÷ the reference's, over the steady-state "
                        "window; 100% = as fast as NVIDIA's tuned result.",
    "goodput": "useful training time left after interruptions (restarts plus redone work), "
               "relative to the reference fleet's interruption rate.",
    "E[ETTR]": "expected effective training time ratio: the share of paid time a job spends "
               "making progress (Kokolis et al., arXiv:2410.21680).",
    "parity price": "quoted × throughput ratio × goodput ratio: the price at which each dollar "
                    "buys reference-grade work.",
    "ask": "the price to ask for: the lower of the quoted and the parity price.",
    "value": "quoted ÷ (throughput ratio × goodput ratio): what one reference-grade GPU-hour "
             "of work costs here; lower is better.",
    "busbw": "nccl-tests bus bandwidth: the collective's data rate normalised so it can be "
             "compared with link speed; the slowest link sets it.",
    "Exemplar": "NVIDIA's Exemplar Cloud performance bar as cmax applies it: every suite "
                "workload above 95% of reference with 95% confidence. Performance only.",
    "MFU": "model FLOPs utilisation: model arithmetic per second ÷ the GPU's peak.",
    "tier": "ClusterMAX-style rating from ten weighted categories; a failed hard gate caps it.",
    "SLA credit": "what the contract repays for uptime below the promise, per node-month.",
}


def glossary(*names: str) -> list[Term]:
    return [Term(n, GLOSSARY[n]) for n in names]


# ------------------------------------------------------------------ network slot
@dataclass(frozen=True)
class SuspectOffer:
    """"Exclude these nodes, or credit them": the money the suspect nodes' GPUs cost."""

    nodes: list[str]
    gpus: int
    usd_per_month: float
    usd_per_term: float
    text: str


def suspect_nodes(card: Scorecard) -> list[object]:
    """NETWORK's ``Scorecard.suspect_nodes`` when the model has it; empty otherwise, so the
    slot in the network section renders nothing on older scorecards."""
    found = getattr(card, "suspect_nodes", None)
    return list(found) if found else []


def suspect_offer(card: Scorecard) -> SuspectOffer | None:
    """What the suspect nodes' GPUs cost at the quoted price (:func:`cmax.price.derived.node_cost`),
    as an offer to exclude or credit them."""
    suspects = suspect_nodes(card)
    p = card.price
    if not suspects or p is None:
        return None
    from cmax.price.derived import node_cost
    from cmax.price.drivers import HOURS_PER_MONTH

    names = [str(getattr(s, "node", "?")) for s in suspects]
    cost = node_cost(sum(int(getattr(s, "gpus", 0) or card.gpus_per_node) for s in suspects), p)
    text = (f"Exclude these {len(names)} node(s) from the contract, or credit them: "
            f"{cost.gpus:,} GPUs × {fmt.usd(p.quoted_usd_per_gpu_hour)} × {HOURS_PER_MONTH:g} h "
            f"= {fmt.usd(cost.usd_per_month, 0)} a month, {fmt.usd(cost.usd_per_term, 0)} over "
            f"the {p.term_months}-month term, until the provider shows them at full bandwidth.")
    return SuspectOffer(names, cost.gpus, cost.usd_per_month, cost.usd_per_term, text)


def pair_heatmap(card: Scorecard) -> str | None:
    """NETWORK's node-pair bandwidth heatmap (SVG) when cmax.render.network_charts exists."""
    try:
        from cmax.render import network_charts  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    fn = getattr(network_charts, "pair_heatmap_svg", None)
    svg = fn(card) if callable(fn) else None
    return svg if isinstance(svg, str) and svg else None
