"""The plugin class every training-log format shares (NeMo, Megatron, MaxText, PaxML,
TorchTitan): each framework's module (:mod:`cmax.ingest.formats.nemo`, ...) holds its parser
and registers its formats with :class:`TrainingLogFormat`, which turns a parsed
:class:`~cmax.ingest.textlines.TrainingLog` into a ``runs`` row plus its ``steps``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from cmax.ingest.formats._protocol import Probe, RunFormat, RunPart, RunRequest
from cmax.ingest.log_summary import training_summary
from cmax.ingest.textlines import CONFIG_KEYS, TrainingLog


class TrainingLogFormat(RunFormat[TrainingLog]):
    """A per-step training log, read by its framework's parser (the registration below names
    each format's parser once)."""

    def __init__(self, format_id: str, title: str, tool: str, sample: str,
                 parser: Callable[[Path], TrainingLog]) -> None:
        self.id, self.title, self.tool, self.sample = format_id, title, tool, sample
        self.parser = parser

    @property
    def home(self) -> str:
        """The framework's module (this class is shared by every training-log format)."""
        return self.parser.__module__

    def parse(self, probe: Probe) -> TrainingLog:
        return self.parser(probe.path)

    def summarise(self, parsed: TrainingLog, probe: Probe) -> dict[str, Any]:
        return training_summary(parsed)

    def config(self, parsed: TrainingLog, request: RunRequest) -> dict[str, Any]:
        """What the log printed of the parallel config, null where it is silent. The evidence
        table holds what the file says: cmax.toml's declaration is read from the resolved
        run (:meth:`cmax.resolve.runs.ResolvedRun.get`), and one that disagrees with the log
        lives in the claims ledger (contradicted) and in consistency.manifest-vs-log."""
        return {k: parsed.config.get(k) for k in CONFIG_KEYS}

    def step_rows(self, parsed: TrainingLog, config: dict[str, Any],
                  request: RunRequest) -> tuple[pl.DataFrame, list[str]]:
        return parsed.steps, []

    def read_run(self, parsed: TrainingLog, request: RunRequest) -> RunPart:
        config = self.config(parsed, request)
        # a step time derived from a printed rate (TorchTitan) needs the run's shape: the
        # log's, else cmax.toml's
        shape = {k: request.declared[k] if v is None else v for k, v in config.items()}
        frame, notes = self.step_rows(parsed, shape, request)
        steps = frame.with_columns(pl.lit(request.run_id).alias("run_id"),
                                   pl.lit(request.source_file).alias("source_file"))
        row = dict(config)
        row.update(framework=parsed.framework, status=parsed.status(),
                   max_iteration=parsed.max_iteration, **parsed.run_columns())
        return RunPart(row=row, steps=steps, notes=[*notes, *parsed.notes])
