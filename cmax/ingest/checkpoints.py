"""Checkpoint save and load events in training logs, as rows of the ``storage`` table.

A ``[[storage]]`` entry naming a training log (the same file a ``[[runs]]`` entry reads, or
another run's) gets its checkpoint lines read here, each as one event of the run with its
iteration, duration and line. The frameworks print them differently; every form is a
:class:`LineForm` below, read by the same keyword-line reader as the step lines
(:func:`cmax.ingest.textlines.query_lines`: grep children on a large log):

- NeMo 2 (``nemo_logging``, NVIDIA/dgxc-benchmarking recipe READMEs):
  ``Global Checkpoint Save : Rank: 0 : Iteration: 50 : Start time: 1744408121.151s : Save
  duration: 4.389s`` — the blocking part of the save (with async saving the write goes on in
  the background); ``Async finalization time took 0.018 s`` — the background write's
  finalisation, waited for at the next step; ``Global Checkpoint Load : Rank : 0 : Start time :
  1744407969.270s : Time spent in load_checkpoint: 9.712s``;
- Megatron-LM / Megatron-Bridge: the ``save-checkpoint`` timer, printed in **milliseconds**
  under ``(min, max) time across ranks (ms):`` as ``save-checkpoint ....: (24895.07,
  24895.13)`` or, with ``--timing-log-option max``, as one number (NVIDIA/Megatron-LM
  ``megatron/core/timers.py``); the save is barrier-bracketed, so the slowest rank (max) is
  what the job waited. Its iteration is the preceding ``successfully saved checkpoint from
  iteration N`` line;
- TorchTitan (pytorch/torchtitan ``torchtitan/components/checkpoint.py``): ``Finished saving
  the checkpoint (or staging if async is enabled) in 5.53 seconds.`` (older: ``Finished saving
  the checkpoint in 0.60 seconds.``; one release printed no space before ``in``) and
  ``Finished loading the checkpoint in 54.49 seconds.``; the step is the preceding ``Saving
  ... at step N`` line when it names one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from cmax.ingest.textlines import query_lines

NUM = r"([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"


@dataclass(frozen=True)
class LineForm:
    """One framework's checkpoint line: its keyword, the regex reading it, what it records."""

    key: str  # a literal every such line holds (the grep keyword)
    pattern: re.Pattern[str]  # groups: iteration (optional), then the duration
    direction: str  # save | load | finalize | iteration (an iteration marker, no duration)
    unit_s: float  # seconds per printed unit (Megatron's timers print ms)
    framework: str


FORMS: tuple[LineForm, ...] = (
    LineForm("Global Checkpoint Save", re.compile(
        r"Global Checkpoint Save\s*:\s*Rank\s*:\s*\d+\s*:\s*Iteration\s*:\s*(\d+)\s*:.*?"
        r"Save duration\s*:\s*" + NUM + r"\s*s"), "save", 1.0, "nemo2"),
    LineForm("Async finalization time took", re.compile(
        r"()Async finalization time took\s+" + NUM + r"\s*s"), "finalize", 1.0, "nemo2"),
    LineForm("Global Checkpoint Load", re.compile(
        r"()Global Checkpoint Load\s*:.*?Time spent in load_checkpoint\s*:\s*" + NUM + r"\s*s"),
        "load", 1.0, "nemo2"),
    LineForm("successfully saved checkpoint from iteration", re.compile(
        r"successfully saved checkpoint from iteration\s+(\d+)()"), "iteration", 1.0,
        "megatron"),
    LineForm("save-checkpoint ", re.compile(
        r"()\bsave-checkpoint \.+:\s*(?:\(\s*[0-9.]+\s*,\s*" + NUM + r"\s*\)|" + NUM + r")"),
        "save", 1e-3, "megatron"),
    LineForm("Finished saving the checkpoint", re.compile(
        r"()Finished saving the checkpoint.*?\bin\s*" + NUM + r"\s*seconds"), "save", 1.0,
        "torchtitan"),
    LineForm("Finished loading the checkpoint", re.compile(
        r"()Finished loading the checkpoint in\s*" + NUM + r"\s*seconds"), "load", 1.0,
        "torchtitan"),
    LineForm("checkpoint at", re.compile(
        r"Saving .*?checkpoint.*?\bat (?:last step, )?step,?\s*(\d+)()"), "iteration", 1.0,
        "torchtitan"),
)
KEYS: tuple[str, ...] = tuple(dict.fromkeys(f.key for f in FORMS))
_MARKERS = tuple(f for f in FORMS if f.direction == "iteration")
_EVENTS = tuple(f for f in FORMS if f.direction != "iteration")


def _keep(lines: pl.LazyFrame) -> pl.LazyFrame:
    pattern = "|".join(re.escape(k) for k in KEYS)
    return lines.filter(pl.col("text").str.contains(pattern))


def events(path: Path, *, run_id: str, source_file: str, tool: str) -> pl.DataFrame:
    """The checkpoint events of one training log as ``storage`` rows, in file order.

    An event's iteration is the one its own line names, else the last iteration marker
    before it (Megatron's ``successfully saved`` line, TorchTitan's ``Saving ... at step``).
    """
    lines = query_lines(path, _keep, keys=KEYS)
    rows: list[dict[str, object]] = []
    iteration: int | None = None
    for line, text in zip(lines["line"].to_list(), lines["text"].to_list(), strict=True):
        for form in _MARKERS:  # Megatron may print the iteration and the timer on one line
            marker = form.pattern.search(text) if form.key in text else None
            if marker is not None:
                iteration = int(marker.group(1))
        for form in _EVENTS:
            match = form.pattern.search(text) if form.key in text else None
            if match is None:
                continue
            stated, *values = match.groups()
            if stated:
                iteration = int(stated)
            value = next(v for v in values if v is not None)
            rows.append({"run_id": f"{run_id}#{len(rows)}", "tool": tool,
                         "benchmark": "checkpoint-log", "workload": form.framework,
                         "direction": form.direction, "iteration": iteration,
                         "duration_s": float(value) * form.unit_s,
                         "source_file": source_file, "line": int(line)})
            break
    return pl.DataFrame(rows, infer_schema_length=None)
