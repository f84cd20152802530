"""The history store: rows per run, atomic appends, no duplicates under concurrency."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.errors import CmaxError
from cmax.history.discover import RunRef, bundle_digest, discover_runs, parse_run_timestamp
from cmax.history.store import ADDED_COLUMNS, HistoryStore, frame_from_rows, rows_for_run
from tests.history.history_fakes import (
    FP8_BF16_70B,
    fake_assess,
    history_entry,
    make_card,
    run_ref,
    tree_bytes,
    write_run,
    write_v1_part,
)

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
    run = run_ref("c1", "2026-03-01")
    card = make_card(
        workloads=FP8_BF16_70B, audit_fail=["vm_iommu", "acs_disabled", "vm_iommu"],
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
    rows = [r for r in rows_for_run(run_ref("c1", "2026-03-01"), card)
            if r["row_kind"] == "workload"]
    assert [(r["ratio"], r["ci_low"]) for r in rows] == [(0.96, 0.95)]


def test_no_audit_is_null_not_an_empty_fail_list() -> None:
    rows = rows_for_run(run_ref("c1", "2026-03-01"), make_card())
    assert rows[0]["audit_fail"] is None


# -- append / read -------------------------------------------------------------------------

def runs_in(location: Path | str) -> list[tuple[str, str]]:
    runs = HistoryStore(location).read().filter(pl.col("row_kind") == "run")
    return sorted(zip(runs["cluster"].to_list(), runs["run_dir"].to_list(), strict=True))


def test_append_round_trip_and_idempotence(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    batch = [history_entry("c1", "2026-01-01"), history_entry("c1", "2026-02-01", tier="Silver"),
             history_entry("odd name/ü", "2026-01-01")]
    written = store.append(batch)
    assert len(written) == 3
    frame = store.read()
    assert frame.filter(pl.col("row_kind") == "run").height == 3
    assert frame.height == 9
    assert sorted(frame["cluster"].unique().to_list()) == ["c1", "odd name/ü"]
    before = tree_bytes(tmp_path / "h")
    assert store.append(batch) == []
    assert tree_bytes(tmp_path / "h") == before  # nothing new: no commit, no byte changed


def test_a_history_written_before_the_added_columns_reads_and_grows(tmp_path: Path) -> None:
    """A table of the columns before ADDED_COLUMNS (the SLA witness): read with them null,
    and the next append merges them into the table's schema."""
    from deltalake import write_deltalake

    old = frame_from_rows(history_entry("c1", "2026-01-01")[1], "c1").drop(list(ADDED_COLUMNS))
    write_deltalake(str(tmp_path / "h"), old, partition_by=["cluster"], mode="append")
    store = HistoryStore(tmp_path / "h")
    first = store.read()
    assert first.height == 3 and first["sla_witness"].null_count() == 3
    assert store.append([history_entry("c1", "2026-02-01")]) != []
    runs = store.read().filter(pl.col("row_kind") == "run").sort("run_dir")
    assert runs["run_dir"].to_list() == ["2026-01-01", "2026-02-01"]
    assert dict(pl.read_delta(str(tmp_path / "h")).schema).keys() >= ADDED_COLUMNS.keys()


def test_the_history_is_a_delta_table_partitioned_by_cluster(tmp_path: Path) -> None:
    from deltalake import DeltaTable

    store = HistoryStore(tmp_path / "h")
    store.append([history_entry("c1", "2026-01-01"), history_entry("c2", "2026-01-01")])
    table = DeltaTable(str(tmp_path / "h"))
    assert table.metadata().partition_columns == ["cluster"]
    frame = pl.read_delta(str(tmp_path / "h"))
    assert sorted(frame["cluster"].unique().to_list()) == ["c1", "c2"]
    assert frame.height == 6
    assert store.version() == 1  # 0: the empty table, 1: the append


def test_identical_history_for_identical_input(tmp_path: Path) -> None:
    batch = [history_entry("c1", "2026-01-01"), history_entry("c1", "2026-02-01")]
    HistoryStore(tmp_path / "a").append(batch)
    HistoryStore(tmp_path / "b").append(list(reversed(batch)))
    assert HistoryStore(tmp_path / "a").read().equals(HistoryStore(tmp_path / "b").read())


