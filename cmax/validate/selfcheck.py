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

from cmax.findings import Finding
from cmax.quantiles import MAD_TO_SIGMA
from cmax.reading.coerce import as_int
from cmax.validate.context import Context, RunView, run_finding, under_recipe
from cmax.validate.registry import Rule, register
from cmax.validate.thresholds import (
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
    "cmax/recipes/window.py (DGXC <= v25.04 parse scripts: the last step).",
))


register(Rule(
    "consistency.spliced-window", "error", "The window joins two attempts or two logs",
    "Inside the steady-state window one job's log counts on: the iteration counter does not "
    "restart (a resume from a checkpoint), the wall-clock stamps do not go back, and consumed "
    "samples grow by the batch size at every step. A window that spans a resume point, a stamp "
    "going backwards or a jump in consumed samples averages steps of two attempts (or of two "
    "logs stitched together): its mean is no one run's speed.",
    "Submit the log of one uninterrupted attempt whose window holds no restart; a restart "
    "before the window is reported as consistency.restarted-run.",
    "Megatron-LM training.py (consumed_train_samples, the stamped iteration line); llmb-run "
    "job_logs.py keeps one attempt.",
))
register(Rule(
    "consistency.skipped-iterations", "error", "The window holds skipped iterations",
    "Megatron prints `number of skipped iterations` on every iteration line: an iteration whose "
    "gradients held inf/NaN is counted but its optimizer step is not taken. A window with such "
    "iterations did less work than its step count says, and a run that skips steps is not "
    "training correctly.",
    "Fix the numerics (loss scaling, learning rate, FP8 recipe) and re-run.",
    "NVIDIA/Megatron-LM megatron/training/training.py training_log: 'number of skipped "
    "iterations' (skipped_iters_key).",
))
register(Rule(
    "consistency.skipped-iterations-outside", "warning",
    "The run skipped iterations outside the window",
    "Megatron reports skipped iterations (optimizer steps not taken on inf/NaN gradients) "
    "outside the steady-state window: the measured steps are not affected, but the run's "
    "numerics are not healthy.",
    "Check the loss scaling and learning rate; prefer a run without skipped iterations.",
    "NVIDIA/Megatron-LM megatron/training/training.py training_log.",
))


def _listed(view: RunView, column: str) -> list[int]:
    """Iterations a runs-table column lists ("20,35")."""
    text = str(view.row.get(column) or "")
    return [int(v) for v in text.split(",") if v.strip().isdigit()]


def _spliced(view: RunView) -> Iterator[Finding]:
    first, last = view.window.first, view.window.last
    inside = [r for r in _listed(view, "resumed_at") if first < r <= last]
    if inside:
        yield run_finding(
            "consistency.spliced-window", view,
            f"the log restarts at iteration {inside[0]} inside the window {first}-{last}: its "
            f"iterations {first}-{inside[0] - 1} come from one attempt and {inside[0]}-{last} "
            "from the next", line=view.line_of(inside[0]))
        return
    steps = view.window_steps
    if steps.height < 2 or not {"wall_time_s", "consumed_samples"} <= set(steps.columns):
        return
    pairs = steps.sort("line").select(
        "iteration", "line",
        (pl.col("wall_time_s") - pl.col("wall_time_s").shift(1)).alias("clock"),
        (pl.col("consumed_samples") - pl.col("consumed_samples").shift(1)).alias("samples"),
        (pl.col("iteration") - pl.col("iteration").shift(1)).alias("steps")).slice(1)
    back = pairs.filter(pl.col("clock") < 0)
    if not back.is_empty():
        row = back.row(0, named=True)
        yield run_finding(
            "consistency.spliced-window", view,
            f"the wall-clock stamp goes back {-row['clock']:.0f} s at iteration "
            f"{row['iteration']}, inside the window {first}-{last}", line=as_int(row["line"]))
        return
    gbs = view.get_int("gbs")
    if not gbs:
        return
    off = pairs.filter(pl.col("samples").is_not_null()
                       & ((pl.col("samples") - pl.col("steps") * gbs).abs() > 0.5))
    counted = pairs.filter(pl.col("samples").is_not_null()).height
    if off.height and off.height * 2 <= counted:  # most of the window: consumed-samples
        row = off.row(0, named=True)
        yield run_finding(
            "consistency.spliced-window", view,
            f"consumed samples grow by {row['samples']:g} into iteration {row['iteration']} "
            f"({row['steps']} step(s) at GBS {gbs} is {row['steps'] * gbs}), inside the window "
            f"{first}-{last}", line=as_int(row["line"]))


def _skipped(view: RunView) -> Iterator[Finding]:
    skipped = _listed(view, "skipped_at")
    if not skipped:
        return
    first, last = view.window.first, view.window.last
    inside = [i for i in skipped if first <= i <= last]
    total = as_int(view.row.get("skipped_iterations")) or len(skipped)
    rule = "consistency.skipped-iterations" if inside else \
        "consistency.skipped-iterations-outside"
    at = inside or skipped
    yield run_finding(
        rule, view,
        f"{total} skipped iteration(s) reported, at iteration(s) "
        f"{', '.join(map(str, at[:5]))}{', ...' if len(at) > 5 else ''} "
        f"({'inside' if inside else 'outside'} the window {first}-{last})",
        line=view.line_of(at[0]))


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
        yield from _spliced(resolved)
        yield from _skipped(view)
