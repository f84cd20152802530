"""The step-time series a scorecard carries: every step of a benchmark run, every spike of a
long one.

A DGXC recipe prints 50 steps; a long run's log can print millions (a 1 GiB NeMo 2 log of a
quiet run holds 2 M). The scorecard's series feeds the step-time chart and lets a reader see
warm-up, stalls and drift; it is not what any figure is computed from (the ratio, its CI and
the window mean come from the run's steps in the case). Carried whole, two million
(iteration, seconds) pairs made a 117 MB scorecard JSON, a 10 MB PDF (the JSON is attached)
and a 1.5 GB process. So a series longer than :data:`MAX_POINTS` keeps, from each of
``MAX_POINTS // 2`` consecutive runs of steps, its fastest and its slowest step: the line a
chart draws from it has every spike and every dip of the whole series, at a bounded size.
``steps_total`` on the workload still counts every step printed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the chart worker imports this module: Polars only when a series is long
    import polars as pl

#: most points a step series keeps (a chart's line is ~1,000 pixels wide at most)
MAX_POINTS = 1500


def spikes(points: Sequence[tuple[int, float]], limit: int = MAX_POINTS
           ) -> list[tuple[int, float]]:
    """The (iteration, time) points with a finite time: all of them up to ``limit``, else the
    first fastest and first slowest of each of ``limit // 2`` equal runs of them, in order (one
    point where they are the same)."""
    pairs = [(i, t) for i, t in points if math.isfinite(t)]
    if len(pairs) <= limit:
        return pairs
    import polars as pl

    frame = pl.DataFrame({"iteration": [i for i, _ in pairs], "t": [t for _, t in pairs]},
                         schema={"iteration": pl.Int64, "t": pl.Float64})
    return _bucket_extremes(frame, limit)


def step_series(steps: pl.DataFrame, limit: int = MAX_POINTS) -> list[tuple[int, float]]:
    """:func:`spikes` of a run's steps (``iteration``, ``step_time_s``; nulls skipped) in
    iteration order, read column-wise: the list is built only for the points kept."""
    import polars as pl

    frame = (steps.select(pl.col("iteration").cast(pl.Int64),
                          pl.col("step_time_s").cast(pl.Float64).alias("t"))
             .filter(pl.col("iteration").is_not_null() & pl.col("t").is_finite())
             .sort("iteration", maintain_order=True))
    if frame.height <= limit:
        return list(frame.iter_rows())
    return _bucket_extremes(frame, limit)


def _bucket_extremes(frame: pl.DataFrame, limit: int) -> list[tuple[int, float]]:
    import polars as pl

    size = math.ceil(frame.height / (limit // 2))
    first = pl.col("_bucket") * size  # the bucket's first row
    ends = (frame.with_row_index("_row")
            .group_by((pl.col("_row") // size).alias("_bucket"), maintain_order=True)
            .agg(pl.col("t").arg_min().alias("lo"), pl.col("t").arg_max().alias("hi"))
            .select((first + pl.col("lo")).alias("lo"), (first + pl.col("hi")).alias("hi")))
    rows = sorted({*ends["lo"].to_list(), *ends["hi"].to_list()})
    return list(frame.select("iteration", "t")[rows].iter_rows())
