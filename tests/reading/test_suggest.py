"""A misspelt manifest key, GPU or workload gets a 'did you mean'; a far-off one gets none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.errors import ManifestError
from cmax.pipeline import load
from cmax.reading.suggest import did_you_mean
from cmax.reading.tomlfile import read_toml
from cmax.submission.manifest import parse_manifest
from tests.paths import SAMPLES


def _sample(tmp_path: Path, old: str, new: str) -> Path:
    root = shutil.copytree(SAMPLES / "aurora-compute", tmp_path / "b")
    toml = root / "cmax.toml"
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new, 1))
    return root


def test_misspelt_keys_get_the_contract_key() -> None:
    data = read_toml(SAMPLES / "aurora-compute" / "cmax.toml", what="manifest")
    data["pricing"] = {"usd_per_gpu_hr": 2.0}
    with pytest.raises(ManifestError, match="did you mean 'usd_per_gpu_hour'") as info:
        parse_manifest(data, source="cmax.toml")
    assert info.value.field == "pricing.usd_per_gpu_hr"
    data = read_toml(SAMPLES / "aurora-compute" / "cmax.toml", what="manifest")
    data["runs"][1]["precison"] = "fp8"
    with pytest.raises(ManifestError, match="did you mean 'precision'"):
        parse_manifest(data, source="cmax.toml")
    data = read_toml(SAMPLES / "aurora-compute" / "cmax.toml", what="manifest")
    data["system"]["zzzz"] = 1
    with pytest.raises(ManifestError) as far:
        parse_manifest(data, source="cmax.toml")
    assert "did you mean" not in str(far.value)


def test_misspelt_gpu_and_workload_values(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="did you mean 'h100-sxm'"), load(
            _sample(tmp_path / "g", 'gpu = "h100-sxm"', 'gpu = "h100-sxn"')):
        pass
    with pytest.raises(ManifestError, match=r"did you mean 'llama3\.1-405b'"), load(
            _sample(tmp_path / "w", 'workload = "llama3.1-405b"', 'workload = "llama3.1-450b"')):
        pass


def test_did_you_mean_keeps_the_known_spelling() -> None:
    hint = did_you_mean("GB-200", ["gb200", "b200", "h100-sxm"])
    assert hint == "did you mean 'gb200' or 'b200'?"
    assert did_you_mean("qqqq", ["gb200"]) is None
