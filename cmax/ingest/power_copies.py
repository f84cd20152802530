"""Which GPU power series are copies of another GPU's: one measurement standing for two.

Power telemetry counts toward a run's energy figure only for the GPUs it covers, so one GPU's
series copied to stand for others (renamed to another GPU or host, in the same file or another)
buys coverage nobody measured. A copy read for read is plain; a copy with a few watts of
re-jitter is not, and it must not be confused with what honest telemetry looks like: the GPUs
of one job draw alike, rising and falling together with the job's phases, checkpoints and
stalls. So the test is on what is left of each series once the job's common load is taken
out:

* the **common trend** is the median of the file's GPUs at each sample (series of one file
  with the same number of samples, at least :data:`TREND_MIN_GPUS` of them, share a sampling
  grid); each GPU's **residual** is its series minus that trend minus its own median offset
  (a GPU drawing 20 W above its neighbours is still itself);
* two honest GPUs' residuals are their own noise (the instant each GPU was read within a step,
  its own silicon and clocks): their difference varies like either residual, √2 times as much
  for independent noise, and their rank correlation is low. A copy's residual is its
  original's plus the re-jitter: the difference varies like the re-jitter only.

A series is a copy of an earlier one (file order) when their residuals' rank (Spearman)
correlation exceeds :data:`COPY_CORRELATION` and the robust spread of their difference is
below :data:`COPY_DIFF_SHARE` of the smaller residual's robust spread: the same bar
``crossfile.copied-run`` sets for step times (a quarter of the jitter; two honest series differ
by about √2 of it). Series are compared sample by sample in their own order, so a copy moved
to another file with shifted stamps is still found. The honest limit: a copy re-jittered by as
much as the GPU's own noise is, statistically, another GPU; a series of a file with fewer than
:data:`TREND_MIN_GPUS` GPUs on its grid has no trend to take out and is compared only read for
read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    # imported by each function that computes: every command reading a log imports this
    # module (the energy figure), and NumPy's import is a tenth of a second no log needs
    import numpy as np

#: a series of fewer samples (or fewer than three distinct readings) proves nothing either way
TELEMETRY_COPY_MIN_SAMPLES = 10
#: GPUs of one file on one sampling grid needed to tell the job's common load from a GPU's own
#: noise (with three, a copied pair is the median itself at most samples)
TREND_MIN_GPUS = 4
#: difference spread over residual spread below which a series is a copy (copied-run's share)
COPY_DIFF_SHARE = 0.25
#: rank correlation of two residuals above which they are compared closely (copied-run's bar)
COPY_CORRELATION = 0.9
#: samples per series the correlation screen reads (evenly spaced); the difference test reads all
SCREEN_POINTS = 128
#: rows of the correlation screen computed at once (bounds its memory on thousands of GPUs)
SCREEN_BLOCK = 512


@dataclass(frozen=True)
class Series:
    """One GPU's telemetry series: the file, host and GPU index it is read as."""

    source: str
    host: str
    gpu: int | None


@dataclass(frozen=True)
class PowerCopy:
    """A series that copies an earlier one: how close (0 and 1.0 when read for read)."""

    copy: Series
    original: Series
    samples: int
    diff_share: float
    correlation: float

    @property
    def identical(self) -> bool:
        return self.diff_share == 0.0


def _spread(values: np.ndarray) -> float:
    import numpy as np

    from cmax import quantiles
    from cmax.quantiles import MAD_TO_SIGMA

    return MAD_TO_SIGMA * float(quantiles.median(np.abs(values - quantiles.median(values))))


def _ranks(matrix: np.ndarray) -> np.ndarray:
    """Each row's ranks, centred and scaled to unit length (Spearman by a dot product)."""
    import numpy as np

    ranked = matrix.argsort(axis=1).argsort(axis=1).astype(np.float32)
    ranked -= ranked.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(ranked, axis=1, keepdims=True)
    scaled: np.ndarray = np.divide(ranked, norms, out=np.zeros_like(ranked), where=norms > 0)
    return scaled


