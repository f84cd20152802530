"""The scorecard's step series (cmax/score/series.py): whole for a benchmark run, every spike
of a long one, the same points whichever way it is read."""

from __future__ import annotations

import math
import random

import polars as pl
import pytest

from cmax.score.series import MAX_POINTS, spikes, step_series


def _plain(points: list[tuple[int, float]], limit: int) -> list[tuple[int, float]]:
    """The definition: the first fastest and first slowest point of each of limit // 2 equal
    runs of the finite points, in order."""
    clean = [(x, y) for x, y in points if math.isfinite(y)]
    if len(clean) <= limit:
        return clean
    size = math.ceil(len(clean) / (limit // 2))
    out: list[tuple[int, float]] = []
    for start in range(0, len(clean), size):
        chunk = clean[start:start + size]
        lo = min(range(len(chunk)), key=lambda i: chunk[i][1])
        hi = max(range(len(chunk)), key=lambda i: chunk[i][1])
        out.extend(chunk[i] for i in sorted({lo, hi}))
    return out


@pytest.mark.parametrize("seed", range(25))
def test_spikes_keeps_what_the_definition_keeps(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([0, 1, 7, 40, 41, 1000, 3001])
    limit = rng.choice([2, 7, 40, 100, MAX_POINTS])
    # two decimals: ties inside a bucket are common, and the first of them must be kept
    times = [round(rng.uniform(9.9, 10.1), 2) for _ in range(n)]
    for k in rng.sample(range(n), min(n, 3)):
        times[k] = rng.choice([math.nan, math.inf, 40.0])
    its = list(range(0, 3 * n, 3))
    expected = _plain(list(zip(its, times, strict=True)), limit)
    assert spikes(list(zip(its, times, strict=True)), limit) == expected
    frame = pl.DataFrame({"iteration": its, "step_time_s": times, "line": range(n)})
    assert step_series(frame.reverse(), limit) == expected  # read in iteration order


def test_a_two_million_step_run_keeps_its_spike_and_dip_in_1500_points() -> None:
    n = 2_000_000
    frame = pl.DataFrame({"iteration": pl.int_range(n, eager=True),
                          "step_time_s": pl.repeat(10.0, n, eager=True)})
    frame = frame.with_columns(
        pl.when(pl.col("iteration") == 1_234_567).then(55.0)
        .when(pl.col("iteration") == 77).then(2.0)
        .otherwise(pl.col("step_time_s")).alias("step_time_s"))
    series = step_series(frame)
    assert len(series) <= MAX_POINTS
    assert (1_234_567, 55.0) in series and (77, 2.0) in series
    assert series[0] == (0, 10.0) and series == sorted(series)


def test_nulls_and_non_finite_times_are_not_points() -> None:
    frame = pl.DataFrame({"iteration": [2, None, 0, 1, 3],
                          "step_time_s": [1.5, 9.0, None, math.nan, -math.inf]})
    assert step_series(frame) == [(2, 1.5)]
