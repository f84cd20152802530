"""Evidence cmax already knows: a public log or sweep submitted as a provider's own.

cmax ships its sample bundles' training logs (``samples/``, in the wheel), public for anyone to
copy, and its test data copies nccl-tests outputs others published. The reference release holds
their fingerprints (``reference/known_logs.json``, :mod:`cmax.reference.known_logs`).

* A run whose series is a known log's, re-jittered or not (the same test as
  :func:`cmax.validate.copies.copy_of`), or whose loss repeats a known log's value for value, is
  that log: an error, unless the bundle is the log's own (the same provider or cluster name: a
  sample renamed for a demonstration is still the sample).
* An nccl-tests sweep that prints every time of a published run (both passes at each of its
  sizes, to the printed digit) is that run: an error, and the sweep is not counted. The bar is
  the published runs' own: the out-of-place and in-place passes of one size, seconds apart in
  one job, differ by 0.05 % or more in every one of them, so no honest run reproduces all of
  a published run's printed times.

The test-data logs under ``tests/data`` are left out: they are fixtures the test suite itself
declares under other names, and their numbers are synthetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import polars as pl

from cmax import quantiles
from cmax.findings import Finding
from cmax.quantiles import MAD_TO_SIGMA
from cmax.reference.known_logs import KnownEvidence, KnownSweep
from cmax.validate.context import Context, run_finding
from cmax.validate.copies import copy_of, steady_runs
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import (
    COPY_DIFF_SHARE,
    COPY_MEDIAN_BAND,
    MIN_STEADY_STEPS,
)

KEPT_STEPS = 60  # the steady steps a fingerprint keeps (the recipes' logs print 50)
#: a printed nccl-tests time read back: equal to the digit nccl-tests prints (0.01 us and up)
SAME_TIME_US = 0.005

register(Rule(
    "crossfile.known-log", "error", "The run is a log cmax ships",
    "The run's step times (re-jittered or not) or its loss curve, value for value, are those "
    "of a training log cmax ships as a sample of another provider: the log was copied and "
    "relabelled, and measures nothing of this cluster.",
    "Submit the log of a run on the cluster being rated.",
    "reference/known_logs.json (fingerprints of samples/*/training/*.log).",
))
register(Rule(
    "crossfile.known-sweep", "error", "The sweep is a published run of another operator",
    "The nccl-tests output prints every time of a run published by another operator, both "
    "passes at each of its sizes to the printed digit: the out-of-place and in-place passes "
    "of one size in one job differ by 0.05 % or more in every published run, so no run of "
    "this fabric reproduces them all. It was copied from the public source and measures "
    "nothing of this cluster: it is not counted.",
    "Submit the nccl-tests output of a run on the cluster being rated.",
    "reference/known_logs.json (sweeps: nccl-tests outputs published by others, copied "
    "verbatim in tests/data/nccl, each with its source).",
    effect="not_counted",
))


def fingerprint(steps: pl.DataFrame) -> dict[str, list[Any]]:
    """The steady steps a known log is recognised by (iteration, step time, loss)."""
    head = steps.head(KEPT_STEPS)
    return {"iteration": head["iteration"].to_list(),
            "step_time_s": head["step_time_s"].to_list(),
            "loss": head["loss"].to_list() if "loss" in head.columns else []}


@dataclass(frozen=True)
class Known:
    """One shipped log's fingerprint, ready to compare: its steady series and losses."""

    owner: str
    cluster: str
    path: str
    series: pl.DataFrame
    median: float
    losses: dict[int, float]


@cache
def known_frames(index: KnownEvidence) -> tuple[Known, ...]:
    out = []
    for entry in index.logs:
        series = pl.DataFrame({"iteration": entry.iteration,
                               "step_time_s": entry.step_time_s},
                              schema={"iteration": pl.Int64, "step_time_s": pl.Float64})
        out.append(Known(entry.owner.strip().lower(), entry.cluster.strip().lower(),
                         entry.path, series, float(quantiles.median(entry.step_time_s)),
                         dict(zip(entry.iteration, entry.loss, strict=False))))
    return tuple(out)


def _same_loss(mine: dict[int, float], losses: dict[int, float]) -> bool:
    shared = [it for it in mine if it in losses]
    if len(shared) < MIN_STEADY_STEPS or len({mine[it] for it in shared}) < 3:
        return False
    return all(abs(mine[it] - losses[it]) < 1e-9 for it in shared)


