"""The ``cmax inspect`` view of one training log: its steps, every recipe rule's window and
mean, and the energy its step lines print.

It reads what :mod:`cmax.ingest.textlines` parsed and :mod:`cmax.ingest.energy` measures, so
neither of those imports the other's caller.
"""

from __future__ import annotations

import polars as pl

from cmax.ingest.energy import measured_energy, tokens_per_gpu_step
from cmax.ingest.textlines import TrainingLog, clean_steps, finite_mean
from cmax.recipes.window import every_window, steady_state_window


def training_summary(log: TrainingLog) -> dict[str, object]:
    """The ``cmax inspect`` view of one training log."""
    steps = log.steps
    out: dict[str, object] = {"format": log.format, "framework": log.framework,
                              "steps": steps.height}
    if steps.height == 0:
        out.update(first_iteration=None, last_iteration=None, mean_step_time_s=None,
                   window_mean_step_time_s=None, mean_tflops_per_gpu=None)
    else:
        first = int(steps["iteration"].min())  # type: ignore[arg-type]
        last = int(steps["iteration"].max())  # type: ignore[arg-type]
        window = steady_state_window(None, last)
        in_window = steps.filter(pl.col("iteration").is_between(window.first, window.last))
        out.update(
            first_iteration=first,
            last_iteration=last,
            mean_step_time_s=_round(finite_mean(steps["step_time_s"])),
            window=[window.first, window.last],
            window_steps=in_window.height,
            window_mean_step_time_s=_round(finite_mean(in_window["step_time_s"])),
            mean_tflops_per_gpu=_round(finite_mean(steps["tflops_per_gpu"])),
            window_mean_tflops_per_gpu=_round(finite_mean(in_window["tflops_per_gpu"])),
        )
        out["windows"] = _every_window(steps, log.max_iteration)
        tokens = finite_mean(steps["tokens_per_s_per_gpu"])
        if tokens is not None:
            out["mean_tokens_per_s_per_gpu"] = _round(tokens)
        nan_steps = steps.filter(~pl.col("step_time_s").is_finite()).height
        if nan_steps:
            out["non_finite_step_times"] = nan_steps
        energy = measured_energy(in_window, tokens_per_gpu_step=tokens_per_gpu_step(log.config))
        if energy is not None:
            out["window_measured_energy"] = energy
    out.update(max_iteration=log.max_iteration, status=log.status(), restarts=log.restarts)
    if log.skipped:
        out["skipped_iterations"] = log.skipped
    if log.config:
        out["config"] = dict(sorted(log.config.items()))
    if log.notes:
        out["notes"] = list(log.notes)
    return out


def _every_window(steps: pl.DataFrame, max_iteration: int | None) -> list[dict[str, object]]:
    """Each recipe rule's window and its mean over the clean steps, computed exactly as the
    case computes a run's (:func:`clean_steps`, ``cmax.recipes.window``): a scorecard's window is
    the one of its matched baseline's recipe release, always one of these."""
    last = max_iteration
    if last is None:
        usable = steps.filter(pl.col("step_time_s").is_finite() & (pl.col("step_time_s") > 0))
        top = usable["iteration"].max()
        last = None if top is None else int(top)  # type: ignore[arg-type]
    windows = every_window(last)
    # only the windows' iterations are cleaned (a dense log has millions of steps no window
    # reads)
    wanted = pl.any_horizontal([pl.col("iteration").is_between(w.first, w.last) for w in windows])
    clean = clean_steps(steps.filter(wanted))
    out: list[dict[str, object]] = []
    for win in windows:
        inside = clean.filter(pl.col("iteration").is_between(win.first, win.last))
        out.append({"rule": win.rule, "window": [win.first, win.last], "steps": inside.height,
                    "mean_step_time_s": _round(finite_mean(inside["step_time_s"]))})
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
