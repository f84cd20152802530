"""docs/manifest.md lists every value the manifest's id keys accept, generated from the
reference data (cmax/submission/manifest_values.py) and kept up to date by this test."""

from __future__ import annotations

import shutil
from pathlib import Path

from cmax.pipeline import load
from cmax.reference import load_reference
from cmax.submission.manifest_values import allowed_values_markdown, render_into
from tests.paths import REPO, SAMPLES

DOC = REPO / "docs" / "manifest.md"


def test_docs_manifest_lists_the_current_values() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert render_into(text) == text, (
        "docs/manifest.md is stale: python -m cmax.submission.manifest_values docs/manifest.md")


def test_every_id_and_alias_is_listed() -> None:
    ref = load_reference("latest")
    block = allowed_values_markdown()
    names = [n for spec in ref.gpus.values() for n in (spec.id, *spec.aliases)]
    names += [n for arch in ref.models.values() for n in (arch.id, *arch.aliases)]
    names += ["infiniband-ndr-8x400", "bf16", "fp8"]
    assert all(f"`{n}`" in block for n in names)


def test_the_gpu_name_nvidia_smi_prints_is_accepted(tmp_path: Path) -> None:
    bundle = shutil.copytree(SAMPLES / "aurora-compute", tmp_path / "b")
    toml = bundle / "cmax.toml"
    toml.write_text(toml.read_text().replace('gpu = "h100-sxm"', 'gpu = "NVIDIA H100 80GB HBM3"'))
    with load(bundle) as loaded:
        assert loaded.reference.gpu(loaded.bundle.manifest.system.gpu).id == "h100-sxm"
