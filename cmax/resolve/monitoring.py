"""The monitoring and the incident log read together: what each witnessed, what the log left out.

The buyer's monitoring (:mod:`cmax.ingest.monitoring`) and the provider's incident log
(:mod:`cmax.resolve.incident_review`) are two witnesses of the same downtime. Per node:

* **downtime** is the union of the outages the monitoring shows and the unplanned ones the log
  records, minus the log's planned maintenance (announced maintenance is not SLA downtime; a
  fault labelled planned is already counted by the review). Neither witness can lower what
  the other shows: an outage the log leaves out still counts, and so does an incident the
  monitoring did not see (a GPU fault on a node that answered its scrapes).
* GPU faults that leave the node up (fewer GPUs reporting than ``gpus_per_node``) are downtime
  when the contract counts them (``[sla] counts_gpu_faults``), and always said.
* a node-month the monitoring left more than
  :data:`~cmax.ingest.monitoring.accounting.MAX_UNWITNESSED` unwitnessed (scrape gaps) rests on the
  log alone, and says so.
* hosts the monitoring names that no other evidence of the cluster names (login nodes, another
  cluster behind the same Prometheus) are left out of the accounting and named.

The outages the monitoring shows and the log leaves out, the outages the log ends before the
monitoring saw the node back, and the GPU Xid errors without an incident row are findings
(``cmax/validate/monitoring_rules.py``) naming node and time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import polars as pl

from cmax.ingest.evidence import Evidence
from cmax.ingest.monitoring.accounting import MAX_UNWITNESSED
from cmax.ingest.monitoring.witness import (
    Span,
    Witness,
    XidEvent,
    merge_spans,
    span_hours,
    subtract_spans,
)
from cmax.resolve.hosts import other_hosts
from cmax.resolve.incident_review import IncidentReview

MIN_OUTAGE_S = 300.0
"""An outage shorter than Prometheus's default 5-minute lookback cannot be told from a missed
scrape, so it counts as downtime but is not named as one the log left out."""

XID_BEFORE_S = 3600.0
"""An Xid error is matched by an incident row on its node that starts up to an hour after it
(the fault is seen before anyone opens the incident) or is open when it happens."""

WitnessName = Literal["monitoring", "incident log", "both"]


@dataclass(frozen=True)
class Outage:
    """An outage one witness shows on one node."""

    node: str
    start: dt.datetime
    end: dt.datetime
    source: str
    logged_end: dt.datetime | None = None
    """for a shortened outage: where the log's row ends"""
    line: int | None = None
    """for a shortened outage: the log's row"""

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600.0


@dataclass(frozen=True)
class MonitoringView:
    """The monitoring of the cluster's nodes over the period, joined with the incident log."""

    witnesses: tuple[Witness, ...]
    down: dict[str, tuple[Span, ...]]
    """per host: what the monitoring shows down (GPU faults included where the contract
    counts them), the log's planned maintenance removed"""
    degraded: dict[str, tuple[Span, ...]]
    unwitnessed: dict[str, tuple[Span, ...]]
    foreign: tuple[tuple[str, str], ...]
    """(host, source) the monitoring names but no other evidence of the cluster does"""
    unlogged: tuple[Outage, ...]
    shortened: tuple[Outage, ...]
    unlogged_xid: tuple[tuple[str, XidEvent], ...]
    gpu_faults_counted: bool
    resolution_s: float | None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def assessed(self) -> bool:
        return bool(self.down) or any(w.nodes for w in self.witnesses)

    def blind(self, host: str, lo: dt.datetime, hi: dt.datetime) -> bool:
        """The monitoring left more than MAX_UNWITNESSED of this node's [lo, hi) unwitnessed
        (a node it never names was unwitnessed throughout when Prometheus is the only
        witness)."""
        if any(w.kind != "prometheus" and w.nodes for w in self.witnesses):
            return False  # an event history witnesses every node: no event, no outage
        spans = self.unwitnessed.get(host)
        if spans is None:
            return True
        hours = (hi - lo).total_seconds() / 3600.0
        return span_hours(spans, lo, hi) > MAX_UNWITNESSED * hours


