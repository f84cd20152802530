"""The median and percentiles as NumPy computes them, without importing ``numpy.ma``.

``np.median``, ``np.percentile`` (and ``np.unique``, which ``np.percentile`` calls) import
``numpy.ma`` on first use, ~5 ms of a command's start-up, only to ask whether an array is
masked; cmax never passes a masked array. :func:`median` and :func:`percentile` follow
NumPy's own arithmetic step for step (:func:`median`: partition about the middle, the mean of
the middle one or two values; :func:`percentile`: NumPy's default ``linear`` method, a
partition about the two order statistics around ``(n - 1) q``, in NumPy's order, and its
two-sided interpolation between them; both NaN when a value is NaN), so each gives NumPy's
number to the last bit (``tests/test_quantiles.py`` holds them to it). An empty input goes
to NumPy itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: the normal-consistent scale of a median absolute deviation (1 / the normal's 75th
#: percentile): MAD x this estimates sigma for normal data, robust to outliers
MAD_TO_SIGMA = 1.4826


def median(values: npt.ArrayLike, axis: int | None = None) -> Any:
    """``np.median(values, axis=axis)``: the same value, shape and type."""
    a = np.asanyarray(values)
    size = a.size if axis is None else a.shape[axis]
    if size == 0:
        return np.median(a, axis=axis)  # NaN, with NumPy's warning
    half = size // 2
    kth = [half - 1, half] if size % 2 == 0 else [half]
    nans = np.issubdtype(a.dtype, np.inexact)
    if nans:
        kth.append(-1)  # a NaN sorts last: the last value says whether there is one
    part = np.partition(a, kth, axis=axis)
    on = 0 if axis is None else axis
    index: list[slice] = [slice(None)] * part.ndim
    index[on] = slice(half, half + 1) if size % 2 else slice(half - 1, half + 1)
    result = np.mean(part[tuple(index)], axis=on)
    if nans:
        last = part.take(-1, axis=on)
        isnan = np.isnan(last)
        if isnan.any():
            if isinstance(result, np.generic):
                return last
            np.copyto(result, last, where=isnan)
    return result


def percentile(values: npt.ArrayLike, q: Sequence[float]) -> FloatArray:
    """``np.percentile(values, q)`` of a 1-D float array for several percentiles ``q``."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        return np.asarray(np.percentile(a, q), dtype=np.float64)
    n = a.size
    quantiles = np.true_divide(np.asarray(q, dtype=np.float64), 100)
    if not np.all((quantiles >= 0) & (quantiles <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")  # NumPy's error
    virtual = (n - 1) * quantiles
    below = np.floor(virtual)
    above = below + 1
    top = virtual >= n - 1
    below[top], above[top] = -1, -1
    bottom = virtual < 0
    below[bottom], above[bottom] = 0, 0
    gamma = virtual - below
    lows, highs = below.astype(np.intp), above.astype(np.intp)
    # partitioned about the positions NumPy partitions about, in its order (np.unique's)
    ordered = np.partition(a, sorted({0, -1, *lows.tolist(), *highs.tolist()}))
    lower, upper = ordered[lows], ordered[highs]
    diff = upper - lower
    result: FloatArray = np.add(lower, diff * gamma)
    np.subtract(upper, diff * (1 - gamma), out=result, where=gamma >= 0.5)
    if np.isnan(ordered[-1]):
        result[:] = ordered[-1]
    return result
