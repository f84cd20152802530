"""cmax.quantiles gives NumPy's median and percentiles to the last bit, without numpy.ma."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from cmax.quantiles import median, percentile


def _same(ours: Any, numpy: Any) -> bool:
    a, b = np.asarray(ours), np.asarray(numpy)
    return (type(ours) is type(numpy) and a.dtype == b.dtype and a.shape == b.shape
            and a.tobytes() == b.tobytes())


def _arrays(seed: int) -> list[np.ndarray]:
    """Odd and even lengths, ties, values across many magnitudes, infinities, a NaN, ints."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for n in (1, 2, 3, 4, 7, 10, 33, 64, 255, 1000):
        out.append(rng.random(n) * 10.0 ** float(rng.integers(-6, 6)))
        out.append(np.round(rng.random(n), 1))  # ties
        out.append(np.exp(rng.normal(size=n)))
        out.append(rng.integers(0, 5, n))
        out.append(rng.choice([1e308, -1e308, np.inf, -np.inf, 0.5, 1.5, -0.0, 0.0], n))
        with_nan = rng.random(n)
        with_nan[rng.integers(0, n)] = np.nan
        out.append(with_nan)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_median_is_numpys(seed: int) -> None:
    for values in _arrays(seed):
        with np.errstate(all="ignore"):  # inf - inf, 1e308 + 1e308: NumPy warns alike
            assert _same(median(values), np.median(values)), values
            assert _same(median(values.tolist()), np.median(values.tolist()))


@pytest.mark.parametrize("axis", [0, 1])
def test_median_along_an_axis_is_numpys(axis: int) -> None:
    rng = np.random.default_rng(7)
    for rows, cols in ((1, 1), (3, 8), (5, 9), (16, 256), (7, 2)):
        matrix = rng.random((rows, cols))
        assert _same(median(matrix, axis=axis), np.median(matrix, axis=axis))
        matrix[0, 0] = np.nan  # one NaN makes its row's (or column's) median NaN
        assert _same(median(matrix, axis=axis), np.median(matrix, axis=axis))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_percentile_is_numpys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for values in _arrays(seed):
        floats = values.astype(np.float64)
        for q in ([2.5, 97.5], [5.0, 95.0], [0.0, 100.0], [50.0],
                  [float(rng.uniform(0, 100)), float(rng.uniform(0, 100))]):
            with np.errstate(all="ignore"):
                ours, numpys = percentile(floats, q), np.percentile(floats, q)
            assert _same(ours, numpys), (floats, q)


def test_percentile_refuses_what_numpy_refuses() -> None:
    with pytest.raises(ValueError, match="Percentiles must be in the range"):
        percentile(np.array([1.0, 2.0]), [101.0])


def test_neither_imports_numpy_ma() -> None:
    """NumPy 2 imports numpy.ma only on first use; NumPy 1.x (the lowest allowed) imports it
    with numpy itself. Either way the median and percentiles add no import of it."""
    code = ("import sys, numpy as np\n"
            "from cmax.quantiles import median, percentile\n"
            "before = 'numpy.ma' in sys.modules\n"
            "median(np.array([3.0, 1.0, 2.0, 4.0])); median(np.ones((3, 4)), axis=1)\n"
            "percentile(np.linspace(0, 1, 101), [2.5, 97.5])\n"
            "print(before, 'numpy.ma' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    before, after = done.stdout.split()
    assert after == before
    if int(np.__version__.split(".")[0]) >= 2:
        assert before == "False"