def _residuals(values: list[np.ndarray], keys: list[Series]
               ) -> tuple[dict[int, np.ndarray], dict[int, float]]:
    """Each series' residual about its file's common trend, for files with a trend, and its
    robust spread."""
    import numpy as np

    from cmax import quantiles
    from cmax.quantiles import MAD_TO_SIGMA

    grids: dict[tuple[str, int], list[int]] = {}
    for i, (key, v) in enumerate(zip(keys, values, strict=True)):
        grids.setdefault((key.source, v.size), []).append(i)
    out: dict[int, np.ndarray] = {}
    spreads: dict[int, float] = {}
    for members in grids.values():
        if len(members) < TREND_MIN_GPUS:
            continue
        matrix = np.vstack([values[i] for i in members])
        resid = matrix - quantiles.median(matrix, axis=0)
        resid -= quantiles.median(resid, axis=1)[:, None]
        spread = MAD_TO_SIGMA * quantiles.median(np.abs(resid), axis=1)
        out.update(zip(members, resid, strict=True))
        spreads.update(zip(members, spread.tolist(), strict=True))
    return out, spreads


def _candidates(rows: list[int], resid: dict[int, np.ndarray]) -> list[tuple[int, int, float]]:
    """(earlier, later, rank correlation) pairs above :data:`COPY_CORRELATION`, later first."""
    import numpy as np

    size = resid[rows[0]].size
    # the distinct indices of a non-decreasing grid: np.unique's, without its numpy.ma import
    grid = np.linspace(0, size - 1, min(size, SCREEN_POINTS)).astype(np.int64)
    at = grid[np.concatenate(([True], grid[1:] != grid[:-1]))]
    z = _ranks(np.vstack([resid[i][at] for i in rows]))
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, len(rows), SCREEN_BLOCK):
        block = z[start:start + SCREEN_BLOCK] @ z.T
        for a, b in zip(*np.nonzero(block > COPY_CORRELATION), strict=True):
            if start + int(a) < int(b):
                pairs.append((rows[start + int(a)], rows[int(b)], float(block[a, b])))
    return sorted(pairs, key=lambda p: (p[1], p[0]))


#: the last table asked about and its answer: validation and each run's energy figure ask about
#: the same table of one case, and the answer costs a sort of every sample
_LAST: list[tuple[pl.DataFrame, list[PowerCopy]]] = []


def copied_series(power: pl.DataFrame) -> list[PowerCopy]:
    """Every series of ``power`` (the power table) that copies an earlier one, read for read or
    re-jittered, in file order; each copy named once, against the first series it copies."""
    if power.is_empty():
        return []
    if _LAST and _LAST[0][0] is power:
        return _LAST[0][1]
    found = _copies(power)
    _LAST[:] = [(power, found)]
    return found


def _copies(power: pl.DataFrame) -> list[PowerCopy]:
    import numpy as np

    grouped = (power.filter(pl.col("power_w").is_not_null() & pl.col("power_w").is_finite())
               .sort("source_file", "host", "gpu", "time_s")
               .group_by("source_file", "host", "gpu", maintain_order=True)
               .agg(pl.col("power_w"), pl.col("power_w").n_unique().alias("distinct"))
               .filter((pl.col("power_w").list.len() >= TELEMETRY_COPY_MIN_SAMPLES)
                       & (pl.col("distinct") >= 3)))
    keys = [Series(str(s), str(h), int(g) if g is not None else None)
            for s, h, g in grouped.select("source_file", "host", "gpu").iter_rows()]
    lengths = grouped["power_w"].list.len().to_numpy()
    flat = grouped["power_w"].explode().to_numpy().astype(np.float64, copy=False)
    values = np.split(flat, np.cumsum(lengths)[:-1]) if lengths.size else []
    found: dict[int, PowerCopy] = {}
    first: dict[bytes, int] = {}
    for i, v in enumerate(values):
        key = v.tobytes()
        if key in first:
            found[i] = PowerCopy(keys[i], keys[first[key]], v.size, 0.0, 1.0)
        else:
            first[key] = i
    resid, spreads = _residuals(values, keys)
    by_size: dict[int, list[int]] = {}
    for i in sorted(resid):
        if i not in found and spreads[i] > 0:
            by_size.setdefault(resid[i].size, []).append(i)
    for rows in by_size.values():
        if len(rows) < 2:
            continue
        for earlier, later, corr in _candidates(rows, resid):
            if later in found or earlier in found:
                continue
            share = _spread(resid[earlier] - resid[later]) / min(spreads[earlier],
                                                                  spreads[later])
            if share < COPY_DIFF_SHARE:
                found[later] = PowerCopy(keys[later], keys[earlier], values[later].size,
                                         round(share, 4), round(corr, 4))
    return [found[i] for i in sorted(found)]