def _rows(review: IncidentReview, planned: bool | None) -> dict[str, list[tuple[Span, int | None]]]:
    frame = review.counted.filter(pl.col("node").is_not_null())
    if planned is not None:
        frame = frame.filter(pl.col("planned") == planned)
    out: dict[str, list[tuple[Span, int | None]]] = {}
    for node, a, b, line in frame.select("node", "start", "end", "line").iter_rows():
        out.setdefault(str(node).strip().lower(), []).append(((a, b), line))
    return out


def _touches(span: Span, rows: Iterable[tuple[Span, int | None]], slack: dt.timedelta) -> bool:
    a, b = span
    return any(c - slack < b and d + slack > a for (c, d), _ in rows)


def monitoring_view(evidence: Evidence, review: IncidentReview,
                    counts_gpu_faults: bool) -> MonitoringView | None:
    """The case's monitoring joined with the reviewed incident log; None without
    ``[monitoring]``."""
    witnesses = evidence.monitoring
    if not witnesses:
        return None
    others = other_hosts(evidence)  # incident nodes included: the log names the cluster too
    planned = _rows(review, True)
    logged = _rows(review, None)
    resolution = max((w.resolution_s for w in witnesses if w.resolution_s), default=None)
    slack = dt.timedelta(seconds=resolution or 0.0)
    down: dict[str, list[Span]] = {}
    degraded: dict[str, list[Span]] = {}
    unwitnessed: dict[str, tuple[Span, ...]] = {}
    foreign: list[tuple[str, str]] = []
    outages: list[Outage] = []
    xids: list[tuple[str, XidEvent]] = []
    for w in witnesses:
        for node in w.nodes:
            if others and not others.belongs(node.host):
                foreign.append((node.host, w.source))
                continue
            shown = list(node.down) + (list(node.degraded) if counts_gpu_faults else [])
            down.setdefault(node.host, []).extend(shown)
            degraded.setdefault(node.host, []).extend(node.degraded)
            if w.kind == "prometheus":
                unwitnessed[node.host] = node.unwitnessed
            outages += [Outage(node.host, a, b, w.source) for a, b in node.down]
            xids += [(node.host, x) for x in node.xid]
    cut = {h: subtract_spans(s, (span for span, _ in planned.get(h, []))) for h, s in down.items()}
    unlogged, shortened = [], []
    for o in sorted(outages, key=lambda o: (o.start, o.node)):
        if (o.end - o.start).total_seconds() < MIN_OUTAGE_S:
            continue
        rows = logged.get(o.node, [])
        if not _touches((o.start, o.end), rows, slack):
            unlogged.append(o)
            continue
        ends = [(d, line) for (c, d), line in rows if c - slack < o.end and d + slack > o.start]
        last, line = max(ends, key=lambda x: x[0])
        if (o.end - last).total_seconds() > MIN_OUTAGE_S + slack.total_seconds():
            shortened.append(Outage(o.node, o.start, o.end, o.source, logged_end=last,
                                    line=line))
    before = dt.timedelta(seconds=XID_BEFORE_S)
    lost_xid = [(h, x) for h, x in xids
                if not any(c - before <= x.at <= d for (c, d), _ in logged.get(h, []))]
    notes = [f"{w.kind} {w.source}: {w.gaps_rule}" + (
        f"; resolution {w.resolution_s:g} s" if w.resolution_s else "") for w in witnesses]
    notes += [n for w in witnesses for n in w.notes]
    return MonitoringView(
        witnesses=witnesses, down={h: merge_spans(s) for h, s in cut.items()},
        degraded={h: merge_spans(s) for h, s in degraded.items() if s},
        unwitnessed=unwitnessed, foreign=tuple(sorted(set(foreign))),
        unlogged=tuple(unlogged), shortened=tuple(shortened), unlogged_xid=tuple(lost_xid),
        gpu_faults_counted=counts_gpu_faults, resolution_s=resolution, notes=tuple(notes))
