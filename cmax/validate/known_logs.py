"""Logs cmax already knows: a shipped log submitted as a provider's own is a relabelled copy.

cmax ships its sample bundles' training logs (``samples/``, in the wheel), public for anyone to
copy. Each one's fingerprint (its post-warm-up iterations, step times and losses) is kept in
``known_logs.json`` beside this module, written by ``python tools/write_known_logs.py`` and
held in step with the samples by a test. A run whose series is a known log's,
re-jittered or not (the same test as :func:`cmax.validate.copies.copy_of`), or whose loss
repeats a known log's value for value, is that log: an error, unless the bundle is the log's
own (the same provider or cluster name: a sample renamed for a demonstration is still the
sample).

The test-data logs under ``tests/data`` are left out: they are fixtures the test suite itself
declares under other names, and their numbers are synthetic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cmax.findings import Finding
from cmax.validate.context import Context, run_finding
from cmax.validate.copies import copy_of, steady_runs
from cmax.validate.registry import Rule, register
from cmax.validate.thresholds import (
    COPY_DIFF_SHARE,
    COPY_MEDIAN_BAND,
    MAD_TO_SIGMA,
    MIN_STEADY_STEPS,
)

INDEX = Path(__file__).with_name("known_logs.json")
KEPT_STEPS = 60  # the steady steps a fingerprint keeps (the recipes' logs print 50)

register(Rule(
    "crossfile.known-log", "error", "The run is a log cmax ships",
    "The run's step times (re-jittered or not) or its loss curve, value for value, are those "
    "of a training log cmax ships as a sample of another provider: the log was copied and "
    "relabelled, and measures nothing of this cluster.",
    "Submit the log of a run on the cluster being rated.",
    "cmax/validate/known_logs.json (fingerprints of samples/*/training/*.log).",
    subject="run",
))


def fingerprint(steps: pl.DataFrame) -> dict[str, list[Any]]:
    """The steady steps a known log is recognised by (iteration, step time, loss)."""
    head = steps.head(KEPT_STEPS)
    return {"iteration": head["iteration"].to_list(),
            "step_time_s": head["step_time_s"].to_list(),
            "loss": head["loss"].to_list() if "loss" in head.columns else []}


@cache
def known() -> tuple[dict[str, Any], ...]:
    """The shipped fingerprints (empty when the index is absent)."""
    if not INDEX.is_file():
        return ()
    return tuple(json.loads(INDEX.read_text(encoding="utf-8"))["logs"])


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
def known_frames() -> tuple[Known, ...]:
    out = []
    for entry in known():
        series = pl.DataFrame({"iteration": entry["iteration"],
                               "step_time_s": entry["step_time_s"]},
                              schema={"iteration": pl.Int64, "step_time_s": pl.Float64})
        out.append(Known(entry["owner"].strip().lower(),
                         str(entry.get("cluster") or "").strip().lower(), entry["path"],
                         series, float(np.median(entry["step_time_s"])),
                         dict(zip(entry["iteration"], entry["loss"], strict=False))))
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
    diff = float(np.median(np.abs(x - np.array([theirs[it] for it in shared]))))
    spread = float(np.median(np.abs(x - np.median(x))))
    return diff <= COPY_DIFF_SHARE * MAD_TO_SIGMA * spread or diff == 0.0


def _matches(series: pl.DataFrame, median: float, times: dict[int, float],
             losses: dict[int, float], entry: Known) -> bool:
    """The run is the shipped log: its steps (a copy is within the jitter of the original's
    median, so others are not compared step by step) or its losses, value for value."""
    if (abs(median / entry.median - 1) <= COPY_MEDIAN_BAND and _close(times, entry)
            and copy_of(entry.series, series) is not None):
        return True
    return _same_loss(losses, entry.losses)


def check(ctx: Context) -> Iterator[Finding]:
    entries = known_frames()
    if not entries:
        return
    own = {ctx.manifest.provider.name.strip().lower(),
           (ctx.manifest.provider.cluster or "").strip().lower()} - {""}
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
