"""Long runs: the step-series rules read millions of steps column-wise, with the same results.

The statistics rules once walked every step in Python (12.7 s to validate three runs of 2 M
steps, ``benchmarks/bench_case.py --steps 2000000``). They now work on columns; these tests
hold the column-wise helpers to their plain definitions on seeded random series (including
the awkward cases: exact halves, huge values, bins of odd and even size), and check that the
rules still find what they find on short runs when the run is long.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import polars as pl
import pytest

from cmax.resolve.case import resolve
from cmax.validate import validate
from cmax.validate.context import print_resolution
from cmax.validate.statistics import _median, robust_sigma, theil_sen_slope
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle, honest_times


def _plain_median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _plain_resolution(values: list[float]) -> float:
    def on_grid(v: float, q: float) -> bool:
        x = v / q
        return not math.isfinite(x) or abs(x - round(x)) < 1e-6 * max(1.0, abs(x))

    for digits in range(7):
        q = 10.0 ** -digits
        if all(on_grid(v, q) for v in values):
            return q
    return 1e-7


def _plain_theil_sen(xs: list[int], ys: list[float], max_points: int = 120) -> float:
    if len(xs) > max_points:
        size = math.ceil(len(xs) / max_points)
        bins = [(xs[i:i + size], ys[i:i + size]) for i in range(0, len(xs), size)]
        xs_f = [_plain_median([float(x) for x in bx]) for bx, _ in bins]
        ys = [_plain_median(by) for _, by in bins]
    else:
        xs_f = [float(x) for x in xs]
    slopes = [(ys[j] - ys[i]) / (xs_f[j] - xs_f[i])
              for i in range(len(xs_f)) for j in range(i + 1, len(xs_f)) if xs_f[j] != xs_f[i]]
    return _plain_median(slopes) if slopes else 0.0


def _series(rng: random.Random, n: int) -> list[float]:
    digits = rng.choice([0, 1, 2, 3, 6, 9])
    base = rng.choice([0.5, 10.0, 1.5e5, 1e300])
    values = [round(base * (1 + rng.gauss(0, 0.02)), digits) for _ in range(n)]
    if rng.random() < 0.3:  # exact halves of the grid: Python and Polars round them apart
        values += [2.5, 0.125, 1e6 + 0.5]
    return values


@pytest.mark.parametrize("seed", range(40))
def test_column_wise_helpers_equal_their_plain_definitions(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 2, 3, 119, 120, 121, 241, 1000, 4801])
    values = _series(rng, n)
    assert print_resolution(values) == _plain_resolution(values)
    assert print_resolution(pl.Series(values)) == _plain_resolution(values)
    assert _median(values) == _plain_median(values)
    med = _plain_median(values)
    mad = sorted(abs(v - med) for v in values)[len(values) // 2]
    assert robust_sigma(values, med, 0.01) == max(1.4826 * mad, 0.01, 0.002 * med)
    its = sorted(rng.sample(range(10 * len(values) + 10), len(values)))
    assert theil_sen_slope(its, values) == _plain_theil_sen(its, values)
    assert theil_sen_slope(pl.Series(its), pl.Series(values)) == _plain_theil_sen(its, values)


def _findings(tmp_path: Path, bundle: HonestBundle) -> list[tuple[str, str, int | None]]:
    fake = FakeReference()
    case = resolve(bundle.ingest(tmp_path), fake)
    return [(f.rule, f.message, f.line) for f in validate(case, fake)]


def test_a_long_run_still_shows_its_stall_and_its_recycled_twin(tmp_path: Path) -> None:
    bundle = HonestBundle()
    first, second, third = bundle.runs
    first.times = honest_times(first.base_step, 1, n=6000, stall_at=4321, stall=3.0)
    first.max_iteration = 5999
    second.times, second.max_iteration = list(first.times), 5999  # the same series again
    third.times = honest_times(third.base_step, 3, n=6000, stall_at=None)
    third.max_iteration = 5999
    found = _findings(tmp_path, bundle)
    stalls = [(m, line) for rule, m, line in found if rule == "statistics.stall"]
    assert len(stalls) == 2 and all("iteration(s) 4321 took up to" in m for m, _ in stalls)
    assert all(line is not None for _, line in stalls)
    twins = [m for rule, m, _ in found if rule == "statistics.duplicate-log"]
    assert any("its 6000 step times are identical to run" in m for m in twins)


def test_a_long_run_that_steps_back_is_still_caught(tmp_path: Path) -> None:
    """The sequence rule skips its step-by-step walk only for strictly rising iterations."""
    bundle = HonestBundle()
    run = bundle.runs[0]
    run.times = honest_times(run.base_step, 1, n=6000)
    run.max_iteration = 5999
    run.iterations = [*range(0, 3000), 2990, *range(3001, 6000)]
    found = _findings(tmp_path, bundle)
    assert any(rule == "consistency.iteration-sequence" and "2990" in m
               for rule, m, _ in found), found