def _close(times: dict[int, float], entry: Known) -> bool:
    """A quick look before the full copy test: over the iterations both print, the median
    difference is within a quarter of the spread of the run's own times."""
    theirs = dict(zip(entry.series["iteration"].to_list(),
                      entry.series["step_time_s"].to_list(), strict=True))
    shared = [it for it in times if it in theirs]
    if len(shared) < MIN_STEADY_STEPS:
        return False
    x = np.array([times[it] for it in shared])
    diff = float(quantiles.median(np.abs(x - np.array([theirs[it] for it in shared]))))
    spread = float(quantiles.median(np.abs(x - quantiles.median(x))))
    return diff <= COPY_DIFF_SHARE * MAD_TO_SIGMA * spread or diff == 0.0


def _matches(series: pl.DataFrame, median: float, times: dict[int, float],
             losses: dict[int, float], entry: Known) -> bool:
    """The run is the shipped log: its steps (a copy is within the jitter of the original's
    median, so others are not compared step by step) or its losses, value for value."""
    if (abs(median / entry.median - 1) <= COPY_MEDIAN_BAND and _close(times, entry)
            and copy_of(entry.series, series) is not None):
        return True
    return _same_loss(losses, entry.losses)


def _own(ctx: Context) -> set[str]:
    return {ctx.manifest.provider.name.strip().lower(),
            (ctx.manifest.provider.cluster or "").strip().lower()} - {""}


def _logs(ctx: Context, index: KnownEvidence) -> Iterator[Finding]:
    entries = known_frames(index)
    if not entries:
        return
    own = _own(ctx)
    others = [e for e in entries if not {e.owner, e.cluster} & own]
    for view, series, median in steady_runs(ctx):
        head = view.clean_steps.slice(view.clean_steps.height - series.height, KEPT_STEPS)
        its = head["iteration"].to_list()
        losses = {it: loss for it, loss in zip(its, head["loss"].to_list(), strict=True)
                  if loss is not None and math.isfinite(loss)}
        times = dict(zip(its, head["step_time_s"].to_list(), strict=True))
        hit = next((e for e in others if _matches(series, median, times, losses, e)), None)
        if hit is not None:
            yield run_finding(
                "crossfile.known-log", view,
                f"its steps are those of {hit.path}, a log cmax ships as {hit.owner!r}'s "
                f"(cluster {hit.cluster!r})")


def _prints(rows: dict[tuple[int, bool], list[float]], sweep: KnownSweep) -> bool:
    """Every row of ``sweep`` printed again, to the digit, among ``rows``."""
    return all(any(abs(t - time) <= SAME_TIME_US for t in rows.get((size, in_place), ()))
               for size, in_place, time in sweep.rows)


def _sweeps(ctx: Context, index: KnownEvidence) -> Iterator[Finding]:
    table = ctx.tables["nccl"]
    if not index.sweeps or table.is_empty():
        return
    own = _own(ctx)
    sweeps = [s for s in index.sweeps
              if not (s.owner and any(s.owner.lower() in name for name in own))]
    # only rows printing a published time can make a match: most bundles have none
    times = np.array(sorted({round(time, 2) for s in sweeps for _, _, time in s.rows}))
    if not times.size:
        return
    rounded = np.round(table["time_us"].to_numpy(), 2)
    # membership by a search in the sorted times: np.isin's answer, without its numpy.ma import
    at = np.minimum(np.searchsorted(times, rounded), times.size - 1)
    mask = times[at] == rounded
    if not mask.any():
        return
    rows = table.filter(pl.Series(mask) & pl.col("size_bytes").is_not_null())
    for (source, _block), block in rows.group_by("source_file", "block", maintain_order=True):
        printed: dict[tuple[int, bool], list[float]] = {}
        for size, in_place, time in block.select("size_bytes", "in_place",
                                                 "time_us").iter_rows():
            printed.setdefault((int(size), bool(in_place)), []).append(float(time))
        hit = next((s for s in sweeps if _prints(printed, s)), None)
        if hit is not None:
            yield finding(
                "crossfile.known-sweep",
                f"{hit.collective}: every one of its {len(hit.rows)} printed times is that of "
                f"{hit.owner or 'a'} run published at {hit.source} (cmax's copy: {hit.path}): "
                "not counted",
                file=str(source) if source is not None else None,
                line=_first_line(block))


def _first_line(block: pl.DataFrame) -> int | None:
    line: Any = block["line"].min()
    return int(line) if line is not None else None


def check(ctx: Context) -> Iterator[Finding]:
    index = ctx.ref.reference.known_evidence()
    yield from _logs(ctx, index)
    yield from _sweeps(ctx, index)
