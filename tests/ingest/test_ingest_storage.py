"""Storage evidence: MLPerf Storage summaries (v1.0, v3.0), fio JSON (2.x, 3.x) and checkpoint
lines of training logs, read into the ``storage`` table in fixed units."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.errors import EvidenceError, EvidenceFormatError
from cmax.ingest.checkpoints import events
from cmax.ingest.detect import detect_format
from cmax.ingest.formats import Probe, StorageFormat, by_id
from cmax.pipeline import load
from tests.fakes import manifest_text
from tests.paths import DATA

STORAGE = DATA / "storage"
V1 = STORAGE / "mlperf_storage_v1.0"
V3 = STORAGE / "mlperf_storage_v3.0"
FIO = STORAGE / "fio"
LOGS = STORAGE / "checkpoints"


def rows(path: Path) -> pl.DataFrame:
    fmt = by_id(detect_format(path))
    assert isinstance(fmt, StorageFormat)
    frame: pl.DataFrame = fmt.frame(fmt.parse(Probe(path)), run_id="storage[0]",
                                    source_file=path.name)
    return frame


def one(path: Path) -> dict[str, Any]:
    frame = rows(path)
    assert frame.height == 1
    return frame.row(0, named=True)


def test_v1_training_summaries_of_three_submitters() -> None:
    """HPE resnet50/h100, WEKA resnet50/a100, DDN cosmoflow/h100 as published: the workload
    and emulated accelerator come from configs/overrides.yaml, the round from the folder."""
    hpe, weka, ddn = one(V1 / "HPE" / "summary.json"), one(V1 / "WEKA" / "summary.json"), \
        one(V1 / "DDN" / "summary.json")
    assert detect_format(V1 / "HPE" / "summary.json") == "mlperf-storage"
    assert (hpe["workload"], hpe["accelerator"], hpe["tool_version"]) == ("resnet50", "h100",
                                                                         "v1.0")
    assert (weka["workload"], weka["accelerator"], weka["accelerators"]) == ("resnet50", "a100",
                                                                            90)
    assert (ddn["workload"], ddn["accelerator"], ddn["hosts"]) == ("cosmoflow", "h100", 16)
    # train_io_mean_MB_per_second is MiB/s: 32,524 samples/s of ~114.7 KB records
    assert hpe["mib_per_s"] == pytest.approx(3556.45, abs=0.01)
    assert hpe["au_pct"] == pytest.approx(91.859, abs=1e-3) and hpe["au_pass"] is True
    assert hpe["au_min_pct"] == pytest.approx(90.733, abs=1e-3)


def test_host_memory_is_memtotal_not_the_misfilled_per_rank_array() -> None:
    """DDN ran 4 processes on each of 16 clients: host_memory_GB holds four sums of 370 GiB
    and twelve zeros; the host's MemTotal (97,104,348 kB) is 92.6 GiB."""
    data = json.loads((V1 / "DDN" / "summary.json").read_text())
    assert data["host_memory_GB"][0] == pytest.approx(370.4, abs=0.1)
    ddn = one(V1 / "DDN" / "summary.json")
    assert ddn["host_mem_gib"] == pytest.approx(97104348 / 1024**2)
    # the 5x rule then compares 7,840 GiB of data with 5 x 16 x 92.6 GiB = 7,409 GiB
    assert ddn["dataset_gib"] == pytest.approx(489.9989 * 16, abs=0.01)


def test_v3_training_reads_accelerator_from_the_run_metadata() -> None:
    row = one(V3 / "Alluxio" / "training" / "unet3d" / "run" / "20260704_050040" /
              "summary.json")
    assert (row["workload"], row["accelerator"], row["tool_version"]) == ("unet3d", "b200",
                                                                         "v3.0")
    assert row["mib_per_s"] == pytest.approx(44324.17, abs=0.01) and row["caching"] is False


