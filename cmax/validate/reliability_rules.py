"""The incident log read against the provider: what ``cmax/resolve/incident_review.py`` changed,
said.

Each rule here reports one way an incident log can understate downtime or overstate the fleet
(incidents outside the period, faults labelled planned, missing times, nodes of no other
evidence, a fleet larger than the evidence, a log covering part of the period). The score
already computes with the worst case; these findings say what was assumed and how to fix the
log so nothing has to be.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import polars as pl

from cmax.findings import Finding
from cmax.resolve.incident_review import IncidentReview, cite_lines
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register

_LOG = ("the incident log's own rows (start, end, node, category, planned, description; "
        "docs/manifest.md); cmax/resolve/incident_review.py")

register(Rule(
    "reliability.incident-outside-period", "warning", "Incidents outside the reliability period",
    "Incidents dated before period_start or after period_end are not counted. Moving incidents "
    "out of the period is the easiest way to make a month look clean, so each is listed.",
    "Give the period the log really covers ([reliability] period_start / period_end), or "
    "correct the incidents' dates.",
    _LOG,
))
register(Rule(
    "reliability.fault-labelled-planned", "error", "Hardware faults labelled as planned",
    "Incidents marked planned whose category or description is a hardware fault (an XID, an "
    "ECC error, a GPU off the bus, HBM or NVLink errors) are counted as unexpected "
    "interruptions and SLA downtime: a fault is never announced maintenance.",
    "Mark faults planned = false; keep planned = true for announced maintenance only.",
    "NVIDIA XID catalogue (docs.nvidia.com/deploy/xid-errors: 48, 63/64, 74, 79, 94/95); "
    "Llama 3 405B interruption categories (arXiv:2407.21783 Table 5)",
))
register(Rule(
    "reliability.incident-without-time", "warning", "Incidents without an end or start time",
    "An incident without an end time (or ending before it starts) is counted as down until "
    "the end of the period, and one without a start time as down from its beginning: the "
    "worst case, so that missing data can never lower the credit owed.",
    "Add the incident's start and end times (UTC) to the log.",
    _LOG,
))
register(Rule(
    "reliability.nodes-outside-cluster", "error", "Incidents on nodes of no other evidence",
    "The incident log names nodes that no other evidence of the cluster names (nccl-tests "
    "hosts, the audit, DCGM files, training logs), by name or naming scheme: the log may be "
    "another cluster's.",
    "Submit the incident log of the cluster being rated, or the evidence that names its "
    "nodes.",
    _LOG + "; cmax/resolve/hosts.py",
))
register(Rule(
    "reliability.fleet-beyond-evidence", "warning", "gpus_in_service larger than the evidence",
    "[reliability] gpus_in_service is the denominator of the interruption rate and the SLA; "
    "it is larger than both the system the manifest claims and the hosts the evidence names, "
    "so the rate and the SLA are computed over the GPUs the evidence supports.",
    "State the GPUs the incident log really covers, or add the evidence of the larger fleet "
    "(its nodes in the incident log or the other evidence).",
    _LOG,
))
register(Rule(
    "reliability.partial-period", "warning", "Incident log covers part of the period",
    "The incident log records nothing in some calendar months of the period: the rate and "
    "the SLA are computed over the months it covers, since a month without a single entry, "
    "not even maintenance, is more likely unrecorded than perfect.",
    "Submit the log for the whole period, or set period_start / period_end to the months it "
    "covers.",
    _LOG,
))


register(Rule(
    "reliability.planned-without-announcement", "error",
    "Planned incidents without an announcement",
    "Incidents marked planned that are no hardware fault but do not say they were announced "
    "(scheduled, announced, notified, a maintenance window or change ticket) are counted as "
    "unexpected interruptions and SLA downtime: an SLA excludes maintenance the customer was "
    "told about in advance, and 'planned' alone is the provider's word after the fact.",
    "State the announcement in the row (e.g. description = \"firmware update, announced "
    "2026-07-01\"), or mark it planned = false.",
    _LOG + "; cmax/resolve/incident_review.py ANNOUNCED",
))
register(Rule(
    "reliability.restart-not-in-log", "error", "Training-log restarts without an incident row",
    "A training log restarted (its steps resume from an earlier iteration) between two "
    "stamped steps, and no incident row covers that time: the failure that stopped the job is "
    "missing from the log the interruption rate and the SLA are computed from.",
    "Add the incident (start, end, node, category), or a planned row if the restart was the "
    "customer's own.",
    "the training log's own wall-clock stamps and its resumed iterations "
    "(cmax/ingest/textlines.py settle_steps); cmax/resolve/incident_review.py",
))
register(Rule(
    "reliability.outage-ends-before-resume", "error",
    "Incident rows that end before the job resumed",
    "An incident row over a training-log restart ends more than [reliability] restart_min "
    "before the log's next step: the outage is shortened below what the job itself shows. It "
    "is counted to the resume minus restart_min.",
    "Give the incident its real end time (when the node was back), or correct restart_min.",
    "the training log's own wall-clock stamps; cmax/resolve/incident_review.py",
))
register(Rule(
    "reliability.period-away-from-evidence", "error",
    "Reliability period far from the benchmark and the logs",
    "The reliability period lies more than a month from the benchmark date or from the "
    "training logs' own stamps: the interruption rate and SLA describe months the benchmark "
    "never saw, and a provider could pick a clean one.",
    "Set period_start / period_end to the months around the benchmark (the contract's "
    "measured months), with the incident log of those months.",
    "cmax/resolve/incident_review.py PERIOD_SLACK",
))


def _first_three(rows: pl.DataFrame) -> str:
    """The first three incidents as ``category: description``, for a finding's message."""
    return "; ".join(f"{c}: {d}" for c, d in rows.select(
        pl.col("category").fill_null(""), pl.col("description").fill_null("")).head(3)
        .iter_rows())


