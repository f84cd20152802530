"""Public per-GPU serving references: output tokens/s per GPU by model, GPU, precision and
input/output length (``reference/inference.csv``).

Each row is one published measurement with its source (repository, path and commit), the
parallel layout and software it was measured with and its scenario. Two kinds of row:

* *offline* rows (no ``interactivity_tok_s_user``): TensorRT-LLM's perf overview, offline
  maximum-throughput runs of ``trtllm-bench`` (no latency constraint), so a provider's result is
  comparable with one only at the same model, precision, GPU and input/output length, and only
  as a throughput-at-saturation figure;
* *curve* rows (``interactivity_tok_s_user`` stated): points of a throughput-vs-interactivity
  sweep, a dated snapshot of InferenceX's official rows, each with its concurrency, the
  measured joules per output token where the row states a valid power measurement, the date it
  was measured and its run. A curve point is never an offline maximum: the offline look-up
  skips these rows, the curve look-up reads only them;
* *MLPerf scenario* rows (``scenario`` begins ``MLPerf Inference``): a closed-division,
  available system's tokens/s in one LoadGen scenario (Offline, Server, Interactive) divided by
  its GPUs (accelerators per node x nodes). The dataset fixes the input/output lengths, so the
  row states none; the scenario fixes the latency bound (TTFT and TPOT p99 of Server and
  Interactive), so rows of one scenario are compared at equal tokens/s per user. Only an MLPerf
  result of the same scenario is compared with one (:func:`mlperf_scenario`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import ReferenceDataError
from cmax.reference.catalog import canonical_precision

INFERENCE_COLUMNS: dict[str, pl.DataType] = {
    "model": pl.String(), "aliases": pl.String(), "gpu": pl.String(), "precision": pl.String(),
    "parallel": pl.String(), "input_len": pl.Int64(), "output_len": pl.Int64(),
    "output_tok_s_per_gpu": pl.Float64(), "concurrency": pl.Int64(),
    "interactivity_tok_s_user": pl.Float64(), "j_per_output_token": pl.Float64(),
    "date": pl.Date(), "scenario": pl.String(), "software": pl.String(), "source": pl.String(),
}


def load_inference(path: Path, gpus: set[str]) -> pl.DataFrame:
    """The serving reference rows, checked: known GPU and precision, positive figures, a
    source on every row."""
    try:
        frame = pl.read_csv(path, schema=INFERENCE_COLUMNS)
    except (OSError, pl.exceptions.PolarsError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ReferenceDataError(f"cannot read the serving references: {first}",
                                 file=path) from None
    for i, row in enumerate(frame.iter_rows(named=True)):
        line = i + 2
        if row["gpu"] not in gpus:
            raise ReferenceDataError(f"unknown GPU {row['gpu']!r}", file=path, line=line,
                                     field="gpu", expected="an id from gpus.toml")
        if canonical_precision(str(row["precision"])) != row["precision"]:
            raise ReferenceDataError(f"precision {row['precision']!r} is not canonical",
                                     file=path, line=line, field="precision")
        scenario_row = mlperf_scenario(row) is not None
        for column in ("input_len", "output_len", "output_tok_s_per_gpu"):
            if scenario_row and column != "output_tok_s_per_gpu":
                if row[column] is not None:
                    raise ReferenceDataError(f"an MLPerf scenario row states no {column} (its "
                                             "dataset fixes the lengths)", file=path, line=line,
                                             field=column)
                continue
            if not row[column] or row[column] <= 0:
                raise ReferenceDataError(f"{column} must be positive", file=path, line=line,
                                         field=column)
        for column in ("concurrency", "interactivity_tok_s_user", "j_per_output_token"):
            if row[column] is not None and row[column] <= 0:
                raise ReferenceDataError(f"{column} must be positive when given", file=path,
                                         line=line, field=column)
        if row["interactivity_tok_s_user"] is not None and (row["concurrency"] is None
                                                            or row["date"] is None):
            raise ReferenceDataError("a curve point needs its concurrency and date", file=path,
                                     line=line, field="concurrency",
                                     expected="the sweep point's concurrency and the date it "
                                     "was measured")
        if scenario_row and row["interactivity_tok_s_user"] is not None:
            raise ReferenceDataError("an MLPerf scenario row is no curve point", file=path,
                                     line=line, field="interactivity_tok_s_user",
                                     expected="empty: the scenario's latency bound sets the "
                                     "tokens/s per user")
        if not row["source"] or "@" not in row["source"]:
            raise ReferenceDataError("every row needs its source (repository path@commit)",
                                     file=path, line=line, field="source")
    return frame


def model_names(row: dict[str, Any]) -> set[str]:
    """The names a reference row's model goes by (lower case)."""
    names = {str(row["model"]).lower()}
    names |= {a.strip().lower() for a in str(row.get("aliases") or "").split("|") if a.strip()}
    return names


#: the ``scenario`` prefix of an MLPerf Inference row
MLPERF_PREFIX = "MLPerf Inference "


def mlperf_scenario(row: dict[str, Any]) -> str | None:
    """The LoadGen scenario of an MLPerf Inference reference row (lower case), else None."""
    text = str(row.get("scenario") or "")
    if not text.startswith(MLPERF_PREFIX):
        return None
    words = text[len(MLPERF_PREFIX):].split()
    return words[1].lower() if len(words) > 1 else None
