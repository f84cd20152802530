"""nccl-tests output in the shapes it is published in, nccl-tests JSON and dcgmi diag JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cmax.errors import EvidenceError, EvidenceFormatError
from cmax.ingest.detect import detect_format
from cmax.ingest.formats import dcgm_diag as dcgm
from cmax.ingest.formats import nccl_tests as nccl
from cmax.ingest.formats import nccl_tests_json as nccl_json
from cmax.ingest.summary import inspect_file
from tests.paths import DATA

NCCL = DATA / "nccl"


def _summary(name: str) -> dict[str, Any]:
    return inspect_file(NCCL / name)


@pytest.mark.parametrize(("name", "ranks", "nodes"), [
    ("doc_stripped_indented.txt", 8, 1),  # '#' stripped, every line indented
    ("tag_output_2node.txt", 16, 2),  # [1,0]<stdout>: prefixes
    ("srun_label_2node.txt", 16, 2),  # srun --label '0: ' prefixes
    ("per_iteration.txt", 8, 1),  # -I 1 columns
])
def test_prefixed_and_stripped_shapes_read_like_the_original(name: str, ranks: int,
                                                             nodes: int) -> None:
    assert detect_format(NCCL / name) == "nccl-tests"
    summary = _summary(name)
    assert (summary["ranks"], summary["nodes"], summary["rows"]) == (ranks, nodes, 5)
    assert summary["avg_busbw_source"] == "printed"


def test_elided_nvl72_list_solves_ranks_from_the_bandwidth_factor() -> None:
    summary = _summary("gb200_nvl72_elided.txt")
    assert summary["ranks"] == 72  # 5 device lines seen, highest rank 71
    notes = " ".join(summary["notes"])
    assert "solved from busbw/algbw" in notes and "n = 72" in notes


def test_list_starting_mid_way_is_not_counted_by_its_lines() -> None:
    summary = _summary("partial_device_list.txt")
    assert summary["ranks"] == 8 and summary["nodes"] is None  # 4 lines seen (ranks 4-7)


def test_rank_count_only_on_the_command_line() -> None:
    tests = nccl.parse_nccl_tests(NCCL / "sendrecv_cmdline_only.txt")
    assert tests[0].collective == "sendrecv" and tests[0].rank_count == 8
    assert "1 process(es) x 8 GPU(s)" in tests[0].notes[0]


def test_truncated_table_without_average_line() -> None:
    summary = _summary("truncated_no_avg.txt")
    assert summary["rows"] == 6 and summary["avg_busbw_source"] == "computed"
    notes = " ".join(summary["notes"])
    assert "truncated by whoever pasted it" in notes and "average is computed" in notes


def test_row_cut_mid_write_is_dropped_not_read_with_shifted_columns() -> None:
    tests = nccl.parse_nccl_tests(NCCL / "cut_mid_write.txt")
    frame = nccl.nccl_frame(tests, run_id="n", source_file="x", path=NCCL / "cut_mid_write.txt")
    assert tests[0].sizes == 4 and tests[0].cut_row == 22
    assert frame["wrong"].to_list() == [0] * 8  # never 959 from a shifted busbw column
    assert frame["size_bytes"].max() == 1 << 30


def test_cut_row_followed_by_a_new_run_is_dropped(tmp_path: Path) -> None:
    one = (NCCL / "cut_mid_write.txt").read_text()
    two = (NCCL / "per_iteration.txt").read_text()
    path = tmp_path / "all_reduce.txt"
    path.write_text(one + two)
    tests = nccl.parse_nccl_tests(path)
    assert [t.sizes for t in tests] == [4, 5] and tests[0].cut_row == 22


def test_malformed_row_inside_a_table_is_one_clear_error(tmp_path: Path) -> None:
    lines = (NCCL / "tag_output_2node.txt").read_text().splitlines()
    row = next(i for i, ln in enumerate(lines) if "134217728" in ln)
    lines[row] = lines[row].replace("sum", "sum  7")
    path = tmp_path / "all_reduce.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvidenceError) as info:
        nccl.parse_nccl_tests(path)
    assert info.value.line == row + 1 and "malformed nccl-tests data row" in info.value.message


def test_facts_name_gpus_hosts_counts_and_the_transport() -> None:
    facts = nccl.nccl_facts(nccl.parse_nccl_tests(NCCL / "socket_fallback_2node.txt"))
    kinds = {(f.kind, f.value) for f in facts}
    assert ("gpu", "NVIDIA H100 80GB HBM3") in kinds
    assert {("host", "gpu-a"), ("host", "gpu-b"), ("gpu_count", "16"),
            ("node_count", "2"), ("fabric", "Using network Socket")} <= kinds
    ib = nccl.nccl_facts(nccl.parse_nccl_tests(NCCL / "tag_output_2node.txt"))
    assert ("fabric", "Using network IB") in {(f.kind, f.value) for f in ib}


def test_nccl_json_v3_rows_ranks_and_slow_node() -> None:
    path = NCCL / "all_reduce_2node.json"
    assert detect_format(path) == "nccl-tests-json"
    tests, health = nccl_json.parse_nccl_json(path)
    test = tests[0]
    assert test.collective == "all_reduce" and test.rank_count == 16 and test.node_count == 2
    assert len(test.rows) == 10 and test.hosts == {"node-a", "node-b"}
    slow = health.filter(health["status"] == "fail")
    assert slow["node"].to_list() == ["node-b"] and slow["gpus"].to_list() == [8]
    summary = inspect_file(path)
    assert summary["slow_nodes"] == ["node-b"]
    assert any("p50 43786.7 us" in n and "CV 0.8%" in n for n in summary["notes"])


def test_nccl_json_wrong_version_and_cut_file(tmp_path: Path) -> None:
    text = (NCCL / "all_reduce_2node.json").read_text()
    old = tmp_path / "v2.json"
    old.write_text(text.replace('"version":3', '"version":2'))
    with pytest.raises(EvidenceError, match="format version 2"):
        nccl_json.parse_nccl_json(old)
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(EvidenceError, match="not valid JSON"):
        nccl_json.parse_nccl_json(cut)
    other = tmp_path / "other.json"
    other.write_text('{"results": []}')
    with pytest.raises(EvidenceFormatError, match="no version/config/results"):
        nccl_json.parse_nccl_json(other)


def test_dcgm_diag_failures_per_node() -> None:
    bad = dcgm.parse_dcgm(NCCL / "dcgm" / "node-b.json")
    fails = bad.filter(bad["status"] == "fail")
    assert set(fails["node"].to_list()) == {"node-b"} and fails["gpus"].to_list() == [8, 8]
    assert "row remapping failed" in fails["detail"][0]
    good = dcgm.parse_dcgm(NCCL / "dcgm" / "node-a.json")
    assert good["status"].to_list() == ["pass"]
    assert detect_format(NCCL / "dcgm" / "node-a.json") == "dcgm-diag"


def test_dcgm_diag_unknown_status_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "n1.json"
    path.write_text((NCCL / "dcgm" / "node-a.json").read_text().replace('"Pass"', '"Maybe"', 1))
    with pytest.raises(EvidenceError, match="unknown status"):
        dcgm.parse_dcgm(path)
    path.write_text('{"DCGM Diagnostic": []}')
    with pytest.raises(EvidenceFormatError, match="test_categories"):
        dcgm.parse_dcgm(path)


def test_hostile_numbers_are_no_traceback(tmp_path: Path) -> None:
    text = (NCCL / "all_reduce_2node.json").read_text()
    huge = tmp_path / "huge.json"
    huge.write_text(text.replace('"time":', '"time":' + "9" * 400 + ',"x":', 1))
    tests, _ = nccl_json.parse_nccl_json(huge)  # an integer beyond a double is inf, not a crash
    assert tests[0].rows[0]["time_us"] == float("inf")
    cmd = tmp_path / "sendrecv.txt"
    cmd.write_text((NCCL / "sendrecv_cmdline_only.txt").read_text().replace("-g 8", "-g ²"))
    assert nccl.parse_nccl_tests(cmd)[0].rank_count == 1  # '²' is no count: one process, -g absent


def test_list_cut_at_the_bottom_without_a_marker(tmp_path: Path) -> None:
    lines = (NCCL / "srun_label_2node.txt").read_text().splitlines()
    cut = [ln for ln in lines if "on   h200-018" not in ln]  # ranks 8-15 dropped, no '...'
    path = tmp_path / "all_gather.txt"
    path.write_text("\n".join(cut) + "\n")
    [test] = nccl.parse_nccl_tests(path)
    assert test.rank_count == 16 and test.node_count == 2  # srun -N 2 --ntasks-per-node=8
    assert "launcher command: 16 process(es)" in " ".join(test.notes)
    frame = nccl.nccl_frame([test], run_id="n", source_file="x", path=path)
    assert frame["hosts"].null_count() == frame.height  # a partial host list names no pair


def test_nccl_entry_holding_another_format_is_an_evidence_format_error(tmp_path: Path) -> None:
    """An [[nccl]] entry that points at a training log parses fine as that log, but it is not
    the format the key needs: EvidenceFormatError, naming the key and the file."""
    from cmax.ingest import ingest
    from cmax.submission.bundle import open_bundle
    from tests.fakes import manifest_text

    (tmp_path / "cmax.toml").write_text(manifest_text('[[nccl]]\npath = "n.txt"',
                                                      interconnect=None))
    (tmp_path / "n.txt").write_bytes((DATA / "ingest" / "nemo2_llama3.1-8b_fp8.log").read_bytes())
    with open_bundle(tmp_path) as bundle, pytest.raises(EvidenceFormatError) as info:
        ingest(bundle)
    assert info.value.field == "nccl[0].path" and "not nccl-tests output" in info.value.message
    assert info.value.file is not None and Path(info.value.file).name == "n.txt"


def test_exec_cmd_line_names_the_test_and_the_device_lines_count_the_ranks() -> None:
    """OCI's published 2 x 8 A100 output: 'EXEC_CMD=/opt/.../all_reduce_perf' before the run
    is a shell variable, not a one-process launch; 4 device lines up to rank 15 and the
    busbw/algbw factor give 16 ranks, the rank blocks per host give 2 nodes."""
    [test] = nccl.parse_nccl_tests(NCCL / "exec_cmd_2node.txt")
    assert (test.collective, test.rank_count, test.node_count) == ("all_reduce", 16, 2)
    notes = " ".join(test.notes)
    assert "n = 16" in notes and "ranks 0-7 on oke-" in notes and "ranks 8-15 on oke-" in notes


def test_the_nccl_library_version_is_a_software_fact() -> None:
    """OCI's output prints nccl-tests' 'nccl-library=22903' (line 6) and NCCL's own banner
    'NCCL version 2.29.3+cuda13.1' (line 15): one release, kept as the software it is."""
    tests = nccl.parse_nccl_tests(NCCL / "exec_cmd_2node.txt")
    facts = [f for f in nccl.nccl_facts(tests) if f.kind == "software"]
    assert [(f.value, f.line, f.where) for f in facts] == [("2.29.3", 6, "nccl")]
    assert nccl.nccl_summary(tests, NCCL / "exec_cmd_2node.txt")["nccl_version"] == "2.29.3"
    # nccl.h NCCL_VERSION: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9
    assert nccl.nccl_version("nccl-tests version 2.13.11 nccl-headers=2708 nccl-library=2708"
                             ) == "2.7.8"
    assert nccl.nccl_version("node1:20:20 [0] NCCL INFO NCCL version 2.18.5+cuda12.2"
                             ) == "2.18.5"
    assert nccl.nccl_version("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 version: 1") is None


def test_a_bare_binary_line_never_overrides_stronger_evidence(tmp_path: Path) -> None:
    path = tmp_path / "ar.txt"
    path.write_text((NCCL / "exec_cmd_2node.txt").read_text().replace(
        "EXEC_CMD=/opt/nccl-tests/bin/all_reduce_perf",
        "/opt/nccl-tests/bin/all_reduce_perf -b 1G -e 8G -f 2 -g 1 -n 100"))
    [test] = nccl.parse_nccl_tests(path)
    assert test.rank_count == 16 and test.node_count == 2
    assert any(n.startswith("set aside (below rank 15 listed): ranks from the command line")
               for n in test.notes)


def test_old_alltoall_rows_leave_the_headers_redop_blank() -> None:
    """NVIDIA/nccl-tests issue #78: the header names redop, the alltoall rows print nothing."""
    [test] = nccl.parse_nccl_tests(NCCL / "alltoall_blank_redop.txt")
    assert test.collective == "alltoall" and test.sizes == 2
    first = test.rows[0]
    assert (first["size_bytes"], first["time_us"], first["busbw_gbps"]) == (268435456, 520935.0,
                                                                             0.51)
    assert test.rows[1]["in_place"] and test.rows[1]["time_us"] == 519562.0
    assert "redop column blank" in " ".join(test.notes)


