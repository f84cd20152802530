"""TorchTitan training logs (DGXC DeepSeek-V3 TorchTitan recipe, v25.12+).

TorchTitan logs one coloured metrics line per logged step:
``step:  2  loss:  7.8120  grad_norm:  1.2345  memory: 61.23GiB(77.42%)  tps: 1,234
tflops: 456.78  mfu: 46.19%`` (one-based steps, ANSI colour codes between the fields). It prints
no step time: ``tps`` is tokens per second per GPU, so the step time is
``gbs x seq_len / (num_gpus x tps)`` once the run's shape is known. The steps table holds what
the log prints (the rate, a null step time); the step time is derived when the case is
resolved (:mod:`cmax.resolve.step_time`), from the GBS and sequence length of the log's
``Training starts at step 1, with local batch size ..., global batch size ..., sequence length
..., total steps ...`` line, else cmax.toml's (declared), and the run's GPU count as the claims
ledger holds it. The recipe reads ``tflops`` and ``tps`` after warm-up (research/dgxc.md
§3.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import RunRequest, register
from cmax.ingest.formats._training_log import TrainingLogFormat
from cmax.ingest.textlines import (
    GROUPED_NUM,
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

STEP_KEYS = ["tflops:", "tps:"]  # every step line holds both; the first selects them
START_KEY = "Training starts at step"
# a label starts the line or follows a non-word character or a colour code ("\x1b[31mstep:")
_AT = r"(?:^|[^A-Za-z0-9_]|\x1b\[[0-9;]*m)"


def parse_torchtitan(path: Path) -> TrainingLog:
    text = pl.col("text")
    head, rows = facts_and_lines(path, lambda lines: (
        lines
        .select(
            pl.col("line"),
            text.str.contains(START_KEY, literal=True).alias("start"),
            to_int(value_after(_AT + "step:", sep="")).alias("iteration"),
            to_float(value_after(_AT + "loss:", sep="")).alias("loss"),
            to_float(value_after(_AT + "grad_norm:", sep="")).alias("grad_norm"),
            to_float(value_after(_AT + "tps:", sep="", number=GROUPED_NUM), grouped=True)
            .alias("tokens_per_s_per_gpu"),
            to_float(value_after(_AT + "tflops:", sep="")).alias("tflops_per_gpu"),
            to_int(text.str.extract(r"global batch size\s*(\d+)", 1)).alias("gbs"),
            to_int(text.str.extract(r"sequence length\s*(\d+)", 1)).alias("seq_len"),
            to_int(text.str.extract(r"total steps\s*(\d+)", 1)).alias("total_steps"),
        )
    ), keys=[STEP_KEYS[0], START_KEY])
    notes: list[str] = []
    events = rows.filter(~pl.col("start") & pl.col("iteration").is_not_null())
    events = drop_cut_tail(events, path, STEP_KEYS, notes)
    invalid = bool(events.height and events["grad_norm"].is_nan().any())
    steps, resumes = settle_steps(events, notes)
    config: dict[str, int] = {}
    max_iteration: int | None = None
    extra: list[Fact] = []
    starts = rows.filter(pl.col("start"))
    if starts.height:
        first = starts.row(0, named=True)
        for key in ("gbs", "seq_len"):
            if first[key] is not None:
                config[key] = int(first[key])
                extra.append(Fact("parallel", f"{key}={first[key]}", int(first["line"])))
        if first["total_steps"] is not None:
            max_iteration = int(first["total_steps"])
    return TrainingLog(
        format="torchtitan", framework="torchtitan", steps=steps, max_iteration=max_iteration,
        config=config, resumed_at=resumes, invalid_grad_norm=invalid, notes=notes, source=path,
        facts=log_facts(head, "torchtitan", first_line(events), extra),
    )


class TorchTitanLog(TrainingLogFormat):
    """TorchTitan prints tokens/s, not a step time: the step time is derived at resolve."""

    def step_rows(self, parsed: TrainingLog, config: dict[str, Any],
                  request: RunRequest) -> tuple[pl.DataFrame, list[str]]:
        """The steps as the log prints them; a note when neither the log nor cmax.toml gives
        the GBS and sequence length a step time is derived with."""
        notes = []
        if parsed.steps.height and not (config["gbs"] and config["seq_len"]):
            notes.append("TorchTitan prints no step time; set gbs and seq_len in the manifest "
                         "to derive it from tps")
        return parsed.steps, notes


register(TorchTitanLog("torchtitan", "TorchTitan training log",
                     "TorchTitan metrics lines (`step: N  loss: ...  tps: ...  tflops: ...`)",
                     "ingest/torchtitan_deepseek-v3.log",
                     parse_torchtitan))
