"""Megatron-LM and Megatron-Bridge training logs.

The step time comes from the iteration line printed on the last rank
(``iteration 40/ 50 | ... | elapsed time per iteration (ms): 10121.4 | ...``, one-indexed,
converted to seconds). Model TFLOP/s per GPU come either inline
(``throughput per GPU (TFLOP/s/GPU): x``, Megatron-LM) or from a separate rank-0 line
(``Step Time : 10.12s GPU utilization: 731.5MODEL_TFLOP/s/GPU``, Megatron-Bridge) that is paired
with the iteration lines by position, as llmb-run pairs them. A ``grad norm: nan`` marks the
run ``invalid_grad_norm``. Parallel layout and batch sizes are read from Megatron's argument
dump (``  tensor_model_parallel_size ........ 4``) when the log has one.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import register
from cmax.ingest.formats._training_log import TrainingLogFormat
from cmax.ingest.linespec import WALL_TIME, wall_time
from cmax.ingest.textlines import (
    ARG_KEYS,
    ARG_LINE,
    NUM,
    LineQuery,
    TrainingLog,
    drop_cut_tail,
    first_match,
    head_facts,
    log_facts,
    settle_steps,
    to_float,
    value_after,
)

ITER_KEY = "elapsed time per iteration"
TFLOPS_KEY = "TFLOP/s/GPU"
BRIDGE_KEY = "MODEL_TFLOP/s/GPU"
_ITER = r"iteration\s+(?P<iteration>\d+)\s*/\s*(?P<max_iteration>\d+)"
_TFLOPS_LINE = NUM + r"\s*(?:MODEL_)?TFLOP/s/GPU"
# Megatron-Bridge's rank-0 line: ``Step Time : 2.26s GPU utilization: 1156.2MODEL_TFLOP/s/GPU``
_STEP_TIME = r"Step Time\s*:\s*" + NUM + r"\s*s\b"

def _iteration_rows(lines: pl.LazyFrame) -> pl.LazyFrame:
    """Iteration lines (holding :data:`ITER_KEY`) -> the step's numbers."""
    text = pl.col("text")
    return lines.select(
        pl.col("line"),
        text.str.extract_groups(_ITER).alias("_iter"),
        to_float(value_after(r"elapsed time per iteration \(ms\)", sep=r"\s*:"))
        .alias("elapsed_ms"),
        to_float(value_after(r"throughput per GPU \(TFLOP/s/GPU\)", sep=r"\s*:"))
        .alias("inline_tflops"),
        to_float(value_after(r"lm loss", sep=r"\s*:")).alias("loss"),
        to_float(value_after(r"grad[ _]norm", sep=r"\s*:")).alias("grad_norm"),
        to_float(value_after(r"consumed samples", sep=r"\s*:")).alias("consumed_samples"),
        # training.py training_log: "number of skipped iterations: N" over the log interval
        to_float(value_after(r"number of skipped iterations", sep=r"\s*:")).alias("skipped"),
        to_float(value_after(r"energy per GPU \(J/iter/GPU\)", sep=r"\s*:"))
        .alias("energy_j_per_gpu"),
        to_float(value_after(r"power per GPU \(W/GPU\)", sep=r"\s*:")).alias("power_w_per_gpu"),
        wall_time(text).alias(WALL_TIME),
    ).unnest("_iter").with_columns(
        pl.col("iteration", "max_iteration").cast(pl.Int64, strict=False))


def _tflops_rows(lines: pl.LazyFrame) -> pl.LazyFrame:
    """Separate TFLOP/s lines (holding :data:`TFLOPS_KEY`, not an iteration line's inline
    throughput, which :func:`_iteration_rows` reads) -> their numbers."""
    text = pl.col("text")
    return lines.filter(
        ~text.str.contains(ITER_KEY, literal=True) & text.str.contains(_TFLOPS_LINE)
    ).select(
        pl.col("line"),
        to_float(text.str.extract(_TFLOPS_LINE, 1)).alias("line_tflops"),
        text.str.contains(BRIDGE_KEY, literal=True).alias("bridge"),
        to_float(text.str.extract(_STEP_TIME, 1)).alias("line_step_s"),
        wall_time(text).alias(WALL_TIME),
    )