def _rows(frame: pl.DataFrame) -> tuple[str | None, int | None]:
    if frame.is_empty():
        return None, None
    line = frame["line"][0]
    return frame["source_file"][0], None if line is None else int(line)


def _findings(review: IncidentReview, log: str) -> Iterator[Finding]:
    if review.outside.height:
        file, line = _rows(review.outside)
        last = (review.end - dt.timedelta(days=1)).date()
        yield finding("reliability.incident-outside-period",
                      f"{review.outside.height} incident(s) outside {review.start.date()} to "
                      f"{last} not counted ({cite_lines(review.outside)})",
                      file=file or log, line=line)
    if review.relabelled.height:
        file, line = _rows(review.relabelled)
        what = _first_three(review.relabelled)
        yield finding("reliability.fault-labelled-planned",
                      f"{review.relabelled.height} incident(s) marked planned describe a "
                      f"hardware fault ({what}); counted as unexpected "
                      f"({cite_lines(review.relabelled)})", file=file or log, line=line)
    if review.unannounced.height:
        file, line = _rows(review.unannounced)
        what = _first_three(review.unannounced)
        yield finding("reliability.planned-without-announcement",
                      f"{review.unannounced.height} incident(s) marked planned state no "
                      f"announcement ({what}); counted as unexpected "
                      f"({cite_lines(review.unannounced)})", file=file or log, line=line)
    for r in review.unlogged_restarts:
        yield finding("reliability.restart-not-in-log",
                      f"{r.run_id} restarted between {_when(r.stopped)} and {_when(r.resumed)} "
                      "(its own step stamps) and no incident row covers that time",
                      file=r.source_file or log, line=r.line)
    for r, line, logged in review.ended_before_resume:
        yield finding("reliability.outage-ends-before-resume",
                      f"the incident ends at {_when(logged)} but {r.run_id} resumed only at "
                      f"{_when(r.resumed)}; counted to the resume minus restart_min",
                      file=log, line=line)
    if review.far_dates:
        shown = "; ".join(f"{what} {day}" for what, day in review.far_dates[:4])
        last = (review.end - dt.timedelta(days=1)).date()
        yield finding("reliability.period-away-from-evidence",
                      f"the period {review.start.date()} to {last} is more than a month from "
                      f"{shown}", file=log)
    untimed = pl.concat([review.open_ended, review.backwards, review.no_start],
                        how="vertical_relaxed")
    if untimed.height:
        file, line = _rows(untimed)
        yield finding("reliability.incident-without-time",
                      f"{untimed.height} incident(s) without a usable start or end time: "
                      f"counted as down to the end (or from the start) of the period, the "
                      f"worst case ({cite_lines(untimed)})", file=file or log, line=line)
    if review.foreign_nodes:
        shown = ", ".join(n for n, _ in review.foreign_nodes[:6])
        more = (f" and {len(review.foreign_nodes) - 6} more"
                if len(review.foreign_nodes) > 6 else "")
        yield finding("reliability.nodes-outside-cluster",
                      f"{len(review.foreign_nodes)} incident node(s) appear in no other "
                      f"evidence of the cluster ({shown}{more}); the other evidence names "
                      f"hosts such as {', '.join(sorted(review.other.hosts)[:3])}",
                      file=log, line=review.foreign_nodes[0][1])
    if review.fleet_gpus < review.claimed_gpus:
        yield finding("reliability.fleet-beyond-evidence",
                      f"gpus_in_service = {review.claimed_gpus:,} but the evidence supports "
                      f"{review.evidence_gpus:,} GPUs (the claimed system, or the hosts the "
                      f"evidence names): rate and SLA use {review.fleet_gpus:,}", file=log)
    if review.partial:
        empty = [a.strftime("%Y-%m") for a, _ in review.period_months
                 if (a, _) not in review.covered]
        yield finding("reliability.partial-period",
                      f"the incident log records nothing in {', '.join(empty)}: rate and SLA "
                      f"are over the {len(review.covered)} of {len(review.period_months)} "
                      "months it covers", file=log)


def _when(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M UTC")


def check(ctx: Context) -> Iterator[Finding]:
    spec = ctx.manifest.reliability
    if spec is None or not ctx.case.is_present(spec.incidents):
        return
    review = ctx.case.incident_review
    if review is not None:
        yield from _findings(review, spec.incidents)
