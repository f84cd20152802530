"""Schema and types: the canonical tables hold what downstream code assumes.

Written as Polars expressions rather than with a dataframe-validation library: the checks are
few and fixed (columns, dtypes, required values, keys), and each failure must become a
finding that names the evidence file and line, which the canonical tables already carry.
NaN, null and infinity must also stay distinct (a null TFLOP/s is allowed, a NaN step time is a
numeric-sanity error), which pandera's nullable check conflates.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from cmax.findings import Finding
from cmax.ingest.evidence import Evidence
from cmax.reading.coerce import as_int
from cmax.validate.context import TABLES, Context
from cmax.validate.registry import Rule, finding, register

register(Rule(
    "schema.table-columns", "error", "A canonical table has missing or mistyped columns",
    "Every evidence table has a fixed schema (cmax.ingest.evidence). A missing column or a column "
    "of "
    "the wrong type means the parser or the code that built the Evidence is broken; the "
    "validator reads the table as if the column were empty, so other findings may follow.",
    "Fix the parser (or the code building the Evidence) to emit the canonical schema, e.g. "
    "with cmax.ingest.evidence.conform().",
))
register(Rule(
    "schema.missing-value", "error", "A required value is empty",
    "Run id, iteration and step time identify every measurement; a row without them cannot be "
    "placed in the steady-state window or traced back to the log.",
    "Check that the log line is complete (not truncated) and that the parser reads it; remove "
    "corrupted lines from the log rather than editing numbers.",
))
register(Rule(
    "schema.duplicate-run", "error", "Two runs share a run id",
    "Run ids key the steps table; a duplicate id mixes the steps of two runs into one.",
    "Give each run a unique id (ingest derives it from the log path: do not list one log "
    "twice).",
))
register(Rule(
    "schema.orphan-steps", "error", "Steps belong to no run",
    "Steps whose run id is not in the runs table cannot be compared with any reference.",
    "Fix the parser so that every step row carries the id of its run.",
))
register(Rule(
    "schema.negative-iteration", "error", "Negative iteration number",
    "Iterations are printed from 0 (NeMo 2) or 1 (Megatron-Bridge); a negative number means "
    "the line was misread or edited.",
    "Submit the log exactly as the training job wrote it.",
))
register(Rule(
    "schema.unknown-precision", "warning", "Precision is not a recognised label",
    "Peak TFLOP/s and reference baselines are looked up by precision (bf16, fp8, fp8-cs, "
    "mxfp8, nvfp4, ...). An unrecognised label means neither can be found reliably.",
    "Use one of: " + ", ".join(sorted({
        "fp32", "tf32", "fp16", "bf16", "fp8", "fp8-cs", "fp8-ds", "fp8-mx", "fp8-ss",
        "fp8-blockwise", "mxfp8", "nvfp4", "mxfp4"})) + ".",
    "Precision labels of NVIDIA/dgxc-benchmarking and the Megatron-Bridge performance summary, "
    "and the MLPerf "
    "lowest_numerical_precision vocabulary.",
))

register(Rule(
    "schema.parser-note", "info", "The parser left a note",
    "While reading the evidence, the parser noticed something a reviewer should see (for "
    "example a field it could not read or a format variant).",
    "Read the note; nothing to fix unless it names a problem.",
))

KNOWN_PRECISIONS = frozenset({
    "fp64", "fp32", "tf32", "fp16", "bf16", "bfloat16", "fp8", "fp8-cs", "fp8-ds", "fp8-mx",
    "fp8-ss", "fp8-blockwise", "fp8-delayed", "mxfp8", "nvfp4", "mxfp4", "int8",
})

_REQUIRED: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "steps": ("run_id", "iteration", "step_time_s"),
    "nccl": ("collective", "size_bytes", "busbw_gbps"),
    "audit_checks": ("check_id", "status"),
}


def _columns(evidence: Evidence) -> Iterator[Finding]:
    for name, schema in TABLES.items():
        frame = getattr(evidence, name, None)
        if not isinstance(frame, pl.DataFrame):
            yield finding("schema.table-columns",
                          f"{name}: expected a Polars DataFrame, got {type(frame).__name__}")
            continue
        for col, dtype in schema.items():
            if col not in frame.columns:
                yield finding("schema.table-columns", f"{name}: column {col!r} is missing")
            elif frame.schema[col] != dtype and frame.height > 0:
                yield finding("schema.table-columns",
                              f"{name}.{col} is {frame.schema[col]}, expected {dtype}")


def _first_where(frame: pl.DataFrame, cond: pl.Expr) -> tuple[int, str | None, int | None]:
    hits = frame.filter(cond)
    if hits.is_empty():
        return 0, None, None
    first = hits.row(0, named=True)
    return hits.height, first.get("source_file"), as_int(first.get("line"))


def check(ctx: Context) -> Iterator[Finding]:
    yield from _columns(ctx.evidence)
    raw = {name: getattr(ctx.evidence, name, None) for name in TABLES}
    for name, cols in _REQUIRED.items():
        frame = ctx.tables[name]
        original = raw[name]
        for col in cols:
            if not isinstance(original, pl.DataFrame) or col not in original.columns:
                continue  # reported by schema.table-columns
            count, file, line = _first_where(frame, pl.col(col).is_null())
            if count:
                yield finding("schema.missing-value",
                              f"{name}.{col} is empty in {count} row(s)"
                              + (f", first at line {line}" if line else ""),
                              file=file, line=line)
    runs = ctx.tables["runs"].filter(pl.col("run_id").is_not_null())
    dups = runs.group_by("run_id").len().filter(pl.col("len") > 1).sort("run_id")
    for run_id, n in dups.iter_rows():
        yield finding("schema.duplicate-run", f"run id {run_id!r} appears {n} times in runs",
                      run_id=run_id)
    steps = ctx.tables["steps"]
    if steps.get_column("run_id").null_count():  # filtering copies: only when needed
        steps = steps.filter(pl.col("run_id").is_not_null())
    known = set(runs["run_id"].to_list())
    orphans = steps.filter(~pl.col("run_id").is_in(sorted(known)))
    for run_id in sorted(set(orphans["run_id"].to_list())):
        count, file, line = _first_where(orphans, pl.col("run_id") == run_id)
        yield finding("schema.orphan-steps",
                      f"{count} step(s) carry run id {run_id!r}, which is not in runs",
                      file=file, line=line)
    count, file, line = _first_where(steps, pl.col("iteration") < 0)
    if count:
        yield finding("schema.negative-iteration",
                      f"{count} step(s) have a negative iteration number", file=file, line=line)
    for view in ctx.runs:
        notes = view.row.get("notes")
        for note in [n.strip() for n in str(notes or "").split(";") if n.strip()]:
            yield finding("schema.parser-note", f"run {view.run_id}: {note}", file=view.file,
                          run_id=view.run_id)
        precision = view.get_str("precision")
        if precision and precision not in KNOWN_PRECISIONS:
            yield finding("schema.unknown-precision",
                          f"run {view.run_id}: precision {precision!r} is not a recognised label",
                          file=view.file, run_id=view.run_id)
