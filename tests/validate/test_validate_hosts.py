"""Host names across the evidence (cmax/resolve/hosts.py) and the network rules built on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.pipeline import load
from cmax.resolve.hosts import host_stem
from cmax.validate import validate
from tests.fakes import FakeReference
from tests.paths import SAMPLES
from tests.validate.validate_fakes import HonestBundle

RULES = {"network.hosts-outside-cluster", "network.hosts-beyond-claim"}


def test_host_stem_drops_the_node_number_and_the_domain() -> None:
    assert host_stem("borealis-h100-b-017") == "borealis-h100-b-"
    assert host_stem("EOS0001.nvidia.com") == "eos"
    assert host_stem("node-7") == "node-"


def _with_nccl_hosts(tmp_path: Path, hosts: list[str]) -> set[str]:
    """The honest bundle (its incidents name node-036 and node-014) whose 64-node nccl-tests
    sweep names ``hosts`` in its device lines, one per node."""
    bundle = HonestBundle(nccl_host_names=hosts)
    return {f.rule for f in validate(bundle.ingest(tmp_path), FakeReference())} & RULES


def test_hosts_of_the_clusters_naming_scheme_are_clean(tmp_path: Path) -> None:
    assert _with_nccl_hosts(tmp_path, [f"node-{i:03d}" for i in range(64)]) == set()


def test_one_foreign_host_among_the_clusters_trips(tmp_path: Path) -> None:
    hosts = [f"node-{i:03d}" for i in range(63)] + ["eos0042"]
    assert _with_nccl_hosts(tmp_path, hosts) == {"network.hosts-outside-cluster"}


@pytest.mark.parametrize("sample", ["borealis-cloud", "aurora-compute", "cinder-gpu"])
def test_the_samples_hosts_belong_to_their_clusters(sample: str) -> None:
    with load(SAMPLES / sample) as loaded:
        assert not {f.rule for f in loaded.findings} & RULES
