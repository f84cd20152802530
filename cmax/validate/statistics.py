"""Statistical red flags: step-time series that real hardware does not produce.

A real multi-node training run has warm-up, jitter of a few tenths of a percent to a few
percent, the odd stall, and a steady state that looks the same inside the measurement window
as around it. Fabricated or doctored logs tend to be too clean (constant or near-constant
times), too convenient (a window faster than the rest of the run), or recycled (the same
series submitted as two runs). Thresholds follow NVIDIA's perf CI (3 sigma outliers, at most
10 % outliers, a 5 % timing band, 10 % warm-up skip); sigma is estimated robustly (1.4826 x
median absolute deviation) because with 10 window steps a single stall can never reach 3
classical sigma.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import polars as pl

from cmax import quantiles
from cmax.findings import Finding
from cmax.quantiles import MAD_TO_SIGMA
from cmax.validate.context import (
    Context,
    RunView,
    fmt_iters,
    print_resolution,
    run_finding,
)
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import (
    INCIDENT_FLOOR_GPU_DAYS,
    INCIDENT_MIN_EXPECTED,
    MAX_OUTLIER_RATIO,
    MIN_CV,
    MIN_STEADY_STEPS,
    MIN_WINDOW_STATS_STEPS,
    OUTLIER_SIGMA,
    SIGMA_FLOOR_FRACTION,
    SPEED_BLOCKS,
    SPEED_CHANGE_SIGMAS,
    SPEED_CONSISTENT,
    SPEED_SEGMENT,
    STALL_FACTOR,
    TIMING_BAND,
    WARMUP_FRACTION,
    pct,
)

register(Rule(
    "statistics.constant-step-times", "error", "Every step took exactly the same time",
    "Real runs have warm-up steps and jitter (DGXC READMEs: \"performance fluctuates "
    "significantly at the beginning\"). A log in which every step, warm-up included, prints the "
    "same time was not produced by a training job.",
    "Submit the unedited log of the run.",
))
register(Rule(
    "statistics.low-variance", "warning", "Implausibly low step-time variance",
    f"The steady-state window varies by less than {pct(MIN_CV)} although the log prints times "
    "finely enough to show real jitter. Synchronised multi-node steps always jitter more than "
    "that.",
    "Submit the unedited log; if the times are genuine, keep the raw job output for review.",
    f"Coefficient of variation < {pct(MIN_CV)} with print resolution < {pct(MIN_CV)} of the "
    "step time.",
))
register(Rule(
    "statistics.window-outliers", "warning", "Too many outlier steps in the window",
    f"More than {pct(MAX_OUTLIER_RATIO)} of the window's steps lie beyond {OUTLIER_SIGMA:g} "
    "sigma of its median: the mean the rating uses is dominated by a few steps rather than the "
    "steady state.",
    "Find the cause (stalls, preemption, a slow node) and re-run.",
    f"Megatron-Bridge perf CI: outlier_threshold {OUTLIER_SIGMA:.1f} sigma, max_outlier_ratio "
    f"{MAX_OUTLIER_RATIO:g}.",
))
register(Rule(
    "statistics.stragglers", "warning", "Persistent slow steps after warm-up",
    f"More than {pct(MAX_OUTLIER_RATIO)} of the post-warm-up steps are slower than the median "
    f"by more than {OUTLIER_SIGMA:g} sigma: the cluster has a recurring straggler (slow node, "
    "congested link) that the window average may hide.",
    "Find the slow node or link (nccl-tests per node pair, DCGM diagnostics) and re-run.",
    f"Megatron-Bridge perf CI: outlier_threshold {OUTLIER_SIGMA:.1f} sigma, max_outlier_ratio "
    f"{MAX_OUTLIER_RATIO:g}; warm-up = first {pct(WARMUP_FRACTION)} of steps "
    f"(skip_first_percent_time default {WARMUP_FRACTION:g}).",
))
register(Rule(
    "statistics.stall", "info", "A step stalled",
    f"A post-warm-up step took {STALL_FACTOR:g}x the run's median or longer. One stall is "
    "normal on a busy cluster; it is reported so the reader knows it is there.",
    "Nothing to fix for one stall; recurring stalls are reported as stragglers.",
))
register(Rule(
    "statistics.drift", "warning", "Step times drift within the run",
    "The robust (Theil-Sen) linear trend of the post-warm-up step times changes them by more "
    f"than {pct(TIMING_BAND)} across the run: throttling, a degrading node or contention. The "
    "window average does not represent a longer job.",
    "Check GPU clocks and temperatures (DCGM) and co-tenant load; re-run.",
    f"Megatron-Bridge perf CI timing_threshold {TIMING_BAND:g}.",
))
register(Rule(
    "statistics.cherry-picked-window", "error", "The window is faster than the rest of the run",
    f"The steady-state window's median step time is more than {pct(TIMING_BAND)} faster than "
    "the same run's steady steps outside it. A real steady state does not speed up exactly "
    "where it is measured: the window lines were edited, or the log was assembled from the "
    "best segment.",
    "Submit the unedited log of one complete run.",
    f"Megatron-Bridge perf CI timing_threshold {TIMING_BAND:g}.",
))
register(Rule(
    "statistics.speed-change", "error", "The run changes speed, and the window is the fast part",
    "After warm-up a real run keeps one speed up to its noise. When the steady steps split into "
    f"two stretches whose medians differ by more than {pct(TIMING_BAND)} and by more than "
    f"{SPEED_CHANGE_SIGMAS:g} robust sigmas of the steps around them (each stretch at least "
    f"{SPEED_SEGMENT} steps, {pct(SPEED_CONSISTENT)} of the slower one's steps nearer its "
    "median than the faster one's), and the measurement window lies in the faster one, the "
    "log is a "
    "slow run with a fast tail spliced on, or its window's lines were edited. A gradual drift "
    "is not a change (its stretches are as noisy as the step); the window in the slower "
    "stretch does not flatter the run.",
    "Submit the unedited log of one run at one speed; if the cluster really changed speed "
    "mid-run, re-run and submit that log.",
    f"Megatron-Bridge perf CI timing_threshold {TIMING_BAND:g}; {SPEED_CHANGE_SIGMAS:g} "
    "x 1.4826 x MAD of the steps about their stretch's median.",
))
register(Rule(
    "statistics.duplicate-log", "error", "The same evidence submitted twice",
    "Two evidence files are byte-identical, or two runs have identical step-time series. Each "
    "claimed run must be a separate measurement.",
    "Submit each run's own log.",
    subject="file",
))
register(Rule(
    "statistics.too-few-incidents", "warning", "Implausibly few interruptions",
    "The incident log records no unexpected interruption over enough GPU-days that even a "
    "cluster ten times more reliable than Meta's Llama 3 cluster would have had at least three. "
    "An empty log is more likely incomplete than perfect.",
    "Submit the complete incident history for the period (scheduler and health-check records).",
    "Floor of one unexpected interruption per 20,000 GPU-days: ~10x Llama 3's rate "
    "(arXiv:2407.21783, 419 in 54 days on 16,384 GPUs); P(0 | mean >= 3) < 5 %.",
    subject="fleet",
))


def _series(values: pl.Series | Sequence[float]) -> pl.Series:
    return pl.Series(values, dtype=pl.Float64) if not isinstance(values, pl.Series) else values


def robust_sigma(values: pl.Series | Sequence[float], median: float, quantum: float) -> float:
    """1.4826 x MAD, floored at the print resolution and 0.2 % of the median.

    The MAD taken is the upper middle absolute deviation (index n // 2 of the sorted ones)."""
    series = _series(values)
    mad = float((series - median).abs().sort()[series.len() // 2]) if series.len() else 0.0
    return max(MAD_TO_SIGMA * mad, quantum, SIGMA_FLOOR_FRACTION * median)


def theil_sen_slope(xs: pl.Series | Sequence[int], ys: pl.Series | Sequence[float],
                    max_points: int = 120) -> float:
    """Median of pairwise slopes: a trend estimate that one stall cannot move.

    Long runs are first reduced to ``max_points`` bins of consecutive steps (median position
    and time of each), so the pairwise step stays cheap (O(max_points^2)) for logs of any
    length; the bins' medians are taken column-wise (a long run has millions of steps).
    """
    x = pl.Series("x", xs).cast(pl.Float64)
    y = pl.Series("y", ys).cast(pl.Float64)
    if x.len() <= max_points:
        return _pairwise_slope(x.to_list(), y.to_list())
    size = math.ceil(x.len() / max_points)
    middle = {f"{c}{k}": pl.col(c).sort().get(at) for c in ("x", "y")
              for k, at in (("lo", (pl.len() - 1) // 2), ("hi", pl.len() // 2))}
    bins = (pl.DataFrame([x, y]).with_row_index("_i")
            .group_by(pl.col("_i") // size, maintain_order=True)
            .agg(pl.len().alias("n"), **middle))
    xs_f, ys_f = [], []
    for n, x_lo, x_hi, y_lo, y_hi in bins.select("n", "xlo", "xhi", "ylo", "yhi").iter_rows():
        xs_f.append(_middle(n, x_lo, x_hi))
        ys_f.append(_middle(n, y_lo, y_hi))
    return _pairwise_slope(xs_f, ys_f)


def _middle(n: int, lo: float, hi: float) -> float:
    """The median from the two middle values of n sorted ones (the same value when n is odd)."""
    return hi if n % 2 else (lo + hi) / 2


def _pairwise_slope(xs: list[float], ys: list[float]) -> float:
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i])
              for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[j] != xs[i]]
    return _median(slopes) if slopes else 0.0


def _cv(values: list[float], mean: float) -> float:
    """Coefficient of variation; inf when the squares overflow (a 1e308 s "step")."""
    try:
        return math.sqrt(sum((x - mean) ** 2 for x in values) / (len(values) - 1)) / mean
    except OverflowError:
        return math.inf


def _median(values: pl.Series | Sequence[float]) -> float:
    """The middle value, or the mean of the two middle values (of at least one)."""
    s = _series(values).sort()
    n = s.len()
    return _middle(n, float(s[(n - 1) // 2]), float(s[n // 2]))


def _split(view: RunView) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """All clean steps, the post-warm-up (steady) steps, and the window steps."""
    steps = view.clean_steps
    skip = math.ceil(WARMUP_FRACTION * steps.height)
    return steps, steps.slice(skip), view.window_steps


def _times(frame: pl.DataFrame) -> pl.Series:
    return frame["step_time_s"].cast(pl.Float64)


def _run(view: RunView) -> Iterator[Finding]:
    """One run's series. Column-wise over all steps (a long run has millions); the window
    (tens of steps) as Python numbers, where the CV's sum is Python's own."""
    steps, steady, window = _split(view)
    all_times = _times(steps)
    if all_times.len() >= MIN_WINDOW_STATS_STEPS and all_times.n_unique() == 1:
        yield run_finding("statistics.constant-step-times", view,
                          f"all {all_times.len()} steps report {all_times[0]:g} s")
        return
    w = _times(window).to_list()
    if len(w) >= MIN_WINDOW_STATS_STEPS:
        mean = sum(w) / len(w)
        cv = _cv(w, mean)
        quantum = print_resolution(w)
        if cv < MIN_CV and quantum / mean < MIN_CV:
            yield run_finding("statistics.low-variance", view,
                              f"window step times vary by {100 * cv:.4f} % (CV) over {len(w)} "
                              f"steps, printed to {quantum:g} s")
        med = _median(w)
        sigma = robust_sigma(w, med, quantum)
        outliers = [int(i) for i, x in zip(window["iteration"].to_list(), w, strict=True)
                    if abs(x - med) > OUTLIER_SIGMA * sigma]
        if len(outliers) > MAX_OUTLIER_RATIO * len(w):
            yield run_finding("statistics.window-outliers", view,
                              f"{len(outliers)} of {len(w)} window steps beyond "
                              f"{OUTLIER_SIGMA:g} sigma of the median {med:.3f} s (iterations "
                              f"{fmt_iters(outliers)})")
    s = _times(steady)
    n = s.len()
    if n < MIN_STEADY_STEPS:
        return
    its = steady["iteration"].cast(pl.Int64)
    med = _median(s)
    sigma = robust_sigma(s, med, print_resolution(s))
    slow = (s - med) > OUTLIER_SIGMA * sigma
    if slow.sum() > MAX_OUTLIER_RATIO * n:
        yield run_finding("statistics.stragglers", view,
                          f"{slow.sum()} of {n} post-warm-up steps are slower than the "
                          f"median {med:.3f} s by more than {OUTLIER_SIGMA:g} sigma (iterations "
                          f"{fmt_iters(its.filter(slow).to_list())})")
    stalls = s >= STALL_FACTOR * med
    if stalls.any() and stalls.sum() <= MAX_OUTLIER_RATIO * n:
        worst = float(s.max()) / med  # type: ignore[arg-type]
        stalled = its.filter(stalls).to_list()
        yield run_finding("statistics.stall", view,
                          f"iteration(s) {fmt_iters(stalled)} took up to {worst:.1f}x the median "
                          f"step time", line=view.line_of(stalled[0]))
    first, last = int(its[0]), int(its[-1])
    change = theil_sen_slope(its, s) * (last - first) / med
    if abs(change) > TIMING_BAND:
        yield run_finding("statistics.drift", view,
                          f"step times {'rise' if change > 0 else 'fall'} {abs(change):.1%} "
                          f"over iterations {first}-{last} (robust linear trend; median "
                          f"{med:.3f} s)")
    yield from _cherry_pick(view, steps, window)
    yield from _speed_change(view, steps, window)


def _settle(view: RunView, steps: pl.DataFrame) -> int:
    """The first iteration counted as steady: half-way from the first step to the window, and
    past the run's first WARMUP_FRACTION of steps."""
    first_it = int(steps["iteration"].min())  # type: ignore[arg-type]
    settle = first_it + (view.window.first - first_it) // 2
    warm = math.ceil(WARMUP_FRACTION * steps.height)
    return max(settle, int(steps["iteration"][min(warm, steps.height - 1)]))


def _cherry_pick(view: RunView, steps: pl.DataFrame, window: pl.DataFrame) -> Iterator[Finding]:
    """Compare the window with steady steps around it (skipping the first half before it)."""
    if window.is_empty():
        return
    first, last = view.window.first, view.window.last
    settle = _settle(view, steps)
    other = steps.filter(~pl.col("iteration").is_between(first, last)
                         & (pl.col("iteration") >= settle))
    if other.height < MIN_WINDOW_STATS_STEPS:
        return
    w_med, o_med = _median(_times(window)), _median(_times(other))
    faster = 1 - w_med / o_med
    if faster > TIMING_BAND:
        yield run_finding("statistics.cherry-picked-window", view,
                          f"window {first}-{last} median {w_med:.3f} s is {faster:.1%} faster "
                          f"than the {other.height} other steady steps (median {o_med:.3f} s)")


def _speed_change(view: RunView, steps: pl.DataFrame, window: pl.DataFrame
                  ) -> Iterator[Finding]:
    """The steady steps' best split into a slower and a faster stretch (a long run judged on
    at most SPEED_BLOCKS block medians), an error when it is beyond the noise and the window
    is in the faster stretch. Reads two columns as arrays: no copy of a long run's table."""
    if window.is_empty() or steps.height < 2 * SPEED_SEGMENT:
        return
    iterations = steps["iteration"]
    start = int(iterations.search_sorted(_settle(view, steps)))
    times = _times(steps).slice(start).to_numpy()
    its = iterations.slice(start).to_numpy()
    size = max(1, math.ceil(len(times) / SPEED_BLOCKS))
    whole = len(times) // size * size
    if whole == 0:
        return
    # each block's median from at most 256 evenly spaced steps: a long run's blocks hold
    # thousands of steady steps, whose median a sample of 256 gives to well under the noise
    x = quantiles.median(times[:whole].reshape(-1, size)[:, ::max(1, size // 256)], axis=1)
    firsts, lasts = its[:whole:size], its[size - 1:whole:size]
    seg = max(2, SPEED_SEGMENT // size) if size > 1 else SPEED_SEGMENT
    if len(x) < 2 * seg:
        return
    floor = SIGMA_FLOOR_FRACTION * float(quantiles.median(x)) + print_resolution(x.tolist())
    best: tuple[float, int, float, float, float] | None = None
    for k in range(seg, len(x) - seg + 1):
        a, b = float(quantiles.median(x[:k])), float(quantiles.median(x[k:]))
        resid = np.concatenate([x[:k] - a, x[k:] - b])
        sigma = max(MAD_TO_SIGMA * float(quantiles.median(np.abs(resid))), floor)
        score = abs(a - b) / sigma
        if best is None or score > best[0]:
            best = (score, k, a, b, sigma)
    if best is None:
        return
    score, k, a, b, sigma = best
    fast, slow = min(a, b), max(a, b)
    if slow / fast - 1 <= TIMING_BAND or score <= SPEED_CHANGE_SIGMAS:
        return
    # the slower stretch is slow throughout, not a stall and stragglers bunched together
    slower = x[:k] if a > b else x[k:]
    if float(np.mean(slower > (fast + slow) / 2)) < SPEED_CONSISTENT:
        return
    cut = int(firsts[k])
    in_fast = window.filter((pl.col("iteration") >= cut) == (b < a)).height
    if in_fast * 2 < window.height:
        return
    yield run_finding(
        "statistics.speed-change", view,
        f"steady step times change at iteration {cut}: median {a:.3f} s over iterations "
        f"{int(firsts[0])}-{int(lasts[k - 1])}, {b:.3f} s over {cut}-{int(lasts[-1])} "
        f"({slow / fast - 1:.1%} apart, {score:.0f} sigma of {sigma:.3f} s); the window "
        f"{view.window.first}-{view.window.last} is in the faster stretch",
        line=view.line_of(cut))


def _duplicates(ctx: Context) -> Iterator[Finding]:
    by_digest: dict[str, list[str]] = {}
    for record in sorted(ctx.case.files, key=lambda f: f.path):
        by_digest.setdefault(record.sha256, []).append(record.path)
    for paths in sorted(by_digest.values()):
        if len(paths) > 1:
            yield finding("statistics.duplicate-log",
                          f"{', '.join(paths)} are byte-identical", file=paths[-1])
    # the first run of each distinct (iteration, step time) series; compared as tables, not
    # as Python tuples (a long run has millions of steps)
    seen: list[tuple[pl.DataFrame, RunView]] = []
    for view in ctx.runs:
        steps = view.clean_steps
        series = steps.select(pl.col("iteration").cast(pl.Int64), _times(steps))
        if series.height < MIN_STEADY_STEPS or series["step_time_s"].n_unique() < 3:
            continue
        other = next((v for s, v in seen if s.equals(series)), None)
        if other is not None:
            yield run_finding("statistics.duplicate-log", view,
                              f"its {series.height} step times are identical to run "
                              f"{other.run_id} ({other.file})")
        else:
            seen.append((series, view))


def _incidents(ctx: Context) -> Iterator[Finding]:
    rel = ctx.manifest.reliability
    if rel is None or not ctx.case.is_present(rel.incidents):
        return
    days = (rel.period_end - rel.period_start).days + 1
    gpu_days = days * rel.gpus_in_service
    expected = gpu_days / INCIDENT_FLOOR_GPU_DAYS
    incidents = ctx.tables["incidents"]
    unplanned = incidents.filter(~pl.col("planned").fill_null(False)).height
    if unplanned == 0 and expected >= INCIDENT_MIN_EXPECTED:
        yield finding("statistics.too-few-incidents",
                      f"no unexpected interruption in {gpu_days:,} GPU-days "
                      f"({rel.gpus_in_service} GPUs x {days} days); even one per "
                      f"{INCIDENT_FLOOR_GPU_DAYS:,.0f} GPU-days would give {expected:.1f}",
                      file=rel.incidents)


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        yield from _run(view)
    yield from _duplicates(ctx)
    yield from _incidents(ctx)