def test_datatype_all_is_rated_on_float_and_shows_the_others() -> None:
    summary = _summary("datatype_all.txt")
    assert summary["rows"] == 20 and summary["max_busbw_gbps"] == 479.7  # float, not bf16 498.2
    [note] = [n for n in summary["notes"] if "datatypes" in n]
    assert "10 datatypes measured: rated on float" in note and "bfloat16 498.2" in note


def test_dcgm3_leading_text_nulls_and_skipped_tests_are_kept() -> None:
    """DCGM 3.x: a line before the JSON, results indexed by GPU id (GPU 0 left out: null), a
    null test entry, and the PCIe and memory tests skipped: not evaluated, not a pass."""
    path = NCCL / "dcgm3" / "gpu-node-03.json"
    assert detect_format(path) == "dcgm-diag"
    frame = dcgm.parse_dcgm(path)
    summary = frame.row(frame.height - 1, named=True)
    assert summary["status"] == "warn" and summary["gpus"] == 7
    assert summary["detail"].startswith("results: 16 pass, 0 warn, 0 fail, 14 skip; "
                                        "not evaluated (skipped): PCIe, GPU Memory")
    assert set(frame.head(frame.height - 1)["status"]) == {"skip"}
    assert inspect_file(path)["not_evaluated"] == ["GPU Memory", "PCIe"]


