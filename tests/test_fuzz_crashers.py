"""The crashers of the issue-39 fuzz campaign (tools/fuzz.py, the field-aware, YAML, SQLite
and per-format families), each rebuilt from a real-format seed by the smallest change that
crashed it: every one is now a result or one error line through ``cmax inspect``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cmax.cli import main
from cmax.errors import CmaxError
from cmax.submission.intake.llmb import read_job
from tests.paths import DATA
from tests.submission.intake.llmb_fakes import Job, config_text


def _bad_byte(data: bytes) -> bytes:
    """A byte that is no UTF-8 in the middle of the file (UnicodeDecodeError, exit 70)."""
    middle = len(data) // 2
    return data[:middle] + b"\xff" + data[middle:]


def _json(change: Callable[[Any], None]) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        doc = json.loads(data)
        change(doc)
        return json.dumps(doc).encode()
    return edit


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _set_all(doc: Any, values: dict[tuple[Any, ...], Any]) -> None:
    for path, value in values.items():
        _set(doc, path, value)


CASES: dict[str, tuple[str, Callable[[bytes], bytes], tuple[int, ...]]] = {
    # (seed under tests/data, the change, the exit codes allowed)
    "vllm: not UTF-8": ("inference/vllm_bench_serve_sweep.jsonl", _bad_byte, (2,)),
    "mlperf inference summary: not UTF-8": (
        "inference/mlperf/server_mlperf_log_summary.txt", _bad_byte, (2,)),
    "sa-bench: not UTF-8": ("inference/sa_bench_benchmark.out", _bad_byte, (2,)),
    "aiperf csv: a carriage return inside a field": (
        "inference/aiperf/profile_export_aiperf.csv",
        lambda d: d.replace(b"Time to First Token", b"Time to\r First Token", 1), (0, 2)),
    "aiperf json: telemetry endpoints a number": (
        "inference/aiperf/profile_export_aiperf.json",
        _json(lambda d: _set(d, ("telemetry_data", "endpoints"), 5)), (0, 2)),
    "aiperf json: extra inputs a number": (
        "inference/aiperf/profile_export_aiperf.json",
        _json(lambda d: _set(d, ("input_config", "input", "extra"), 3)), (0, 2)),
    "trtllm-bench: infinite request count": (
        "inference/trtllm_bench_report_llama3.3-70b.json",
        _json(lambda d: _set(d, ("request_info", "num_requests"), "Infinity")), (2,)),
    "trtllm-bench: token total beyond a float": (
        "inference/trtllm_bench_report_llama3.3-70b.json",
        _json(lambda d: _set_all(d, {("request_info", "num_requests"): 1e308,
                                     ("request_info", "avg_output_length"): 1e308})), (0, 2)),
    "dcgm exporter: a host label that is a number": (
        "ingest/power/dcgm_power_range.json",
        _json(lambda d: _set(d, ("data", "result", 0, "metric", "Hostname"), 1.5)), (0,)),
    "dcgm exporter: an infinite GPU index": (
        "ingest/power/dcgm_power_range.json",
        _json(lambda d: _set(d, ("data", "result", 0, "metric", "gpu"), 1e999)), (2,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_fuzz_crasher_is_a_result_or_one_error_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    seed, change, allowed = CASES[name]
    path = tmp_path / Path(seed).name
    path.write_bytes(change((DATA / seed).read_bytes()))
    code = main(["inspect", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert code in allowed, f"exit {code}: {err[-600:]}"
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("cmax: error: "), err
    else:
        json.loads(out)


@pytest.mark.parametrize(("old", "new", "says"), [
    ("launch_time: '2026-10-30T21:05:18.298517'", "launch_time: 2026-13-45", "month"),
    ("  model_size: 70b", "  model_size: " + "9" * 5000, "integer string conversion"),
])
def test_an_llmb_config_value_yaml_cannot_build_is_one_error(
        tmp_path: Path, old: str, new: str, says: str) -> None:
    """A date PyYAML's constructor cannot build (month 13), an integer past Python's 4,300
    digits: ValueError from yaml.load, exit 70. Now one error naming the file."""
    text = config_text(Job())
    assert old in text
    path = tmp_path / "llmb-config_3913022.yaml"
    path.write_text(text.replace(old, new))
    with pytest.raises(CmaxError, match=f"a YAML value cannot be read: .*{says}") as info:
        read_job(path, tmp_path)
    assert info.value.file == "llmb-config_3913022.yaml"


@pytest.mark.parametrize("scale", ["x", "true", "1e999", "-64", "0"])
def test_an_llmb_config_scale_that_is_no_gpu_count_is_one_error(
        tmp_path: Path, scale: str) -> None:
    """The package draft took int() of model_info.scale: 'x' was a ValueError (exit 70)."""
    path = tmp_path / "llmb-config_3913022.yaml"
    path.write_text(config_text(Job()).replace("  scale: 64", f"  scale: {scale}"))
    with pytest.raises(CmaxError, match=r"model_info.scale .* is not a GPU count") as info:
        read_job(path, tmp_path)
    assert info.value.line is not None
