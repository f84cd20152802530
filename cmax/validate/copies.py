"""One measurement counts once: runs, sweeps and telemetry series that are copies of another.

``statistics.duplicate-log`` catches byte-identical files and identical step series. A copy
re-jittered by a few milliseconds is neither, yet it is still one measurement submitted twice
(the best run sent three times would earn three passes). Two honest runs of one configuration
each carry their own jitter: step by step they differ by about the jitter itself. A copy differs
from its original by the re-jitter only, far less than the jitter the series has about its own
median, and its deviations from the median follow the original's. Both tests together:

* **runs**: over the iterations two runs share after warm-up, the median |difference| of their
  step times is below :data:`COPY_DIFF_SHARE` of the run's robust jitter, and the deviations
  from each run's median correlate above :data:`COPY_CORRELATION`;
* **nccl-tests sweeps**: two sweeps of the same collective over the same sizes whose times
  differ by a median of less than :data:`NCCL_COPY_BAND` (repeated sweeps differ by more than
  that at the latency-bound sizes, where the fabric's noise is largest);
* **power telemetry**: a GPU's series that is another's, read for read or re-jittered about the
  job's common load (:mod:`cmax.ingest.power_copies`, which the energy figure reads too, so
  the copy's coverage is not counted).

A series with no jitter to speak of (every step printed the same) proves nothing either way and
is left to ``statistics.constant-step-times`` and ``statistics.low-variance``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import polars as pl

from cmax import quantiles
from cmax.findings import Finding
from cmax.ingest.power_copies import copied_series
from cmax.quantiles import MAD_TO_SIGMA
from cmax.validate.context import Context, RunView, print_resolution, run_finding
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import (
    COPY_CORRELATION,
    COPY_DIFF_SHARE,
    COPY_MAX_POINTS,
    COPY_MEDIAN_BAND,
    MIN_STEADY_STEPS,
    NCCL_COPY_BAND,
    NCCL_COPY_MIN_SIZES,
    TELEMETRY_COPY_CORRELATION,
    TELEMETRY_COPY_DIFF_SHARE,
    TELEMETRY_COPY_MIN_SAMPLES,
    TELEMETRY_TREND_MIN_GPUS,
    WARMUP_FRACTION,
    pct,
)

register(Rule(
    "crossfile.copied-run", "error", "A run is a re-jittered copy of another",
    "Over the iterations two runs share after warm-up, their step times differ by a median "
    f"of less than {pct(COPY_DIFF_SHARE)} of the jitter each has about its own median, and "
    f"their deviations from the median correlate above {COPY_CORRELATION:g}. Two honest runs "
    "each carry their own jitter and differ by about that much; this one is the other's "
    "series with a few milliseconds added. One measurement counts once: the copy is not "
    "counted as a run of its own.",
    "Submit each run's own log; a configuration run once is rated once.",
    "1.4826 x MAD (robust sigma) of each run's steps about its median; Pearson correlation of "
    "the two runs' deviations over the shared post-warm-up iterations.",
    subject="run",
))
register(Rule(
    "crossfile.copied-sweep", "error", "An nccl-tests sweep is a copy of another",
    f"Two sweeps of the same collective over the same {NCCL_COPY_MIN_SIZES} or more message "
    f"sizes have times that differ by a median of less than {pct(NCCL_COPY_BAND)}: repeated "
    "sweeps on one fabric differ by more at the latency-bound sizes. The later one is a copy "
    "and counts once.",
    "Submit each sweep's own output.",
    "NVIDIA/nccl-tests src/common.cu (time per size, printed to 0.1 us).",
    effect="not_counted",
))
register(Rule(
    "crossfile.copied-telemetry", "error", "GPU power series copied between GPUs",
    f"A GPU's power telemetry ({TELEMETRY_COPY_MIN_SAMPLES} or more samples) is another "
    "GPU's series, read for read or re-jittered: with the job's common load taken out (the "
    f"median of the file's GPUs at each sample, {TELEMETRY_TREND_MIN_GPUS} or more GPUs on one "
    "grid) "
    f"and each GPU's own offset, the two residuals rank-correlate above "
    f"{TELEMETRY_COPY_CORRELATION:g} and their difference varies by less than "
    f"{pct(TELEMETRY_COPY_DIFF_SHARE)} of either's spread. The GPUs of one job rise and fall "
    "together, but each is read at its own instant and draws its own noise about that load: "
    "two honest GPUs differ by about as much as either varies (sqrt 2 times for independent "
    "noise), the bar crossfile.copied-run sets for step times. The copy's coverage is not "
    "measured and is not counted toward the energy figure.",
    "Submit each GPU's own telemetry (one nvidia-smi or DCGM Exporter series per GPU).",
    "nvidia-smi --query-gpu=power.draw (0.01 W resolution); DCGM_FI_DEV_POWER_USAGE; "
    "1.4826 x MAD (robust sigma) of the residuals and of their difference; Spearman rank "
    "correlation (cmax/ingest/power_copies.py).",
))


def steady_series(view: RunView) -> pl.DataFrame:
    """A run's post-warm-up (iteration, step time): what copies are compared on."""
    steps = view.clean_steps
    skip = math.ceil(WARMUP_FRACTION * steps.height)
    return steps.slice(skip).select(pl.col("iteration").cast(pl.Int64),
                                    pl.col("step_time_s").cast(pl.Float64))


def _jitter(times: np.ndarray) -> float:
    med = float(quantiles.median(times))
    return MAD_TO_SIGMA * float(quantiles.median(np.abs(times - med)))


