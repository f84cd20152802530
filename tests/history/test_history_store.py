"""The history store: rows per run, atomic appends, no duplicates under concurrency."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.errors import CmaxError
from cmax.history import store as store_mod
from cmax.history.discover import RunRef, bundle_digest, discover_runs, parse_run_timestamp
from cmax.history.store import HistoryStore, rows_for_run
from tests.history.test_history_support import fake_assess, make_card, tree_bytes, write_run

WL = [["llama3.1-70b", "fp8", 512, 1.02, 1.01, 1.03],
      ["llama3.1-70b", "bf16", 512, 0.97, 0.96, 0.98]]


def _run(cluster: str, run_dir: str, digest: str = "d" * 64) -> RunRef:
    stamp = parse_run_timestamp(run_dir)
    assert stamp is not None
    return RunRef(cluster=cluster, run_dir=run_dir, timestamp=stamp, path=Path("/x"),
                  digest=digest)


def _entry(cluster: str, run_dir: str, **card: Any) -> tuple[RunRef, list[dict[str, Any]]]:
    run = _run(cluster, run_dir)
    return run, rows_for_run(run, make_card(cluster=cluster, workloads=WL, **card))


# -- discovery ---------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "expected"), [
    ("20260824-140519-482113", dt.datetime(2026, 8, 24, 14, 5, 19, 482113, tzinfo=dt.UTC)),
    ("20260824-140519", dt.datetime(2026, 8, 24, 14, 5, 19, tzinfo=dt.UTC)),
    ("2026-08-24", dt.datetime(2026, 8, 24, tzinfo=dt.UTC)),
    ("2026-08-24T14:05:19Z", dt.datetime(2026, 8, 24, 14, 5, 19, tzinfo=dt.UTC)),
    ("2026-08", dt.datetime(2026, 8, 1, tzinfo=dt.UTC)),
    ("20261324-000000", None),
    ("latest", None),
])
def test_run_timestamps(name: str, expected: dt.datetime | None) -> None:
    assert parse_run_timestamp(name) == expected


def test_discovery_orders_runs_and_names_what_is_not_a_run(tmp_path: Path) -> None:
    write_run(tmp_path, "b-cluster", "2026-02-01")
    write_run(tmp_path, "a-cluster", "20260301-000000")
    write_run(tmp_path, "a-cluster", "2026-01-15")
    write_run(tmp_path, "a-cluster", "last-week")
    raw = tmp_path / "a-cluster" / "20260401-000000" / "audit"
    raw.mkdir(parents=True)
    (raw / "audit.values.json").write_text("{}")
    (tmp_path / ".cmax-history").mkdir()
    (tmp_path / "README.txt").write_text("x")
    runs, bad = discover_runs(tmp_path)
    assert [(r.cluster, r.run_dir) for r in runs] == [
        ("a-cluster", "2026-01-15"), ("a-cluster", "20260301-000000"), ("b-cluster", "2026-02-01")]
    reasons = {p.path.name: p.error for p in bad}
    assert "not a timestamp" in reasons["last-week"]
    assert "ClusterMAX audit output without a cmax.toml" in reasons["20260401-000000"]
    assert "not a cluster folder" in reasons["README.txt"]
    assert [p.path.name for p in bad if not p.fatal] == ["README.txt"]


def test_bundle_digest_follows_content_not_timestamps(tmp_path: Path) -> None:
    run = write_run(tmp_path, "c", "2026-01-01", tier="Gold")
    first = bundle_digest(run)
    os.utime(run / "spec.json", (0, 0))
    assert bundle_digest(run) == first
    (run / "spec.json").write_text("{}")
    assert bundle_digest(run) != first


def test_missing_root_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(CmaxError, match="runs root not found"):
        discover_runs(tmp_path / "nope")


# -- rows ----------------------------------------------------------------------------------

def test_rows_for_run_carries_every_drift_input() -> None:
    run = _run("c1", "2026-03-01")
    card = make_card(
        workloads=WL, audit_fail=["vm_iommu", "acs_disabled", "vm_iommu"],
        audit_warning=["vboost"], sla=(99.9, 99.5, False, 10.0),
        period=("2026-02-01", "2026-02-28"), incidents=[("2026-02-03", 2), ("2026-02-10", 1)],
        network=[("all_reduce_perf", 16, 380.5, 0.98)])
    rows = rows_for_run(run, card)
    assert [r["row_kind"] for r in rows] == ["run", "workload", "workload", "network"]
    head = rows[0]
    assert head["tier"] == "Gold" and head["exemplar_pass"] is True
    assert head["audit_fail"] == ["acs_disabled", "vm_iommu"]
    assert head["audit_warning"] == ["vboost"]
    assert head["sla_met"] is False and head["sla_measured_pct"] == 99.5
    assert head["incident_dates"] == [dt.date(2026, 2, 3), dt.date(2026, 2, 10)]
    assert head["incident_counts"] == [2, 1]
    assert rows[1]["ratio"] == 1.02 and rows[1]["ci_low"] == 1.01
    assert rows[1]["baseline_tokens_per_s_per_gpu"] == 1000.0
    assert rows[3]["workload"] == "nccl all_reduce 16n" and rows[3]["num_gpus"] == 128
    assert {r["run_key"] for r in rows} == {run.run_key}


def test_repeated_workload_runs_keep_the_worst() -> None:
    card = make_card(workloads=[["llama3.1-70b", "fp8", 512, 0.99, 0.98, 1.00],
                                ["llama3.1-70b", "fp8", 512, 0.96, 0.95, 0.97],
                                ["llama3.1-70b", "fp8", 512, 0.98, 0.97, 0.99]])
    rows = [r for r in rows_for_run(_run("c1", "2026-03-01"), card)
            if r["row_kind"] == "workload"]
    assert [(r["ratio"], r["ci_low"]) for r in rows] == [(0.96, 0.95)]


def test_no_audit_is_null_not_an_empty_fail_list() -> None:
    rows = rows_for_run(_run("c1", "2026-03-01"), make_card())
    assert rows[0]["audit_fail"] is None


# -- append / read -------------------------------------------------------------------------

def test_append_round_trip_and_idempotence(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    batch = [_entry("c1", "2026-01-01"), _entry("c1", "2026-02-01", tier="Silver"),
             _entry("odd name/ü", "2026-01-01")]
    written = store.append(batch)
    assert len(written) == 3
    frame = store.read()
    assert frame.filter(pl.col("row_kind") == "run").height == 3
    assert frame.height == 9
    assert sorted(frame["cluster"].unique().to_list()) == ["c1", "odd name/ü"]
    assert (tmp_path / "h" / "cluster=odd%20name%2F%C3%BC").is_dir()
    before = tree_bytes(tmp_path / "h")
    assert store.append(batch) == []
    assert tree_bytes(tmp_path / "h") == before


def test_the_dataset_reads_as_a_hive_partitioned_parquet_dataset(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    store.append([_entry("c1", "2026-01-01"), _entry("c2", "2026-01-01")])
    frame = pl.read_parquet(tmp_path / "h" / "**" / "*.parquet", hive_partitioning=True)
    assert sorted(frame["cluster"].unique().to_list()) == ["c1", "c2"]
    assert frame.height == 6


def test_identical_history_files_for_identical_input(tmp_path: Path) -> None:
    batch = [_entry("c1", "2026-01-01"), _entry("c1", "2026-02-01")]
    HistoryStore(tmp_path / "a").append(batch)
    HistoryStore(tmp_path / "b").append(list(reversed(batch)))
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")


def test_a_second_writer_rechecks_under_the_lock(tmp_path: Path) -> None:
    first, second = HistoryStore(tmp_path / "h"), HistoryStore(tmp_path / "h")
    batch = [_entry("c1", "2026-01-01")]
    assert second.recorded() == {}  # both decided the run was new ...
    assert len(first.append(batch)) == 1
    assert second.append(batch) == []  # ... but only one wrote it
    assert store_frame_runs(tmp_path / "h") == [("c1", "2026-01-01")]


def store_frame_runs(path: Path) -> list[tuple[str, str]]:
    runs = HistoryStore(path).read().filter(pl.col("row_kind") == "run")
    return sorted(zip(runs["cluster"].to_list(), runs["run_dir"].to_list(), strict=True))


def test_crash_during_replace_leaves_the_history_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = HistoryStore(tmp_path / "h")
    store.append([_entry("c1", "2026-01-01")])
    before = tree_bytes(tmp_path / "h")

    def crash(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_mod.os, "replace", crash)
    with pytest.raises(CmaxError, match="cannot write the history: No space left"):
        store.append([_entry("c1", "2026-02-01")])
    monkeypatch.undo()
    assert tree_bytes(tmp_path / "h") == before
    assert store_frame_runs(tmp_path / "h") == [("c1", "2026-01-01")]
    store.append([_entry("c1", "2026-02-01")])
    assert store_frame_runs(tmp_path / "h") == [("c1", "2026-01-01"), ("c1", "2026-02-01")]


def test_a_killed_writer_leaves_a_temp_file_that_is_ignored_then_removed(
        tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    store.append([_entry("c1", "2026-01-01")])
    stray = tmp_path / "h" / "cluster=c1" / ".part-abc.parquet.tmp-4242"
    stray.write_bytes(b"PAR1 half a file")
    assert store_frame_runs(tmp_path / "h") == [("c1", "2026-01-01")]
    store.append([_entry("c1", "2026-02-01")])
    assert not stray.exists()


def test_a_damaged_part_file_names_itself(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    store.append([_entry("c1", "2026-01-01")])
    part = next((tmp_path / "h" / "cluster=c1").glob("part-*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    with pytest.raises(CmaxError) as info:
        store.read()
    assert part.name in info.value.one_line() and "re-scored" in info.value.one_line()


def test_a_foreign_parquet_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "h" / "cluster=c1"
    folder.mkdir(parents=True)
    pl.DataFrame({"a": [1]}).write_parquet(folder / "part-foreign.parquet")
    with pytest.raises(CmaxError, match="format version None"):
        HistoryStore(tmp_path / "h").read()


def test_history_path_that_is_a_file_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "h").write_text("x")
    with pytest.raises(CmaxError, match="history is not a folder"):
        HistoryStore(tmp_path / "h").read()


# -- two processes at once -----------------------------------------------------------------

def _audit_worker(root: str, history: str) -> int:
    from cmax.history import run_audit

    result = run_audit(root, history, assess=fake_assess, batch_runs=1)
    return len(result.scored)


def test_two_concurrent_audits_record_each_run_once(tmp_path: Path) -> None:
    for cluster in ("c1", "c2"):
        for month in range(1, 7):
            write_run(tmp_path / "root", cluster, f"2026-{month:02d}-01", workloads=WL)
    ctx = multiprocessing.get_context("spawn")
    args = (str(tmp_path / "root"), str(tmp_path / "h"))
    with ctx.Pool(2) as pool:
        scored = pool.starmap(_audit_worker, [args, args])
    assert sum(scored) == 12
    frame = HistoryStore(tmp_path / "h").read()
    runs = frame.filter(pl.col("row_kind") == "run")
    assert runs.height == 12
    assert runs.select("cluster", "run_dir").is_duplicated().sum() == 0
    assert frame.filter(pl.col("row_kind") == "workload").height == 24
