"""The log agrees with itself: figures a training log prints that are arithmetic on others.

A provider can edit the step times a log prints; it is much harder to edit them and keep
every other figure on the same lines in step. Megatron's iteration lines carry a wall-clock
stamp and ``consumed samples``; a single-step window has the steps around it. Each rule reads
the case's columns (``wall_time_s``, ``consumed_samples``, ``step_time_s``) and the run's
resolved configuration, and is an error because it touches the steady-state window the ratio
is computed from.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from cmax.coerce import as_int
from cmax.findings import Finding
from cmax.validate.context import Context, RunView, run_finding, under_recipe
from cmax.validate.registry import Rule, register
from cmax.validate.thresholds import (
    MAD_TO_SIGMA,
    SINGLE_STEP_BAND,
    SINGLE_STEP_NEIGHBOURS,
    WALL_CLOCK_SLACK_S,
    WALL_CLOCK_TOLERANCE,
    pct,
)

register(Rule(
    "consistency.wall-clock", "error", "Printed step times disagree with the log's own clock",
    "Megatron stamps every iteration line with the wall-clock time (NeMo's own lines are "
    "stamped too). Over the steady-state window the time between the first and last stamped "
    f"line must be the printed step times of the steps between them, within "
    f"{pct(WALL_CLOCK_TOLERANCE)} plus {WALL_CLOCK_SLACK_S:g} s of stamp rounding. More wall "
    "time than printed step time means the printed times were edited (or the job ran other "
    "work in between): the ratio would rest on numbers the clock does not confirm. The one "
    "interval that adds most is left out: a checkpoint save is not counted by the step timer.",
    "Submit the unedited log of one uninterrupted run.",
    "Megatron-LM training.py (training_log): the iteration line starts with the time it is "
    "printed and gives the elapsed time per iteration averaged over the log interval.",
))
register(Rule(
    "consistency.consumed-samples", "error", "consumed samples disagree with the batch size",
    "Megatron and NeMo print the samples consumed so far on every iteration line; between two "
    "lines it grows by the global batch size for each iteration. A run that consumed 512 "
    "samples per step while declaring (or printing) a GBS of 1024 did half the work per step "
    "it claims: its step times compare with the reference of twice the batch.",
    "Declare the GBS the job used, or submit the unedited log.",
    "Megatron-LM training.py: consumed_train_samples += global batch size each iteration.",
))
register(Rule(
    "consistency.single-step-window", "error", "The single measured step is out of line",
    "Baselines of DGXC releases up to v25.04 average only the last step, so one edited line "
    "decides the verdict. That step must be in line with the steps just before it: faster "
    f"than their median by more than {pct(SINGLE_STEP_BAND)} (or 3 robust sigmas of them) is "
    "not noise.",
    "Submit the unedited log; if the last step really was faster, show it with a longer run.",
    "cmax/window.py (DGXC <= v25.04 parse scripts: the last step).",
))


def _wall_clock(view: RunView) -> Iterator[Finding]:
    steps = view.window_steps
    if steps.height < 2 or "wall_time_s" not in steps.columns:
        return
    stamped = steps.filter(pl.col("wall_time_s").is_not_null()
                           & pl.col("wall_time_s").is_finite()).sort("line")
    if stamped.height < 2:
        return
    pairs = stamped.select(
        (pl.col("wall_time_s") - pl.col("wall_time_s").shift(1)).alias("wall"),
        ((pl.col("iteration") - pl.col("iteration").shift(1)) * pl.col("step_time_s"))
        .alias("printed")).slice(1)
    if pairs.height >= 3:
        # one interval may hold a checkpoint save or a stall the step timer does not count
        # (Megatron stops its interval timer while it saves): leave out the one that adds most
        pairs = pairs.with_row_index("i")
        worst = pairs.sort(pl.col("wall") - pl.col("printed"), descending=True)["i"][0]
        pairs = pairs.filter(pl.col("i") != worst)
    wall, printed = (float(v) for v in pairs.select(pl.col("wall").sum(),
                                                     pl.col("printed").sum()).row(0))
    first, last = stamped.row(0, named=True), stamped.row(-1, named=True)
    if wall > printed * (1 + WALL_CLOCK_TOLERANCE) + WALL_CLOCK_SLACK_S:
        yield run_finding(
            "consistency.wall-clock", view,
            f"between iterations {first['iteration']} and {last['iteration']} (lines "
            f"{first['line']}-{last['line']}) the printed step times add up to {printed:.1f} s "
            f"but the lines' own stamps are {wall:.0f} s apart ({wall / printed - 1:.0%} more; "
            "the one interval that adds most, e.g. a checkpoint, left out)"
            if printed else "printed step times are zero", line=as_int(last["line"]))


def _consumed(view: RunView) -> Iterator[Finding]:
    gbs = view.get_int("gbs")
    steps = view.window_steps
    if not gbs or "consumed_samples" not in steps.columns or steps.height < 2:
        return
    rows = steps.filter(pl.col("consumed_samples").is_not_null()).sort("line").select(
        "iteration", "consumed_samples", "line",
        ((pl.col("consumed_samples") - pl.col("consumed_samples").shift(1))
         / (pl.col("iteration") - pl.col("iteration").shift(1))).alias("per_step")).slice(1)
    bad = rows.filter(pl.col("per_step").is_finite() & (pl.col("per_step") != gbs))
    if bad.height * 2 > rows.height:  # most of the window: not a one-off ramp or print glitch
        row = bad.row(0, named=True)
        yield run_finding(
            "consistency.consumed-samples", view,
            f"consumed samples grow by {row['per_step']:g} per iteration (iteration "
            f"{row['iteration']}: {row['consumed_samples']:g}) on {bad.height} of {rows.height}"
            f" window steps, but the run's global batch size is {gbs}",
            line=as_int(row["line"]))


def _single_step(view: RunView) -> Iterator[Finding]:
    if view.window.first != view.window.last or view.summary is not None:
        return
    clean = view.clean_steps
    measured = clean.filter(pl.col("iteration") == view.window.last)
    before = clean.filter(pl.col("iteration") < view.window.last).tail(SINGLE_STEP_NEIGHBOURS)
    if measured.is_empty() or before.height < SINGLE_STEP_NEIGHBOURS // 2:
        return
    step = float(measured["step_time_s"][0])
    median = float(before["step_time_s"].median())  # type: ignore[arg-type]
    mad = float((before["step_time_s"] - median).abs().median())  # type: ignore[arg-type]
    band = max(SINGLE_STEP_BAND, 3 * MAD_TO_SIGMA * mad / median if median else 0.0)
    if median and step < median * (1 - band):
        yield run_finding(
            "consistency.single-step-window", view,
            f"the window is iteration {view.window.last} alone, and its {step:g} s is "
            f"{1 - step / median:.1%} faster than the median {median:g} s of the "
            f"{before.height} steps before it (noise band {band:.1%})",
            line=as_int(measured["line"][0]))


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        resolved, _ = under_recipe(view)
        yield from _wall_clock(view)
        yield from _consumed(resolved)
        yield from _single_step(view)
