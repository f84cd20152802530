"""Training logs: NeMo 1 / NeMo 2 (Megatron-Bridge), Megatron-LM, MaxText, PaxML, TorchTitan.

Each framework prints its own step line; the marker is the part of that line no other tool
prints (``train_step_timing in s:`` for NeMo 2, ``... in s=`` for NeMo 1, ``elapsed time per
iteration (ms):`` for Megatron-LM, ...). The parsers live in their own modules
(:mod:`cmax.ingest.nemo`, ...); this module registers them and turns a parsed
:class:`~cmax.ingest.textlines.TrainingLog` into a ``runs`` row plus its ``steps``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from cmax.ingest.formats import Marker, Probe, RunFormat, RunPart, RunRequest, register
from cmax.ingest.jax_logs import parse_maxtext, parse_paxml
from cmax.ingest.megatron import parse_megatron
from cmax.ingest.nemo import parse_nemo1, parse_nemo2
from cmax.ingest.textlines import CONFIG_KEYS, TrainingLog, training_summary
from cmax.ingest.torchtitan import fill_step_time, parse_torchtitan


class TrainingLogFormat(RunFormat[TrainingLog]):
    """A per-step training log, read by its framework's parser (the registration below names
    each format's parser once)."""

    def __init__(self, format_id: str, title: str, tool: str, sample: str, priority: int,
                 marker: Marker | tuple[Marker, ...],
                 parser: Callable[[Path], TrainingLog]) -> None:
        self.id, self.title, self.tool, self.sample = format_id, title, tool, sample
        markers = marker if isinstance(marker, tuple) else (marker,)
        self.priority, self.markers, self.parser = priority, markers, parser

    def parse(self, probe: Probe) -> TrainingLog:
        return self.parser(probe.path)

    def summarise(self, parsed: TrainingLog, probe: Probe) -> dict[str, Any]:
        return training_summary(parsed)

    def config(self, parsed: TrainingLog, request: RunRequest) -> dict[str, Any]:
        """The manifest's parallel config where declared, else what the log printed."""
        return {k: request.declared[k] if request.declared[k] is not None
                else parsed.config.get(k) for k in CONFIG_KEYS}

    def step_rows(self, parsed: TrainingLog, config: dict[str, Any],
                  request: RunRequest) -> tuple[pl.DataFrame, list[str]]:
        return parsed.steps, []

    def read_run(self, parsed: TrainingLog, request: RunRequest) -> RunPart:
        config = self.config(parsed, request)
        frame, notes = self.step_rows(parsed, config, request)
        steps = frame.with_columns(pl.lit(request.run_id).alias("run_id"),
                                   pl.lit(request.source_file).alias("source_file"))
        row = dict(config)
        row.update(framework=request.spec.framework or parsed.framework, status=parsed.status(),
                   max_iteration=parsed.max_iteration, **parsed.run_columns())
        return RunPart(row=row, steps=steps, notes=[*notes, *parsed.notes])


class TorchTitanLog(TrainingLogFormat):
    """TorchTitan prints tokens/s, not a step time: the step time is derived."""

    def step_rows(self, parsed: TrainingLog, config: dict[str, Any],
                  request: RunRequest) -> tuple[pl.DataFrame, list[str]]:
        """TorchTitan prints tokens/s, not step time: derive it from gbs x seq_len."""
        frame = fill_step_time(parsed.steps, config["gbs"], config["seq_len"],
                               request.spec.num_gpus)
        notes = []
        if frame["step_time_s"].null_count() and frame.height:
            notes.append("TorchTitan prints no step time; set gbs and seq_len in the manifest "
                         "to derive it from tps")
        return frame, notes


def _marker(literal: bytes, pattern: str) -> Marker:
    return Marker(literal, re.compile(pattern))


# (id, title, which tool prints it, sample under tests/data/, priority, marker, parser); the
# marker is the part of the step line no other tool prints
for _cls, _args in (
    (TrainingLogFormat, ("nemo2", "NeMo 2 / Megatron-Bridge training log",
                         "NeMo 2 and Megatron-Bridge recipes (Lightning progress lines, "
                         "`train_step_timing in s: ...`), e.g. DGXC Benchmarking / llmb-run "
                         "job logs", "ingest/nemo2_llama3.1-8b_fp8.log", 60,
                         _marker(b"train_step_timing", r"train_step_timing in s\s*:"),
                         parse_nemo2)),
    (TrainingLogFormat, ("nemo1", "NeMo 1 training log",
                         "NeMo 1 (Lightning progress bar, `train_step_timing in s=...`)",
                         "ingest/nemo1_gpt3-175b.log", 59,
                         _marker(b"train_step_timing", r"train_step_timing in s\s*="),
                         parse_nemo1)),
    (TrainingLogFormat, ("megatron", "Megatron-LM / Megatron-Bridge iteration log",
                         "Megatron-LM `training_log` lines (`iteration N/M | ... | elapsed time "
                         "per iteration (ms): ...`), also printed by Megatron-Bridge, or "
                         "Megatron-Bridge's own `Step Time : 2.26s GPU utilization: "
                         "1156.2MODEL_TFLOP/s/GPU` lines alone",
                         "ingest/megatron_bridge_llama3.1-70b.log", 50,
                         (_marker(b"elapsed time per iteration",
                                  r"elapsed time per iteration \(ms\)\s*:"),
                          _marker(b"MODEL_TFLOP/s/GPU", r"Step Time\s*:\s*[\d.]+\s*s\b")),
                         parse_megatron)),
    (TrainingLogFormat, ("maxtext", "MaxText training log",
                         "MaxText (`completed step: N, seconds: ..., TFLOP/s/device: ...`)",
                         "ingest/maxtext_llama2-70b.log", 40,
                         _marker(b"completed step:", r"completed step:\s*\d+"), parse_maxtext)),
    (TrainingLogFormat, ("paxml", "PaxML training log",
                         "PaxML / Praxis (`train_step() took ... seconds`)",
                         "ingest/paxml_gpt3-5b.log", 39,
                         _marker(b"train_step()", r"train_step\(\) took\s*[\d.]"), parse_paxml)),
    (TorchTitanLog, ("torchtitan", "TorchTitan training log",
                     "TorchTitan metrics lines (`step: N  loss: ...  tps: ...  tflops: ...`)",
                     "ingest/torchtitan_deepseek-v3.log", 30,
                     _marker(b"step:", r"\bstep:\s*\d+\s+loss:.*\b(?:tflops|tps):"),
                     parse_torchtitan)),
):
    register(_cls(*_args))
