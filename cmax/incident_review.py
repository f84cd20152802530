"""Which incidents count, over which period and which fleet: the one reading of an incident log.

An incident log is the provider's own account, so every way it can understate downtime is
read against the provider (incidents dated outside the period, relabelled planned or left
without an end time would otherwise cut the credit owed to nothing):

* an incident outside the period is not counted, and is said;
* a planned incident whose category or description is a hardware fault (an XID, an ECC error,
  a GPU off the bus: ``HARDWARE_FAULT``) is counted as unexpected;
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

from cmax.evidence import Evidence
from cmax.hosts import HostSet, other_hosts
from cmax.manifest import period_bounds

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
    open_ended = rows.filter(pl.col("end").is_null())
    backwards = rows.filter(pl.col("end").is_not_null() & pl.col("start").is_not_null()
                            & (pl.col("end") < pl.col("start")))
    lo, hi = pl.lit(start, dtype=table.schema["start"]), pl.lit(end, dtype=table.schema["end"])
    worst_end = (pl.col("end").is_null()
                 | (pl.col("start").is_not_null() & (pl.col("end") < pl.col("start"))))
    counted = rows.with_columns(
        pl.when(pl.col("start").is_null()).then(lo).otherwise(pl.col("start")).alias("start"),
        pl.when(worst_end).then(hi).otherwise(pl.col("end")).alias("end"),
        (pl.col("planned") & ~fault).alias("planned"),
    )
    period_months = months(start, end)
    spans = list(zip(counted["start"].to_list(), counted["end"].to_list(), strict=True))
    covered = [(a, b) for a, b in period_months
               if any(t0 < b and (t1 >= a if t1 >= t0 else t0 >= a) for t0, t1 in spans)]
    if not covered:
        covered = list(period_months)  # nothing recorded: nothing to narrow the period to
    other = other_hosts(evidence, exclude_kinds=INCIDENT_KINDS)
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
    # hosts named only by the incident log witness nothing (cmax.hosts.UNWITNESSED_KINDS): a
    # padded log does not enlarge the fleet its SLA is computed over
    evidence_gpus = max(system_gpus, len(other.hosts) * system.gpus_per_node)
    return IncidentReview(
        start=start, end=end, counted=counted, outside=outside, relabelled=relabelled,
        open_ended=open_ended, backwards=backwards, no_start=no_start, covered=covered,
        period_months=period_months, claimed_gpus=claimed, evidence_gpus=evidence_gpus,
        foreign_nodes=foreign, other=other)


def fleet_nodes(review: IncidentReview, gpus_per_node: int) -> int:
    """Nodes of the fleet the SLA is assessed over."""
    return math.ceil(review.fleet_gpus / gpus_per_node)


def cite_lines(frame: pl.DataFrame, limit: int = 6) -> str:
    """``lines 4, 9, 12`` (at most ``limit``) for a finding that quotes incident rows."""
    lines = _lines(frame)
    shown = ", ".join(str(n) for n in lines[:limit])
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    return f"line{'s' if len(lines) != 1 else ''} {shown}{more}" if lines else "no line numbers"
