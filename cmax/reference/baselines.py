"""The baseline table: its fixed schema, its load-time checks and the "latest" rule.

Scoring compares a provider's run with exactly one published row, so the table must be
well-formed (one schema, unique ids, known ids everywhere) and the choice of row must be a
rule anyone can re-derive by hand; docs/reference.md states it in words.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import ReferenceDataError
from cmax.recipes.columns import RECIPE_SCHEMA
from cmax.reference.catalog import PRECISIONS

BASELINE_SCHEMA: dict[str, pl.DataType] = {
    "baseline_id": pl.String(),
    "workload": pl.String(),
    "model": pl.String(),
    "task": pl.String(),
    "gpu": pl.String(),
    "precision": pl.String(),
    "precision_recipe": pl.String(),
    "alternate": pl.Boolean(),
    "num_gpus": pl.Int64(),
    **RECIPE_SCHEMA,
    "layers": pl.Int64(),
    "proxy": pl.Boolean(),
    "step_time_s": pl.Float64(),
    "tokens_per_s_per_gpu": pl.Float64(),
    "tokens_per_s_total_reported": pl.Float64(),
    "model_tflops_per_gpu": pl.Float64(),
    "mfu_pct": pl.Float64(),
    "framework": pl.String(),
    "framework_label": pl.String(),
    "container": pl.String(),
    "recipe_release": pl.String(),
    "recipe_release_last": pl.String(),
    "source": pl.String(),
    "source_repo": pl.String(),
    "source_path": pl.String(),
    "source_date": pl.Date(),
    "flops_convention": pl.String(),
    "erratum": pl.String(),
    "notes": pl.String(),
    "source_model": pl.String(),
    "source_workload": pl.String(),
}

REQUIRED = ("baseline_id", "workload", "model", "task", "gpu", "precision", "num_gpus",
            "proxy", "alternate", "framework", "source", "source_date", "flops_convention")
TASKS = ("pretrain", "sft", "lora")



def read_baselines(path: Path) -> pl.DataFrame:
    """Read baselines.csv with its declared schema (a header mismatch is an error)."""
    try:
        header = path.read_text(encoding="utf-8").split("\n", 1)[0].strip().split(",")
    except OSError as exc:
        raise ReferenceDataError(f"cannot read the baselines: {exc}", file=path) from exc
    if header != list(BASELINE_SCHEMA):
        missing = [c for c in BASELINE_SCHEMA if c not in header]
        extra = [c for c in header if c not in BASELINE_SCHEMA]
        raise ReferenceDataError(
            f"baselines header does not match the schema (missing {missing}, unexpected {extra})",
            file=path, line=1, expected=",".join(BASELINE_SCHEMA),
            fix="regenerate with tools/build_reference.py",
        )
    try:
        return pl.read_csv(path, schema=BASELINE_SCHEMA, try_parse_dates=False)
    except pl.exceptions.PolarsError as exc:
        raise ReferenceDataError(
            f"baselines do not fit the schema: {str(exc).splitlines()[0]}", file=path,
            fix="regenerate with tools/build_reference.py",
        ) from exc


def validate_baselines(
    df: pl.DataFrame, path: Path, *, models: set[str], gpus: set[str], conventions: set[str],
) -> None:
    """Every id known, every row cited, no duplicate ids, at least one figure per row."""

    def fail(row_index: int, column: str, message: str, expected: str | None = None) -> None:
        raise ReferenceDataError(message, file=path, line=row_index + 2, field=column,
                                 expected=expected,
                                 fix="correct the row or regenerate with tools/build_reference.py")

    for column in REQUIRED:
        nulls = df.get_column(column).is_null()
        if nulls.any():
            fail(int(nulls.arg_true()[0]), column, f"{column} is empty")
    dup = df.get_column("baseline_id").is_duplicated()
    if dup.any():
        i = int(dup.arg_true()[0])
        fail(i, "baseline_id", f"duplicate baseline_id {df['baseline_id'][i]!r}")
    checks: list[tuple[str, set[str], str]] = [
        ("model", models, "a model id from models.toml"),
        ("gpu", gpus, "a GPU id from gpus.toml"),
        ("precision", set(PRECISIONS), " / ".join(PRECISIONS)),
        ("task", set(TASKS), " / ".join(TASKS)),
        ("flops_convention", conventions, "a convention named in cmax.reference.flops"),
    ]
    for column, allowed, expected in checks:
        bad = ~df.get_column(column).is_in(sorted(allowed))
        if bad.any():
            i = int(bad.arg_true()[0])
            fail(i, column, f"unknown {column} {df[column][i]!r}", expected)
    workload_ok = (df["workload"] == df["model"]) | (
        df["workload"] == df["model"] + "-" + df["task"])
    if not workload_ok.all():
        i = int((~workload_ok).arg_true()[0])
        fail(i, "workload", f"workload {df['workload'][i]!r} is not model[-task]")
    positive = ["num_gpus", "seq_len", "gbs", "step_time_s", "tokens_per_s_per_gpu",
                "model_tflops_per_gpu", "mfu_pct"]
    for column in positive:
        bad = df.get_column(column) <= 0
        if bad.any():
            i = int(bad.arg_true()[0])
            fail(i, column, f"{column} must be positive, got {df[column][i]}")
    no_figure = (df["step_time_s"].is_null() & df["tokens_per_s_per_gpu"].is_null()
                 & df["model_tflops_per_gpu"].is_null())
    if no_figure.any():
        fail(int(no_figure.arg_true()[0]), "step_time_s", "row carries no performance figure")


def _version(text: str | None) -> tuple[int, ...]:
    """Numeric parts padded to four, so 26.06.01 sorts after 26.06."""
    parts = [int(p) for p in re.findall(r"\d+", text or "")][:4]
    return tuple(parts + [0] * (4 - len(parts)))


def latest_sort_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """Sort key whose *smallest* value is the "latest" row (see docs/reference.md)."""
    date = row["source_date"]
    ordinal = date.toordinal() if date is not None else 0
    container_version = _version((row.get("container") or "").rsplit(":", 1)[-1])
    return (
        -ordinal,
        tuple(-v for v in container_version),
        tuple(-v for v in _version(row.get("recipe_release"))),
        bool(row.get("alternate")),
        row.get("erratum") is not None,
        row["baseline_id"],
    )


def select_latest(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not rows:
        return None
    return min(rows, key=latest_sort_key)
