"""PaxML training logs (DGXC v24.11-v25.04 recipes).

PaxML prints only ``[PAX STATUS]: train_step() took 7.47 seconds.``: it carries no step
number, so steps are numbered in file order from 0 after exact duplicate lines are dropped.
The recipes reported the last step (research/dgxc.md §3.1); the rows keep every step.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from cmax.ingest.formats._protocol import register
from cmax.ingest.formats._training_log import TrainingLogFormat
from cmax.ingest.textlines import (
    NUM,
    TrainingLog,
    drop_cut_tail,
    facts_and_lines,
    first_line,
    log_facts,
    settle_steps,
    to_float,
)

PAXML_KEY = "train_step() took"


def parse_paxml(path: Path) -> TrainingLog:
    text = pl.col("text")
    head, events = facts_and_lines(path, lambda lines: (
        lines
        .select(
            pl.col("line"),
            text,
            to_float(text.str.extract(r"train_step\(\) took\s*" + NUM + r"\s*s", 1))
            .alias("step_time_s"),
        )
    ), keys=[PAXML_KEY])
    notes: list[str] = []
    events = drop_cut_tail(events, path, [PAXML_KEY], notes)
    dupes = events.height
    events = events.unique(subset=["text"], keep="first", maintain_order=True)
    dupes -= events.height
    if dupes:
        notes.append(f"{dupes} duplicate step line(s) ignored")
    events = events.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("iteration"))
    steps, _ = settle_steps(events.drop("text"))
    notes.append("PaxML prints no step numbers; steps are numbered from 0 in file order")
    return TrainingLog(format="paxml", framework="paxml", steps=steps, notes=notes, source=path,
                       facts=log_facts(head, "paxml", first_line(events)))


register(TrainingLogFormat("paxml", "PaxML training log",
                         "PaxML / Praxis (`train_step() took ... seconds`)",
                         "ingest/paxml_gpt3-5b.log", parse_paxml))
