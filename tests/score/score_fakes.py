"""Small, hand-checkable inputs for the scoring, rating and pricing tests.

Builders for Evidence frames (the fake reference is the shared one in tests/fakes.py), so the
arithmetic can be pinned without depending on the ingesters, the validator or the real
reference tables.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from cmax.ingest.evidence import (
    AUDIT_SCHEMA,
    INCIDENTS_SCHEMA,
    MLPERF_SCHEMA,
    NCCL_SCHEMA,
    RUNS_SCHEMA,
    STEPS_SCHEMA,
    Evidence,
    EvidenceFile,
    conform,
    empty,
)
from cmax.ingest.facts import Fact
from cmax.submission.manifest import Manifest, parse_manifest

# reference Llama 3 interruptions per GPU-hour: 419 / (16,384 × 54 × 24)
LLAMA3_PER_GPU_HOUR = 419 / (16384 * 54 * 24)


def baseline(step_time_s: float | None = 10.0, *, gbs: int = 128, seq_len: int = 8192,
             num_gpus: int = 64, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "baseline_id": "test-baseline", "step_time_s": step_time_s, "gbs": gbs,
        "seq_len": seq_len, "num_gpus": num_gpus, "source": "test source @ v0",
        "recipe_release": None,
    }
    row.update(extra)
    return row


BASE_MANIFEST: dict[str, Any] = {
    "provider": {"name": "Test Cloud", "cluster": "test-a", "region": "test-1"},
    "system": {"gpu": "h100-sxm", "nodes": 8, "gpus_per_node": 8,
               "interconnect": "infiniband-ndr-8x400"},
    "benchmark": {"date": dt.date(2026, 10, 1), "reference": "latest"},
    "runs": [{"workload": "llama3.1-70b", "precision": "bf16", "num_gpus": 64,
              "log": "training/run0.log"}],
    "pricing": {"usd_per_gpu_hour": 2.10, "term_months": 12},
}


def manifest(**sections: Any) -> Manifest:
    """BASE_MANIFEST with whole top-level sections replaced (None removes a section)."""
    data = copy.deepcopy(BASE_MANIFEST)
    for key, value in sections.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return parse_manifest(data, source="test/cmax.toml")


def run_row(run_id: str = "runs[0]", *, workload: str = "llama3.1-70b", precision: str = "bf16",
            num_gpus: int = 64, gbs: int | None = 128, seq_len: int | None = 8192,
            status: str = "success", log: str = "training/run0.log",
            max_iteration: int | None = None, entry: int | None = 0) -> dict[str, Any]:
    """A runs-table row as ingest writes it for cmax.toml's ``[[runs]]`` ``entry``. Its
    workload, precision and GPU count are what the run's log states (:func:`stated_log`'s
    facts): the table keeps none of them (``conform`` drops them), the declaration is the
    entry's."""
    return {"run_id": run_id, "entry": entry, "workload": workload, "model": workload,
            "gpu": "h100-sxm",
            "num_gpus": num_gpus, "precision": precision, "seq_len": seq_len, "gbs": gbs,
            "framework": "nemo2", "source_file": log, "status": status,
            "max_iteration": max_iteration}


def step_rows(run_id: str, times: Mapping[int, float] | Sequence[float],
              tflops: Mapping[int, float] | None = None,
              log: str = "training/run0.log") -> list[dict[str, Any]]:
    items = times.items() if isinstance(times, Mapping) else enumerate(times)
    return [{"run_id": run_id, "iteration": i, "step_time_s": t,
             "tflops_per_gpu": (tflops or {}).get(i), "source_file": log, "line": i + 1}
            for i, t in items]


def flat_steps(run_id: str, window_time: float, *, warmup: float = 30.0,
               n: int = 50, log: str = "training/run0.log") -> list[dict[str, Any]]:
    """50 steps: a slow warm-up before 35, ``window_time`` in 35-44, slow again after."""
    times = {i: (window_time if 35 <= i <= 44 else warmup) for i in range(n)}
    return step_rows(run_id, times, log=log)


def evidence(m: Manifest | None = None, *, runs: Sequence[Mapping[str, Any]] = (),
             steps: Sequence[Mapping[str, Any]] = (), nccl: Sequence[Mapping[str, Any]] = (),
             incidents: Sequence[Mapping[str, Any]] = (),
             audit: Sequence[Mapping[str, Any]] = (),
             mlperf: Sequence[Mapping[str, Any]] = (), stated: bool = True) -> Evidence:
    """Evidence of these rows. ``stated``: each run's log states its experiment name (model,
    precision) and world size, as a NeMo 2 log's first lines do, so the run's claims are
    corroborated (cmax/resolve/run_claims.py); False for a log that states nothing about itself."""
    def frame(rows: Sequence[Mapping[str, Any]], schema: dict[str, pl.DataType]
              ) -> pl.DataFrame:
        if not rows:
            return empty(schema)
        return conform(pl.DataFrame([dict(r) for r in rows], infer_schema_length=None), schema)

    return Evidence(
        manifest=m or manifest(), root=Path("/nonexistent/bundle"),
        source=Path("/nonexistent/bundle"),
        runs=frame(runs, RUNS_SCHEMA), steps=frame(steps, STEPS_SCHEMA),
        nccl=frame(nccl, NCCL_SCHEMA), incidents=frame(incidents, INCIDENTS_SCHEMA),
        audit_checks=frame(audit, AUDIT_SCHEMA), mlperf=frame(mlperf, MLPERF_SCHEMA),
        files=[stated_log(r) for r in runs if r.get("source_file")] if stated else [],
    )


def stated_log(row: Mapping[str, Any]) -> EvidenceFile:
    """The record ingest keeps of a run's log whose header names the run as its row does."""
    name = f"pretrain_{row.get('workload')}_{row.get('precision')}_{row.get('num_gpus')}"
    facts = (Fact("experiment", name, 1), Fact("precision", str(row.get("precision")), 1,
                                                 "experiment name"),
             Fact("gpu_count", str(row.get("num_gpus")), 2))
    return EvidenceFile(path=str(row["source_file"]), kind="nemo2", sha256="0" * 64,
                        size_bytes=0, facts=facts)


def utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def incident(start: str, end: str | None, node: str | None = "n1", *, planned: bool = False,
             category: str | None = None, line: int = 2) -> dict[str, Any]:
    """A fault, or announced maintenance when ``planned`` (a planned row describing a fault is
    counted as one: cmax/resolve/incident_review.py)."""
    category = category or ("Host Maintenance" if planned else "Faulty GPU")
    return {"start": utc(start), "end": None if end is None else utc(end), "node": node,
            "gpu": None, "category": category, "planned": planned,
            "description": "announced 7 days ahead" if planned else "test",
            "source_file": "incidents.csv", "line": line}


def audit_row(check_id: str, category: str, status: str, *, criterion: str = "",
              observed: str | None = None) -> dict[str, Any]:
    return {"check_id": check_id, "category": category, "criterion": criterion or check_id,
            "status": status, "observed": observed, "minimum": None, "evidence": None,
            "source_file": "audit/audit.values.json"}