def copy_of(a: pl.DataFrame, b: pl.DataFrame) -> tuple[float, float, int] | None:
    """(median |difference| / jitter, correlation of the deviations, shared steps) when ``b``
    is a re-jittered copy of ``a`` (each: iteration, step_time_s), else None."""
    every = math.ceil(max(a.height, b.height) / COPY_MAX_POINTS)
    if every > 1:  # a long run: the same evenly spaced iterations of both, before the join
        a, b = (s.filter(pl.col("iteration") % every == 0) for s in (a, b))
    both = a.join(b, on="iteration", how="inner", suffix="_b").filter(
        pl.col("step_time_s").is_finite() & pl.col("step_time_s_b").is_finite())
    if both.height < MIN_STEADY_STEPS:
        return None
    x = both["step_time_s"].to_numpy()
    y = both["step_time_s_b"].to_numpy()
    if np.array_equal(x, y):
        return 0.0, 1.0, both.height  # identical: a copy, whatever its jitter
    quantum = max(print_resolution(both["step_time_s"]), print_resolution(both["step_time_s_b"]))
    jitter = min(_jitter(x), _jitter(y))
    if jitter <= 2 * quantum:
        return None  # no jitter resolved: nothing tells a copy from a twin
    diff = float(quantiles.median(np.abs(x - y))) / jitter
    dx, dy = x - quantiles.median(x), y - quantiles.median(y)
    # the correlation does not depend on scale: each series is divided by its largest
    # deviation first, so an absurd step time (1e308 s) cannot overflow the squares
    top_x, top_y = float(np.max(np.abs(dx))), float(np.max(np.abs(dy)))
    if not (0 < top_x < math.inf and 0 < top_y < math.inf):
        return None
    dx, dy = dx / top_x, dy / top_y
    sx, sy = float(np.std(dx)), float(np.std(dy))
    if sx == 0 or sy == 0:
        return None
    corr = float(np.mean(dx * dy) / (sx * sy))
    if diff < COPY_DIFF_SHARE and corr > COPY_CORRELATION:
        return diff, corr, both.height
    return None


def steady_runs(ctx: Context) -> Iterator[tuple[RunView, pl.DataFrame, float]]:
    """Each logged run with a steady stretch long enough to compare: the run, that stretch
    (iteration, step_time_s) and its median step time."""
    for view in ctx.runs:
        if view.summary is not None:
            continue
        series = steady_series(view)
        if series.height < MIN_STEADY_STEPS:
            continue
        yield view, series, float(series["step_time_s"].median())  # type: ignore[arg-type]


def _runs(ctx: Context) -> Iterator[Finding]:
    seen: list[tuple[RunView, pl.DataFrame, float]] = []
    for view, series, median in steady_runs(ctx):
        for first, other, other_median in seen:
            if abs(median / other_median - 1) > COPY_MEDIAN_BAND or other.equals(series):
                continue  # identical: statistics.duplicate-log's
            hit = copy_of(other, series)
            if hit is not None:
                diff, corr, n = hit
                yield run_finding(
                    "crossfile.copied-run", view,
                    f"over {n} shared post-warm-up iterations its step times differ from run "
                    f"{first.run_id} ({first.file}) by a median of {diff:.0%} of their jitter, "
                    f"and the deviations correlate at {corr:.3f}: a copy of that run, "
                    "counted once")
                break
        else:
            seen.append((view, series, median))


def _sweeps(ctx: Context) -> Iterator[Finding]:
    table = ctx.tables["nccl"]
    if table.is_empty() or table.select(pl.struct("source_file", "block").n_unique()).item() < 2:
        return
    rows = table.filter(pl.col("time_us").is_finite() & (pl.col("time_us") > 0)
                        & pl.col("size_bytes").is_not_null()
                        & (pl.col("in_place").not_() | pl.col("in_place").is_null()))
    blocks = rows.group_by("source_file", "block", "collective", maintain_order=True).agg(
        pl.col("size_bytes"), pl.col("time_us"), pl.col("line").first())
    seen: list[tuple[str, str, dict[int, float]]] = []
    for source, _block, collective, sizes, times, line in blocks.iter_rows():
        series = dict(zip(sizes, times, strict=True))
        if len(series) < NCCL_COPY_MIN_SIZES:
            continue
        for path, other_collective, other in seen:
            if other_collective != collective or path == source or set(other) != set(series):
                continue
            rel = np.array([abs(series[s] / other[s] - 1) for s in series])
            if float(quantiles.median(rel)) < NCCL_COPY_BAND:
                yield finding(
                    "crossfile.copied-sweep",
                    f"{collective} over {len(series)} sizes: its times differ from {path}'s by "
                    f"a median of {float(quantiles.median(rel)):.3%} "
                    f"(largest {float(rel.max()):.2%}); "
                    "a copy of that sweep, counted once",
                    file=str(source), line=int(line) if line is not None else None)
                break
        else:
            seen.append((str(source), str(collective), series))


def _telemetry(ctx: Context) -> Iterator[Finding]:
    for c in copied_series(ctx.case.power):
        how = (f"reads exactly what GPU {c.original.gpu} of {c.original.host} "
               f"({c.original.source}) reads at each of its {c.samples} samples"
               if c.identical else
               f"follows GPU {c.original.gpu} of {c.original.host} ({c.original.source}) "
               f"about the job's common load (rank correlation {c.correlation:.3f}), differing "
               f"by {c.diff_share:.0%} of its own spread over {c.samples} samples: that "
               "series re-jittered")
        yield finding("crossfile.copied-telemetry",
                      f"GPU {c.copy.gpu} of {c.copy.host} {how}: a copy, its coverage not "
                      "counted", file=c.copy.source)


def check(ctx: Context) -> Iterator[Finding]:
    yield from _runs(ctx)
    yield from _sweeps(ctx)
    yield from _telemetry(ctx)