def _read_lines(path: Path) -> tuple[list[Fact], pl.DataFrame, pl.DataFrame]:
    """The head's facts, the iteration rows and the TFLOP/s rows, each kind in file order.

    Each kind is read by a query of its own (both greps start at once): one table of both
    kinds would carry every column on every row and need sorting by line, two more copies
    of it (a 1 GiB log: +120 MiB at the peak)."""
    head: list[Fact] = []
    with LineQuery(path, [ITER_KEY]) as iter_lines, LineQuery(path, [TFLOPS_KEY]) as tflops:
        iters = iter_lines.collect(_iteration_rows,
                                   meanwhile=lambda: head.extend(head_facts(path)))
        return head, iters, tflops.collect(_tflops_rows)


def _drop_cut_tail(iters: pl.DataFrame, tflops: pl.DataFrame, path: Path,
                   notes: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`drop_cut_tail` over both kinds: the row of a cut-off last line is the last row
    of the kind that holds the file's last line read."""
    last = [int(f["line"][-1]) if f.height else 0 for f in (iters, tflops)]
    if last[0] >= last[1]:
        return drop_cut_tail(iters, path, [ITER_KEY, TFLOPS_KEY], notes), tflops
    return iters, drop_cut_tail(tflops, path, [ITER_KEY, TFLOPS_KEY], notes)


def _step_time_lines(iters: pl.DataFrame, tflops: pl.DataFrame,
                     notes: list[str]) -> pl.DataFrame:
    """Megatron-Bridge's ``Step Time : ...s`` lines as the iterations of a log without any
    ``iteration N/M`` line: one step per line, numbered from 1 in file order (the counter
    Megatron's own lines would print), the step time in seconds as printed."""
    timed = tflops.filter(pl.col("line_step_s").is_not_null())
    if timed.is_empty():
        return iters
    notes.append(f"no 'iteration N/M' lines: the {timed.height} Megatron-Bridge 'Step Time' "
                 "lines are the steps, numbered 1.. in file order")
    return pl.concat([iters.clear(), timed.select(
        pl.col("line"),
        pl.int_range(1, timed.height + 1, dtype=pl.Int64).alias("iteration"),
        pl.lit(None, dtype=pl.Int64).alias("max_iteration"),
        (pl.col("line_step_s") * 1000.0).alias("elapsed_ms"),
        pl.col("line_tflops").alias("inline_tflops"),
        pl.col(WALL_TIME),
    )], how="diagonal_relaxed").select(iters.columns)


def _arguments(path: Path, before_line: int | None) -> dict[str, int]:
    """Parallel layout and batch sizes from the argument dump printed before training starts.

    Only the lines before the first iteration are read, so a huge log costs nothing extra.
    """
    found: dict[str, int] = {}
    pattern = re.compile(ARG_LINE.encode(), re.MULTILINE)
    seen = 0
    tail = b""
    with path.open("rb") as fh:
        while before_line is None or seen < before_line:
            raw = fh.read(1 << 20)
            if not raw:
                break
            data = tail + raw
            cut = data.rfind(b"\n") + 1
            data, tail = data[:cut], data[cut:]
            seen += data.count(b"\n")
            for match in pattern.finditer(data.replace(b"\r\n", b"\n")):
                found.setdefault(ARG_KEYS[match.group(1).decode()], int(match.group(2)))
            if before_line is None and seen > 200_000:
                break  # no iteration line at all: look at the top of the file only
    return found


# a skipped-iterations count Megatron could print: a whole number of optimizer steps within
# one log interval, far below the 2**63 of the evidence table's Int64 column
_MAX_SKIPPED = 1 << 40


def _skipped(events: pl.DataFrame, notes: list[str]) -> pl.DataFrame:
    """The iteration lines that report skipped iterations: a count that is a whole number,
    on a line whose iteration number was read. A damaged line (its ``iteration N/M`` field
    unreadable, the count ``inf`` or ``1e30``) is left out with a note rather than
    counted at an unknown iteration."""
    count = pl.col("skipped")
    reported = events.filter(count.is_not_null() & (count.is_nan() | (count != 0)))
    usable = reported.filter(count.is_finite() & (count > 0) & (count == count.floor())
                             & (count <= _MAX_SKIPPED) & pl.col("iteration").is_not_null())
    if usable.height < reported.height:
        lines = reported.join(usable, on="line", how="anti")["line"].head(3).to_list()
        notes.append(f"{reported.height - usable.height} 'number of skipped iterations' "
                     "value(s) not read: not a whole count, or on a line whose iteration "
                     f"number is unreadable (line {', '.join(map(str, lines))})")
    return usable


def parse_megatron(path: Path) -> TrainingLog:
    head, iters, tflops_rows = _read_lines(path)
    notes: list[str] = []
    iters, tflops_rows = _drop_cut_tail(iters, tflops_rows, path, notes)
    first = min((int(f["line"][0]) for f in (iters, tflops_rows) if f.height), default=None)
    if iters.is_empty():
        iters = _step_time_lines(iters, tflops_rows, notes)
    tflops = tflops_rows["line_tflops"]
    paired = pl.Series("paired", [None] * iters.height, dtype=pl.Float64)
    if tflops.len():
        n = min(tflops.len(), iters.height)
        paired = pl.concat([tflops.head(n), pl.Series([None] * (iters.height - n),
                                                      dtype=pl.Float64)])
        if tflops.len() != iters.height:
            notes.append(f"{tflops.len()} TFLOP/s lines for {iters.height} iteration lines; "
                         "paired by position as llmb-run does")
    # a Megatron-Bridge log's TFLOP/s are its MODEL_TFLOP/s/GPU lines even where its
    # iteration lines also print Megatron's "throughput per GPU": llmb-run reads only the
    # former (pretrain_log_parser.py@e249aa3); a Megatron-LM log has only the inline value
    bridge = bool(tflops_rows["bridge"].fill_null(False).any())
    events = iters.with_columns(
        (pl.col("elapsed_ms") / 1000.0).alias("step_time_s"),
        (pl.lit(paired) if bridge else pl.coalesce(pl.col("inline_tflops"), pl.lit(paired)))
        .alias("tflops_per_gpu"),
    )
    invalid = bool(events.height and events["grad_norm"].is_nan().any())
    skipped = _skipped(events, notes)
    steps, resumes = settle_steps(events, notes)

    first_iter = iters["line"].min() if iters.height else None
    config = _arguments(path, int(first_iter) if first_iter is not None else None)  # type: ignore[arg-type]
    extra: list[Fact] = []
    if "gbs" not in config and events.height:
        found = first_match(path, ITER_KEY, r"global batch size\s*:\s*(\d+)")
        if found is not None:
            config["gbs"] = int(found[0])
            extra.append(Fact("parallel", f"gbs={found[0]}", found[1]))
    max_iter = events["max_iteration"].max() if events.height else None
    framework = "megatron-bridge" if bridge else "megatron-lm"
    return TrainingLog(
        format="megatron", framework=framework, steps=steps,
        max_iteration=int(max_iter) if max_iter is not None else None,  # type: ignore[arg-type]
        config=config, resumed_at=resumes, invalid_grad_norm=invalid,
        skipped_at=tuple(int(v) for v in skipped["iteration"].to_list()),
        skipped=int(skipped["skipped"].sum()) if skipped.height else 0, notes=notes,
        source=path,
        facts=log_facts(head, framework, first, extra),
    )


register(TrainingLogFormat("megatron", "Megatron-LM / Megatron-Bridge iteration log",
                         "Megatron-LM `training_log` lines (`iteration N/M | ... | elapsed time "
                         "per iteration (ms): ...`), also printed by Megatron-Bridge, or "
                         "Megatron-Bridge's own `Step Time : 2.26s GPU utilization: "
                         "1156.2MODEL_TFLOP/s/GPU` lines alone",
                         "ingest/megatron_bridge_llama3.1-70b.log",
                         parse_megatron))
