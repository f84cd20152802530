"""``[[inference]]`` entries drafted from serving benchmark result files.

Each result file is read by its own format plugin into rows of the ``inference`` table, the rows
ingest would build, and the entry takes what those rows state: the model (mapped to the serving
reference's id through its aliases, so ``openai/gpt-oss-120b`` drafts ``gpt-oss-120b``), the
precision, the GPU count, the input/output lengths per request (tokens ÷ completed requests,
when every result in the file agrees) and the concurrency of a single capped result. A value
no result states (vLLM records no GPU count) is a TODO, and the entry is written commented out
so the draft still loads: a per-GPU figure must rest on a GPU count someone states.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from cmax.errors import CmaxError
from cmax.ingest.evidence import stated_splits
from cmax.submission.intake import toml_text

if TYPE_CHECKING:
    from cmax.reference import Reference

_PRECISIONS = ("nvfp4", "fp4", "mxfp8", "fp8", "bf16", "fp16")


def _rows(path: Path, rel: str) -> pl.DataFrame | None:
    """The inference rows the file's own format reads, or None when it is not a result."""
    from cmax.ingest.formats import InferenceFormat, identify

    try:
        fmt, probe = identify(path)
        if not isinstance(fmt, InferenceFormat):
            return None
        return fmt.frame(fmt.parse(probe), run_id="draft", source_file=rel)
    except CmaxError:
        return None


def _model(rows: pl.DataFrame, reference: Reference) -> tuple[str, str] | None:
    from cmax.reference.inference import model_names

    table = getattr(reference, "inference", None)
    known = table.to_dicts() if isinstance(table, pl.DataFrame) else []
    for row in rows.iter_rows(named=True):
        stated = str(row.get("model") or "").strip()
        for ref in known:
            if stated and stated.lower() in model_names(ref):
                return str(ref["model"]), f"line {row['line']} {stated}"
    return None


def _precision(rows: pl.DataFrame, rel: str) -> tuple[str, str] | None:
    """The precision the file states, else one its model id or file name carries."""
    from cmax.reference.catalog import canonical_precision

    for row in rows.iter_rows(named=True):
        for column in ("precision", "model"):
            text = str(row.get(column) or "").lower()
            for token in _PRECISIONS:
                if token == text or f"-{token}" in text or f"_{token}" in text:
                    return canonical_precision(token), f"line {row['line']} {row[column]}"
    stem = Path(rel).stem.lower()
    for token in _PRECISIONS:
        if token in stem.replace("-", "_").split("_"):
            return canonical_precision(token), f"file name {Path(rel).name}"
    return None


def started(path: Path, rel: str) -> dt.date | None:
    """The UTC day the file's earliest result began, as the file dates it (None: undated)."""
    rows = _rows(path, rel)
    if rows is None or "started_s" not in rows.columns:
        return None
    stamps = [s for s in rows["started_s"].to_list() if s is not None]
    return dt.datetime.fromtimestamp(min(stamps), dt.UTC).date() if stamps else None


def _one(values: list[Any]) -> Any | None:
    """The single value every result states (None when they differ or none does)."""
    present = {v for v in values if v is not None}
    return present.pop() if len(present) == 1 else None


def _lengths(rows: pl.DataFrame) -> tuple[int, int, str] | None:
    """Input and output tokens per request, the same for every result, and where they come
    from: the lengths the file says it asked for, else its token totals over its requests."""
    per: list[tuple[int, int, str]] = []
    for row in rows.iter_rows(named=True):
        done, tin, tout = row["completed"], row["input_tokens"], row["output_tokens"]
        if row["input_len"] and row["output_len"]:
            per.append((int(row["input_len"]), int(row["output_len"]), "stated by the file"))
        elif done and tin and tout:
            per.append((round(tin / done), round(tout / done), "{} tokens ÷ completed requests"))
    one = _one(per)
    return one if isinstance(one, tuple) else None


def entry(path: Path, rel: str, fmt: str, reference: Reference) -> list[str]:
    """The manifest lines of one result file (an empty list when it holds no result)."""
    rows = _rows(path, rel)
    if rows is None or rows.is_empty():
        return []
    model = _model(rows, reference)
    precision = _precision(rows, rel)
    gpus = _one(rows["gpus"].to_list())
    lengths = _lengths(rows)
    capped = [c for c in rows["concurrency"].to_list() if c is not None]
    lines = [toml_text.line("result", rel, f"format {fmt}, {rows.height} result(s)"),
             toml_text.line("model", model[0], model[1]) if model else
             'model = "TODO"                               # no reference model named',
             toml_text.line("precision", precision[0], precision[1]) if precision else
             'precision = "TODO"                           # not stated by the file',
             toml_text.line("gpus", int(gpus), "stated by the file") if gpus else
             f"gpus = 0                                     # TODO: {fmt} records no GPU "
             "count; state the GPUs that served it",
             *([toml_text.line("input_len", lengths[0], lengths[2].format("input")),
                toml_text.line("output_len", lengths[1], lengths[2].format("output"))]
               if lengths else ["input_len = 0                                # TODO",
                                "output_len = 0                               # TODO"])]
    split = stated_splits(rows)
    prefill, decode = next(iter(split)) if len(split) == 1 else (None, 0)
    if prefill is not None:  # one split for every result, stated whole
        lines += [toml_text.line("prefill_gpus", int(prefill), "stated by the file"),
                  toml_text.line("decode_gpus", int(decode), "stated by the file")]
    if len(capped) == 1 and rows.height == 1:
        lines.append(toml_text.line("concurrency", int(capped[0]), "max concurrency"))
    elif capped:
        lines.append(f"# a sweep: {len(capped)} result(s) at concurrency "
                     f"{', '.join(f'{c:g}' for c in capped)}")
    if model and precision and gpus and lengths:
        return ["", "[[inference]]", *lines]
    return ["", "# TODO: model, precision, GPU count or lengths not found for this result",
            "# [[inference]]", *(f"# {line}" if not line.startswith("#") else line
                                 for line in lines)]
