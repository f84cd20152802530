"""NeMo training logs: NeMo 1 (NeMo-Launcher progress bars) and NeMo 2 step lines.

NeMo 1 (DGXC v24.11-v25.03) prints a Lightning progress bar whose postfix carries
``global_step=49.00`` and ``train_step_timing in s=14.70``; the bar is redrawn with ``\\r``, so
one physical line holds many updates. The iteration is the zero-based ``global_step``; the
bar's ``n/N`` gives the run length (last iteration N-1).

NeMo 2 (DGXC v25.04-v26.02) prints one line per step:
``iteration 40/49 | ... | train_step_timing in s: 10.08 | TFLOPS_per_GPU: 7.401e+02 | ...``,
zero-indexed (the final step is ``49/49``). Patterns follow ``parse_train_timing.sh`` and
llmb-run (research/dgxc.md §3.2).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from cmax.ingest._fields import StepQuery
from cmax.ingest._greplines import NEMO2_KEY
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import register
from cmax.ingest.formats._training_log import TrainingLogFormat
from cmax.ingest.linespec import WALL_TIME, StepLine, wall_time
from cmax.ingest.textlines import (
    TrainingLog,
    drop_cut_tail,
    facts_and_lines,
    first_line,
    first_match,
    head_facts,
    log_facts,
    rising,
    settle_steps,
    to_float,
    to_int,
    value_after,
)

NEMO1_KEY = "train_step_timing in s="
_ITER = r"iteration\s+(?P<iteration>\d+)\s*/\s*(?P<max_iteration>\d+)"


#: NeMo 2's step line: each value opens a `` | ``-separated ``key: value`` field
NEMO2 = StepLine(
    key=NEMO2_KEY, iteration=_ITER, field_start=True,
    values={
        "step_time_s": r"train_step_timing in s",
        "tflops_per_gpu": r"TFLOPS_per_GPU",
        "loss": r"reduced_train_loss",
        "grad_norm": r"grad[ _]norm",
        "consumed_samples": r"consumed_samples",
        # NeMo's ProgressPrinter numbers steps within the epoch ("Training epoch 1, iteration
        # 3/59" for max_steps 60); global_step numbers them across epochs
        "global_step": r"global_step",
    },
    # read only to renumber steps across epochs (dropped then): a whole count of steps
    dtypes={"global_step": pl.UInt32()},
)


def parse_nemo2(path: Path) -> TrainingLog:
    head: list[Fact] = []
    with StepQuery(path, NEMO2) as steps:
        events = steps.collect(meanwhile=lambda: head.extend(head_facts(path)))
    notes: list[str] = []
    events = drop_cut_tail(events, path, [NEMO2_KEY], notes)
    events = _across_epochs(events, notes)
    log = _finish("nemo2", events, notes, path)
    found = None
    if events.height:  # no step line: nothing to look for (and no full read for it)
        found = first_match(path, NEMO2_KEY, r"global_batch_size\s*:\s*(\d+)")
    extra: list[Fact] = []
    if found is not None:
        log.config["gbs"] = int(found[0])
        extra.append(Fact("parallel", f"gbs={found[0]}", found[1]))
    log.facts = log_facts(head, "nemo2", first_line(events), extra)
    return log


def _across_epochs(events: pl.DataFrame, notes: list[str]) -> pl.DataFrame:
    """Steps numbered by ``global_step`` when the per-epoch counter starts again.

    A run spanning epochs prints ``iteration 0/59`` again at each new epoch (NeMo's
    ``ProgressPrinter``: the epoch's own zero-based step over ``max_steps - 1``, so the
    denominator is the run's last iteration, 59 for 60 steps); read by the counter,
    60 steps over 2 epochs would look like 30 steps and a restart. ``global_step`` keeps
    counting, so it numbers the steps; a real restart still shows as ``global_step`` going back.
    """
    if "global_step" not in events.columns:
        return events
    if rising(events.get_column("iteration")):
        # no counter going back (the common case): nothing to renumber, and no whole-column
        # temporaries over a multi-million-step table
        return events.drop("global_step")
    step = pl.col("global_step").cast(pl.Int64, strict=False)
    resets, differs, known = events.select(
        (pl.col("iteration").diff() < 0).sum().alias("resets"),
        (pl.col("iteration") != step).any().alias("differs"),
        step.is_not_null().all().alias("known"),
    ).row(0)
    if events.height and resets and differs and known:
        notes.append(f"the per-epoch iteration counter starts again {resets} time(s) (epochs); "
                     "steps are numbered by global_step")
        events = events.with_columns(step.alias("iteration"))
    return events.drop("global_step")


def parse_nemo1(path: Path) -> TrainingLog:
    text = pl.col("text")
    head, events = facts_and_lines(path, lambda lines: (
        lines
        .with_columns(text.str.split("\r"))
        .explode("text")
        .filter(text.str.contains(NEMO1_KEY, literal=True))
        .select(
            pl.col("line"),
            to_float(value_after(r"global_step", sep=r"\s*=")).alias("global_step"),
            to_int(text.str.extract(r"(\d+)\s*/\s*(\d+)\s*\[", 1)).alias("bar_n"),
            to_int(text.str.extract(r"(\d+)\s*/\s*(\d+)\s*\[", 2)).alias("bar_total"),
            to_float(value_after(r"train_step_timing in s", sep=r"\s*=")).alias("step_time_s"),
            to_float(value_after(r"TFLOPS_per_GPU", sep=r"\s*=")).alias("tflops_per_gpu"),
            to_float(value_after(r"reduced_train_loss", sep=r"\s*=")).alias("loss"),
            to_float(value_after(r"grad[ _]norm", sep=r"\s*=")).alias("grad_norm"),
            wall_time(text).alias(WALL_TIME),
        )
    ), keys=[NEMO1_KEY])
    notes: list[str] = []
    events = drop_cut_tail(events, path, [NEMO1_KEY], notes)
    events = events.with_columns(
        pl.coalesce(
            pl.col("global_step").floor().cast(pl.Int64, strict=False),
            pl.col("bar_n") - 1,
        ).alias("iteration"),
        (pl.col("bar_total") - 1).alias("max_iteration"),
    )
    log = _finish("nemo1", events, notes, path)
    log.facts = log_facts(head, "nemo1", first_line(events))
    return log


def _finish(fmt: str, events: pl.DataFrame, notes: list[str], path: Path) -> TrainingLog:
    # in expressions: a constant column (fields.py) is not expanded to millions of rows
    invalid, max_iter = events.select(pl.col("grad_norm").is_nan().any(),
                                      pl.col("max_iteration").max()).row(0)
    steps, resumes = settle_steps(events.drop("max_iteration"), notes)
    config: dict[str, int] = {}
    return TrainingLog(
        format=fmt, framework=fmt, steps=steps,
        max_iteration=int(max_iter) if max_iter is not None else None,
        config=config, resumed_at=resumes, invalid_grad_norm=bool(invalid), notes=notes,
        source=path,
    )


register(TrainingLogFormat("nemo2", "NeMo 2 / Megatron-Bridge training log",
                         "NeMo 2 and Megatron-Bridge recipes (Lightning progress lines, "
                         "`train_step_timing in s: ...`), e.g. DGXC Benchmarking / llmb-run "
                         "job logs", "ingest/nemo2_llama3.1-8b_fp8.log",
                         parse_nemo2))


register(TrainingLogFormat("nemo1", "NeMo 1 training log",
                         "NeMo 1 (Lightning progress bar, `train_step_timing in s=...`)",
                         "ingest/nemo1_gpt3-175b.log",
                         parse_nemo1))
