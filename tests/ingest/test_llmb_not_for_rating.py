"""llmb-run jobs launched with proxy, profiling or overrides, or whose node list cannot hold
their scale, are refused by name when a manifest run picks them from the job database.

The table is llmb-run's own ``jobs`` schema v2 (NVIDIA/exemplar-performance:
cli/llmb-run/src/llmb_run/job_history.py@e249aa3: ``profile_enabled``/``proxy`` integers,
overrides stored as ``json.dumps(value or {})``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cmax.errors import EvidenceError
from cmax.ingest.formats import llmb_sqlite
from cmax.submission.intake.flags import blockers

SCHEMA = (
    "CREATE TABLE jobs (job_id INTEGER PRIMARY KEY, launcher_type TEXT NOT NULL, "
    "workload_key TEXT, model_name TEXT, model_size TEXT, dtype TEXT, scale INTEGER, "
    "profile_enabled INTEGER NOT NULL DEFAULT 0, proxy INTEGER NOT NULL DEFAULT 0, "
    "log_dir TEXT, llmb_config_path TEXT, created_at TEXT, updated_at TEXT, slurm_state TEXT, "
    "elapsed TEXT, submit_time TEXT, node_list TEXT, exit_code TEXT, last_status_refresh TEXT, "
    "env_overrides_json TEXT, model_overrides_json TEXT, train_step_time_seconds REAL, "
    "tflops_per_gpu REAL, tokens_per_sec_per_gpu REAL, perf_parse_status TEXT)")
COLUMNS = ("job_id", "launcher_type", "workload_key", "model_name", "model_size", "dtype",
           "scale", "profile_enabled", "proxy", "node_list", "env_overrides_json",
           "model_overrides_json", "train_step_time_seconds", "tflops_per_gpu",
           "perf_parse_status")
CLEAN = {"job_id": 4101, "launcher_type": "megatron_bridge",
         "workload_key": "pretrain_llama3.1", "model_name": "llama3.1", "model_size": "70b",
         "dtype": "fp8", "scale": 512, "profile_enabled": 0, "proxy": 0,
         "node_list": "gpu-[001-064]", "env_overrides_json": "{}", "model_overrides_json": "{}",
         "train_step_time_seconds": 10.2, "tflops_per_gpu": 720.0,
         "perf_parse_status": "success"}


def _db(path: Path, **changes: object) -> Path:
    con = sqlite3.connect(path)
    con.execute(SCHEMA)
    row = {**CLEAN, **changes}
    con.execute(f"INSERT INTO jobs ({','.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})",
                [row[c] for c in COLUMNS])
    con.commit()
    con.close()
    return path


def _select(db: Path) -> llmb_sqlite.Job:
    job, _ = llmb_sqlite.select_job(llmb_sqlite.read_jobs(db), workload="llama3.1-70b",
                                    precision="fp8", num_gpus=512, selector=None, file=db,
                                    field="runs[0].log")
    return job


def test_clean_job_is_read(tmp_path: Path) -> None:
    assert _select(_db(tmp_path / "jobs.sqlite3")).status == "success"


@pytest.mark.parametrize(("change", "flag"), [
    ({"proxy": 1}, "proxy = true"),
    ({"profile_enabled": 1}, "profile_enabled = true"),
    ({"env_overrides_json": '{"NCCL_ALGO": "Ring"}'}, "env_overrides set (NCCL_ALGO)"),
    ({"model_overrides_json": '{"mbs": 2}'}, "model_overrides set (mbs)"),
    ({"node_list": "gpu-[001-008]"}, "node_list has 8 node(s), which cannot hold scale 512"),
])
def test_not_for_rating_job_is_refused_naming_the_flag(tmp_path: Path, change: dict[str, object],
                                                       flag: str) -> None:
    db = _db(tmp_path / "jobs.sqlite3", **change)
    with pytest.raises(EvidenceError, match="not for rating") as info:
        _select(db)
    assert flag in str(info.value) and "job 4101" in str(info.value)
    assert info.value.field == "runs[0].log"


def test_the_issue_example_names_every_flag(tmp_path: Path) -> None:
    db = _db(tmp_path / "jobs.sqlite3", proxy=1, model_overrides_json='{"gbs": 64}',
             node_list="gpu-[001-008]")
    with pytest.raises(EvidenceError) as info:
        _select(db)
    assert all(flag in str(info.value) for flag in ("proxy", "model_overrides", "node_list"))


def test_blockers_gpu_type_sets_the_node_size() -> None:
    assert blockers(hosts=128, scale=512, gpu_type="gb200") == []
    assert blockers(hosts=64, scale=512, gpu_type="gb300")[0].startswith("node_list has 64")
    assert blockers(hosts=64, scale=512, gpus_per_node=8) == []
    assert blockers(proxy="false", profile_enabled="0", env_overrides="{}",
                    model_overrides={}) == []
