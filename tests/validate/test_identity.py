"""Identity rules: how printed GPU names and precision settings are read (the trip and clean
bundle cases live with every other rule in test_validate_rules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.ingest.facts import Fact
from cmax.reference.gpus import gpu_family
from cmax.resolve.claims import precision_family
from cmax.resolve.claims import stated_precisions as _stated_precisions
from tests.validate.test_validate_rules import Case, edit, fired, run_case


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


def _says(run: int, *lines: str) -> Case:
    """Run ``run``'s NeMo 2 log prints ``lines`` before its first step (after the experiment
    folder and world size: the first of them is line 3)."""
    return edit(lambda bundle: setattr(bundle.runs[run], "header_extra", list(lines)))


_MIXED_PRECISION_OFF = ("mixed_precision:", "  bf16: true", "  fp8: null")


@pytest.mark.parametrize("lines", [
    _MIXED_PRECISION_OFF,  # the bf16 run's configuration dump: fp8 off
    (),  # the experiment folder and world size the log states already
    ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-6f1c2a4e-0b3d-4c55-9e1a-2b7d8c9e0f11)",),
])
def test_consistent_statements_do_not_trip(lines: tuple[str, ...], tmp_path: Path) -> None:
    found = fired(run_case(_says(0, *lines), tmp_path))
    assert not {r for r in found if r.startswith("identity.")}


def test_fp8_declared_on_a_bf16_log_trips(tmp_path: Path) -> None:
    # run 1 is declared fp8; its configuration dump says fp8 is off
    findings = run_case(_says(1, *_MIXED_PRECISION_OFF), tmp_path)
    hits = [f for f in findings if f.rule == "identity.precision"]
    assert hits and hits[0].line == 5 and "fp8 off" in hits[0].message
    assert "'fp8'" in hits[0].message


def test_a_64_gpu_log_declared_as_512_by_its_node_count(tmp_path: Path) -> None:
    """Issue 25: `num_nodes: 8` (8 x 8 GPUs = 64) contradicts a 512-GPU claim."""
    findings = run_case(_says(0, "trainer:", "  num_nodes: 8"), tmp_path)
    hits = [f for f in findings if f.rule == "identity.gpu-count"]
    assert hits and "8 node(s) x 8 GPUs = 64" in hits[0].message and hits[0].line == 4


def _pyxis(image: str) -> Case:
    """Run 0's log opens with pyxis importing ``image`` (line 3)."""
    return _says(0, f"pyxis: importing docker image: {image}",
                 f"pyxis: imported docker image: {image}")


def test_the_declared_container_in_the_log_is_clean(tmp_path: Path) -> None:
    findings = run_case(_pyxis("nvcr.io#nvidia/nemo:25.04.01"), tmp_path)
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
    findings = run_case(_pyxis(image), tmp_path)
    hits = [f for f in findings if f.rule == "identity.baseline-software"
            and f.run_id == "runs[0]"]
    assert bool(hits) == fires
    if fires:
        assert "nemo:25.04.01" in hits[0].message and ":3" in hits[0].message
