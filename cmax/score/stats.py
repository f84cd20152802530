"""Bootstrap confidence intervals and the points a ratio earns (the pass / fail /
inconclusive rule is :mod:`cmax.judgement.bar`).

The reference recipes report a mean over a fixed window of steps; a provider's mean over the
same window is itself uncertain, and with ten steps that uncertainty is often a few percent,
the same size as the Exemplar margin. A percentile bootstrap over the per-step samples says
whether a shortfall is real. The seed is fixed so the same evidence always gives the same
interval (reports must be byte-identical run to run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from cmax import quantiles

FloatArray = npt.NDArray[np.float64]


def bootstrap_ci(
    samples: Sequence[float],
    statistic_of_mean: Callable[[FloatArray], FloatArray],
    *,
    resamples: int,
    confidence: float,
    seed: int,
) -> tuple[float, float]:
    """Percentile CI of ``statistic_of_mean(mean of a resample)``.

    ``statistic_of_mean`` maps an array of resampled means to the statistic (e.g. reference
    step time ÷ mean step time). It must be vectorised over numpy arrays.
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.size == 0:
        raise ValueError("bootstrap needs at least one sample")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    stats = statistic_of_mean(x[idx].mean(axis=1))
    alpha = (1.0 - confidence) / 2.0
    low, high = quantiles.percentile(stats, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(low), float(high)


def ratio_score(ratio: float, floor: float) -> float:
    """Points (0-100) for a provider ÷ reference ratio: 100 at or above the reference,
    0 at or below ``floor``, linear between."""
    if ratio >= 1.0:
        return 100.0
    if ratio <= floor:
        return 0.0
    return 100.0 * (ratio - floor) / (1.0 - floor)


def log_ratio_score(ratio: float, floor: float) -> float:
    """Points for ratios that span orders of magnitude (MTBF): 100 at 1, 0 at ``floor``,
    linear in log10 between."""
    if ratio >= 1.0:
        return 100.0
    if ratio <= floor:
        return 0.0
    return 100.0 * (1.0 - float(np.log10(ratio)) / float(np.log10(floor)))


def geometric_mean(values: Sequence[float]) -> float:
    """The average of ratios: a 2x speed-up and a 2x slow-down cancel, as they should."""
    arr = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore"):  # a ratio of 0 (an absurdly slow run) gives 0, quietly
        return float(np.exp(np.log(arr).mean()))
