"""Fabric traps: a socket fallback and bandwidth far below the declared fabric are errors."""

from __future__ import annotations

import shutil
from pathlib import Path

from cmax.findings import Finding
from cmax.ingest import ingest
from cmax.reference import load_reference
from cmax.submission.bundle import open_bundle
from cmax.validate import validate
from tests.fakes import manifest_text
from tests.paths import DATA

MANIFEST = manifest_text('[[nccl]]\npath = "nccl/all_reduce.txt"', nodes=2)


def _network_findings(tmp_path: Path, sample: str) -> list[Finding]:
    (tmp_path / "nccl").mkdir()
    shutil.copy(DATA / "nccl" / sample, tmp_path / "nccl" / "all_reduce.txt")
    (tmp_path / "cmax.toml").write_text(MANIFEST)
    with open_bundle(tmp_path) as bundle:
        evidence = ingest(bundle)
    return [f for f in validate(evidence, load_reference()) if f.rule.startswith("network.")]


def test_socket_fallback_names_the_missing_device_and_plugin(tmp_path: Path) -> None:
    found = {f.rule: f for f in _network_findings(tmp_path, "socket_fallback_2node.txt")}
    assert set(found) == {"network.socket-fallback", "network.below-fabric"}
    sock = found["network.socket-fallback"]
    assert sock.severity == "error" and sock.file == "nccl/all_reduce.txt" and sock.line == 25
    assert "No device found" in sock.message and "No plugin found" in sock.message
    below = found["network.below-fabric"]
    assert "11.2 GB/s" in below.message and "socket/TCP fallback" in below.message


def test_rdma_run_at_fabric_speed_is_clean(tmp_path: Path) -> None:
    assert _network_findings(tmp_path, "tag_output_2node.txt") == []


def test_json_environment_forcing_sockets_is_a_socket_fallback(tmp_path: Path) -> None:
    (tmp_path / "nccl").mkdir()
    text = (DATA / "nccl" / "all_reduce_2node.json").read_text()
    (tmp_path / "nccl" / "all_reduce.json").write_text(
        text.replace('"NCCL_IB_HCA=mlx5"', '"NCCL_IB_DISABLE=1"'))
    (tmp_path / "cmax.toml").write_text(MANIFEST.replace("all_reduce.txt", "all_reduce.json"))
    with open_bundle(tmp_path) as bundle:
        evidence = ingest(bundle)
    [hit] = [f for f in validate(evidence, load_reference())
             if f.rule == "network.socket-fallback"]
    assert "NCCL_IB_DISABLE=1" in hit.message and hit.file == "nccl/all_reduce.json"


def _efa_findings(tmp_path: Path, provider: str) -> list[Finding]:
    text = (DATA / "nccl" / "tag_output_2node.txt").read_text()
    efa = (f"[1,0]<stdout>:node-a:2001:2001 [0] NCCL INFO NET/OFI Selected Provider is "
           f"{provider}\n[1,0]<stdout>:node-a:2001:2001 [0] NCCL INFO Using network AWS "
           "Libfabric\n")
    lines = [ln for ln in text.splitlines(keepends=True) if " NCCL INFO " not in ln]
    (tmp_path / "src").mkdir(parents=True)
    sample = tmp_path / "src" / "efa.txt"
    sample.write_text("".join(lines[:25]) + efa + "".join(lines[25:]))
    (tmp_path / "nccl").mkdir()
    shutil.copy(sample, tmp_path / "nccl" / "all_reduce.txt")
    (tmp_path / "cmax.toml").write_text(MANIFEST)
    with open_bundle(tmp_path) as bundle:
        evidence = ingest(bundle)
    facts = {f.value for f in evidence.files[0].facts if f.kind == "fabric"}
    assert {"Using network AWS Libfabric", f"NET/OFI Selected Provider is {provider}"} <= facts
    return [f for f in validate(evidence, load_reference()) if f.rule.startswith("network.")]


def test_efa_plugin_is_rdma_and_its_tcp_provider_is_a_fallback(tmp_path: Path) -> None:
    assert _efa_findings(tmp_path / "efa", "efa") == []
    [hit] = _efa_findings(tmp_path / "tcp", "tcp;ofi_rxm")
    assert hit.rule == "network.socket-fallback" and "tcp;ofi_rxm" in hit.message


def test_exec_cmd_output_is_two_nodes_with_consistent_rows(tmp_path: Path) -> None:
    """OCI's published output read as 1 rank gave 8 false consistency.nccl-busbw errors."""
    (tmp_path / "nccl").mkdir()
    shutil.copy(DATA / "nccl" / "exec_cmd_2node.txt", tmp_path / "nccl" / "all_reduce.txt")
    (tmp_path / "cmax.toml").write_text(MANIFEST)
    with open_bundle(tmp_path) as bundle:
        evidence = ingest(bundle)
    assert set(evidence.nccl["ranks"]) == {16} and set(evidence.nccl["nodes"]) == {2}
    rules = {f.rule for f in validate(evidence, load_reference())}
    assert "consistency.nccl-busbw" not in rules
