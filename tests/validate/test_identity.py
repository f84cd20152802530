"""Identity rules: how printed GPU names and precision settings are read (the trip and clean
bundle cases live with every other rule in test_validate_rules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.ingest.facts import Fact
from cmax.reference.gpus import gpu_family
from cmax.resolve.claims import precision_family
from cmax.resolve.claims import stated_precisions as _stated_precisions
from tests.validate.test_validate_rules import _facts, _log, after, fired, run_case


@pytest.mark.parametrize(("name", "family"), [
    ("NVIDIA H100 80GB HBM3", "h100"),
    ("NVIDIA-H100-80GB-HBM3", "h100"),
    ("h100-sxm", "h100"),
    ("NVIDIA H100 PCIe", "h100-pcie"),
    ("NVIDIA H100 NVL", "h100-nvl"),
    ("NVIDIA H200", "h200"),
    ("NVIDIA GH200 480GB", "gh200"),
    ("NVIDIA GB200", "gb200"),
    ("gb300-nvl72", "gb300"),
    ("Tesla V100-SXM2-32GB", "v100"),
    ("NVIDIA A100-SXM4-80GB", "a100"),
    ("some accelerator", None),
])
def test_gpu_family(name: str, family: str | None) -> None:
    assert gpu_family(name) == family


def test_precision_family() -> None:
    assert [precision_family(p) for p in ("bf16", "fp8", "fp8-cs", "mxfp8", "nvfp4", "fp16",
                                          "tf32")] == ["bf16", "fp8", "fp8", "fp8", "fp4",
                                                       "fp16", None]


def test_settings_every_run_prints_prove_nothing() -> None:
    # fp8 runs print bf16=True and precision=bf16-mixed too (fp8 on top of bf16 autocast), and
    # Megatron prints fp8_recipe's default whatever the format: none of these is a statement
    facts = [Fact("precision", v, line=i) for i, v in
             enumerate(["bf16=True", "precision=bf16-mixed", "fp8_recipe=delayed"])]
    assert _stated_precisions(facts) == []
    off = _stated_precisions([Fact("precision", "fp8=None", line=4)])
    assert [family for family, _ in off] == ["not-fp8"]
    named = _stated_precisions([Fact("precision", "fp8", line=1, where="experiment name")])
    assert [family for family, _ in named] == ["fp8"]


@pytest.mark.parametrize("facts", [
    (Fact("precision", "fp8=None", line=2), Fact("precision", "bf16=True", line=3)),
    (Fact("gpu_count", "512", line=2), Fact("experiment", "pretrain_llama3.1-405b_bf16_512",
                                                     line=1)),
    (Fact("gpu", "NVIDIA H100 80GB HBM3", line=5),),
])
def test_consistent_statements_do_not_trip(facts: tuple[Fact, ...], tmp_path: Path) -> None:
    found = fired(run_case(after(_facts(_log(0), *facts)), tmp_path))
    assert not {r for r in found if r.startswith("identity.")}


def test_fp8_declared_on_a_bf16_log_trips(tmp_path: Path) -> None:
    # run 1 is declared fp8; its log says fp8 is off
    findings = run_case(after(_facts(_log(1), Fact("precision", "fp8=None", line=7))), tmp_path)
    hits = [f for f in findings if f.rule == "identity.precision"]
    assert hits and hits[0].line == 7 and "fp8 off" in hits[0].message
    assert "'fp8'" in hits[0].message


def test_a_64_gpu_log_declared_as_512_by_its_node_count(tmp_path: Path) -> None:
    """Issue 25: `num_nodes: 8` (8 x 8 GPUs = 64) contradicts a 512-GPU claim."""
    findings = run_case(after(_facts(_log(0), Fact("node_count", "8", line=4))), tmp_path)
    hits = [f for f in findings if f.rule == "identity.gpu-count"]
    assert hits and "8 node(s) x 8 GPUs = 64" in hits[0].message and hits[0].line == 4


def test_the_declared_container_in_the_log_is_clean(tmp_path: Path) -> None:
    findings = run_case(after(_facts(_log(0), Fact("container", "nvcr.io#nvidia/nemo:25.04.01",
                                                   line=1))), tmp_path)
    assert "identity.software" not in fired(findings)


@pytest.mark.parametrize(("image", "fires"), [
    ("nvcr.io#nvidia/nemo:25.04", False),            # the baseline's release, no patch
    ("nvcr.io#nvidia/nemo:25.04.01", False),
    ("nvcr.io#nvidia/pytorch:25.09-py3", False),     # another image: not comparable
    ("nvcr.io#nvidia/nemo:25.09", True),
    ("nvcr.io#nvidia/nemo:24.12", True),
])
def test_the_logs_container_against_the_baselines(image: str, fires: bool,
                                                  tmp_path: Path) -> None:
    findings = run_case(after(_facts(_log(0), Fact("container", image, line=1))), tmp_path)
    hits = [f for f in findings if f.rule == "identity.baseline-software"
            and f.run_id == "runs[0]"]
    assert bool(hits) == fires
    if fires:
        assert "nemo:25.04.01" in hits[0].message and ":1" in hits[0].message
