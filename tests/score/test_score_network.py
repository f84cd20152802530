"""nccl-tests bus bandwidth vs the fabric baseline (MLPerf scoring: test_score_mlperf.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cmax.pipeline import load
from cmax.reference import load_reference
from cmax.score import load_rubric, score
from cmax.score.network import network_results
from cmax.scorecard import NetworkResult
from tests.fakes import FakeReference, manifest_text
from tests.paths import DATA
from tests.score.score_fakes import evidence, manifest

RUBRIC = load_rubric(None)
GIB = 1024**3
MIB = 1024**2
FABRIC = "infiniband-ndr-8x400"
NET = {(FABRIC, "all_reduce", 8): {"busbw_gbps": 370.0, "message_bytes": 8 * GIB,
                                   "source": "nccl-tests #290 (derived 8 × 46-48 GB/s)"}}


def sweep(busbw_at: dict[int, float], *, wrong: int = 0, nodes: int | None = 8,
          run_id: str = "nccl[0]") -> list[dict[str, Any]]:
    rows = []
    for size, bw in busbw_at.items():
        for in_place, factor in ((False, 1.0), (True, 0.5)):  # in-place rows must be ignored
            rows.append({"run_id": run_id, "collective": "all_reduce", "ranks": 64,
                         "nodes": nodes, "size_bytes": size, "dtype": "float",
                         "time_us": 1.0, "algbw_gbps": bw / 1.75, "busbw_gbps": bw * factor,
                         "wrong": wrong, "in_place": in_place, "source_file": "nccl/ar.txt",
                         "line": 10})
    return rows


def net(rows: list[dict[str, Any]], ref: FakeReference | None = None,
        **m: Any) -> NetworkResult:
    results = network_results(evidence(manifest(**m), nccl=rows),
                              ref or FakeReference(network=NET), RUBRIC)
    assert len(results) == 1
    return results[0]


def test_at_reference_passes_at_the_baseline_size() -> None:
    r = net(sweep({128 * MIB: 300.0, 8 * GIB: 370.0, 16 * GIB: 375.0}))
    assert r.large_message_bytes == 8 * GIB and r.busbw_gbps == 370.0
    assert r.max_busbw_gbps == 375.0 and r.ratio == 1.0 and r.verdict == "pass"
    assert r.series == [(128 * MIB, 300.0), (8 * GIB, 370.0), (16 * GIB, 375.0)]
    assert r.reference_busbw_gbps == 370.0 and r.nodes == 8 and r.file == "nccl/ar.txt"


def test_slow_fabric_fails() -> None:
    r = net(sweep({8 * GIB: 296.0}))  # 296 / 370 = 0.80 < 0.90
    assert r.ratio == pytest.approx(0.8) and r.verdict == "fail"


def test_baseline_size_missing_uses_largest() -> None:
    r = net(sweep({1 * GIB: 350.0, 4 * GIB: 366.3}))  # 366.3 / 370 = 0.99
    assert r.large_message_bytes == 4 * GIB and r.ratio == pytest.approx(0.99)
    assert r.verdict == "pass" and any("does not include" in n for n in r.notes)


def test_small_sweep_is_inconclusive() -> None:
    r = net(sweep({64 * MIB: 370.0, 128 * MIB: 370.0}))
    assert r.verdict == "inconclusive"


def test_wrong_results_fail_whatever_the_bandwidth() -> None:
    r = net(sweep({8 * GIB: 380.0}, wrong=3))
    assert r.verdict == "fail" and any("wrong result" in n for n in r.notes)


def test_no_fabric_baseline_or_no_interconnect() -> None:
    assert net(sweep({8 * GIB: 370.0}, nodes=4)).verdict == "no_reference"
    system = {"gpu": "h100-sxm", "nodes": 8, "gpus_per_node": 8}
    assert net(sweep({8 * GIB: 370.0}), system=system).verdict == "no_reference"


def test_nodes_derived_from_ranks() -> None:
    r = net(sweep({8 * GIB: 370.0}, nodes=None))  # 64 ranks / 8 per node
    assert r.nodes == 8 and r.verdict == "pass"


def test_a_bar_sourced_for_other_gpus_is_not_used() -> None:
    ref = FakeReference(network={(FABRIC, "all_reduce", 8): {
        **NET[(FABRIC, "all_reduce", 8)], "id": "h100-bar", "gpus": ["h100-sxm", "h200"]}})
    system = {"gpu": "gb200", "nodes": 8, "gpus_per_node": 8, "interconnect": FABRIC}
    r = net(sweep({8 * GIB: 370.0}), ref, system=system)
    assert r.verdict == "no_reference" and r.reference_busbw_gbps is None
    assert any("sourced for h100-sxm, h200, not gb200" in n for n in r.notes)
    assert net(sweep({8 * GIB: 370.0}), ref).verdict == "pass"  # h100-sxm: the bar applies


def test_runs_in_a_folder_median_per_size_and_split_by_node_count() -> None:
    rows = []
    for i, bw in enumerate((370.0, 372.0, 150.0)):  # three 8-node runs, one slow
        rows += [{**r, "source_file": f"nccl/run{i}.txt", "block": 0}
                 for r in sweep({8 * GIB: bw})]
    rows += [{**r, "source_file": "nccl/pair.txt", "block": 0, "nodes": 2}
             for r in sweep({8 * GIB: 480.0})]
    results = network_results(evidence(manifest(), nccl=rows),
                              FakeReference(network=NET), RUBRIC)
    assert [(r.nodes, r.busbw_gbps) for r in results] == [(8, 370.0), (2, 480.0)]
    assert "median of 3 runs" in results[0].notes[0] and results[0].verdict == "pass"
    assert results[1].verdict == "no_reference"  # no 2-node bar in this reference


def test_datatype_all_rates_the_baselines_datatype() -> None:
    rows = sweep({8 * GIB: 370.0})
    fast = [{**r, "dtype": "bfloat16", "busbw_gbps": r["busbw_gbps"] * 1.2} for r in rows]
    r = net(fast + rows)
    assert r.busbw_gbps == 370.0 and r.ratio == 1.0  # not the best of the datatypes
    assert any("rated on float" in n and "bfloat16 444" in n for n in r.notes)


def test_two_nodes_without_128mib_use_the_two_node_large_message_bar() -> None:
    r = net(sweep({GIB: 340.0, 8 * GIB: 360.0}, nodes=2), ref=load_reference())  # type: ignore[arg-type]
    assert r.reference_busbw_gbps == 368.0 and r.large_message_bytes == 8 * GIB
    assert r.ratio == pytest.approx(360 / 368)


def test_an_intra_node_sweep_is_rated_against_the_nvlink_bar_in_its_own_row() -> None:
    ref = FakeReference(network={(FABRIC, "all_reduce", 1): {
        "busbw_gbps": 480.0, "message_bytes": 8 * GIB, "source": "NVLink bar"}})
    r = net(sweep({8 * GIB: 470.0}, nodes=1), ref)
    assert r.nodes == 1 and r.reference_busbw_gbps == 480.0 and r.verdict == "pass"
    assert any("intra-node sweep" in n and "never decides the fabric gate" in n
               for n in r.notes)
    assert not any("intra-node" in n for n in net(sweep({8 * GIB: 370.0})).notes)


@pytest.mark.parametrize(("name", "nodes", "bar", "scope"), [
    ("gb200_one_rack.txt", 18, 834.57, "intra-rack"), ("gb200_two_racks.txt", 36, 184.0,
                                                       "inter-rack")])
def test_nvl72_intra_and_inter_rack_results_use_their_own_bars(
        tmp_path: Path, name: str, nodes: int, bar: float, scope: str) -> None:
    (tmp_path / "nccl").mkdir()
    shutil.copy(DATA / "nccl" / "nvl72" / name, tmp_path / "nccl" / "all_reduce.txt")
    text = manifest_text('[[nccl]]\npath = "nccl/all_reduce.txt"', nodes=nodes,
                         gpus_per_node=4, interconnect="infiniband-ndr-4x400")
    # the one-rack rows are CoreWeave's published run (crossfile.known-sweep in anyone else's
    # bundle): rated here as CoreWeave's own
    (tmp_path / "cmax.toml").write_text(text.replace('gpu = "h100-sxm"', 'gpu = "gb200"')
                                        .replace("Example Cloud", "CoreWeave"))
    with load(tmp_path) as loaded:
        card = score(loaded.case, loaded.findings, loaded.reference, RUBRIC)
    [r] = card.network
    assert r.reference_busbw_gbps == bar and r.verdict == "pass"
    assert any(n.startswith(scope) for n in r.notes)
    fabric = next(g for g in card.gates if "network bar" in g.name)
    # the intra-rack sweep runs over NVLink: it never decides the scale-out fabric gate
    assert (r.nvlink_domains == 1) == ("intra-node" in fabric.reason
                                       or "no inter-node" in fabric.reason)
