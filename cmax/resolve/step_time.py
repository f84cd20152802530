"""Step times a log does not print, derived once per run from the rate it does print.

TorchTitan logs tokens per second per GPU (``tps``) and no step time. The steps table holds
what the log states (the rate, a null step time); the step time every later stage reads is
GBS x sequence length / (GPUs x tps), made here from the run's values as the case holds them:
the GBS and sequence length the log prints (its ``Training starts ...`` line), else cmax.toml's
(declared), and the GPU count of the run's identity (the claims ledger's). Each input keeps its
standing (:class:`cmax.resolve.runs.DerivedStepTime`), so a step time resting on a declaration
is labelled as such, never shown as measured.
"""

from __future__ import annotations

import polars as pl

from cmax.resolve.runs import DerivedStepTime, ResolvedRun, Stated
from cmax.throughput import tokens_per_gpu_step


def _config(run: ResolvedRun, name: str) -> Stated:
    """A configuration key as the log states it, else as cmax.toml declares it."""
    logged = run.row.get(name)
    if logged is not None:
        return Stated(int(logged), "corroborated", "the log")
    declared = getattr(run.spec, name, None) if run.spec is not None else None
    if declared is None:
        return Stated(None, "unstated", "-")
    where = f"cmax.toml runs[{run.spec_index}].{name}"
    return Stated(int(declared), "declared", where)


def derive_step_times(run: ResolvedRun) -> tuple[pl.DataFrame, DerivedStepTime | None]:
    """The run's steps with each step time its log leaves out derived from its printed
    tokens/s/GPU, and how; the steps unchanged (and None) when the log prints its step times
    or the GBS, sequence length or GPU count is not known."""
    steps = run.steps
    if steps.is_empty() or not steps.select(
            pl.col("step_time_s").is_null() & pl.col("tokens_per_s_per_gpu").is_not_null()
    ).to_series().any():
        return steps, None
    gbs, seq_len, num_gpus = _config(run, "gbs"), _config(run, "seq_len"), run.stated("num_gpus")
    values = [gbs.value, seq_len.value, num_gpus.value]
    if not all(isinstance(v, int) and v > 0 for v in values):
        return steps, None
    per_step = tokens_per_gpu_step(int(values[0] or 0), int(values[1] or 0),
                                   int(values[2] or 0))
    filled = steps.with_columns(pl.coalesce(
        pl.col("step_time_s"), per_step / pl.col("tokens_per_s_per_gpu")).alias("step_time_s"))
    return filled, DerivedStepTime(gbs=gbs, seq_len=seq_len, num_gpus=num_gpus)
