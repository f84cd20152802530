"""Schema and types: the canonical tables hold what downstream code assumes.

Written as Polars expressions rather than with a dataframe-validation library: the checks are
few and fixed (required values, iteration numbers, precision labels), and each failure must
become a finding that names the evidence file and line, which the canonical tables already
carry. What no file can break (every table a DataFrame of its canonical columns and types,
run ids unique, every step's run in the runs table: ingest builds them so) is refused for
Evidence built in Python before validation, with one error (``cmax/resolve/canonical.py``).
NaN, null and infinity must also stay distinct (a null TFLOP/s is allowed, a NaN step time is a
numeric-sanity error), which pandera's nullable check conflates.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from cmax.findings import Finding
from cmax.reading.coerce import as_int
from cmax.validate.context import TABLES, Context
from cmax.validate.registry import Rule, finding, register

register(Rule(
    "schema.missing-value", "error", "A required value is empty",
    "Run id, iteration and step time identify every measurement; a row without them cannot be "
    "placed in the steady-state window or traced back to the log.",
    "Check that the log line is complete (not truncated) and that the parser reads it; remove "
    "corrupted lines from the log rather than editing numbers.",
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


def _first_where(frame: pl.DataFrame, cond: pl.Expr) -> tuple[int, str | None, int | None]:
    hits = frame.filter(cond)
    if hits.is_empty():
        return 0, None, None
    first = hits.row(0, named=True)
    return hits.height, first.get("source_file"), as_int(first.get("line"))


def _resolved_steps(ctx: Context) -> pl.DataFrame:
    """Every run's steps as the case resolved them: a step time the log does not print
    (TorchTitan's tps) derived where the run's GBS, sequence length and GPUs are known
    (:mod:`cmax.resolve.step_time`), still empty where they are not."""
    frames = [v.steps.select("step_time_s", "source_file", "line") for v in ctx.runs
              if v.steps.height]
    return pl.concat(frames) if frames else ctx.tables["steps"]


def check(ctx: Context) -> Iterator[Finding]:
    raw = {name: getattr(ctx.evidence, name, None) for name in TABLES}
    for name, cols in _REQUIRED.items():
        frame = ctx.tables[name]
        original = raw[name]
        for col in cols:
            if not isinstance(original, pl.DataFrame) or col not in original.columns:
                continue  # Evidence from Python without it is refused before validation
            where = _resolved_steps(ctx) if (name, col) == ("steps", "step_time_s") else frame
            count, file, line = _first_where(where, pl.col(col).is_null())
            if count:
                yield finding("schema.missing-value",
                              f"{name}.{col} is empty in {count} row(s)"
                              + (f", first at line {line}" if line else ""),
                              file=file, line=line)
    steps = ctx.tables["steps"]
    if steps.get_column("run_id").null_count():  # filtering copies: only when needed
        steps = steps.filter(pl.col("run_id").is_not_null())
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
