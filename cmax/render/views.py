"""What the first page says: key numbers, the findings that matter most, the leaderboard row.

These only select and phrase what is already in the Scorecard; no figure is recomputed
here, so every number in a report is the number in the attached scorecard JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cmax.findings import SEVERITY_ORDER, Finding, sort_findings
from cmax.render import formatting as fmt
from cmax.scorecard import AuditCheck, Gate, Scorecard, WorkloadResult

Tone = Literal["good", "warn", "bad", "neutral"]
TIER_RANK = {"Platinum": 0, "Gold": 1, "Silver": 2, "Bronze": 3, "Underperforming": 4}
AUDIT_ORDER = {"FAIL": 0, "WARNING": 1, "SKIPPED": 2, "PASS": 3}


@dataclass(frozen=True)
class KeyNumber:
    label: str
    value: str
    detail: str
    tone: Tone


def headline_findings(card: Scorecard, limit: int = 3) -> list[Finding]:
    """The findings that matter most: by severity, then in the order the validator raised them
    (rules run from the most to the least fundamental), not alphabetically by file."""
    ranked = sorted(enumerate(card.findings), key=lambda p: (SEVERITY_ORDER[p[1].severity], p[0]))
    return [f for _, f in ranked[:limit]]


def all_findings(card: Scorecard) -> list[Finding]:
    return sort_findings(card.findings)


def failed_gates(card: Scorecard) -> list[Gate]:
    return [g for g in card.gates if not g.passed]


def audit_checks_sorted(card: Scorecard) -> list[AuditCheck]:
    if card.audit is None:
        return []
    return sorted(card.audit.checks,
                  key=lambda c: (AUDIT_ORDER[c.status], c.category, c.check_id))


def _workload_line(w: WorkloadResult) -> str:
    return fmt.workload_label(w.workload, w.precision, w.num_gpus)


def exemplar_text(card: Scorecard) -> str:
    bar = fmt.pct(card.exemplar_bar, 0)
    compared = [w for w in card.workloads if w.ratio is not None]
    passed = [w for w in compared if w.verdict == "pass"]
    if card.exemplar_pass:
        return (f"Met: all {len(passed)} suite workloads are above {bar} of reference "
                "with 95% confidence.")
    if not card.workloads:
        return "Not met: no training runs were provided."
    if not compared:
        return "Not met: no run could be compared with a reference result."
    others = [w for w in card.workloads if w.verdict != "pass"]
    detail = "; ".join(f"{_workload_line(w)} {fmt.verdict_label(w.verdict).lower()}"
                       for w in others[:3])
    more = f" and {len(others) - 3} more" if len(others) > 3 else ""
    return (f"Not met: {len(passed)} of {len(card.workloads)} workloads pass the {bar} bar "
            f"({detail}{more}).")


def key_numbers(card: Scorecard) -> list[KeyNumber]:
    """Six numbers a buyer reads first; each says 'not provided' rather than disappearing."""
    out: list[KeyNumber] = []
    compared = [w for w in card.workloads if w.ratio is not None]
    if compared:
        worst = min(compared, key=lambda w: w.ratio or 0.0)
        passed = sum(1 for w in card.workloads if w.verdict == "pass")
        tone: Tone = ("good" if passed == len(card.workloads)
                      else "bad" if any(w.verdict == "fail" for w in card.workloads) else "warn")
        out.append(KeyNumber(
            "Training throughput",
            f"{passed} of {len(card.workloads)} workloads pass",
            f"lowest {fmt.pct(worst.ratio)} of reference "
            f"(CI {fmt.pct_range(worst.ci_low, worst.ci_high)}), {_workload_line(worst)}",
            tone,
        ))
    else:
        out.append(KeyNumber("Training throughput", "not provided",
                             "no training run could be compared with a reference", "neutral"))

    nets = [n for n in card.network if n.ratio is not None]
    if nets:
        worst_net = min(nets, key=lambda n: n.ratio or 0.0)
        out.append(KeyNumber(
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
        out.append(KeyNumber("Network bus bandwidth", f"{fmt.num(n.busbw_gbps)} GB/s",
                             "no reference for this fabric", "neutral"))
    else:
        out.append(KeyNumber("Network bus bandwidth", "not provided",
                             "no nccl-tests output in the bundle", "neutral"))

    rel = card.reliability
    if rel is not None:
        ratio = rel.ratio_vs_reference
        out.append(KeyNumber(
            "Interruptions",
            f"{fmt.num(rel.per_1000_gpu_days, 2)} / 1,000 GPU-days",
            f"reference {fmt.num(rel.reference_per_1000_gpu_days, 2)}; "
            f"MTBF {fmt.integer(rel.mtbf_gpu_hours)} GPU-hours; "
            f"goodput {fmt.pct(rel.goodput_ratio)} of reference",
            "neutral" if ratio is None else "good" if ratio <= 1.0
            else "warn" if ratio <= 1.5 else "bad",
        ))
    else:
        out.append(KeyNumber("Interruptions", "not provided",
                             "no incident log in the bundle", "neutral"))

    sla = card.sla
    if sla is not None:
        out.append(KeyNumber(
            "SLA uptime",
            f"{fmt.pct_value(sla.measured_uptime_pct, None)} measured",
            f"contracted {fmt.pct_value(sla.contracted_uptime_pct, None)}: "
            + ("met" if sla.met
               else f"missed, {fmt.pct_value(sla.credit_pct, None)} service credit owed")
            + (f"; {sla.node_months_below} of {sla.node_months} node-months below"
               if sla.node_months else ""),
            "good" if sla.met else "bad",
        ))
    else:
        out.append(KeyNumber("SLA uptime", "not provided", "no SLA terms in the manifest",
                             "neutral"))

    audit = card.audit
    if audit is not None:
        counts = audit.counts
        fails, warns = counts.get("FAIL", 0), counts.get("WARNING", 0)
        out.append(KeyNumber(
            "ClusterMAX audit",
            f"{fails} fail · {warns} warn · {counts.get('PASS', 0)} pass",
            f"{sum(counts.values())} checks, {counts.get('SKIPPED', 0)} skipped",
            "bad" if fails else "warn" if warns else "good",
        ))
    else:
        out.append(KeyNumber("ClusterMAX audit", "not provided",
                             "no audit.values.json in the bundle", "neutral"))

    advice = card.price
    if advice is not None and advice.recommended_usd_per_gpu_hour is not None:
        adj = advice.adjustment_pct
        out.append(KeyNumber(
            "Price per GPU-hour",
            f"{fmt.usd(advice.quoted_usd_per_gpu_hour)} quoted → "
            f"{fmt.usd(advice.recommended_usd_per_gpu_hour)}",
            f"parity {fmt.usd(advice.parity_usd_per_gpu_hour)}; "
            f"{fmt.signed_pct(adj)} vs quoted",
            "neutral" if adj is None else "good" if adj >= -2 else "warn" if adj >= -10
            else "bad",
        ))
    elif advice is not None:
        out.append(KeyNumber("Price per GPU-hour", fmt.usd(advice.quoted_usd_per_gpu_hour),
                             "no recommendation: throughput could not be compared", "neutral"))
    else:
        out.append(KeyNumber("Price per GPU-hour", "not provided",
                             "no [pricing] section in the manifest", "neutral"))
    return out


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


def leverage_points(card: Scorecard, limit: int = 10) -> list[Point]:
    """What a buyer can put on the table: shortfalls first, then missing evidence, each once."""
    points: list[Point] = []
    for w in card.workloads:
        if w.verdict in ("fail", "inconclusive"):
            points.append(Point(
                f"{_workload_line(w)} ran at {fmt.pct(w.ratio)} of reference "
                f"(CI {fmt.pct_range(w.ci_low, w.ci_high)}): "
                f"{fmt.verdict_label(w.verdict).lower()}."
            ))
    for g in failed_gates(card):
        points.append(Point(f"Hard gate failed: {g.name} ({g.reason}); tier capped at {g.cap}."))
    sla = card.sla
    if sla is not None and not sla.met:
        points.append(Point(
            f"SLA missed: {fmt.pct_value(sla.measured_uptime_pct, None)} measured against "
            f"{fmt.pct_value(sla.contracted_uptime_pct, None)} contracted; "
            f"{fmt.pct_value(sla.credit_pct, None)} credit owed."))
    rel = card.reliability
    if rel is not None and rel.ratio_vs_reference is not None and rel.ratio_vs_reference > 1:
        points.append(Point(
            f"Interruptions at {fmt.num(rel.ratio_vs_reference, 2)}× the reference rate "
            f"({fmt.num(rel.per_1000_gpu_days, 3)} per 1,000 GPU-days)."))
    for n in card.network:
        if n.verdict in ("fail", "inconclusive"):
            points.append(Point(
                f"{n.collective} bus bandwidth {fmt.num(n.busbw_gbps)} GB/s is "
                f"{fmt.pct(n.ratio)} of the fabric reference."))
    missing = [
        (not card.workloads, "No training runs: ask for reference-matched runs (NVIDIA DGXC "
                             "recipes) before agreeing a price."),
        (not card.network, "No nccl-tests results: ask for an all_reduce sweep up to 16 GiB "
                           "across the contracted nodes."),
        (rel is None, "No incident history: ask for the interruption log of the last quarter."),
        (sla is None, "No SLA terms: negotiate per-node uptime and a credit table."),
        (card.audit is None, "No ClusterMAX audit: ask for `cmax audit` output from the cluster."),
    ]
    points += [Point(text) for absent, text in missing if absent]
    points += [Point(f.message, f.severity) for f in headline_findings(card)]
    return points[:limit]


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    slug: str
    card: Scorecard
    workloads_passed: int
    lowest_ratio: float | None
    network_ratio: float | None
    audit_fails: int | None


def leaderboard_order(cards: list[tuple[str, Scorecard]]) -> list[tuple[str, Scorecard]]:
    """Tier first (gates can cap a high score), then score, then names for a stable tie-break."""
    return sorted(cards, key=lambda p: (TIER_RANK.get(p[1].tier, 9), -p[1].score,
                                        p[1].provider, p[1].cluster, p[0]))


def leaderboard_rows(cards: list[tuple[str, Scorecard]]) -> list[LeaderboardRow]:
    rows = []
    for rank, (slug, card) in enumerate(leaderboard_order(cards), start=1):
        ratios = [w.ratio for w in card.workloads if w.ratio is not None]
        nets = [n.ratio for n in card.network if n.ratio is not None]
        rows.append(LeaderboardRow(
            rank=rank, slug=slug, card=card,
            workloads_passed=sum(1 for w in card.workloads if w.verdict == "pass"),
            lowest_ratio=min(ratios) if ratios else None,
            network_ratio=min(nets) if nets else None,
            audit_fails=card.audit.counts.get("FAIL", 0) if card.audit else None,
        ))
    return rows