def test_v3_checkpointing_save_and_load_in_gib() -> None:
    """Nebius llama3-70b (64 processes on 8 hosts) and FarmGPU llama3-1t (1,024 on 15):
    *_GB_per_second is GiB/s, checkpoint_size_GB GiB; the workload is the result layout's."""
    nebius = rows(V3 / "Nebius" / "checkpointing" / "llama3-70b" / "20260714_121444" /
                  "summary.json")
    assert nebius["direction"].to_list() == ["save", "load"]
    save = nebius.row(0, named=True)
    assert (save["workload"], save["accelerators"], save["hosts"]) == ("llama3-70b", 64, 8)
    assert save["gib_per_s"] == pytest.approx(19.455, abs=1e-3)
    assert save["size_gib"] == pytest.approx(911.21, abs=0.01)
    assert save["duration_s"] == pytest.approx(46.845, abs=1e-3)
    # host_memory_GB[0] is 234.8 (eight ranks' sums); MemTotal 30,778,328 kB is 29.35 GiB
    assert save["host_mem_gib"] == pytest.approx(29.35, abs=0.01)
    farm = rows(V3 / "FarmGPU" / "checkpointing" / "llama3-1t" / "20260724_174700" /
                "summary.json").row(0, named=True)
    assert (farm["workload"], farm["accelerators"], farm["gib_per_s"]) == (
        "llama3-1t", 1024, pytest.approx(169.67, abs=0.01))


def test_a_summary_without_memtotal_is_one_error(tmp_path: Path) -> None:
    data = json.loads((V1 / "HPE" / "summary.json").read_text())
    del data["host_meminfo"]["MemTotal"]
    bad = tmp_path / "summary.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match="MemTotal"):
        rows(bad)


def test_fio_ungrouped_jobs_of_different_runtimes_aggregate_over_the_wall_time() -> None:
    """Two readers (96 MiB at 48 MiB/s, 32 MiB at 32 MiB/s) in one group: 128 MiB over the
    longer job's 1.98 s is 64.6 MiB/s; their per-job bw adds up to 81.5 MiB/s."""
    row = one(FIO / "fio3_read_ungrouped_uneven.json")
    assert row["workload"] == "group 0: long, short" and row["tool_version"] == "fio-3.33"
    assert row["mib_per_s"] == pytest.approx(128 / 1.98)
    per_job = sum(j["read"]["bw"] for j in json.loads(
        (FIO / "fio3_read_ungrouped_uneven.json").read_text())["jobs"]) / 1024
    assert per_job == pytest.approx(81.5, abs=0.1)


def test_fio_2_reads_io_bytes_as_kib_and_clat_in_microseconds() -> None:
    """fio 2.15 printed io_bytes in KiB (no io_kbytes) and clat in us; read in the same
    units the same job gives under fio 3.33 (bytes, clat_ns)."""
    old, new = one(FIO / "fio2_read_ungrouped_uneven.json"), one(
        FIO / "fio3_read_ungrouped_uneven.json")
    assert old["tool_version"] == "fio-2.15"
    assert old["mib_per_s"] == pytest.approx(128 / 1.984)
    assert old["mib_per_s"] == pytest.approx(new["mib_per_s"], rel=0.01)
    assert 100 < old["lat_mean_us"] < 5000 and 50 < new["lat_mean_us"] < 5000


def test_fio_grouped_single_and_stonewalled_shapes() -> None:
    grouped = one(FIO / "fio3_randread_grouped.json")  # numjobs=4, group_reporting
    assert grouped["workload"] == "group 0: randread4"
    assert grouped["mib_per_s"] == pytest.approx(256 / 0.19)
    single = one(FIO / "fio3_seqwrite_single.json")
    assert (single["direction"], single["mib_per_s"]) == ("write", pytest.approx(256 / 0.527))
    two = rows(FIO / "fio3_two_groups.json")  # read, then (stonewall) write
    assert two["workload"].to_list() == ["group 0: rd", "group 1: wr"]
    assert two["direction"].to_list() == ["read", "write"]
    assert two["run_id"].to_list() == ["storage[0]#0", "storage[0]#1"]


def test_fio_job_with_an_error_is_refused(tmp_path: Path) -> None:
    data = json.loads((FIO / "fio3_seqwrite_single.json").read_text())
    data["jobs"][0]["error"] = 5
    bad = tmp_path / "fio.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match="ended with error 5"):
        rows(bad)


@pytest.mark.parametrize(("log", "tool", "expected"), [
    ("nemo2_llama3.1-8b_ckpt.log", "nemo2",
     [("load", None, 9.712), ("save", 24, 4.389), ("finalize", 24, 0.018),
      ("save", 49, 4.402), ("finalize", 49, 0.021)]),
    # Megatron's timer prints ms, the slowest rank last; the second on one line with its
    # "successfully saved" line as NVIDIA's recipe README quotes it
    ("megatron_llama3.1-70b_ckpt.log", "megatron",
     [("save", 25, 24.89513), ("save", 50, 25.01377)]),
    ("torchtitan_deepseek-v3_ckpt.log", "torchtitan",
     [("load", None, 54.49), ("save", 20, 5.53), ("save", 40, 5.53)]),
])
def test_checkpoint_lines_of_three_frameworks(log: str, tool: str,
                                              expected: list[tuple[str, int | None, float]]
                                              ) -> None:
    path = LOGS / log
    assert detect_format(path) == tool
    found = events(path, run_id="storage[0]", source_file=log, tool=tool)
    got = list(zip(found["direction"].to_list(), found["iteration"].to_list(),
                   found["duration_s"].to_list(), strict=True))
    assert [(d, i) for d, i, _ in got] == [(d, i) for d, i, _ in expected]
    assert [s for _, _, s in got] == pytest.approx([s for _, _, s in expected])
    assert found["line"].is_sorted() and found["tool"].unique().to_list() == [tool]


