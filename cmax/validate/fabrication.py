"""Statistics that betray a fabricated log: warnings that hold a run at ``unverified``.

A log written by a script rather than by a training job tends to miss what every real job
prints: slow first steps (CUDA graph capture, NCCL communicator set-up, the data loader's first
batches, allocator growth), step-to-step jitter of a few tenths of a percent or more on a
multi-node job, and a loss that moves with each batch rather than along a formula. None of these
proves fabrication alone (a log may start after warm-up was cut, a quiet single-node job has
little jitter), so each is a warning, never an error; a warning of this family keeps a passing
run from counting as a pass (the declared effect ``unverified``, applied by
``cmax/judgement/bearings.py``) until other evidence (the scheduler's clock, another run)
corroborates it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import polars as pl

from cmax import quantiles
from cmax.findings import Finding
from cmax.quantiles import MAD_TO_SIGMA
from cmax.validate.context import Context, RunView, print_resolution, run_finding
from cmax.validate.registry import Rule, register
from cmax.validate.thresholds import (
    FORMULA_LOSS_MIN_STEPS,
    MIN_REAL_JITTER,
    MIN_STEADY_STEPS,
    WARMUP_FRACTION,
    WARMUP_MIN_EXCESS,
    WARMUP_STEPS,
    pct,
)

#: steps read from a long run (the first half of them consecutive, the rest evenly spaced)
SAMPLE_STEPS = 20_000

register(Rule(
    "fabrication.no-warm-up", "warning", "The run has no warm-up",
    f"The run's first {WARMUP_STEPS} printed steps (it starts at iteration 0 or 1) are no "
    f"slower than its steady median (none more than {pct(WARMUP_MIN_EXCESS)} above it). A "
    "real job's first steps are slower: CUDA graph capture, NCCL communicator set-up, the "
    "data loader's first batches. A log without them was cut or written by a script.",
    "Submit the whole log from the job's first step.",
    "NVIDIA DGXC recipes (the first steps are excluded from the measured window for this "
    "reason); Megatron-Bridge perf CI skip_first_percent_time.",
    effect="unverified",
))
register(Rule(
    "fabrication.low-jitter", "warning", "Jitter far below a real cluster's",
    f"After warm-up the steps vary by less than {pct(MIN_REAL_JITTER)} (robust: 1.4826 x MAD "
    "over the median), printed finely enough to show more: real multi-node jobs jitter by "
    "a few tenths of a percent to a few percent (collectives, stragglers, the data loader).",
    "Submit the unedited log; a quiet single-node job says so with its own evidence "
    "(accounting, telemetry).",
    "NVIDIA Megatron-Bridge perf CI (5 % timing band, 3-sigma outliers on real clusters); "
    "SemiAnalysis ClusterMAX 2.0 run-to-run variation.",
    effect="unverified",
))
register(Rule(
    "fabrication.formula-loss", "warning", "The loss follows a formula, not the batches",
    f"Over {FORMULA_LOSS_MIN_STEPS} or more printed steps the loss's second differences are "
    "all within its print resolution: it falls along a straight line (or a curve no batch "
    "noise disturbs). A real loss moves with every batch by far more than the last printed "
    "digit.",
    "Submit the unedited log.",
    "Megatron-LM training_log (lm loss per log interval, 6 significant digits); the batch-to-"
    "batch noise of the cross-entropy loss.",
    effect="unverified",
))


def _times(view: RunView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The run's valid steps as arrays (iteration, step time, loss); a long run's evenly
    sampled to at most SAMPLE_STEPS (medians, jitter and a formula's smoothness show in any
    long stretch; the first steps are kept)."""
    steps = view.clean_steps
    its = steps["iteration"].to_numpy()
    times = steps["step_time_s"].cast(pl.Float64).to_numpy()
    loss = steps["loss"].cast(pl.Float64).to_numpy()
    valid = np.isfinite(times) & (times > 0)
    if not valid.all():
        its, times, loss = its[valid], times[valid], loss[valid]
    if len(times) > SAMPLE_STEPS:
        every = math.ceil(len(times) / SAMPLE_STEPS)
        keep = np.r_[np.arange(SAMPLE_STEPS // 2), np.arange(SAMPLE_STEPS // 2, len(times),
                                                             every)]
        its, times, loss = its[keep], times[keep], loss[keep]
    return its, times, loss


def _warm_up(view: RunView, its: np.ndarray, times: np.ndarray) -> Iterator[Finding]:
    if len(times) < MIN_STEADY_STEPS + WARMUP_STEPS or int(its[0]) > 1:
        return
    median = float(quantiles.median(times[math.ceil(WARMUP_FRACTION * len(times)):]))
    first = times[:WARMUP_STEPS]
    if median > 0 and float(first.max()) <= median * (1 + WARMUP_MIN_EXCESS):
        yield run_finding(
            "fabrication.no-warm-up", view,
            f"its first {WARMUP_STEPS} steps ({', '.join(f'{t:g}' for t in first)} s) are no "
            f"slower than the steady median {median:g} s", line=view.line_of(int(its[0])))


def _jitter(view: RunView, times: np.ndarray) -> Iterator[Finding]:
    steady = times[math.ceil(WARMUP_FRACTION * len(times)):]
    # distinct values of finite times: np.unique's count, without its numpy.ma import
    if len(steady) < MIN_STEADY_STEPS or len(set(steady.tolist())) < 3:
        return  # constant or near-constant times are statistics.constant-step-times'
    median = float(quantiles.median(steady))
    quantum = print_resolution(steady)
    if median <= 0 or quantum / median >= MIN_REAL_JITTER / 2:
        return  # printed too coarsely to show a real cluster's jitter
    cv = MAD_TO_SIGMA * float(quantiles.median(np.abs(steady - median))) / median
    if cv < MIN_REAL_JITTER:
        yield run_finding(
            "fabrication.low-jitter", view,
            f"{len(steady)} steady steps vary by {cv:.3%} (robust) about {median:g} s, "
            f"printed to {quantum:g} s")


def _formula_loss(view: RunView, loss: np.ndarray) -> Iterator[Finding]:
    # consecutive printed steps only: the first, unsampled stretch of a long run
    values = loss[:SAMPLE_STEPS // 2]
    values = values[np.isfinite(values)]
    # distinct values of finite losses: np.unique's count, without its numpy.ma import
    if len(values) < FORMULA_LOSS_MIN_STEPS or len(set(values.tolist())) < 3:
        return
    second = np.abs(np.diff(values, n=2))
    if float(second.max()) > 2.0:
        return  # beyond any print resolution (at most 1)
    quantum = print_resolution(values)
    if float(second.max()) <= 2 * quantum + 1e-12:
        yield run_finding(
            "fabrication.formula-loss", view,
            f"over {len(values)} steps its loss ({values[0]:g} to {values[-1]:g}) has second "
            f"differences of at most {float(second.max()):g}, within the print resolution "
            f"{quantum:g}")


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        if view.summary is not None or view.clean_steps.is_empty():
            continue
        its, times, loss = _times(view)
        if not len(times):
            continue
        yield from _warm_up(view, its, times)
        yield from _jitter(view, times)
        yield from _formula_loss(view, loss)
