"""'Is my bandwidth normal?' has a sourced answer for H100, H200, B200, GB200 and GB300."""

from __future__ import annotations

import pytest

from cmax.reference import load_reference
from cmax.reference.network import find_network_baseline, gpu_applies


@pytest.mark.parametrize(("gpu", "interconnect", "nodes", "busbw"), [
    ("h100-sxm", "infiniband-ndr-8x400", 8, 368.0),
    ("h200", "infiniband-ndr-8x400", 8, 368.0),
    ("b200", "infiniband-ndr-8x400", 8, 368.0),
    ("gb200", "infiniband-ndr-4x400", 4, 184.0),
    ("gb300", "infiniband-xdr-4x800", 4, 368.0),
])
def test_every_current_gpu_has_a_sourced_multi_node_bar(gpu: str, interconnect: str,
                                                        nodes: int, busbw: float) -> None:
    rows = load_reference().network
    row = find_network_baseline(rows, interconnect, "all_reduce", nodes)
    assert row is not None and row["busbw_gbps"] == busbw and gpu_applies(row, gpu)
    assert "nccl-tests" in row["source"] and row["kind"] in ("measured", "stated", "derived")


def test_published_thresholds_are_kept_but_never_the_bar() -> None:
    rows = load_reference().network
    thresholds = {r["id"]: r for r in rows if r["kind"] == "threshold"}
    assert {"azure-ndv5-allreduce-threshold", "azure-ndv5-h200-allreduce-threshold",
            "azure-gb200-v6-allreduce-threshold"} <= set(thresholds)
    assert thresholds["azure-gb200-v6-allreduce-threshold"]["busbw_gbps"] == 432.0
    single = find_network_baseline(rows, None, "all_reduce", 1)
    assert single is not None and single["kind"] != "threshold"


def test_a_bar_sourced_for_other_gpus_does_not_apply() -> None:
    rows = load_reference().network
    nvlink = find_network_baseline(rows, None, "all_reduce", 1)  # 8 x H100 NVLS figure
    assert nvlink is not None and not gpu_applies(nvlink, "gb200")
    assert gpu_applies(nvlink, "H200") and gpu_applies({"gpus": []}, "gb300")


def test_the_bar_is_one_measured_at_a_size_the_sweep_holds() -> None:
    rows = load_reference().network
    fabric = "infiniband-ndr-8x400"
    old = find_network_baseline(rows, fabric, "all_reduce", 2)
    assert old is not None and old["message_bytes"] == 128 * 1024**2  # without the sweep
    both = find_network_baseline(rows, fabric, "all_reduce", 2, sizes=[128 * 1024**2, 8 << 30])
    assert both is not None and both["id"] == "clustermax-2node-128mib"
    large = find_network_baseline(rows, fabric, "all_reduce", 2, sizes=[1 << 30, 8 << 30])
    assert large is not None and large["id"] == "ib-ndr-8x400-2node"
    assert large["message_bytes"] == 8 << 30 and large["busbw_gbps"] == 368.0


@pytest.mark.parametrize(("gpu", "busbw"), [("gb200", 834.57), ("gb300", 842.63)])
def test_nvl72_intra_rack_bar_only_inside_one_nvlink_domain(gpu: str, busbw: float) -> None:
    rows = load_reference().network
    fabric = {"gb200": "infiniband-ndr-4x400", "gb300": "infiniband-xdr-4x800"}[gpu]
    rack = find_network_baseline(rows, fabric, "all_reduce", 18, sizes=[8 << 30],
                                 nvlink_domain=True, gpu=gpu)
    assert rack is not None and rack["scope"] == "nvlink-domain" and rack["busbw_gbps"] == busbw
    assert rack["message_bytes"] == 8 << 30 and (rack["min_nodes"], rack["max_nodes"]) == (2, 18)
    between = find_network_baseline(rows, fabric, "all_reduce", 36, sizes=[8 << 30])
    assert between is not None and between["scope"] == "inter-node"  # never the rack bar
    assert find_network_baseline(rows, None, "all_reduce", 18, nvlink_domain=True,
                                 gpu="h100-sxm") is None  # no NVL72 bar for an H100
