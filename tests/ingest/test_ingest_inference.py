"""Serving benchmark results (cmax/ingest/formats/serving_bench.py): each tool's fields mapped
onto the inference table, one clear error for a malformed file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmax.errors import EvidenceError
from cmax.ingest import detect_format, inspect_file
from cmax.ingest.formats import Probe, by_id
from tests.paths import DATA

INFERENCE = DATA / "inference"


def _rows(path: Path) -> list[dict[str, object]]:
    fmt = by_id(detect_format(path))
    parsed = fmt.parse(Probe(path))
    frame = fmt.frame(parsed, run_id="inference[0]", source_file=path.name)  # type: ignore[attr-defined]
    return list(frame.iter_rows(named=True))


def test_vllm_result_fields() -> None:
    [row] = _rows(INFERENCE / "vllm_bench_serve_llama3.3-70b.json")
    assert row["tool"] == "vllm-bench-serve" and row["run_id"] == "inference[0]"
    assert row["output_tok_s"] == pytest.approx(4350.0)
    assert row["output_tokens"] == 3_000_000 and row["completed"] == 3000
    assert row["request_rate"] is None and row["concurrency"] is None  # "inf", null: offline
    assert row["gpus"] is None and row["gpu_name"] is None  # vLLM records neither
    assert row["temperature"] == 0.0  # --metadata temperature=0.0 is a string in the file
    assert row["precision"] == "fp8" and row["tpot_p99_ms"] == 436.8


def test_append_result_file_is_one_row_per_line() -> None:
    rows = _rows(INFERENCE / "vllm_bench_serve_sweep.jsonl")
    assert [r["run_id"] for r in rows] == ["inference[0]#0", "inference[0]#1", "inference[0]#2"]
    assert [r["line"] for r in rows] == [1, 2, 3]
    assert [r["concurrency"] for r in rows] == [64.0, 256.0, None]


def test_trtllm_report_fields() -> None:
    [row] = _rows(INFERENCE / "trtllm_bench_report_llama3.3-70b.json")
    assert (row["gpus"], row["gpu_name"], row["precision"]) == (2, "NVIDIA H100 80GB HBM3", "FP8")
    assert row["output_tok_s_per_gpu_reported"] == 2145.0 == row["output_tok_s"] / row["gpus"]
    assert row["duration_s"] == pytest.approx(3_000_000 / 4290)
    assert row["output_tokens"] == 3_000_000 and row["concurrency"] is None


def test_inspect_names_the_format() -> None:
    summary = inspect_file(INFERENCE / "trtllm_bench_report_llama3.3-70b.json")
    assert summary["format"] == "trtllm-bench" and summary["gpus"] == 2


@pytest.mark.parametrize(("text", "line", "what"), [
    ('{"duration": 1, "completed": 1, "total_output_tokens": 5, "output_throughput": 5,'
     ' "backend": "vllm"}\n{"duration": 2, ', 2, "not a JSON result object"),
    ('{"duration": 1, "completed": 1, "total_output_tokens": 5, "output_throughput": "x",'
     ' "backend": "vllm"}', 1, "no number for 'output_throughput'"),
])
def test_malformed_vllm_result_is_one_error(text: str, line: int, what: str,
                                            tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(EvidenceError) as caught:
        by_id("vllm-bench-serve").parse(Probe(path))
    assert caught.value.line == line and what in str(caught.value)
    assert "\n" not in str(caught.value)


def test_trtllm_report_without_a_throughput_is_refused(tmp_path: Path) -> None:
    data = json.loads((INFERENCE / "trtllm_bench_report_llama3.3-70b.json").read_text())
    data["performance"]["system_output_throughput_tok_s"] = None
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match="no output tok s"):
        by_id("trtllm-bench").parse(Probe(path))