def test_a_log_without_checkpoint_lines_gives_no_event() -> None:
    path = DATA / "ingest" / "nemo2_llama3.1-8b_fp8.log"  # "checkpoint callback: nothing"
    assert events(path, run_id="s", source_file="x", tool="nemo2").height == 0


def _bundle(tmp_path: Path, files: dict[str, Path], entries: str) -> Path:
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, tmp_path / name)
    (tmp_path / "cmax.toml").write_text(manifest_text(entries))
    return tmp_path


def test_storage_entries_declare_what_the_files_do_not_state(tmp_path: Path) -> None:
    """A summary outside a v<round> folder takes the entry's round (named as declared); a
    training log's checkpoint events take the entry's GPUs and checkpoint size. The table
    holds what the files state (null there); the ledger the entries' declarations; the case's
    view of the rows fills them, naming the columns declared."""
    bundle = _bundle(tmp_path, {
        "storage/summary.json": V3 / "Nebius" / "checkpointing" / "llama3-70b" /
        "20260714_121444" / "summary.json",
        "train.log": LOGS / "megatron_llama3.1-70b_ckpt.log",
        "fio.json": FIO / "fio3_two_groups.json"},
        '[[storage]]\nresult = "storage/summary.json"\nround = "3.0"\n\n'
        '[[storage]]\nresult = "train.log"\ngpus = 64\ncheckpoint_gib = 911.2\n\n'
        '[[storage]]\nresult = "fio.json"\n')
    with load(bundle) as loaded:
        case = loaded.case
    kinds = {f.path: f.kind for f in case.files}
    assert kinds == {"storage/summary.json": "mlperf-storage", "train.log": "megatron",
                     "fio.json": "fio"}
    stated = case.tables["storage"]
    assert "declared" not in stated.columns
    assert stated["tool_version"][0] is None
    assert stated.filter(pl.col("tool") == "megatron")["accelerators"].to_list() == [None, None]
    assert [(c.subject, c.kind, c.value, c.status) for c in case.claims
            if c.subject.startswith("storage")] == [
        ("storage[0]", "storage_round", "v3.0", "declared"),
        ("storage[1]", "storage_gpus", "64", "declared"),
        ("storage[1]", "checkpoint_size", "911.2", "declared")]
    table = case.with_declared("storage")
    summary = table.filter(pl.col("run_id") == "storage[0]").row(0, named=True)
    # outside the tool's result layout nothing names the model: left null, never guessed
    assert (summary["tool_version"], summary["declared"]) == ("v3.0", ["tool_version"])
    assert summary["workload"] is None
    saves = table.filter(pl.col("tool") == "megatron")
    assert saves["accelerators"].to_list() == [64, 64]
    assert saves["size_gib"].to_list() == [911.2, 911.2]
    assert saves["declared"].to_list() == [["accelerators", "size_gib"]] * 2
    assert table.filter(pl.col("tool") == "fio").height == 2


def test_a_storage_entry_naming_another_kind_of_file_is_refused(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, {"audit.json": DATA / "ingest" / "example_audit.values.json"},
                     '[[storage]]\nresult = "audit.json"\n')
    with pytest.raises(EvidenceFormatError) as caught, load(bundle):
        pass
    assert caught.value.field == "storage[0].result"
    assert "not storage evidence" in str(caught.value)


def test_a_log_named_for_its_checkpoints_that_prints_none_is_an_empty_evidence_error(
        tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, {"train.log": DATA / "ingest" / "nemo2_llama3.1-8b_fp8.log"},
                     '[[storage]]\nresult = "train.log"\n')
    with load(bundle) as loaded:
        found = [f for f in loaded.findings if f.rule == "completeness.empty-evidence"]
    assert len(found) == 1 and "storage[0].result = 'train.log'" in found[0].message
