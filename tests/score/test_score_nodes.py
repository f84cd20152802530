"""Suspect nodes: pairwise elimination, per-process times, dcgmi diag; a healthy set lists none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.ingest import ingest
from cmax.ingest.evidence import Evidence
from cmax.pipeline import load
from cmax.score import score
from cmax.score.nodes import network_pairs, suspect_nodes
from cmax.score.rubric import load_rubric
from cmax.scorecard import SuspectNode
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


def _numbered_cluster(tmp_path: Path, diag: dict[str, str]) -> Path:
    """The pairwise runs of node-01..node-04 (node-03 slow) on a 4-node claim, and ``diag``:
    a dcgmi diag file per host named, copied from tests/data/nccl/dcgm."""
    net = tmp_path / "net"
    (net / "dcgm").mkdir(parents=True)
    names = {"node-a": "node-01", "node-b": "node-02", "node-c": "node-03", "node-d": "node-04"}
    for src in (NCCL / "pairs").iterdir():
        text, name = src.read_text(encoding="utf-8"), src.name
        for old, new in names.items():
            text, name = text.replace(old, new), name.replace(old, new)
        (net / name).write_text(text, encoding="utf-8")
    for host, source in diag.items():
        shutil.copy(NCCL / "dcgm" / source, net / "dcgm" / f"{host}.json")
    (tmp_path / "cmax.toml").write_text(MANIFEST)
    return tmp_path


def _suspects_and_rules(bundle: Path) -> tuple[dict[str, SuspectNode], set[str]]:
    with load(bundle) as loaded:
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric())
    return {s.node: s for s in card.suspect_nodes}, {f.rule for f in card.findings}


@pytest.mark.parametrize("diag", ["node-b.json", "node-a.json"])
def test_a_diagnostic_of_another_cluster_decides_no_node(tmp_path: Path, diag: str) -> None:
    """node-17's diagnostic (a failed memory test, or all healthy) beside node-01..04 on a
    4-node claim is another cluster's (crossfile.hosts-of-another-cluster): it names no
    suspect node of this one and clears none; node-03, slow in every pair, stays suspect."""
    found, rules = _suspects_and_rules(_numbered_cluster(tmp_path, {"node-17": diag}))
    assert "crossfile.hosts-of-another-cluster" in rules
    assert set(found) == {"node-03"}
    assert not any("dcgm" in s for s in found["node-03"].sources)


def test_the_clusters_own_failed_diagnostic_names_its_node(tmp_path: Path) -> None:
    found, rules = _suspects_and_rules(_numbered_cluster(tmp_path, {"node-02": "node-b.json",
                                                                    "node-01": "node-a.json"}))
    assert "crossfile.hosts-of-another-cluster" not in rules
    assert set(found) == {"node-02", "node-03"}
    assert any("net/dcgm/node-02.json" in s and "dcgmi diag: memory" in s
               for s in found["node-02"].sources)