def test_dcgm_persistence_mode_is_configuration_not_a_hardware_fault() -> None:
    frame = dcgm.parse_dcgm(NCCL / "dcgm" / "gpu-node-05.json")
    config = frame.filter(frame["check"].str.starts_with(dcgm.CONFIG_CHECK))
    assert config.height == 8 and set(config["status"]) == {"fail"}  # DCGM's status, kept
    assert "Persistence mode for GPU 0 is disabled" in config["detail"][0]
    assert frame["status"][-1] == "warn"  # the node is not failed for a setting
    hardware = dcgm.parse_dcgm(NCCL / "dcgm" / "node-b.json")
    assert hardware["status"][-1] == "fail"  # row remapping failed: hardware
    assert not hardware["check"].str.starts_with(dcgm.CONFIG_CHECK).any()


@pytest.mark.parametrize(("name", "ranks", "domains"), [
    ("gb200_one_rack.txt", 72, 1), ("gb200_two_racks.txt", 144, 2)])
def test_nvlink_domains_from_nccl_mnnvl_lines(name: str, ranks: int, domains: int) -> None:
    [test] = nccl.parse_nccl_tests(NCCL / "nvl72" / name)
    assert (test.rank_count, test.node_count, test.nvlink_domains) == (ranks, ranks // 4, domains)
    facts = [f for f in nccl.nccl_facts([test]) if f.kind == "nvlink_domain"]
    assert len(facts) == ranks // 4 and facts[0].value.startswith("fabric 3143b15bc2cd192b")
    assert ("split across NVLink domains" in " ".join(test.notes)) == (domains > 1)


def test_racks_from_host_names(tmp_path: Path) -> None:
    text = (NCCL / "srun_label_2node.txt").read_text()
    path = tmp_path / "all_gather.txt"
    path.write_text(text.replace("h200-017", "gb-rack03-n17").replace("h200-018", "gb-rack04-n18"))
    [test] = nccl.parse_nccl_tests(path)
    assert test.nvlink_domains == 2 and "host names: rack 3, rack 4" in " ".join(test.notes)
    [plain] = nccl.parse_nccl_tests(NCCL / "srun_label_2node.txt")
    assert plain.nvlink_domains is None  # no MNNVL line, no rack in the names: unknown
