"""The cmax.toml contract: valid manifests load; every error names key, value and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.errors import CmaxError
from cmax.ingest.evidence import declared_files
from cmax.submission.manifest import load_manifest
from tests.fakes import manifest_text, reliability_toml

GOOD = manifest_text("""
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
""", interconnect=None)


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
    assert declared_files(m) == [("runs[0].log", "training/a.log")]


def _error(tmp_path: Path, old: str, new: str, *, base: str = GOOD) -> CmaxError:
    """The error loading ``base`` with its first ``old`` changed to ``new`` raises."""
    assert old in base
    with pytest.raises(CmaxError) as info:
        load_manifest(write(tmp_path, base.replace(old, new, 1)))
    return info.value


def test_bad_toml_names_file_and_line(tmp_path: Path) -> None:
    error = _error(tmp_path, 'name = "Example Cloud"', "name = Example Cloud")
    assert error.line == 2
    assert str(tmp_path / "cmax.toml") in error.one_line()
    assert "invalid TOML" in error.one_line()


def test_unknown_key_is_rejected_not_ignored(tmp_path: Path) -> None:
    error = _error(tmp_path, "usd_per_gpu_hour", "usd_per_gpu_hr")
    assert error.field == "pricing.usd_per_gpu_hr"
    assert "unknown key" in error.one_line()


def test_bad_value_names_key_value_and_expectation(tmp_path: Path) -> None:
    error = _error(tmp_path, "nodes = 64", "nodes = -3")
    line = error.one_line()
    assert error.field == "system.nodes"
    assert "-3" in line and "greater than 0" in line


def test_missing_required_key(tmp_path: Path) -> None:
    error = _error(tmp_path, 'log = "training/a.log"\n', "")
    assert error.field == "runs[0].log"
    assert "missing" in error.one_line()


def test_bad_credit_tier(tmp_path: Path) -> None:
    assert _error(tmp_path, "[95.0, 100]", "[95.0, 180]").field == "sla.credits"


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(CmaxError, match="manifest not found"):
        load_manifest(tmp_path / "cmax.toml")


def test_conform_keeps_an_empty_table_empty() -> None:
    import polars as pl

    from cmax.ingest.evidence import RUNS_SCHEMA, conform

    assert conform(pl.DataFrame(), RUNS_SCHEMA).shape == (0, len(RUNS_SCHEMA))
    one = conform(pl.DataFrame({"run_id": ["a"]}), RUNS_SCHEMA)
    assert one.shape == (1, len(RUNS_SCHEMA)) and one["framework"].to_list() == [None]


RELIABILITY = reliability_toml()


def _refused(tmp_path: Path, old: str, new: str, *, base: str = GOOD) -> str:
    text = _error(tmp_path, old, new, base=base).one_line()
    assert "\n" not in text and len(text) < 600
    return text


@pytest.mark.parametrize(("new", "key", "expected"), [
    ('log = "' + "a/" * 5000 + 'x.log"', "runs[0].log", "at most 1024 characters"),
    ('log = "training/a\\u0000.log"', "runs[0].log", "without control characters"),
    ("log = " + "[" * 3000 + "]" * 3000, "", "nests arrays or tables too deeply"),
    ("log = " + "[" * 200 + "]" * 200, "runs[0].log", "valid string"),
    ("log = 1" + "0" * 5000, "", "beyond Python's conversion limit"),
])
def test_hostile_values_are_one_error(tmp_path: Path, new: str, key: str,
                                      expected: str) -> None:
    """A 10,000-character or NUL path, a deeply nested array and a 5,000-digit integer each
    crashed (OSError, ValueError, RecursionError) instead of naming the problem."""
    text = _refused(tmp_path, 'log = "training/a.log"', new)
    assert expected in text and (not key or f"{key}:" in text)


@pytest.mark.parametrize(("old", "new", "key"), [
    ("period_start = 2026-07-01", "period_start = 0", "reliability.period_start"),
    ("period_start = 2026-07-01", "period_start = 1999-12-31", "reliability.period_start"),
    ("period_end = 2026-09-30", "period_end = 9999-01-01", "reliability.period_end"),
    ("date = 2026-10-01", "date = 2019-06-30", "benchmark.date"),
])
def test_dates_outside_the_benchmarking_era(tmp_path: Path, old: str, new: str,
                                            key: str) -> None:
    """`period_start = 0` was read as 1970-01-01: a 56-year reliability period."""
    text = _refused(tmp_path, old, new, base=GOOD + RELIABILITY)
    assert f"{key}:" in text and "GPU benchmarking era" in text


def test_gpus_in_service_below_the_system_is_refused(tmp_path: Path) -> None:
    """`gpus_in_service = 1` on a 512-GPU system priced the cluster at $0.00, no finding."""
    text = _refused(tmp_path, "gpus_in_service = 512", "gpus_in_service = 1",
                    base=GOOD + RELIABILITY)
    assert "reliability.gpus_in_service:" in text and "512 GPUs the system declares" in text
    ok = load_manifest(write(tmp_path, (GOOD + RELIABILITY).replace(
        "gpus_in_service = 512", "gpus_in_service = 4096")))
    assert ok.reliability is not None and ok.reliability.gpus_in_service == 4096


@pytest.mark.parametrize("price", ["0", "0.0", "0.01", "-2.1", "245", "2.1e6"])
def test_zero_and_absurd_prices_are_refused(tmp_path: Path, price: str) -> None:
    text = _refused(tmp_path, "usd_per_gpu_hour = 2.10", f"usd_per_gpu_hour = {price}")
    assert "pricing.usd_per_gpu_hour:" in text


@pytest.mark.parametrize(("line", "key"), [
    ("watts_per_gpu = 1e9", "pricing.watts_per_gpu"),
    ("watts_per_gpu = 0", "pricing.watts_per_gpu"),
])
def test_absurd_power_is_refused(tmp_path: Path, line: str, key: str) -> None:
    text = _refused(tmp_path, "usd_per_gpu_hour = 2.10", f"usd_per_gpu_hour = 2.10\n{line}")
    assert f"{key}:" in text


@pytest.mark.parametrize("price", ["0.10", "1.60", "3.44", "100"])
def test_plausible_prices_load(tmp_path: Path, price: str) -> None:
    m = load_manifest(write(tmp_path, GOOD.replace("usd_per_gpu_hour = 2.10",
                                                   f"usd_per_gpu_hour = {price}")))
    assert m.pricing is not None and m.pricing.usd_per_gpu_hour == float(price)


@pytest.mark.parametrize(("old", "new", "key"), [
    ('gpu = "h100-sxm"', 'gpu = "h100-sxm"\ndriver = "' + "5" * 1_000_000 + '"', "system.driver"),
    ('precision = "FP8"', 'precision = "' + "f" * 201 + '"', "runs[0].precision"),
])
def test_labels_are_bounded(tmp_path: Path, old: str, new: str, key: str) -> None:
    """A megabyte driver string was accepted and carried into every report."""
    text = _refused(tmp_path, old, new)
    assert f"{key}:" in text and "at most 200 characters" in text


@pytest.mark.parametrize("line", ["vp = 18446744073709551616", "gbs = 1000000000000"])
def test_parallel_config_fits_int64_and_reason(tmp_path: Path, line: str) -> None:
    """vp = 2**64 passed the manifest and crashed the run table (Polars i128 -> i64)."""
    text = _refused(tmp_path, 'log = "training/a.log"', f'log = "training/a.log"\n{line}')
    assert f"runs[0].{line.split()[0]}:" in text


SERVING = """
[[inference]]
result = "serve.json"
model = "deepseek-r1-0528"
precision = "nvfp4"
gpus = 24
input_len = 8192
output_len = 1024
"""


@pytest.mark.parametrize(("split", "expected"), [
    ("prefill_gpus = 8\n", "prefill_gpus and decode_gpus together"),
    ("decode_gpus = 16\n", "prefill_gpus and decode_gpus together"),
    ("prefill_gpus = 8\ndecode_gpus = 8\n", "8 + 8 is not 24"),
])
def test_a_prefill_decode_split_is_whole_and_adds_up(tmp_path: Path, split: str,
                                                     expected: str) -> None:
    with pytest.raises(CmaxError) as err:
        load_manifest(write(tmp_path, GOOD + SERVING + split))
    text = str(err.value)
    assert "inference[0]" in text and expected in text and "Traceback" not in text
    ok = load_manifest(write(tmp_path, GOOD + SERVING + "prefill_gpus = 8\ndecode_gpus = 16\n"))
    assert (ok.inference[0].prefill_gpus, ok.inference[0].decode_gpus) == (8, 16)
