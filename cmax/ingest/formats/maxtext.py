"""MaxText training logs (DGXC v24.11-v25.04 recipes).

MaxText prints ``completed step: 49, seconds: 15.570, TFLOP/s/device: 506.597,
Tokens/s/device: 1052.266, total_weights: 2097152, loss: 0.000`` per step (zero-based step).
The recipes reported the last step (research/dgxc.md §3.1); the rows keep every step.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from cmax.ingest.formats._protocol import register
from cmax.ingest.formats._training_log import TrainingLogFormat
from cmax.ingest.textlines import (
    TrainingLog,
    drop_cut_tail,
    facts_and_lines,
    first_line,
    log_facts,
    settle_steps,
    to_float,
    to_int,
    value_after,
)

MAXTEXT_KEY = "completed step:"


def parse_maxtext(path: Path) -> TrainingLog:
    head, events = facts_and_lines(path, lambda lines: (
        lines
        .select(
            pl.col("line"),
            to_int(value_after(r"completed step", sep=r"\s*:")).alias("iteration"),
            to_float(value_after(r"seconds", sep=r"\s*:")).alias("step_time_s"),
            to_float(value_after(r"TFLOP/s/device", sep=r"\s*:")).alias("tflops_per_gpu"),
            to_float(value_after(r"Tokens/s/device", sep=r"\s*:"))
            .alias("tokens_per_s_per_gpu"),
            to_float(value_after(r"\bloss", sep=r"\s*:")).alias("loss"),
        )
    ), keys=[MAXTEXT_KEY])
    notes: list[str] = []
    events = drop_cut_tail(events, path, [MAXTEXT_KEY], notes)
    steps, resumes = settle_steps(events, notes)
    return TrainingLog(format="maxtext", framework="maxtext", steps=steps, resumed_at=resumes,
                       notes=notes, source=path,
                       facts=log_facts(head, "maxtext", first_line(events)))


register(TrainingLogFormat("maxtext", "MaxText training log",
                         "MaxText (`completed step: N, seconds: ..., TFLOP/s/device: ...`)",
                         "ingest/maxtext_llama2-70b.log", parse_maxtext))
