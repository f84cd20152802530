"""Which incidents count, over which period and which fleet: the one reading of an incident log.

An incident log is the provider's own account, so every way it can understate downtime is
read against the provider (incidents dated outside the period, relabelled planned or left
without an end time would otherwise cut the credit owed to nothing):

* an incident outside the period is not counted, and is said;
* a planned incident whose category or description is a hardware fault (an XID, an ECC error,
  a GPU off the bus: ``HARDWARE_FAULT``) is counted as unexpected, and so is one that does not
  say it was announced (``ANNOUNCED``);
* a training log's restart (its own wall-clock stamps) must fall inside an incident row, and
  a row over it cannot end before the job could have resumed: it is counted to the resume
  minus ``restart_min``;
* the period must lie within a month of the dates the evidence carries (the benchmark date,
  the training logs' stamps): a clean month far from the benchmark is said;
* an incident without an end time (or ending before it starts) lasts to the end of the period,
  and one without a start time from its beginning: the worst case, said;
* the interruption rate and the SLA are computed over what the log covers: the calendar months
  in which it records anything (a six-month period with a log of August alone is rated over
  August), and a fleet no larger than the evidence shows: ``gpus_in_service`` beyond the
  system the manifest claims and the hosts the evidence names is not believed.

The validation rules (``cmax/validate/reliability_rules.py``) report each of these as a
finding; the score (``cmax/score/reliability.py``) computes with them. Both read this module.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass

import polars as pl

from cmax.ingest.evidence import Evidence
from cmax.resolve.hosts import HostSet, host_stem, other_hosts
from cmax.submission.manifest import period_bounds

UTC = dt.UTC

_FAULT = (
    r"\bxid\b|\bxid ?\d+|\becc\b|double[- ]bit|\bdbe\b|uncorrectable|fell off the bus|"
    r"row[- ]remap|\bhbm|nvlink (error|fault|down)|faulty gpu|gpu (failure|fault|error|hang)|"
    r"silent data corruption|\bsdc\b|gpu sram|gpu system processor")
HARDWARE_FAULT = re.compile(_FAULT, re.IGNORECASE)
"""A hardware fault, never planned maintenance. NVIDIA's XID catalogue (Xid 48 double-bit ECC,
63/64 row remapping, 74 NVLink error, 79 GPU fell off the bus, 94/95 contained/uncontained ECC;
docs.nvidia.com/deploy/xid-errors) and the Llama 3 405B interruption categories (Faulty GPU,
GPU HBM3 Memory, GPU SRAM Memory, GPU System Processor, Silent Data Corruption; arXiv:2407.21783
Table 5) name faults that interrupt jobs unannounced."""

ANNOUNCED = re.compile(r"\bannounced\b|\bscheduled\b|\bnotified\b|\bnotice\b|"
                       r"maintenance window|change (request|ticket)", re.IGNORECASE)
"""What makes maintenance planned: the row says it was announced (``scheduled firmware update,
announced 7 days ahead``, ``maintenance window``, ``change ticket``). SLAs exclude scheduled
maintenance only when the customer was told in advance (e.g. Google Cloud's and AWS's SLAs
exclude "scheduled maintenance" announced beforehand); a row only marked planned is counted as
unexpected, the worst case."""

INCIDENT_KINDS = frozenset({"incidents-csv", "incidents-json"})


def months(start: dt.datetime, end: dt.datetime) -> list[tuple[dt.datetime, dt.datetime]]:
    """Calendar-month spans of [start, end), the first and last cut to the period."""
    spans = []
    cur = start
    while cur < end:
        nxt = (dt.datetime(cur.year + 1, 1, 1, tzinfo=UTC) if cur.month == 12
               else dt.datetime(cur.year, cur.month + 1, 1, tzinfo=UTC))
        spans.append((cur, min(nxt, end)))
        cur = nxt
    return spans


def _lines(frame: pl.DataFrame) -> list[int]:
    return [int(x) for x in frame["line"].drop_nulls().to_list()]


PERIOD_SLACK = dt.timedelta(days=31)
"""How far the reliability period may lie from the dates the evidence carries (the benchmark
date, the training logs' own stamps): one calendar month, the SLA's unit. A period further
away rates a month the benchmark never saw, so a provider could pick a clean one."""


@dataclass(frozen=True)
class Restart:
    """A restart inside a training log, placed by the log's own wall-clock stamps: the last
    step before it and the first step of the attempt that resumed."""

    run_id: str
    source_file: str | None
    line: int | None
    """the resumed step's line"""
    stopped: dt.datetime
    resumed: dt.datetime


def log_restarts(evidence: Evidence) -> list[Restart]:
    """Every restart the training logs show (``runs.resumed_at``, cmax.ingest.textlines
    ``settle_steps``) whose two sides carry wall-clock stamps."""
    out: list[Restart] = []
    runs = evidence.runs
    if runs.is_empty() or "resumed_at" not in runs.columns:
        return out
    for run_id, resumed in runs.select("run_id", "resumed_at").iter_rows():
        if not resumed:
            continue
        steps = evidence.steps.filter((pl.col("run_id") == run_id)
                                      & pl.col("wall_time_s").is_not_null())
        if steps.is_empty():
            continue
        for text in str(resumed).split(","):
            if not text.strip().lstrip("-").isdigit():
                continue
            at = int(text)
            after = steps.filter(pl.col("iteration") >= at).sort("iteration").head(1)
            before = steps.filter(pl.col("iteration") < at).sort("iteration").tail(1)
            if after.is_empty() or before.is_empty():
                continue
            t0, t1 = float(before["wall_time_s"][0]), float(after["wall_time_s"][0])
            if t1 <= t0:
                continue
            line = after["line"][0]
            out.append(Restart(str(run_id), after["source_file"][0],
                               None if line is None else int(line),
                               dt.datetime.fromtimestamp(t0, UTC),
                               dt.datetime.fromtimestamp(t1, UTC)))
    return out


def evidence_dates(evidence: Evidence) -> list[tuple[str, dt.date]]:
    """(what, date) the evidence carries: the benchmark date and the training logs' first and
    last stamped days (one pass over the stamps, however many runs)."""
    dates = [("the benchmark date", evidence.manifest.benchmark.date)]
    steps = evidence.steps
    if not steps.is_empty() and "wall_time_s" in steps.columns:
        stamps = steps.get_column("wall_time_s")
        first, last = stamps.min(), stamps.max()
        if isinstance(first, float) and isinstance(last, float):
            dates += [("the training logs' first stamp",
                       dt.datetime.fromtimestamp(first, UTC).date()),
                      ("the training logs' last stamp",
                       dt.datetime.fromtimestamp(last, UTC).date())]
    return dates


@dataclass(frozen=True)
class IncidentReview:
    """The incident log read against the provider (module docstring)."""

    start: dt.datetime
    end: dt.datetime
    counted: pl.DataFrame
    """incidents in the period, with ``start``/``end`` filled worst-case and ``planned`` false
    for relabelled hardware faults"""
    outside: pl.DataFrame
    relabelled: pl.DataFrame
    unannounced: pl.DataFrame
    """rows marked planned that are no fault but state no announcement: counted unexpected"""
    open_ended: pl.DataFrame
    backwards: pl.DataFrame
    no_start: pl.DataFrame
    covered: list[tuple[dt.datetime, dt.datetime]]
    """the period's calendar months in which the log records anything"""
    period_months: list[tuple[dt.datetime, dt.datetime]]
    claimed_gpus: int
    evidence_gpus: int
    """the most GPUs the evidence supports: the claimed system, or the hosts it names"""
    foreign_nodes: list[tuple[str, int | None]]
    other: HostSet
    restarts: tuple[Restart, ...] = ()
    """the training logs' restarts inside the period"""
    unlogged_restarts: tuple[Restart, ...] = ()
    """restarts no incident row (any node, planned or not) overlaps"""
    ended_before_resume: tuple[tuple[Restart, int | None, dt.datetime], ...] = ()
    """(restart, incident line, its end as logged): rows ending more than ``restart_min``
    before the log resumed; counted to the resume minus ``restart_min``"""
    far_dates: tuple[tuple[str, dt.date], ...] = ()
    """evidence dates more than PERIOD_SLACK outside the period"""

    @property
    def fleet_gpus(self) -> int:
        return min(self.claimed_gpus, self.evidence_gpus)

    @property
    def covered_hours(self) -> float:
        return sum((b - a).total_seconds() for a, b in self.covered) / 3600.0

    @property
    def covered_days(self) -> float:
        return self.covered_hours / 24.0

    @property
    def partial(self) -> bool:
        return len(self.covered) < len(self.period_months)

    @property
    def unplanned(self) -> pl.DataFrame:
        return self.counted.filter(pl.col("planned").not_())


def review_incidents(evidence: Evidence) -> IncidentReview | None:
    """Read the incident log against the manifest's period and the evidence's fleet."""
    spec = evidence.manifest.reliability
    if spec is None:
        return None
    system = evidence.manifest.system
    start, end = period_bounds(spec.period_start, spec.period_end)
    table = evidence.incidents
    no_start = table.filter(pl.col("start").is_null())
    dated = table.filter(pl.col("start").is_not_null())
    outside = dated.filter((pl.col("start") >= end)
                           | ((pl.col("start") < start)
                              & pl.col("end").is_not_null() & (pl.col("end") <= start)))
    inside = dated.filter(~((pl.col("start") >= end)
                            | ((pl.col("start") < start)
                               & pl.col("end").is_not_null() & (pl.col("end") <= start))))
    rows = pl.concat([inside, no_start], how="vertical_relaxed")
    fault = (pl.col("category").fill_null("") + " " + pl.col("description").fill_null("")
             ).str.contains("(?i)" + _FAULT)
    rows = rows.with_columns(pl.col("planned").fill_null(False))
    relabelled = rows.filter(pl.col("planned") & fault)
    announced = (pl.col("category").fill_null("") + " " + pl.col("description").fill_null("")
                 ).str.contains("(?i)" + ANNOUNCED.pattern)
    unannounced = rows.filter(pl.col("planned") & ~fault & ~announced)
    open_ended = rows.filter(pl.col("end").is_null())
    backwards = rows.filter(pl.col("end").is_not_null() & pl.col("start").is_not_null()
                            & (pl.col("end") < pl.col("start")))
    lo, hi = pl.lit(start, dtype=table.schema["start"]), pl.lit(end, dtype=table.schema["end"])
    worst_end = (pl.col("end").is_null()
                 | (pl.col("start").is_not_null() & (pl.col("end") < pl.col("start"))))
    counted = rows.with_columns(
        pl.when(pl.col("start").is_null()).then(lo).otherwise(pl.col("start")).alias("start"),
        pl.when(worst_end).then(hi).otherwise(pl.col("end")).alias("end"),
        (pl.col("planned") & ~fault & announced).alias("planned"),
    )
    restarts = tuple(r for r in log_restarts(evidence) if r.stopped < end and r.resumed > start)
    counted, unlogged, early = _against_restarts(counted, restarts,
                                                 dt.timedelta(minutes=spec.restart_min))
    far = tuple((what, day) for what, day in evidence_dates(evidence)
                if day < spec.period_start - PERIOD_SLACK or day > spec.period_end + PERIOD_SLACK)
    period_months = months(start, end)
    spans = list(zip(counted["start"].to_list(), counted["end"].to_list(), strict=True))
    covered = [(a, b) for a, b in period_months
               if any(t0 < b and (t1 >= a if t1 >= t0 else t0 >= a) for t0, t1 in spans)]
    if not covered:
        covered = list(period_months)  # nothing recorded: nothing to narrow the period to
    other = _with_monitored(other_hosts(evidence, exclude_kinds=INCIDENT_KINDS), evidence)
    foreign: list[tuple[str, int | None]] = []
    seen: set[str] = set()
    if other:
        for node, line in table.select("node", "line").iter_rows():
            if node is None or node in seen:
                continue
            seen.add(node)
            if not other.belongs(str(node)):
                foreign.append((str(node), None if line is None else int(line)))
    claimed = spec.gpus_in_service
    system_gpus = system.nodes * system.gpus_per_node
    # hosts named only by the incident log witness nothing (cmax.resolve.hosts.UNWITNESSED_KINDS): a
    # padded log does not enlarge the fleet its SLA is computed over
    evidence_gpus = max(system_gpus, len(other.hosts) * system.gpus_per_node)
    return IncidentReview(
        start=start, end=end, counted=counted, outside=outside, relabelled=relabelled,
        unannounced=unannounced,
        open_ended=open_ended, backwards=backwards, no_start=no_start, covered=covered,
        period_months=period_months, claimed_gpus=claimed, evidence_gpus=evidence_gpus,
        foreign_nodes=foreign, other=other, restarts=restarts, unlogged_restarts=unlogged,
        ended_before_resume=early, far_dates=far)


def _with_monitored(other: HostSet, evidence: Evidence) -> HostSet:
    """The hosts other evidence names, with those the buyer's monitoring names: a witness the
    provider does not write, so an incident log's nodes are checked against it too."""
    monitored = {h.host for w in evidence.monitoring for h in w.nodes}
    if not monitored:
        return other
    hosts = other.hosts | monitored
    stems = frozenset(s for s in (host_stem(h) for h in hosts) if len(s) >= 2)
    return HostSet(frozenset(hosts), stems,
                   other.files + tuple(w.source for w in evidence.monitoring if w.nodes),
                   other.prefixes)


def _against_restarts(counted: pl.DataFrame, restarts: tuple[Restart, ...],
                      restart: dt.timedelta
                      ) -> tuple[pl.DataFrame, tuple[Restart, ...],
                                 tuple[tuple[Restart, int | None, dt.datetime], ...]]:
    """The log's rows against the training logs' restarts: restarts no row overlaps, and rows
    over a restart that end before the job could have resumed (its resume minus the restart
    time the buyer states), counted to that point: an outage cannot end before the log
    resumed."""
    if not restarts:
        return counted, (), ()
    rows = list(counted.select("start", "end", "line").iter_rows())
    unlogged, early = [], []
    ends = counted["end"].to_list()
    for r in restarts:
        over = [i for i, (a, b, _) in enumerate(rows)
                if a is not None and b is not None and a <= r.resumed and b >= r.stopped]
        if not over:
            unlogged.append(r)
            continue
        last = max(over, key=lambda i: rows[i][1])
        floor = r.resumed - restart
        if rows[last][1] < floor:
            early.append((r, rows[last][2], rows[last][1]))
            ends[last] = max(ends[last], floor)
    if early:
        counted = counted.with_columns(pl.Series("end", ends, dtype=counted.schema["end"]))
    return counted, tuple(unlogged), tuple(early)


def fleet_nodes(review: IncidentReview, gpus_per_node: int) -> int:
    """Nodes of the fleet the SLA is assessed over."""
    return math.ceil(review.fleet_gpus / gpus_per_node)


def cite_lines(frame: pl.DataFrame, limit: int = 6) -> str:
    """``lines 4, 9, 12`` (at most ``limit``) for a finding that quotes incident rows."""
    lines = _lines(frame)
    shown = ", ".join(str(n) for n in lines[:limit])
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    return f"line{'s' if len(lines) != 1 else ''} {shown}{more}" if lines else "no line numbers"
