"""Clocks the provider's log does not write: the scheduler's record of each run's job.

A log can be edited so that its step times, stamps, TFLOP/s and consumed samples all agree with
one another; the scheduler's accounting (``sacct``, llmb-run's job database: the ``jobs``
table) is kept by slurmctld and slurmdbd, not by the job. A run names its job (``[[runs]]
job_id``, its log's file name, or the llmb-run job picked), and the job's record is a witness:

* the job cannot have run for less time than the steps its log prints (the sum of the printed
  step times over the whole run) or than the log's own stamps span;
* Slurm numbers jobs as they are submitted, so job ids and submit times rise together: a job
  renumbered to supersede the others (llmb-run rates the highest id of a configuration) or a
  job copied in from a sister cluster breaks the order;
* every job ran on the bundle's cluster: one on another cluster than the rest, or on hosts no
  other job or witness names, is not this cluster's measurement.

What the clock cannot catch: a log made 12 % faster end to end keeps its printed sum and its
stamps inside the job's allocation (start-up, checkpoint loading and teardown take minutes and
vary run to run), so a short job's unexplained tail is within honest overhead
(docs/rules.md, "Cross-file rules").
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import polars as pl

from cmax.findings import Finding
from cmax.ingest.evidence import JOBS_SCHEMA, conform
from cmax.reading.coerce import as_float, as_int
from cmax.resolve.hosts import host_stem, witnesses
from cmax.validate.context import Context, RunView, run_finding
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import (
    CLOCK_SLACK_S,
    CLOCK_TOLERANCE,
    JOB_ORDER_SKEW_S,
    MIN_STEADY_STEPS,
    RUN_CLOCK_TOLERANCE,
    RUN_CLOCK_TRIM,
    pct,
)

register(Rule(
    "crossfile.job-shorter-than-steps", "error", "The job ran for less time than its steps",
    "The scheduler's accounting (sacct, llmb-run's job database) records how long the run's "
    "job held its allocation. The log's printed step times, summed over the whole run, are "
    f"more than that by over {pct(CLOCK_TOLERANCE)} plus {CLOCK_SLACK_S:g} s: the steps "
    "cannot have taken the times printed (the log is another job's, or its times were "
    "edited).",
    "Submit the log of the job the accounting names, unedited, or name the run's job "
    "([[runs]] job_id).",
    "SchedMD/slurm sacct Elapsed / time.elapsed (src/plugins/data_parser/v0.0.44/parsers.c); "
    "llmb-run job_history.py elapsed (from sacct).",
    subject="run",
))
register(Rule(
    "crossfile.job-shorter-than-log", "error", "The log's stamps span more than its job ran",
    "The wall-clock stamps on the log's step lines span longer than the job's allocation "
    f"(beyond {pct(CLOCK_TOLERANCE)} plus {CLOCK_SLACK_S:g} s): the log is not this job's, or "
    "two attempts were joined.",
    "Submit the log of the job the accounting names.",
    "SchedMD/slurm sacct Elapsed; Megatron-LM / NeMo stamped step lines.",
    subject="run",
))
register(Rule(
    "crossfile.job-not-witnessed", "warning", "The accounting does not hold the run's job",
    "The run names its Slurm job, and the bundle's accounting names jobs, but not this one: "
    "the run's clock is not witnessed, so its speed rests on the log alone.",
    "Export the accounting of every rated run's job (sacct -j <ids> --json).",
    "SchedMD/slurm sacct.",
    subject="run",
))
register(Rule(
    "crossfile.job-order", "error", "Job ids and submit times do not rise together",
    "Slurm numbers jobs in the order slurmctld accepts them, and the accounting records when "
    f"each was submitted: a higher job id submitted more than {JOB_ORDER_SKEW_S:g} s before a "
    "lower one was renumbered (llmb-run rates the highest job id of a configuration, so a "
    "renumbered best job supersedes the others) or comes from another cluster's numbering.",
    "Submit the accounting and logs as the scheduler recorded them; a configuration is "
    "rated on every run of it.",
    "SchedMD/slurm (job ids from slurmctld's sequence, time.submission); NVIDIA/"
    "exemplar-performance llmb_run/job_history.py (the latest job of a configuration).",
    subject="run",
))
register(Rule(
    "crossfile.job-of-another-cluster", "error", "A run's job ran on another cluster",
    "The run's job is recorded on a Slurm cluster other than the one the bundle's other jobs "
    "ran on, or on hosts that no other job or witness names while, with theirs, they make "
    "more hosts than [system] nodes: a job copied in from a sister cluster. It is not this "
    "cluster's measurement.",
    "Submit the runs of the cluster being rated.",
    "SchedMD/slurm sacct cluster and nodes (PARSER_ARRAY(JOB)); cmax/resolve/hosts.py.",
    subject="run",
))


register(Rule(
    "consistency.stamps-shorter-than-steps", "error",
    "The log's stamps span less time than the steps they frame",
    "Every stamped step line is printed after its step ends, so between two stamped lines "
    "the clock must advance at least by the printed step times of the steps between them. "
    f"Over the whole run the stamps advance more than {pct(RUN_CLOCK_TOLERANCE)} (plus "
    f"{CLOCK_SLACK_S:g} s) less than the printed steps: the stamps or the step times were "
    "written, not printed by the job.",
    "Submit the unedited log.",
    "Megatron-LM training.py training_log (the line is stamped when printed, after the "
    "interval's iterations); NeMo 2 progress printer.",
))
register(Rule(
    "consistency.run-wall-clock", "error",
    "Outside the window the printed steps disagree with the log's own clock",
    "consistency.wall-clock compares stamps and step times inside the window; here the whole "
    "run is compared. Leaving out the tenth of the intervals that add most (checkpoint saves, "
    "evaluations, a restart: the step timer does not count them), the stamps advance more "
    f"than {pct(RUN_CLOCK_TOLERANCE)} (plus {CLOCK_SLACK_S:g} s) beyond the printed steps: "
    "step times were shortened where the window rule does not look (a run made faster end "
    "to end, its window's stamps rewritten to match).",
    "Submit the unedited log of one run.",
    "Megatron-LM training.py training_log (interval timer stopped during checkpoint saves).",
))


def _stamped_pairs(view: RunView) -> pl.DataFrame | None:
    """(wall, printed) seconds between consecutive stamped step lines of the whole run, in
    file order; a restart's pair (the iteration or the stamp going back) is left out."""
    steps = view.steps
    if "wall_time_s" not in steps.columns:
        return None
    stamped = steps.filter(pl.col("wall_time_s").is_finite() & pl.col("step_time_s").is_finite()
                           & (pl.col("step_time_s") > 0)).sort("line")
    if stamped.height < MIN_STEADY_STEPS:
        return None
    pairs = stamped.select(
        (pl.col("wall_time_s") - pl.col("wall_time_s").shift(1)).alias("wall"),
        ((pl.col("iteration") - pl.col("iteration").shift(1)) * pl.col("step_time_s"))
        .alias("printed"), pl.col("line")).slice(1).filter(
        (pl.col("wall") >= 0) & (pl.col("printed") > 0))
    return pairs if pairs.height >= MIN_STEADY_STEPS else None


