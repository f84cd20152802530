"""Large-cluster reliability baselines (Llama 3's 54-day snapshot, Meta RSC-1/2).

The rates are derived here from the published counts, not typed in, so the arithmetic in a
report can be re-done from the paper's own numbers (formulas: reliability.md §2.10).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError
from cmax.reference._files import read_reference_toml


def load_reliability(path: Path, categories_path: Path) -> dict[str, Any]:
    data = read_reference_toml(path, what="reliability baselines")
    llama3 = data.get("llama3")
    if not isinstance(llama3, dict):
        raise ReferenceDataError("missing [llama3]", file=path)
    try:
        interruptions = int(llama3["interruptions"])
        gpus = int(llama3["gpus"])
        days = float(llama3["days"])
        per_node = int(llama3["gpus_per_node"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ReferenceDataError(f"bad [llama3] entry: {exc}", file=path, field="llama3") from exc
    categories = _read_categories(categories_path)
    if sum(c["count"] for c in categories) != interruptions:
        raise ReferenceDataError("category counts do not sum to the interruption count",
                                 file=categories_path, expected=str(interruptions))
    gpu_hours = gpus * days * 24.0
    out: dict[str, Any] = {
        "interruptions": interruptions,
        "gpus": gpus,
        "days": days,
        "gpu_hours": gpu_hours,
        "per_1000_gpu_days": interruptions / (gpus * days) * 1000.0,
        "per_1000_node_days": interruptions / (gpus / per_node * days) * 1000.0,
        "interruptions_per_gpu_hour": interruptions / gpu_hours,
        "mtbf_gpu_hours": gpu_hours / interruptions,
        "job_mtbf_hours": days * 24.0 / interruptions,
        "planned_interruptions": int(llama3.get("planned_interruptions", 0)),
        "total_interruptions": int(llama3.get("total_interruptions", interruptions)),
        "effective_training_time_min": float(llama3.get("effective_training_time_min", 0.0)),
        "categories": categories,
        "erratum": llama3.get("erratum"),
        "name": llama3.get("name"),
        "source": str(llama3["source"]),
        "source_date": llama3.get("source_date"),
        "others": {k: dict(v) for k, v in data.items() if k != "llama3" and isinstance(v, dict)},
    }
    return out


def _read_categories(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise ReferenceDataError(f"cannot read interruption categories: {exc}", file=path) from exc
    out = []
    for line, row in enumerate(rows, start=2):
        try:
            out.append({
                "category": row["category"], "count": int(row["count"]),
                "percent_printed": float(row["percent"]),
                "suspected_hardware": row["suspected_hardware"].strip().lower() == "true",
            })
        except (KeyError, ValueError) as exc:
            raise ReferenceDataError(f"bad category row: {exc}", file=path, line=line) from exc
    return out
