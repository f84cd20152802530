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
import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import polars as pl

from cmax.errors import ReferenceDataError
from cmax.evidence import Evidence
from cmax.manifest import Sla
from cmax.score.reference_api import ReferenceData, num, text
from cmax.scorecard import ReliabilityResult, SlaResult

UTC = dt.UTC


def period_bounds(start: dt.date, end: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """[start 00:00 UTC, day after end 00:00 UTC): the manifest's dates are inclusive."""
    return (dt.datetime.combine(start, dt.time(), UTC),
            dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), UTC))


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


def _in_period(frame: pl.DataFrame, start: dt.datetime, end: dt.datetime) -> pl.DataFrame:
    return frame.filter(pl.col("start").is_not_null() & (pl.col("start") >= start)
                        & (pl.col("start") < end))


def _unplanned(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("planned").is_null() | pl.col("planned").not_())


def reliability_result(evidence: Evidence, reference: ReferenceData) -> ReliabilityResult | None:
    spec = evidence.manifest.reliability
    if spec is None:
        return None
    system = evidence.manifest.system
    start, end = period_bounds(spec.period_start, spec.period_end)
    days = (spec.period_end - spec.period_start).days + 1
    gpu_days = float(spec.gpus_in_service * days)
    incidents = _in_period(evidence.incidents, start, end)
    unplanned = _unplanned(incidents)
    unexpected = unplanned.height
    planned = incidents.height - unexpected
    notes = [
        f"period {spec.period_start} to {spec.period_end} inclusive: {days} days × "
        f"{spec.gpus_in_service} GPUs = {gpu_days:,.0f} GPU-days",
        f"{unexpected} unexpected interruption(s) counted; {planned} planned (announced "
        "maintenance) excluded, as Llama 3 counts its 47 planned interruptions separately",
    ]
    outside = evidence.incidents.height - incidents.height
    if outside:
        notes.append(f"{outside} incident(s) outside the period ignored")
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
    for ts in unplanned["start"]:
        days_index[ts.date()] += 1
    series = [(spec.period_start + dt.timedelta(days=i),
               days_index.get(spec.period_start + dt.timedelta(days=i), 0)) for i in range(days)]
    return ReliabilityResult(
        period_start=spec.period_start, period_end=spec.period_end,
        gpus_in_service=spec.gpus_in_service, gpu_days=gpu_days,
        unexpected_interruptions=unexpected, planned_interruptions=planned,
        per_1000_gpu_days=round(per_1000, 9),
        mtbf_gpu_hours=None if mtbf is None else round(mtbf, 3),
        reference_per_1000_gpu_days=round(ref_per_1000, 9), reference_source=ref_source,
        ratio_vs_reference=round(per_1000 / ref_per_1000, 9) if ref_per_1000 else None,
        job_gpus=job_gpus, checkpoint_interval_min=spec.checkpoint_interval_min,
        restart_min=spec.restart_min, ettr=round(ettr, 6), reference_ettr=round(ref_ettr, 6),
        goodput_ratio=round(goodput, 6), incident_series=series, notes=notes,
    )


def credit_for(uptime_pct: float, tiers: list[tuple[float, float]]) -> float:
    """Credit (% of the month's charge) for one node-month: the deepest tier it falls under."""
    credit = 0.0
    for below_pct, credit_pct in tiers:
        if uptime_pct < below_pct:
            credit = max(credit, credit_pct)
    return credit


def _months(start: dt.datetime, end: dt.datetime) -> list[tuple[dt.datetime, dt.datetime]]:
    spans = []
    cur = start
    while cur < end:
        nxt = (dt.datetime(cur.year + 1, 1, 1, tzinfo=UTC) if cur.month == 12
               else dt.datetime(cur.year, cur.month + 1, 1, tzinfo=UTC))
        spans.append((cur, min(nxt, end)))
        cur = nxt
    return spans


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


def sla_result(evidence: Evidence) -> SlaResult | None:
    """Per node, per month uptime against the contract (docs/scoring.md: per node and
    per calendar month).

    Nodes without incidents were up all month. The fleet credit is the node-hour-weighted
    average of the per node-month credits, i.e. the share of the whole bill owed back.
    """
    sla: Sla | None = evidence.manifest.sla
    spec = evidence.manifest.reliability
    if sla is None or spec is None:
        return None
    gpn = evidence.manifest.system.gpus_per_node
    start, end = period_bounds(spec.period_start, spec.period_end)
    notes: list[str] = []
    incidents = _unplanned(evidence.incidents.filter(
        pl.col("start").is_not_null() & (pl.col("start") < end)
        & (pl.col("end").is_null() | (pl.col("end") > start))))
    per_node: dict[str, list[tuple[dt.datetime, dt.datetime]]] = defaultdict(list)
    open_ended = backwards = 0
    for row in incidents.iter_rows(named=True):
        a, b = row["start"], row["end"]
        if b is None:
            open_ended += 1
            continue
        if b < a:
            backwards += 1
            continue
        key = row["node"] or f"(no node: {row['source_file']}:{row['line']})"
        per_node[key].append((max(a, start), min(b, end)))
    if open_ended:
        notes.append(f"{open_ended} incident(s) without an end time: no downtime counted for "
                     "them (add the end time to claim it)")
    if backwards:
        notes.append(f"{backwards} incident(s) ending before they start: ignored")
    nodes = max(math.ceil(spec.gpus_in_service / gpn), len(per_node))
    months = _months(start, end)
    total_hours = (end - start).total_seconds() / 3600.0
    node_hours = nodes * total_hours
    downtime = 0.0
    credit_node_hours = 0.0
    below = 0
    worst = 100.0
    for intervals in per_node.values():
        merged = _merge(intervals)
        for lo, hi in months:
            hours = (hi - lo).total_seconds() / 3600.0
            down = _overlap_hours(merged, lo, hi)
            downtime += down
            uptime = 100.0 * (1.0 - down / hours)
            worst = min(worst, uptime)
            if uptime < sla.uptime_pct:
                below += 1
            credit_node_hours += credit_for(uptime, sla.credits) * hours
    measured = 100.0 * (1.0 - downtime / node_hours)
    credit_pct = credit_node_hours / node_hours
    notes.append(
        f"{nodes} nodes × {len(months)} month(s); uptime per node-month = 1 − unplanned "
        f"downtime ÷ hours in the month; planned maintenance excluded; credit tiers "
        f"{sla.credits or 'none'} applied per node-month and weighted by node-hours")
    return SlaResult(
        contracted_uptime_pct=sla.uptime_pct, measured_uptime_pct=round(measured, 6),
        met=below == 0, credit_pct=round(credit_pct, 6),
        downtime_node_hours=round(downtime, 6), node_hours=round(node_hours, 6),
        node_months=nodes * len(months), node_months_below=below,
        worst_uptime_pct=round(worst, 6), notes=notes,
    )
