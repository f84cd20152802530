"""Interruption rates, MTBF, expected effective training time and SLA uptime with credits.

Two different questions, deliberately kept apart:

* **Training reliability**: how often does a large job get interrupted, and what fraction of
  paid time is lost to it? The benchmark is Meta's Llama 3 405B run (arXiv:2407.21783 §3.3.4:
  419 unexpected interruptions, 16,384 H100, 54 days), and the loss model is Kokolis et al.
  (arXiv:2410.21680): E[ETTR] ≈ 1 − N·r_f·(u0 + Δt_cp/2) with non-blocking checkpoints.
* **SLA compliance**: per node, per month uptime against the contracted figure and the credit
  owed under its tiers. SLAs count a node as down only while it is unreachable, so a cluster
  can meet its SLA and still lose a great deal of training time; the report shows both.

Planned (announced) maintenance is excluded from both the failure rate (Llama 3 counts its 47
planned interruptions separately) and SLA downtime (SLAs exclude scheduled maintenance).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from cmax.errors import ReferenceDataError
from cmax.ingest.evidence import Evidence
from cmax.ingest.monitoring.accounting import MAX_UNWITNESSED
from cmax.resolve.case import resolve
from cmax.resolve.incident_review import IncidentReview, cite_lines, fleet_nodes
from cmax.score.reference_api import ReferenceData, num, text
from cmax.scorecard import ReliabilityResult, SlaResult
from cmax.submission.manifest import Sla

if TYPE_CHECKING:
    from cmax.resolve.monitoring import MonitoringView


def expected_ettr(job_gpus: int, failures_per_gpu_hour: float, checkpoint_interval_min: float,
                  restart_min: float) -> float:
    """Kokolis et al. E[ETTR] with w_cp = 0: each interruption costs the restart time plus, on
    average, half a checkpoint interval of redone work. Clamped at 0 where the first-order
    model breaks down (more than one interruption per lost-time window)."""
    job_rate_per_hour = job_gpus * failures_per_gpu_hour
    lost = job_rate_per_hour * (restart_min / 60.0 + checkpoint_interval_min / 120.0)
    return max(0.0, 1.0 - lost)


def reference_rate(baseline: Mapping[str, Any]) -> tuple[float, float, str]:
    """(interruptions per GPU-hour, per 1,000 GPU-days, source) of the reliability baseline,
    recomputed from its primitives when present so no rounded figure leaks in."""
    n = num(baseline, "interruptions")
    gpus = num(baseline, "gpus")
    days = num(baseline, "days")
    if n is not None and gpus and days:
        per_gpu_hour = n / (gpus * days * 24.0)
    else:
        per_1000 = num(baseline, "per_1000_gpu_days")
        if per_1000 is None:
            mtbf = num(baseline, "mtbf_gpu_hours")
            if not mtbf:
                raise ReferenceDataError(
                    "the reliability baseline has no usable rate", field="reliability",
                    expected="interruptions, gpus and days; per_1000_gpu_days; or "
                    "mtbf_gpu_hours", fix="reinstall cmax-rating or restore reference/")
            per_gpu_hour = 1.0 / mtbf
        else:
            per_gpu_hour = per_1000 / 1000.0 / 24.0
    source = text(baseline, "source") or "(source not recorded)"
    return per_gpu_hour, per_gpu_hour * 24.0 * 1000.0, source


def reliability_result(evidence: Evidence, reference: ReferenceData) -> ReliabilityResult | None:
    """Interruption rate, MTBF and E[ETTR] over what the incident log covers (the case's
    ``incident_review``, cmax/resolve/incident_review.py: the period's months it records
    anything in, the fleet the evidence supports; relabelled faults counted, the worst case
    assumed where times are missing). Plain Evidence is resolved first."""
    spec = evidence.manifest.reliability
    review = resolve(evidence, reference).incident_review
    if spec is None or review is None:
        return None
    from cmax.resolve.monitoring import monitoring_view

    system = evidence.manifest.system
    days = (spec.period_end - spec.period_start).days + 1
    view = monitoring_view(evidence, review, False)
    watched = view is not None and view.assessed
    # the buyer's monitoring witnesses every month of the period, not only those the log fills
    covered_days = float(days) if watched else review.covered_days
    fleet = review.fleet_gpus
    gpu_days = float(fleet * covered_days)
    unplanned = review.unplanned
    # failures other witnesses show and the log leaves out count too: the training logs'
    # restarts and the monitoring's outages without a row
    missing = [r.stopped for r in review.unlogged_restarts]
    if watched and view is not None:
        missing += [o.start for o in view.unlogged]
    unexpected = unplanned.height + len(missing)
    planned = review.counted.height - unplanned.height
    notes = [
        f"period {spec.period_start} to {spec.period_end} inclusive: {days} days; the rate "
        f"is over {covered_days:g} days × {fleet} GPUs = {gpu_days:,.0f} GPU-days",
        f"{unexpected} unexpected interruption(s) counted; {planned} planned (announced "
        "maintenance) excluded, as Llama 3 counts its 47 planned interruptions separately",
    ]
    if missing:
        notes.append(f"{len(missing)} of them are missing from the incident log: "
                     f"{len(review.unlogged_restarts)} training-log restart(s) and "
                     f"{len(missing) - len(review.unlogged_restarts)} outage(s) the "
                     "monitoring shows")
    notes += review_notes(review)
    per_gpu_hour = unexpected / (gpu_days * 24.0)
    per_1000 = per_gpu_hour * 24.0 * 1000.0
    mtbf = gpu_days * 24.0 / unexpected if unexpected else None
    ref_per_gpu_hour, ref_per_1000, ref_source = reference_rate(reference.reliability_baseline())
    job_gpus = spec.job_gpus or system.nodes * system.gpus_per_node
    ettr = expected_ettr(job_gpus, per_gpu_hour, spec.checkpoint_interval_min, spec.restart_min)
    ref_ettr = expected_ettr(job_gpus, ref_per_gpu_hour, spec.checkpoint_interval_min,
                             spec.restart_min)
    if ref_ettr > 0:
        goodput = ettr / ref_ettr
    else:
        goodput = 1.0
        notes.append("the ETTR model gives 0 for the reference at this job size: goodput "
                     "ratio set to 1 (the first-order model does not apply)")
    notes.append(
        f"E[ETTR] = 1 − job GPUs × interruptions per GPU-hour × (restart + checkpoint "
        f"interval / 2) = 1 − {job_gpus} × {per_gpu_hour:.4g} × ({spec.restart_min:g} + "
        f"{spec.checkpoint_interval_min:g}/2) min = {ettr:.4f} (Kokolis et al., "
        "arXiv:2410.21680; non-blocking checkpoints)")
    days_index: dict[dt.date, int] = defaultdict(int)
    for ts in [*unplanned["start"], *missing]:
        days_index[ts.date()] += 1
    series = [(spec.period_start + dt.timedelta(days=i),
               days_index.get(spec.period_start + dt.timedelta(days=i), 0)) for i in range(days)]
    return ReliabilityResult(
        period_start=spec.period_start, period_end=spec.period_end,
        gpus_in_service=fleet, gpu_days=gpu_days,
        unexpected_interruptions=unexpected, planned_interruptions=planned,
        per_1000_gpu_days=round(per_1000, 9),
        mtbf_gpu_hours=None if mtbf is None else round(mtbf, 3),
        reference_per_1000_gpu_days=round(ref_per_1000, 9), reference_source=ref_source,
        ratio_vs_reference=round(per_1000 / ref_per_1000, 9) if ref_per_1000 else None,
        job_gpus=job_gpus, checkpoint_interval_min=spec.checkpoint_interval_min,
        restart_min=spec.restart_min, ettr=round(ettr, 6), reference_ettr=round(ref_ettr, 6),
        goodput_ratio=round(goodput, 6), incident_series=series, notes=notes,
    )


def review_notes(review: IncidentReview) -> list[str]:
    """What the reading of the log changed, in the words the scorecard shows."""
    notes = []
    if review.outside.height:
        notes.append(f"{review.outside.height} incident(s) outside the period not counted "
                     f"({cite_lines(review.outside)})")
    if review.unannounced.height:
        notes.append(f"{review.unannounced.height} incident(s) marked planned but stating no "
                     f"announcement counted as unexpected ({cite_lines(review.unannounced)})")
    if review.ended_before_resume:
        notes.append(f"{len(review.ended_before_resume)} incident(s) ending before the "
                     "training log resumed counted to the resume minus restart_min")
    if review.relabelled.height:
        notes.append(f"{review.relabelled.height} incident(s) marked planned but describing a "
                     f"hardware fault counted as unexpected ({cite_lines(review.relabelled)})")
    worst = review.open_ended.height + review.backwards.height
    if worst:
        notes.append(f"{worst} incident(s) without a usable end time: the worst case is assumed, "
                     f"down until the end of the period "
                     f"({cite_lines(pl.concat([review.open_ended, review.backwards]))})")
    if review.no_start.height:
        notes.append(f"{review.no_start.height} incident(s) without a start time: the worst "
                     "case is assumed, down from the start of the period "
                     f"({cite_lines(review.no_start)})")
    if review.partial:
        shown = ", ".join(a.strftime("%Y-%m") for a, _ in review.covered)
        empty = len(review.period_months) - len(review.covered)
        notes.append(f"the incident log records nothing in {empty} of the period's "
                     f"{len(review.period_months)} months: rate and SLA are over the months "
                     f"it covers ({shown})")
    if review.fleet_gpus < review.claimed_gpus:
        notes.append(f"gpus_in_service = {review.claimed_gpus:,} is more than the evidence "
                     f"shows ({review.evidence_gpus:,} GPUs: the claimed system, or the hosts "
                     f"the evidence names): the rate and the SLA use {review.fleet_gpus:,}")
    return notes


def credit_for(uptime_pct: float, tiers: list[tuple[float, float]]) -> float:
    """Credit (% of the month's charge) for one node-month: the deepest tier it falls under."""
    credit = 0.0
    for below_pct, credit_pct in tiers:
        if uptime_pct < below_pct:
            credit = max(credit, credit_pct)
    return credit


Span = tuple[dt.datetime, dt.datetime]


def _merge(intervals: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _overlap_hours(intervals: list[tuple[dt.datetime, dt.datetime]], lo: dt.datetime,
                   hi: dt.datetime) -> float:
    total = 0.0
    for a, b in intervals:
        s, e = max(a, lo), min(b, hi)
        if e > s:
            total += (e - s).total_seconds() / 3600.0
    return total


def sla_result(evidence: Evidence, reference: ReferenceData) -> SlaResult | None:
    """Per node, per month uptime against the contract (docs/scoring.md: per node and
    per calendar month), over the months the incident log covers and the fleet the evidence
    supports (cmax/resolve/incident_review.py), joined with the buyer's monitoring where the bundle
    has ``[monitoring]`` (cmax/resolve/monitoring.py: the union of the outages both witnesses
    show, over the whole period).

    Nodes without outages were up all month. The fleet credit is the node-hour-weighted
    average of the per node-month credits, i.e. the share of the whole bill owed back. An
    incident with a missing or backwards time counts as down to the end (or from the start)
    of the period: malformed data can never lower the credit owed.
    """
    sla: Sla | None = evidence.manifest.sla
    review = resolve(evidence, reference).incident_review
    if sla is None or review is None:
        return None
    from cmax.resolve.monitoring import monitoring_view

    gpn = evidence.manifest.system.gpus_per_node
    start, end = review.start, review.end
    notes: list[str] = review_notes(review)
    per_node: dict[str, list[Span]] = defaultdict(list)
    for row in review.unplanned.iter_rows(named=True):
        key = (str(row["node"]).strip().lower() if row["node"]
               else f"(no node: {row['source_file']}:{row['line']})")
        per_node[key].append((max(row["start"], start), min(row["end"], end)))
    view = monitoring_view(evidence, review, sla.counts_gpu_faults)
    watched = view is not None and view.assessed
    hosts = set(per_node) | (set(view.down) | set(view.unwitnessed) if view else set())
    # a host only the incident log names does not enlarge the fleet (a padded log would
    # spread its downtime over more node-hours); its downtime still counts
    witnessed = {h for h in hosts if h not in per_node or not review.other
                 or h.split(".", 1)[0] in review.other.hosts
                 or (view is not None and h in view.unwitnessed)}
    nodes = max(fleet_nodes(review, gpn), len(witnessed))
    spans = review.period_months if watched else review.covered
    total_hours = sum((b - a).total_seconds() for a, b in spans) / 3600.0
    node_hours = nodes * total_hours
    downtime = log_down = mon_down = 0.0
    credit_node_hours = 0.0
    below = 0
    worst = 100.0
    breach: set[str] = set()
    stronger = {"monitoring": 0, "incident log": 0, "equal": 0}
    blind = 0
    for host in sorted(hosts):
        logged = _merge(per_node.get(host, []))
        seen = view.down.get(host, ()) if view else ()
        both = _merge([*logged, *seen])
        for lo, hi in spans:
            hours = (hi - lo).total_seconds() / 3600.0
            by_log = _overlap_hours(logged, lo, hi)
            log_down += by_log
            down = by_log
            if watched and view is not None:
                if view.blind(host, lo, hi):
                    blind += 1
                else:
                    by_mon = _overlap_hours(list(seen), lo, hi)
                    mon_down += by_mon
                    down = _overlap_hours(both, lo, hi)
                    if by_mon or by_log:
                        side = ("equal" if abs(by_mon - by_log) < 1e-9 else
                                "monitoring" if by_mon > by_log else "incident log")
                        stronger[side] += 1
            downtime += down
            uptime = 100.0 * (1.0 - down / hours)
            worst = min(worst, uptime)
            if uptime < sla.uptime_pct:
                below += 1
                breach.add(host)
            credit_node_hours += credit_for(uptime, sla.credits) * hours
    measured = max(0.0, 100.0 * (1.0 - downtime / node_hours))
    credit_pct = min(100.0, credit_node_hours / node_hours)
    notes.append(
        f"{nodes} nodes × {len(spans)} month(s); uptime per node-month = 1 − unplanned "
        f"downtime ÷ hours in the month; planned maintenance excluded; credit tiers "
        f"{sla.credits or 'none'} applied per node-month and weighted by node-hours")
    witness: Literal["incident log", "monitoring", "both"] = "incident log"
    if view is not None:
        notes += _monitoring_notes(view, watched, stronger, blind, log_down, mon_down)
        if watched:
            witness = "both" if evidence.incidents.height else "monitoring"
    return SlaResult(
        contracted_uptime_pct=sla.uptime_pct, measured_uptime_pct=round(measured, 6),
        met=below == 0, credit_pct=round(credit_pct, 6),
        downtime_node_hours=round(downtime, 6), node_hours=round(node_hours, 6),
        node_months=nodes * len(spans), node_months_below=below,
        worst_uptime_pct=round(worst, 6), witness=witness,
        nodes_in_breach=sorted(breach), downtime_node_hours_log=round(log_down, 6),
        downtime_node_hours_monitoring=round(mon_down, 6) if watched else None,
        monitoring_resolution_s=view.resolution_s if view is not None else None,
        unlogged_outages=len(view.unlogged) if watched and view is not None else None,
        notes=notes,
    )


def _monitoring_notes(view: MonitoringView, watched: bool, stronger: dict[str, int],
                      blind: int, log_down: float, mon_down: float) -> list[str]:
    """How the monitoring and the incident log were combined, in the scorecard's words."""
    notes = list(view.notes)
    if not watched:
        sources = ", ".join(w.source for w in view.witnesses)
        notes.append(f"monitoring not assessed: {sources} has no samples of the cluster's "
                     "nodes in the period; the SLA rests on the incident log alone")
        return notes
    notes.append(
        f"downtime = the union of the outages the monitoring shows ({mon_down:,.2f} "
        f"node-hours) and the unplanned ones the incident log records ({log_down:,.2f}); "
        f"the stronger witness per node-month: monitoring {stronger['monitoring']}, incident "
        f"log {stronger['incident log']}, equal {stronger['equal']}")
    if view.unlogged:
        hours = sum(o.hours for o in view.unlogged)
        notes.append(f"{len(view.unlogged)} outage(s) the monitoring shows are missing from "
                     f"the incident log ({hours:,.2f} node-hours), counted")
    if blind:
        notes.append(f"{blind} node-month(s) more than {MAX_UNWITNESSED:.0%} unwitnessed by "
                     "the monitoring (scrape gaps) rest on the incident log alone")
    if view.degraded:
        hours = sum(sum((b - a).total_seconds() for a, b in s) for s in view.degraded.values())
        counted = ("counted as downtime ([sla] counts_gpu_faults)" if view.gpu_faults_counted
                   else "not counted: the contract counts node availability only (set [sla] "
                   "counts_gpu_faults = true if it counts GPU faults)")
        notes.append(f"{hours / 3600:,.2f} node-hours with fewer GPUs reporting than the node "
                     f"has while the node was up: {counted}")
    if view.foreign:
        shown = ", ".join(h for h, _ in view.foreign[:5])
        notes.append(f"{len(view.foreign)} host(s) the monitoring names but no other evidence "
                     f"of the cluster does are left out ({shown})")
    return notes
