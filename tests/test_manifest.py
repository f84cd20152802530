"""The cmax.toml contract: valid manifests load; every error names key, value and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.errors import CmaxError
from cmax.manifest import load_manifest

GOOD = """
[provider]
name = "Example Cloud"
cluster = "example-h100-a"

[system]
gpu = "h100-sxm"
nodes = 64
gpus_per_node = 8

[benchmark]
date = 2026-10-01

[[runs]]
workload = "Llama3.1-70B"
precision = "FP8"
num_gpus = 512
log = "training/a.log"

[sla]
uptime_pct = 99.9
credits = [[99.0, 25], [99.9, 10], [95.0, 100]]

[pricing]
usd_per_gpu_hour = 2.10
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cmax.toml"
    path.write_text(text)
    return path


def test_good_manifest_loads_and_normalises(tmp_path: Path) -> None:
    m = load_manifest(write(tmp_path, GOOD))
    assert m.provider.name == "Example Cloud"
    assert m.runs[0].workload == "llama3.1-70b"
    assert m.runs[0].precision == "fp8"
    assert m.benchmark.reference == "latest"
    assert m.pricing is not None and m.pricing.term_months == 12
    # credit tiers sorted from the highest uptime threshold down
    assert m.sla is not None and [t[0] for t in m.sla.credits] == [99.9, 99.0, 95.0]
    assert m.declared_files() == [("runs[0].log", "training/a.log")]


def test_bad_toml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('name = "Example Cloud"', "name = Example Cloud"))
    with pytest.raises(CmaxError) as info:
        load_manifest(path)
    assert info.value.line == 3
    assert str(path) in info.value.one_line()
    assert "invalid TOML" in info.value.one_line()


def test_unknown_key_is_rejected_not_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("usd_per_gpu_hour", "usd_per_gpu_hr"))
    with pytest.raises(CmaxError) as info:
        load_manifest(path)
    assert info.value.field == "pricing.usd_per_gpu_hr"
    assert "unknown key" in info.value.one_line()


def test_bad_value_names_key_value_and_expectation(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("nodes = 64", "nodes = -3"))
    with pytest.raises(CmaxError) as info:
        load_manifest(path)
    line = info.value.one_line()
    assert info.value.field == "system.nodes"
    assert "-3" in line and "greater than 0" in line


def test_missing_required_key(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('log = "training/a.log"\n', ""))
    with pytest.raises(CmaxError) as info:
        load_manifest(path)
    assert info.value.field == "runs[0].log"
    assert "missing" in info.value.one_line()


def test_bad_credit_tier(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("[95.0, 100]", "[95.0, 180]"))
    with pytest.raises(CmaxError) as info:
        load_manifest(path)
    assert info.value.field == "sla.credits"


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(CmaxError, match="manifest not found"):
        load_manifest(tmp_path / "cmax.toml")


def test_conform_keeps_an_empty_table_empty() -> None:
    import polars as pl

    from cmax.evidence import RUNS_SCHEMA, conform

    assert conform(pl.DataFrame(), RUNS_SCHEMA).shape == (0, len(RUNS_SCHEMA))
    one = conform(pl.DataFrame({"run_id": ["a"]}), RUNS_SCHEMA)
    assert one.shape == (1, len(RUNS_SCHEMA)) and one["workload"].to_list() == [None]
