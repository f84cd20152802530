"""cmax.pipeline: the ids a manifest names are resolved once, and every stage rates alike."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cmax.errors import ManifestError
from cmax.pipeline import assess, load
from cmax.reference import load_reference
from cmax.score import load_rubric
from cmax.score.network import network_results
from tests.paths import SAMPLES


def _sample(tmp_path: Path, old: str, new: str) -> Path:
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLES / "borealis-cloud", bundle)
    toml = bundle / "cmax.toml"
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new))
    return bundle


def test_an_unknown_interconnect_is_an_error_listing_the_known_ids(tmp_path: Path) -> None:
    bundle = _sample(tmp_path, 'interconnect = "infiniband-ndr-8x400"',
                     'interconnect = "roce-8x400"')
    with pytest.raises(ManifestError) as err, load(bundle):
        pass
    text = str(err.value)
    assert "system.interconnect" in text and "unknown interconnect 'roce-8x400'" in text
    assert "infiniband-ndr-8x400 (also" in text and "infiniband-hdr-8x200" in text


def test_an_interconnect_alias_resolves_to_its_fabric() -> None:
    ref = load_reference("latest")
    assert ref.interconnect("IB-NDR") == "infiniband-ndr-8x400"
    assert ref.interconnect("infiniband-ndr-8x400") == "infiniband-ndr-8x400"


def test_a_gpu_alias_rates_the_network_like_its_canonical_id(tmp_path: Path) -> None:
    """`gpu = "h100"` made the network unrated (score 0.0, 'no reference for this fabric')."""
    ref = load_reference("latest")
    rubric = load_rubric(None)
    results = []
    for gpu in ("h100-sxm", "h100"):
        bundle = _sample(tmp_path / gpu, 'gpu = "h100-sxm"', f'gpu = "{gpu}"')
        with load(bundle) as loaded:
            results.append(network_results(loaded.case, ref, rubric))
    canonical, alias = results
    assert [r.verdict for r in alias] == [r.verdict for r in canonical]
    assert all(r.verdict != "no_reference" for r in alias)
    assert [r.ratio for r in alias] == [r.ratio for r in canonical]


@pytest.mark.parametrize("gpu", ["h100"])
def test_a_gpu_alias_scores_the_network_category(tmp_path: Path, gpu: str) -> None:
    card = assess(_sample(tmp_path, 'gpu = "h100-sxm"', f'gpu = "{gpu}"'))
    nccl = next(c for c in card.categories if c.name == "networking")
    assert any("busbw" in line for line in nccl.evidence)


_LOAD_PROBE = """
import sys
from cmax.pipeline import load
print(",".join(sorted(m for m in ("cmax.scorecard", "cmax.score.core", "cmax.price.advice")
                      if m in sys.modules)))
"""


def test_validate_imports_no_rating_stage() -> None:
    """`cmax validate` (pipeline.load) never imports scoring, pricing or the scorecard models;
    only assess() does."""
    done = subprocess.run([sys.executable, "-c", _LOAD_PROBE], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "", f"cmax.pipeline imported {done.stdout.strip()}"
