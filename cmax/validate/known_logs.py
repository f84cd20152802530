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
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

from cmax.findings import Finding
from cmax.validate.context import Context, RunView, run_finding
from cmax.validate.copies import copy_of, steady_series
from cmax.validate.registry import Rule, register
from cmax.validate.thresholds import MIN_STEADY_STEPS

INDEX = Path(__file__).with_name("known_logs.json")
KEPT_STEPS = 60  # the steady steps a fingerprint keeps (the recipes' logs print 50)

register(Rule(
    "crossfile.known-log", "error", "The run is a log cmax ships",
    "The run's step times (re-jittered or not) or its loss curve, value for value, are those "
    "of a training log cmax ships as a sample of another provider: the log was copied and "
    "relabelled, and measures nothing of this cluster.",
    "Submit the log of a run on the cluster being rated.",
    "cmax/validate/known_logs.json (fingerprints of samples/*/training/*.log).",
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


def _same_loss(view: RunView, entry: dict[str, Any]) -> bool:
    losses = dict(zip(entry["iteration"], entry["loss"], strict=False))
    mine = view.clean_steps.filter(pl.col("iteration").is_in(list(losses))
                                   & pl.col("loss").is_finite()).select("iteration", "loss")
    if mine.height < MIN_STEADY_STEPS or mine["loss"].n_unique() < 3:
        return False
    return all(abs(loss - losses[it]) < 1e-9 for it, loss in mine.iter_rows())


def check(ctx: Context) -> Iterator[Finding]:
    entries = known()
    if not entries:
        return
    own = {ctx.manifest.provider.name.strip().lower(),
           (ctx.manifest.provider.cluster or "").strip().lower()} - {""}
    for view in ctx.runs:
        if view.summary is not None:
            continue
        series = steady_series(view)
        if series.height < MIN_STEADY_STEPS:
            continue
        for entry in entries:
            if {entry["owner"].strip().lower(), str(entry.get("cluster") or "").lower()} & own:
                continue
            theirs = pl.DataFrame({"iteration": entry["iteration"],
                                   "step_time_s": entry["step_time_s"]},
                                  schema={"iteration": pl.Int64, "step_time_s": pl.Float64})
            same = theirs.equals(series.join(theirs.select("iteration"), on="iteration"))
            if same or copy_of(theirs, series) is not None or _same_loss(view, entry):
                yield run_finding(
                    "crossfile.known-log", view,
                    f"its steps are those of {entry['path']}, a log cmax ships as "
                    f"{entry['owner']}'s")
                break