def _run_clock(view: RunView) -> Iterator[Finding]:
    pairs = _stamped_pairs(view)
    if pairs is None:
        return
    wall, printed = (float(v) for v in pairs.select(pl.col("wall").sum(),
                                                     pl.col("printed").sum()).row(0))
    if wall < printed * (1 - RUN_CLOCK_TOLERANCE) - CLOCK_SLACK_S:
        yield run_finding(
            "consistency.stamps-shorter-than-steps", view,
            f"over {pairs.height} stamped intervals the stamps advance {wall:,.0f} s but the "
            f"printed steps between them add up to {printed:,.0f} s "
            f"({1 - wall / printed:.0%} less)")
        return
    drop = max(1, math.ceil(RUN_CLOCK_TRIM * pairs.height))
    kept = pairs.sort(pl.col("wall") - pl.col("printed")).head(pairs.height - drop)
    wall, printed = (float(v) for v in kept.select(pl.col("wall").sum(),
                                                    pl.col("printed").sum()).row(0))
    if printed > 0 and wall > printed * (1 + RUN_CLOCK_TOLERANCE) + CLOCK_SLACK_S:
        yield run_finding(
            "consistency.run-wall-clock", view,
            f"over the whole run ({kept.height} stamped intervals, the {drop} that add most "
            f"left out) the printed steps add up to {printed:,.0f} s but the stamps advance "
            f"{wall:,.0f} s ({wall / printed - 1:.0%} more)")