def test_a_second_writer_rechecks_before_it_commits(tmp_path: Path) -> None:
    first, second = HistoryStore(tmp_path / "h"), HistoryStore(tmp_path / "h")
    batch = [history_entry("c1", "2026-01-01")]
    assert second.recorded() == {}  # both decided the run was new ...
    assert len(first.append(batch)) == 1
    assert second.append(batch) == []  # ... but only one wrote it
    assert runs_in(tmp_path / "h") == [("c1", "2026-01-01")]


def test_a_stray_copy_of_a_data_file_is_not_counted_twice(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    store.append([history_entry("c1", "2026-01-01")])
    part = next((tmp_path / "h" / "cluster=c1").glob("*.parquet"))
    shutil.copy(part, part.with_name("copy-of-" + part.name))
    pl.DataFrame({"a": [1]}).write_parquet(part.with_name("foreign.parquet"))
    assert runs_in(tmp_path / "h") == [("c1", "2026-01-01")]
    assert store.read().height == 3


def test_a_damaged_data_file_is_one_clear_error(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    store.append([history_entry("c1", "2026-01-01")])
    part = next((tmp_path / "h" / "cluster=c1").glob("*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    with pytest.raises(CmaxError) as info:
        store.read()
    line = info.value.one_line()
    assert "history data file damaged (100 bytes, the log says" in line
    assert part.name in line and "--history-version" in line


def test_history_path_that_is_a_file_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "h").write_text("x")
    with pytest.raises(CmaxError, match="history is a file, not a folder"):
        HistoryStore(tmp_path / "h").read()


def test_versions_keep_what_the_history_said(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h")
    store.append([history_entry("c1", "2026-01-01")])
    store.append([history_entry("c1", "2026-02-01")])
    assert store.version() == 2
    assert store.read(1).filter(pl.col("row_kind") == "run")["run_dir"].to_list() == [
        "2026-01-01"]
    assert store.resolve_as_of(dt.datetime.now(dt.UTC)) == 2


# -- the Parquet history of cmax 0.1 ---------------------------------------------------------

def test_a_parquet_history_is_migrated_once_with_a_message(tmp_path: Path) -> None:
    history = tmp_path / "h"
    old = [history_entry("odd name/ü", "2026-01-01"), history_entry("odd name/ü", "2026-02-01")]
    part = write_v1_part(history, "cluster=odd%20name%2F%C3%BC", "odd name/ü", old)
    store = HistoryStore(history)
    assert store.migrate_parquet_v1() == 2
    assert runs_in(history) == [("odd name/ü", "2026-01-01"), ("odd name/ü", "2026-02-01")]
    assert store.read().height == 6
    assert not part.exists() and not (history / ".lock").exists()
    moved = history / "_parquet-v1-migrated" / "cluster=odd%20name%2F%C3%BC" / part.name
    assert moved.is_file()
    [note] = store.notes
    assert note.startswith("migrated 2 runs from the Parquet history of cmax 0.1")
    assert HistoryStore(history).migrate_parquet_v1() == 0  # once
    # the migrated runs keep their identity: the same runs are not recorded again
    assert store.append(old) == []


def test_an_interrupted_migration_finishes_without_duplicates(tmp_path: Path) -> None:
    history = tmp_path / "h"
    old = [history_entry("c1", "2026-01-01")]
    write_v1_part(history, "cluster=c1", "c1", old)
    HistoryStore(history)._merge(old)  # committed, then killed before moving the files
    assert HistoryStore(history).migrate_parquet_v1() == 1
    assert runs_in(history) == [("c1", "2026-01-01")]
    assert HistoryStore(history).read().height == 3


def test_a_foreign_file_in_an_old_history_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "h" / "cluster=c1"
    folder.mkdir(parents=True)
    pl.DataFrame({"a": [1]}).write_parquet(folder / f"part-{'0' * 20}.parquet")
    with pytest.raises(CmaxError, match="not a file of cmax's Parquet history"):
        HistoryStore(tmp_path / "h").migrate_parquet_v1()


# -- two processes at once -----------------------------------------------------------------

def _audit_worker(root: str, history: str) -> int:
    from cmax.history import run_audit

    result = run_audit(root, history, assess=fake_assess, batch_runs=1)
    return len(result.scored)


def test_two_concurrent_audits_record_each_run_once(tmp_path: Path) -> None:
    for cluster in ("c1", "c2"):
        for month in range(1, 7):
            write_run(tmp_path / "root", cluster, f"2026-{month:02d}-01", workloads=FP8_BF16_70B)
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


# -- kill -9 ----------------------------------------------------------------------------------

_KILL_CHILD = """
import sys
from cmax.history import run_audit
from tests.history.history_fakes import fake_assess

def progress(done, total, run):
    print(done, flush=True)

run_audit(sys.argv[1], sys.argv[2], assess=fake_assess, batch_runs=1, workers=1,
          progress=progress)
print("done", flush=True)
"""


def test_writers_killed_mid_pass_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    root, history = tmp_path / "root", tmp_path / "h"
    for cluster in ("c1", "c2"):
        for month in range(1, 5):
            write_run(root, cluster, f"2026-{month:02d}-01", workloads=FP8_BF16_70B)
    repo = Path(__file__).resolve().parents[2]
    # each writer is SIGKILLed right after it scored its k-th run: while appending the run
    # before, committing it, or starting the next; every pass picks up what is missing
    for kill_after in (1, 2, 3):
        with subprocess.Popen([sys.executable, "-c", _KILL_CHILD, str(root), str(history)],
                              cwd=repo, stdout=subprocess.PIPE, text=True) as child:
            assert child.stdout is not None
            for line in child.stdout:
                if line.strip() in (str(kill_after), "done"):
                    break
            child.send_signal(signal.SIGKILL)
            child.wait()
        frame = HistoryStore(history).read()  # readable after every kill
        assert frame.filter(pl.col("row_kind") == "run").select(
            "cluster", "run_dir").is_duplicated().sum() == 0
    from cmax.history import run_audit

    run_audit(root, history, assess=fake_assess, workers=1)
    frame = HistoryStore(history).read()
    runs = frame.filter(pl.col("row_kind") == "run")
    assert runs.height == 8 and runs.select("cluster", "run_dir").is_duplicated().sum() == 0
    assert frame.filter(pl.col("row_kind") == "workload").height == 16


def test_credentials_in_a_history_uri_are_refused_never_shown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cmax.cli import main

    with pytest.raises(CmaxError, match=r"holds credentials") as info:
        HistoryStore("s3://AKIAEXAMPLE:wJalrXUtnFEMI@bucket/cmax-history")
    assert "wJalrXUtnFEMI" not in str(info.value) and "AKIAEXAMPLE" not in str(info.value)
    assert info.value.file == "s3://bucket/cmax-history" and "AWS_PROFILE" in str(info.value)
    HistoryStore("s3://bucket/cmax-history")  # the standard form is untouched
    write_run(tmp_path / "runs", "east", "2026-01-01")
    code = main(["audit", str(tmp_path / "runs"), "--history", "s3://u:p4ss@b/h"])
    err = capsys.readouterr().err
    assert code == 2 and "p4ss" not in err and err.count("\n") == 1


def test_a_failed_history_write_is_one_line_without_native_noise(
        tmp_path: Path, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only or full history folder printed three Rust panics (14 lines) before the
    error, which said 'Failed to parse parquet'."""
    store = HistoryStore(tmp_path / "h")
    run = discover_runs(_one_run(tmp_path))[0][0]

    def panics(self: HistoryStore, runs: Any) -> list[RunRef]:
        os.write(2, b"thread '<unnamed>' panicked at parquet/src/arrow/arrow_writer.rs\n")
        raise OSError("Generic LocalFileSystem error: Failed to parse parquet")

    monkeypatch.setattr(HistoryStore, "_merge_once", panics)
    with pytest.raises(CmaxError, match="cannot write the history: Generic") as info:
        store.append([(run, [])])
    assert "panicked" not in capfd.readouterr().err
    assert "check free space and permissions" in str(info.value)

    def notes(self: HistoryStore, runs: Any) -> list[RunRef]:
        os.write(2, b"a native warning\n")
        return []

    monkeypatch.setattr(HistoryStore, "_merge_once", notes)
    assert store.append([(run, [])]) == []
    assert capfd.readouterr().err == "a native warning\n"  # kept when the write succeeds


def _one_run(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    write_run(root, "east", "2026-01-01")
    return root


def _create_at_once(location: str, barrier: Any) -> None:
    store = HistoryStore(location)
    barrier.wait()
    if not store.exists():
        store._create()


def test_concurrent_first_writers_create_one_table(tmp_path: Path) -> None:
    """Two writers that both found no table each committed one: two table ids."""
    import json

    context = multiprocessing.get_context("spawn")
    for attempt in range(3):
        location = tmp_path / f"h{attempt}"
        barrier = context.Barrier(2)
        procs = [context.Process(target=_create_at_once, args=(str(location), barrier))
                 for _ in range(2)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        assert [proc.exitcode for proc in procs] == [0, 0]
        ids = {json.loads(line)["metaData"]["id"]
               for log in sorted((location / "_delta_log").glob("*.json"))
               for line in log.read_text().splitlines() if "metaData" in json.loads(line)}
        assert len(ids) == 1, f"attempt {attempt}: table ids {ids}"


# -- what the run's judgement lets a ratio stand for ---------------------------------------

def test_a_withheld_run_is_recorded_as_its_judgement_says(tmp_path: Path) -> None:
    """Aurora's fp8 log declared bf16 (tests/sample_bundles.py): its 152.7 % is withheld by
    identity.precision and sanity.too-good-to-be-true. The history records it as withheld,
    not counting, in a row of its own that says the log states fp8, beside the honest bf16
    run of the declared key (which kept the row alone before, as the worst of the two)."""
    from cmax.pipeline import assess
    from tests.sample_bundles import fp8_run_declared_bf16

    card = assess(fp8_run_declared_bf16(tmp_path))
    rows = [r for r in rows_for_run(run_ref("c1", "2026-03-01"), card)
            if r["row_kind"] == "workload"]
    assert [(r["workload"], r["precision"], r["log_states"], r["verdict"], r["counted"],
             round(r["ratio"], 3)) for r in rows] == [
        ("llama3.1-405b", "bf16", "", "pass", True, 0.998),
        ("llama3.1-405b", "bf16", "precision=fp8", "withheld", False, 1.527),
        ("grok1-314b", "fp8", "", "pass", True, 1.003)]


def test_a_withheld_repeat_never_displaces_the_counted_worst() -> None:
    """Of two runs of one workload, the counted 1.05 is the row the trend reads, not the
    lower 0.99 whose pass an error withholds (which is no figure of the cluster's)."""
    card = make_card(workloads=[["llama3.1-70b", "fp8", 512, 1.05, 1.04, 1.06],
                                ["llama3.1-70b", "fp8", 512, 0.99, 0.98, 1.00]],
                     withheld={1: {}})
    rows = [r for r in rows_for_run(run_ref("c1", "2026-03-01"), card)
            if r["row_kind"] == "workload"]
    assert [(r["ratio"], r["verdict"], r["counted"]) for r in rows] == [(1.05, "pass", True)]
    alone = make_card(workloads=[["llama3.1-70b", "fp8", 512, 0.99, 0.98, 1.00]],
                      withheld={0: {}})
    rows = [r for r in rows_for_run(run_ref("c1", "2026-03-01"), alone)
            if r["row_kind"] == "workload"]
    assert [(r["ratio"], r["verdict"], r["counted"]) for r in rows] == [
        (0.99, "withheld", False)]


def test_rows_recorded_before_counted_read_as_their_verdict_can_say(tmp_path: Path) -> None:
    """A table of the columns before ``counted`` and ``log_states``: a workload row counts
    when its verdict is at the bar with a ratio (an unverified one never counted); the next
    append records what the judgement says."""
    from deltalake import write_deltalake

    _, rows = history_entry("c1", "2026-01-01")
    rows[1]["verdict"] = "unverified"
    old = frame_from_rows(rows, "c1").drop(["counted", "log_states"])
    write_deltalake(str(tmp_path / "h"), old, partition_by=["cluster"], mode="append")
    store = HistoryStore(tmp_path / "h")
    first = store.read().filter(pl.col("row_kind") == "workload")
    assert first.select("precision", "verdict", "counted", "log_states").rows() == [
        ("bf16", "pass", True, None), ("fp8", "unverified", False, None)]
    assert store.append([history_entry("c1", "2026-02-01", withheld={0: {}})]) != []
    new = store.read().filter((pl.col("row_kind") == "workload")
                              & (pl.col("run_dir") == "2026-02-01"))
    assert new.select("precision", "verdict", "counted", "log_states").rows() == [
        ("bf16", "pass", True, ""), ("fp8", "withheld", False, "")]
