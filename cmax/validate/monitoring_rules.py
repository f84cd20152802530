"""The incident log read against the buyer's monitoring (cmax/resolve/monitoring.py), said.

Each rule names what the monitoring saw and the log does not say (an outage, a later end, a
GPU Xid error), or what limits the monitoring as a witness (hosts of no other evidence, scrape
gaps, a period without samples). The SLA already counts with the union of both witnesses;
these findings say where the two disagree, node and time, so the log can be corrected.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from cmax.findings import Finding
from cmax.ingest.monitoring.accounting import MAX_UNWITNESSED
from cmax.resolve.monitoring import MIN_OUTAGE_S, XID_BEFORE_S, MonitoringView, monitoring_view
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register

_SOURCE = ("the buyer's monitoring ([monitoring]: Prometheus up{job=\"node\"}, DCGM exporter, "
           "Slurm node events, Kubernetes node conditions) against the incident log; "
           "cmax/resolve/monitoring.py")

register(Rule(
    "reliability.outage-not-in-log", "error", "Outages the monitoring shows are not in the log",
    "The buyer's monitoring shows a node down for longer than "
    f"{MIN_OUTAGE_S / 60:g} minutes (a scrape's lookback) where the incident log has no row "
    "for that node. Leaving an outage out is the simplest way to lower the SLA credit; the "
    "outage is counted as downtime either way.",
    "Add the outage to the incident log (start, end, node, category), or explain it (a node "
    "taken out of the contract) in the bundle.",
    _SOURCE,
))
register(Rule(
    "reliability.outage-ended-early-in-log", "error",
    "Incident rows that end before the node was back",
    "The incident log ends an outage while the buyer's monitoring still shows the node down "
    f"(by more than {MIN_OUTAGE_S / 60:g} minutes and a step): the row shortens the "
    "downtime. The monitoring's end is counted.",
    "Give the incident its real end time (when the node was back in service).",
    _SOURCE,
))
register(Rule(
    "reliability.xid-not-in-log", "error", "GPU Xid errors without an incident row",
    "DCGM exporter recorded an Xid error on a GPU of a node for which the incident log has "
    f"no row open at that time or starting within {XID_BEFORE_S / 3600:g} h after it. Xid "
    "errors such as 48 (double-bit ECC), 79 (fallen off the bus) or 94/95 (ECC) interrupt "
    "jobs; a log without them understates the failure rate.",
    "Add an incident row for each fault (the GPU, its start and end), or submit the DCGM "
    "evidence that it interrupted nothing.",
    "NVIDIA XID catalogue (docs.nvidia.com/deploy/xid-errors); DCGM exporter "
    "DCGM_FI_DEV_XID_ERRORS (value of the last Xid error)",
))
register(Rule(
    "reliability.monitoring-outside-cluster", "warning", "Monitored hosts of no other evidence",
    "The monitoring names hosts that no other evidence of the cluster names, by name or "
    "naming scheme (login nodes, another cluster behind the same Prometheus): they are left "
    "out of the availability accounting.",
    "Narrow [monitoring] up (e.g. up{job=\"node\",cluster=\"...\"}) or instance_regex to the "
    "cluster's nodes.",
    _SOURCE + "; cmax/resolve/hosts.py",
))
register(Rule(
    "reliability.monitoring-gaps", "warning", "Node-months the monitoring barely witnessed",
    f"More than {MAX_UNWITNESSED:.0%} of a node-month has no sample (scrape gaps: Prometheus "
    "down, the target removed from discovery): the monitoring cannot witness that "
    "node-month's availability, so it rests on the incident log alone.",
    "Submit the monitoring for the whole period, or a second witness (Slurm node events, "
    "Kubernetes node conditions) for the gaps.",
    _SOURCE,
))
register(Rule(
    "reliability.monitoring-not-assessed", "warning", "Monitoring without samples in the period",
    "[monitoring] is given but has no samples of the cluster's nodes in the reliability "
    "period: availability is not assessed from it, and the SLA rests on the incident log "
    "alone, which is said on the scorecard.",
    "Check the period, the selector ([monitoring] up) and the server's retention.",
    _SOURCE,
))


def _when(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M UTC")


def _findings(view: MonitoringView, months: list[tuple[dt.datetime, dt.datetime]],
              log: str) -> Iterator[Finding]:
    if not view.assessed:
        sources = ", ".join(w.source for w in view.witnesses)
        yield finding("reliability.monitoring-not-assessed",
                      f"{sources}: no samples of the cluster's nodes from "
                      f"{_when(view.witnesses[0].start)} to {_when(view.witnesses[0].end)}; "
                      "availability not assessed from the monitoring", file=log)
        return
    if view.unlogged:
        shown = "; ".join(f"{o.node} {_when(o.start)} to {_when(o.end)} ({o.hours:,.1f} h)"
                          for o in view.unlogged[:5])
        more = f" and {len(view.unlogged) - 5} more" if len(view.unlogged) > 5 else ""
        yield finding("reliability.outage-not-in-log",
                      f"{len(view.unlogged)} outage(s) the monitoring ({view.unlogged[0].source}) "
                      f"shows have no incident row: {shown}{more}; counted as downtime",
                      file=log)
    for o in view.shortened:
        assert o.logged_end is not None
        yield finding("reliability.outage-ended-early-in-log",
                      f"{o.node}: the log ends the outage at {_when(o.logged_end)}, the "
                      f"monitoring shows the node down until {_when(o.end)}; the "
                      "monitoring's end is counted", file=log, line=o.line)
    if view.unlogged_xid:
        shown = "; ".join(f"{h} GPU {x.gpu} Xid {x.code} at {_when(x.at)}"
                          for h, x in view.unlogged_xid[:5])
        more = (f" and {len(view.unlogged_xid) - 5} more" if len(view.unlogged_xid) > 5
                else "")
        yield finding("reliability.xid-not-in-log",
                      f"{len(view.unlogged_xid)} GPU Xid error(s) with no incident row: "
                      f"{shown}{more}", file=log)
    if view.foreign:
        shown = ", ".join(h for h, _ in view.foreign[:6])
        more = f" and {len(view.foreign) - 6} more" if len(view.foreign) > 6 else ""
        yield finding("reliability.monitoring-outside-cluster",
                      f"{len(view.foreign)} host(s) in {view.foreign[0][1]} appear in no other "
                      f"evidence of the cluster ({shown}{more}); left out", file=log)
    blind = [(h, a) for h in sorted(view.unwitnessed) for a, b in months
             if view.blind(h, a, b)]
    if blind:
        shown = ", ".join(f"{h} {a:%Y-%m}" for h, a in blind[:6])
        more = f" and {len(blind) - 6} more" if len(blind) > 6 else ""
        yield finding("reliability.monitoring-gaps",
                      f"{len(blind)} node-month(s) more than {MAX_UNWITNESSED:.0%} "
                      f"unwitnessed by the monitoring ({shown}{more}): they rest on the "
                      "incident log alone", file=log)


def check(ctx: Context) -> Iterator[Finding]:
    spec = ctx.manifest.reliability
    if spec is None or not ctx.case.monitoring:
        return
    review = ctx.case.incident_review
    if review is None:
        return
    sla = ctx.manifest.sla
    view = monitoring_view(ctx.case, review, sla is not None and sla.counts_gpu_faults)
    if view is not None:
        yield from _findings(view, review.period_months, spec.incidents)