def _printed_seconds(view: RunView) -> float | None:
    """The printed step times over the whole run: each printed step time for every iteration
    since the previous printed one (Megatron prints the interval's average)."""
    steps = view.clean_steps
    if steps.is_empty():
        return None
    total = steps.sort("iteration").select(
        (pl.col("iteration").diff().fill_null(1).clip(lower_bound=1)
         * pl.col("step_time_s")).sum()).item()
    return as_float(total)


def _stamped_seconds(view: RunView) -> float | None:
    steps = view.steps
    if "wall_time_s" not in steps.columns:
        return None
    stamped = steps["wall_time_s"].drop_nulls()
    stamped = stamped.filter(stamped.is_finite())
    if stamped.len() < 2:
        return None
    low, high = as_float(stamped.min()), as_float(stamped.max())
    return None if low is None or high is None else high - low


def _job_row(jobs: pl.DataFrame, job_id: str) -> dict[str, object] | None:
    hit = jobs.filter(pl.col("job_id") == job_id)
    return hit.row(0, named=True) if hit.height else None


def _span(view: RunView, job: dict[str, object]) -> Iterator[Finding]:
    elapsed = as_float(job.get("elapsed_s"))
    if elapsed is None:
        return
    bound = elapsed * (1 + CLOCK_TOLERANCE) + CLOCK_SLACK_S
    where = f"job {job['job_id']} ({job['source_file']})"
    printed = _printed_seconds(view)
    if printed is not None and printed > bound:
        yield run_finding(
            "crossfile.job-shorter-than-steps", view,
            f"its printed step times add up to {printed:,.0f} s over the whole run, but {where} "
            f"held its allocation {elapsed:,.0f} s")
    stamped = _stamped_seconds(view)
    if stamped is not None and stamped > bound:
        yield run_finding(
            "crossfile.job-shorter-than-log", view,
            f"its step lines' stamps span {stamped:,.0f} s, but {where} ran {elapsed:,.0f} s")


def _runs(ctx: Context, jobs: pl.DataFrame) -> Iterator[Finding]:
    for view in ctx.runs:
        job_id = view.get_str("job_id")
        if not job_id:
            continue
        job = _job_row(jobs, job_id)
        if job is None:
            yield run_finding("crossfile.job-not-witnessed", view,
                              f"its job {job_id} is not in the accounting "
                              f"({', '.join(sorted(set(jobs['source_file'].drop_nulls())))})")
            continue
        yield from _span(view, job)


def package_jobs(ctx: Context) -> pl.DataFrame:
    """An llmb-run package's jobs as job rows: the id and llmb-run's launch time (its clock at
    submission), one group per scalable unit."""
    package = ctx.case.package
    rows = [{"job_id": str(j.job_id), "cluster": j.unit or None,
             "submit_s": j.launched_at.timestamp(), "source_file": j.config}
            for j in (package.jobs if package is not None else ()) if j.launched_at]
    frame = pl.DataFrame(rows, schema_overrides=JOBS_SCHEMA) if rows else pl.DataFrame(
        schema=JOBS_SCHEMA)
    return conform(frame, JOBS_SCHEMA).with_columns(
        pl.lit("llmb-run package").alias("source_file"))


