"""Suspect nodes: pairwise elimination, per-process times, dcgmi diag; a healthy set lists none."""

from __future__ import annotations

import shutil
from pathlib import Path

from cmax.ingest import ingest
from cmax.ingest.evidence import Evidence
from cmax.score.nodes import network_pairs, suspect_nodes
from cmax.submission.bundle import open_bundle
from tests.fakes import manifest_text
from tests.paths import DATA

NCCL = DATA / "nccl"
MANIFEST = manifest_text('[[nccl]]\npath = "net"', nodes=4)


def _evidence(tmp_path: Path, *names: str) -> Evidence:
    net = tmp_path / "net"
    net.mkdir()
    for name in names:
        src = NCCL / name
        if src.is_dir():
            shutil.copytree(src, net / src.name)
        else:
            shutil.copy(src, net / src.name)
    (net / "README.md").write_text("how the pairs were run\n")  # not evidence: skipped
    (tmp_path / "cmax.toml").write_text(MANIFEST)
    with open_bundle(tmp_path) as bundle:
        return ingest(bundle)


def test_pairwise_runs_name_the_node_in_every_slow_pair(tmp_path: Path) -> None:
    evidence = _evidence(tmp_path, "pairs")
    pairs = network_pairs(evidence)
    assert len(pairs) == 6 and all(p.size_bytes == 1 << 33 for p in pairs)
    [suspect] = suspect_nodes(evidence, pairs)
    assert suspect.node == "node-c" and suspect.gpus == 8
    assert suspect.shortfall_pct == 59.2  # 149.97 vs the healthy median 367.83 GB/s
    assert len(suspect.sources) == 3 and all("node-c" in s for s in suspect.sources)
    assert suspect.sources[0].startswith("net/pairs/all_reduce_node-a_node-c.txt:30")
    assert "41% of the healthy bus bandwidth" in suspect.impact


def test_healthy_pairs_list_no_suspect(tmp_path: Path) -> None:
    net = tmp_path / "src"
    net.mkdir()
    for p in (NCCL / "pairs").iterdir():
        if "node-c" not in p.name:
            shutil.copy(p, net / p.name)
    evidence = _evidence(tmp_path, *[str(p) for p in sorted(net.iterdir())])
    assert len(network_pairs(evidence)) == 3 and suspect_nodes(evidence) == []


def test_per_process_times_and_dcgm_name_nodes(tmp_path: Path) -> None:
    evidence = _evidence(tmp_path, "all_reduce_2node.json", "dcgm")
    found = {s.node: s for s in suspect_nodes(evidence)}
    # node-a passed; gpu-node-05 has only a configuration finding (persistence mode off)
    assert set(found) == {"node-b"}
    node_b = found["node-b"]
    assert node_b.shortfall_pct == 20.0  # 25 % longer per collective -> 1 - 1/1.25
    assert any("nccl per-process time" in s for s in node_b.sources)
    assert any("dcgmi diag: memory" in s and "GPU 5" in s for s in node_b.sources)
    assert node_b.gpus == 8