def _order(ctx: Context, jobs: pl.DataFrame) -> Iterator[Finding]:
    """Adjacent jobs by id whose submit times go back (per accounting file and cluster)."""
    run_of = {v.get_str("job_id"): v for v in ctx.runs if v.get_str("job_id")}
    package = ctx.case.package
    for job in package.jobs if package is not None else ():
        view = next((v for v in ctx.runs if v.spec_index == job.entry), None)
        if view is not None:
            run_of.setdefault(str(job.job_id), view)
    numbered = jobs.filter(pl.col("submit_s").is_not_null()
                           & pl.col("job_id").str.contains(r"^\d+$")).with_columns(
        pl.col("job_id").cast(pl.Int64).alias("_n"))
    for (_source, _cluster), group in numbered.group_by("source_file", "cluster",
                                                        maintain_order=True):
        ordered = group.sort("_n")
        late = ordered.with_columns(pl.col("submit_s").cum_max().shift(1).alias("_before"),
                                    pl.col("job_id").shift(1).alias("_prev")).filter(
            pl.col("_before") - pl.col("submit_s") > JOB_ORDER_SKEW_S)
        for row in late.iter_rows(named=True):
            earlier = ordered.filter((pl.col("_n") < row["_n"])
                                     & (pl.col("submit_s") > row["submit_s"]
                                        + JOB_ORDER_SKEW_S))
            first = earlier.row(0, named=True)
            message = (f"job {row['job_id']} was submitted "
                       f"{first['submit_s'] - row['submit_s']:,.0f} s before job "
                       f"{first['job_id']}, whose id is lower ({row['source_file']})")
            view = run_of.get(str(row["job_id"])) or run_of.get(str(first["job_id"]))
            if view is not None:
                yield run_finding("crossfile.job-order", view, message)
            else:
                yield finding("crossfile.job-order", message, file=str(row["source_file"]),
                              line=as_int(row.get("line")))


def _clusters(ctx: Context, jobs: pl.DataFrame) -> Iterator[Finding]:
    """A rated run's job on another Slurm cluster, or on another cluster's hosts."""
    named = jobs.filter(pl.col("cluster").is_not_null())
    counts = named.group_by("cluster").len().sort("len", descending=True)
    majority = counts["cluster"][0] if counts.height > 1 and (
        counts["len"][0] > counts["len"][1]) else None
    found = witnesses(ctx.case)
    nodes = ctx.manifest.system.nodes
    for view in ctx.runs:
        job = _job_row(jobs, view.get_str("job_id") or "")
        if job is None:
            continue
        if majority is not None and job.get("cluster") not in (None, majority):
            yield run_finding(
                "crossfile.job-of-another-cluster", view,
                f"its job {job['job_id']} ran on cluster {job['cluster']!r}; the bundle's other "
                f"jobs ran on {majority!r}")
            continue
        mine = {h.strip().lower().split(".", 1)[0]
                for h in str(job.get("nodes") or "").split(",") if h.strip() and "[" not in h}
        if not mine:
            continue
        others = {h for w in found if w.path != job["source_file"] for h in w.hosts}
        others |= {h.strip().lower() for other in jobs.filter(pl.col("job_id") != job["job_id"])
                   ["nodes"].drop_nulls().to_list() for h in str(other).split(",") if h}
        stems = {host_stem(h) for h in mine}
        if others and not mine & others and len(
                mine | {h for h in others if host_stem(h) in stems}) > nodes:
            yield run_finding(
                "crossfile.job-of-another-cluster", view,
                f"its job {job['job_id']} ran on {len(mine)} host(s) ({sorted(mine)[0]}, ...) "
                "that no other job or evidence file names, and with theirs they make more "
                f"hosts than the {nodes} nodes [system] claims")


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        yield from _run_clock(view)
    launched = package_jobs(ctx)
    if launched.height > 1:
        yield from _order(ctx, launched)
    jobs = ctx.tables["jobs"]
    if jobs.is_empty():
        return
    yield from _runs(ctx, jobs)
    yield from _order(ctx, jobs)
    yield from _clusters(ctx, jobs)
