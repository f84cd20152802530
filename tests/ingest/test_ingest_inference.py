"""Serving benchmark results (cmax/ingest/formats/_serving.py): each tool's fields mapped
onto the inference table, one clear error for a malformed file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.errors import EvidenceError, ManifestError
from cmax.ingest import detect_format, inspect_file
from cmax.ingest.evidence import entry_rows
from cmax.ingest.formats import Probe, by_id
from cmax.pipeline import load
from tests.fakes import manifest_text
from tests.paths import DATA

INFERENCE = DATA / "inference"


def _rows(path: Path) -> list[dict[str, Any]]:
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


_SGL = '"total_output": 5, "output_throughput": 5, "total_output_retokenized": 5'
MALFORMED = [
    ("vllm-bench-serve", '{"duration": 1, "completed": 1, "total_output_tokens": 5, '
     '"output_throughput": 5, "backend": "vllm"}\n{"duration": 2, ', 2,
     "not a JSON result object"),
    ("vllm-bench-serve", '{"duration": 1, "completed": 1, "total_output_tokens": 5, '
     '"output_throughput": "x", "backend": "vllm"}', 1, "no number for 'output_throughput'"),
    ("sglang-bench-serving", '{"duration": 1, "completed": 1, ' + _SGL + '}\n{"duration": 2, ',
     2, "not a JSON result object"),
    ("sglang-bench-serving", '{"duration": 1, "completed": 1.5, ' + _SGL + '}', 1,
     "'completed' is not a whole number"),
    ("sglang-bench-serving", '{"duration": null, "completed": 1, ' + _SGL + '}', 1,
     "no number for 'duration'"),
    ("sglang-bench-serving", '{"duration": 1, "completed": 1, ' + _SGL + '}\n[1, 2]', 2,
     "not an SGLang"),
    ("inferencex-agg", '[{"hw": "h200", "conc": 4, "isl": 1, "osl": 1, "output_tput_per_gpu": 1,'
     ' "model": "m", "precision": "fp8", "tput_per_gpu": 2, "tp": 8}, {"hw": "h200"}]', None,
     "row 1 is not an InferenceX result row"),
    ("inferencex-agg", '{"hw": "h200", "conc": 4, "isl": 1, "osl": 1, "output_tput_per_gpu": 1,'
     ' "model": "m", "precision": "fp8", "tput_per_gpu": 2, "tp": 2.5}', None,
     "the row: 'tp' is not a whole number"),
    ("inferencex-agg", '{"hw": "h200", "conc": 4, "isl": 1, "osl": 1, "output_tput_per_gpu": 1,'
     ' "model": "m", "tput_per_gpu": 2, "tp": 8}', None, "the row has no 'precision'"),
    ("inferencex-agg", '{"hw": "h200", "conc": "x", "isl": 1, "osl": 1, "output_tput_per_gpu":'
     ' 1, "model": "m", "precision": "fp8", "tput_per_gpu": 2}', None,
     "the row: concurrency is not a number"),
]


@pytest.mark.parametrize(("fmt", "text", "line", "what"), MALFORMED)
def test_malformed_result_is_one_error(fmt: str, text: str, line: int | None, what: str,
                                       tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(EvidenceError) as caught:
        by_id(fmt).parse(Probe(path))
    assert caught.value.line == line and what in str(caught.value)
    assert "\n" not in str(caught.value)


def test_trtllm_report_without_a_throughput_is_refused(tmp_path: Path) -> None:
    data = json.loads((INFERENCE / "trtllm_bench_report_llama3.3-70b.json").read_text())
    data["performance"]["system_output_throughput_tok_s"] = None
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match="no output tok s"):
        by_id("trtllm-bench").parse(Probe(path))


def test_sglang_jsonl_fields() -> None:
    rows = _rows(INFERENCE / "sglang_bench_serving_llama3.3-70b.jsonl")
    assert [r["tool"] for r in rows] == ["sglang-bench-serving"] * 3
    assert [r["concurrency"] for r in rows] == [64.0, 256.0, None]
    assert [r["request_rate"] for r in rows] == [None, None, None]  # Infinity: all at once
    offline = rows[2]
    assert offline["output_tokens"] == 3000 * 1024 and offline["completed"] == 3000
    assert offline["output_tok_s"] == pytest.approx(5000.0)
    assert offline["duration_s"] == pytest.approx(3000 * 1024 / 5000)
    assert (offline["input_len"], offline["output_len"]) == (1024, 1024)  # range ratio 1.0
    # SGLang records neither the model, the GPUs nor the failed requests
    assert offline["model"] is None and offline["gpus"] is None and offline["failed"] is None
    assert rows[0]["tpot_mean_ms"] == 25.0 and rows[0]["ttft_p99_ms"] == 504.0


def test_sglang_older_key_names_and_trace_rate(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({
        "backend": "sglang", "dataset_name": "mooncake", "request_rate": "trace",
        "duration": 10.0, "completed": 4, "total_input_tokens": 400,
        "total_output_tokens": 200, "total_output_tokens_retokenized": 199,
        "output_throughput": 20.0, "concurrency": 3.2}) + "\n")
    [row] = _rows(path)
    assert row["tool"] == "sglang-bench-serving" and row["output_tokens"] == 200
    assert row["scenario"].startswith("trace replay") and row["input_len"] is None
    assert row["concurrency"] == 3.2  # paced by the trace: never taken for an offline run


def test_inferencex_rows_state_gpus_and_interactivity() -> None:
    rows = _rows(INFERENCE / "inferencex_agg_bmk_h200.json")
    assert [r["run_id"] for r in rows] == ["inference[0]#0", "inference[0]#1", "inference[0]#2"]
    low = rows[0]
    assert (low["tool"], low["gpu_name"], low["gpus"], low["concurrency"]) == (
        "inferencex", "h200", 8, 4.0)
    assert low["output_tok_s_per_gpu_reported"] == 57.1
    assert low["output_tok_s"] == pytest.approx(57.1 * 8)  # tp x pp x pcp GPUs
    assert low["interactivity_tok_s_user"] == pytest.approx(1000 / 8.3)
    assert low["tpot_mean_ms"] == pytest.approx(8.3)  # seconds in the row, ms here
    assert (low["input_len"], low["output_len"]) == (1024, 1024)
    assert low["j_per_output_token"] == pytest.approx(402.5 * 8 / (57.1 * 8), rel=1e-5)
    assert low["duration_s"] is None and low["output_tokens"] is None  # rows keep no totals


def test_inferencex_disaggregated_row_divides_output_by_decode_gpus() -> None:
    [row] = _rows(INFERENCE / "inferencex_agg_gb200_disagg.json")
    assert (row["gpus"], row["prefill_gpus"], row["decode_gpus"]) == (24, 8, 16)
    assert row["output_tok_s"] == pytest.approx(1250.0 * 16)
    assert row["total_tok_s"] == pytest.approx(7500.0 * 24)
    assert row["scenario"] == "disaggregated, speculative decoding mtp"
    assert row["j_per_output_token"] is None  # no valid power measurement in the row


def test_inferencex_facts() -> None:
    path = INFERENCE / "inferencex_agg_bmk_h200.json"
    facts = {(f.kind, f.value) for f in by_id("inferencex-agg").facts(
        by_id("inferencex-agg").parse(Probe(path)))}
    assert {("gpu", "h200"), ("gpu_count", "8"), ("precision", "fp8"),
            ("model", "deepseek-ai/DeepSeek-R1-0528")} <= facts


def test_sa_bench_skips_each_warmup_block() -> None:
    rows = _rows(INFERENCE / "sa_bench_benchmark.out")
    assert [r["tool"] for r in rows] == ["sa-bench", "sa-bench"]
    assert [r["concurrency"] for r in rows] == [64.0, 128.0]
    assert [r["completed"] for r in rows] == [1024, 1024]  # the 128-request warm-ups skipped
    assert [r["warmup_requests"] for r in rows] == [128, 128]
    first = rows[0]  # the measured block of the recipe README, as printed
    assert first["line"] == 29 and first["request_rate"] is None  # "inf"
    assert first["output_tokens"] == 943250 and first["duration_s"] == 282.64
    assert first["output_tok_s"] == 3337.24 and first["total_tok_s"] == 30089.07
    assert (first["tpot_mean_ms"], first["tpot_p99_ms"], first["ttft_p99_ms"]) == (
        17.53, 20.62, 5839.15)
    assert first["gpus"] is None and first["model"] is None  # the manifest's declarations
    facts = by_id("sa-bench").parse(Probe(INFERENCE / "sa_bench_benchmark.out")).facts
    assert [(f.kind, f.value, f.line) for f in facts] == [("model", "nvidia/GLM-5-NVFP4", 1)]


def test_sa_bench_block_without_a_warmup_states_none(tmp_path: Path) -> None:
    text = (INFERENCE / "sa_bench_benchmark.out").read_text().splitlines()
    path = tmp_path / "benchmark.out"
    path.write_text("\n".join(text[25:]) + "\n")  # from the conc-64 measured block on
    rows = _rows(path)
    assert [(r["concurrency"], r["warmup_requests"]) for r in rows] == [(64.0, 0), (128.0, 128)]


def test_sa_bench_is_recognised_by_its_block_header() -> None:
    assert detect_format(INFERENCE / "sa_bench_benchmark.out") == "sa-bench"


_BLOCK = ("============ Serving Benchmark Result ============\n"
          "Successful requests:                     10\n"
          "Benchmark duration (s):                  2.00\n")


@pytest.mark.parametrize(("text", "line", "what"), [
    (_BLOCK, 1, "cut off"),
    (_BLOCK + _BLOCK, 1, "cut off"),
    (_BLOCK + "=" * 50 + "\n", 1, "no 'total generated tokens' line"),
    (_BLOCK.replace(" 10\n", " 10.5\n") + "Total generated tokens: 20\n"
     "Output token throughput (tok/s): 10.00\n" + "=" * 50 + "\n", 1,
     "completed is not a whole number"),
])
def test_malformed_sa_bench_is_one_error(text: str, line: int, what: str,
                                         tmp_path: Path) -> None:
    path = tmp_path / "benchmark.out"
    path.write_text("Maximum request concurrency: 4\n" + text)
    with pytest.raises(EvidenceError) as caught:
        by_id("sa-bench").parse(Probe(path))
    assert caught.value.line == line + 1 and what in str(caught.value)


AIPERF = INFERENCE / "aiperf"


@pytest.mark.parametrize("name", ["profile_export_aiperf.json", "profile_export_aiperf.csv"])
def test_aiperf_exports_give_the_same_row(name: str) -> None:
    [row] = _rows(AIPERF / name)
    assert row["tool"] == ("aiperf-json" if name.endswith("json") else "aiperf-csv")
    assert row["completed"] == 640 and row["failed"] == 0  # no error_request_count: none failed
    assert row["output_tokens"] == 640 * 1024 and row["input_tokens"] == 640 * 1024
    assert row["output_tok_s"] == pytest.approx(2304.5)
    assert row["duration_s"] == pytest.approx(640 * 1024 / 2304.5, abs=0.01)
    assert row["interactivity_tok_s_user"] == pytest.approx(40.31)
    assert row["tpot_mean_ms"] == pytest.approx(24.81) and row["ttft_p99_ms"] == 612.8
    assert row["gpus"] is None  # AIPerf states no GPU count
    # every request's ISL and OSL 1024 (min = max = avg): the lengths the file states
    assert (row["input_len"], row["output_len"]) == (1024, 1024)


def test_aiperf_csv_states_a_length_only_when_every_request_had_it(tmp_path: Path) -> None:
    """Outputs that stopped early vary (avg 1,013.4, min 912): no single output length. The
    server's own ISL count, a row newer releases add under a header that starts alike, is
    another metric and leaves the ISL row's 1024 alone."""
    text = (AIPERF / "profile_export_aiperf.csv").read_text()
    osl = "Output Sequence Length (tokens),1013.40,912.00,1024.00" + ",1024.00" * 9 + ",21.30"
    server = "Input Sequence Length (Server) (tokens)," + ",".join(["1031.00"] * 12) + ",0.00"
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_text(re.sub(r"^Output Sequence Length \(tokens\),.*$", f"{osl}\n{server}",
                           text, flags=re.M))
    [row] = by_id("aiperf-csv").parse(Probe(path)).rows
    assert (row["input_len"], row["output_len"]) == (1024, None)


def test_aiperf_json_states_the_run_setup() -> None:
    [row] = _rows(AIPERF / "profile_export_aiperf.json")
    assert (row["model"], row["concurrency"], row["warmup_requests"]) == (
        "nvidia/Llama-3.3-70B-Instruct-FP8", 64.0, 64)
    assert (row["input_len"], row["output_len"], row["temperature"]) == (1024, 1024, 0.0)
    assert row["tool_valid"] is None  # no locked scenario: no submission_valid
    facts = {(f.kind, f.value) for f in by_id("aiperf-json").parse(
        Probe(AIPERF / "profile_export_aiperf.json")).facts}
    assert facts == {("model", "nvidia/Llama-3.3-70B-Instruct-FP8"), ("gpu", "NVIDIA H200")}


@pytest.mark.parametrize(("edit", "valid", "reason"), [
    ({"metadata": {"submission_valid": True}}, True, None),
    ({"metadata": {"submission_valid": False,
                   "submission_invalid_reason": "context_overflow_rate_exceeded"}},
     False, "context_overflow_rate_exceeded"),
    ({"was_cancelled": True}, False, "run_cancelled (was_cancelled: true)"),
])
def test_aiperf_submission_valid(edit: dict[str, object], valid: bool, reason: str | None,
                                 tmp_path: Path) -> None:
    data = json.loads((AIPERF / "profile_export_aiperf.json").read_text())
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps({**data, **edit}))
    [row] = _rows(path)
    assert (row["tool_valid"], row["tool_invalid_reason"]) == (valid, reason)


def test_aiperf_error_requests_are_failed(tmp_path: Path) -> None:
    data = json.loads((AIPERF / "profile_export_aiperf.json").read_text())
    data["error_request_count"] = {"unit": "requests", "avg": 12.0}
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    [row] = _rows(path)
    assert row["failed"] == 12


@pytest.mark.parametrize(("config", "run_info"), [
    ({"phases": {"profiling": {"concurrency": 48}}}, {}),
    ({}, {"cli_command": "aiperf profile --model m --concurrency 48 --streaming"}),
])
def test_aiperf_json_concurrency_where_newer_releases_put_it(
        config: dict[str, object], run_info: dict[str, object], tmp_path: Path) -> None:
    data = json.loads((AIPERF / "profile_export_aiperf.json").read_text())
    data["input_config"] = config
    data["run_info"] = run_info
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    [row] = _rows(path)
    assert row["concurrency"] == 48.0


@pytest.mark.parametrize(("edit", "what"), [
    (lambda d: d.pop("benchmark_duration"), "the export has no benchmark_duration"),
    (lambda d: [d.pop("input_config"), d.pop("run_info")],
     "the export states no concurrency or request rate"),
    (lambda d: d["time_to_first_token"].update(unit="tokens"), "'tokens', not a time unit"),
    (lambda d: d["request_count"].update(avg=640.5), "completed is not a whole number"),
])
def test_malformed_aiperf_json_is_one_error(edit: Any, what: str, tmp_path: Path) -> None:
    data = json.loads((AIPERF / "profile_export_aiperf.json").read_text())
    edit(data)
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match=re.escape(what)):
        by_id("aiperf-json").parse(Probe(path))


@pytest.mark.parametrize(("old", "new", "line", "what"), [
    ("Request Count,640.00", "Request Count,lots", 13, "Request Count avg 'lots' is not a number"),
    ("Request Count,640.00", "Request Count,640.00,1", 13, "3 cells under a 2-column header"),
])
def test_malformed_aiperf_csv_is_one_error(old: str, new: str, line: int, what: str,
                                           tmp_path: Path) -> None:
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_text((AIPERF / "profile_export_aiperf.csv").read_text().replace(old, new))
    with pytest.raises(EvidenceError) as caught:
        by_id("aiperf-csv").parse(Probe(path))
    assert caught.value.line == line and what in str(caught.value)


MLPERF = INFERENCE / "mlperf"


def test_mlperf_server_summary() -> None:
    [row] = _rows(MLPERF / "server_mlperf_log_summary.txt")
    assert (row["tool"], row["scenario"], row["tool_valid"]) == (
        "mlperf-inference-summary", "Server", True)
    assert row["output_tok_s"] == 24593.77 and row["samples_per_s"] == 81.68
    assert row["request_rate"] == 83.5  # paced at target_qps: no offline maximum
    assert row["ttft_p99_ms"] == pytest.approx(1914.647645)
    assert row["tpot_mean_ms"] == pytest.approx(144.594078)
    assert row["tpot_p99_ms"] == pytest.approx(193.380124)
    assert row["gpus"] is None and row["model"] is None  # the summary names neither


def test_mlperf_offline_summary() -> None:
    [row] = _rows(MLPERF / "offline_mlperf_log_summary.txt")
    assert (row["scenario"], row["tool_valid"], row["request_rate"]) == ("Offline", True, None)
    assert row["output_tok_s"] == 27803.9 and row["samples_per_s"] == 92.1544
    assert row["concurrency"] is None and row["tpot_mean_ms"] is None


def test_mlperf_invalid_result_keeps_the_loadgen_reasons(tmp_path: Path) -> None:
    text = (MLPERF / "server_mlperf_log_summary.txt").read_text()
    text = text.replace("Result is : VALID", "Result is : INVALID").replace(
        "  Min duration satisfied : Yes", "  Min duration satisfied : NO").replace(
        "  Performance constraints satisfied : Yes", "  Performance constraints satisfied : NO")
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text(text)
    [row] = _rows(path)
    assert row["tool_valid"] is False
    assert row["tool_invalid_reason"] == (
        "LoadGen: performance constraints not satisfied, min duration not satisfied")


@pytest.mark.parametrize(("old", "new", "what"), [
    ("Mode     : PerformanceOnly", "Mode     : AccuracyOnly", "an accuracy run"),
    ("Result is : VALID", "Result is : MAYBE", "neither VALID nor INVALID"),
    ("Completed tokens per second: 24593.77", "Completed tokens per second: many",
     "'Completed tokens per second' is not a number"),
    ("Scenario : Server\n", "", "no 'Scenario :' or 'Result is :' line"),
])
def test_malformed_mlperf_summary_is_one_error(old: str, new: str, what: str,
                                               tmp_path: Path) -> None:
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text((MLPERF / "server_mlperf_log_summary.txt").read_text().replace(old, new))
    with pytest.raises(EvidenceError, match=re.escape(what)):
        by_id("mlperf-inference-summary").parse(Probe(path))


#: what the MLCommons summarizer published for the same folders (inference_results_v5.1
#: summary_results.json @ 965182b): result id -> (scenario, result, unit)
SUMMARIZER = {
    "5.1-0001": ("Interactive", 8840.42, "Tokens/s"),  # AMD 8xMI300X llama2-70b-99
    "5.1-0057": ("SingleStream", 3545.895439, "Latency (ms)"),  # Intel B60 llama3.1-8b-edge
    "5.1-0044": ("MultiStream", 0.503471, "Latency (ms)"),  # GATEOverflow rtx4090x2 resnet50
}


def test_latencies_in_seconds_are_read_in_seconds() -> None:
    """The same vLLM result with InferenceX-style keys (no `_ms`, seconds) reads the same."""
    [ms] = _rows(INFERENCE / "vllm_bench_serve_llama3.3-70b.json")
    [seconds] = _rows(INFERENCE / "vllm_bench_serve_seconds.json")
    assert seconds["tool"] == "vllm-bench-serve"
    for column in ("ttft_p99_ms", "ttft_mean_ms", "tpot_mean_ms", "tpot_median_ms",
                   "tpot_p99_ms"):
        assert seconds[column] == pytest.approx(ms[column]) and ms[column] is not None
    assert seconds["tpot_p99_ms"] == pytest.approx(436.8)


def test_an_interactive_run_is_named_by_its_folder_as_the_summarizer_names_it() -> None:
    """The LoadGen prints 'Scenario : Server' for an Interactive run; the folder says which."""
    [row] = _rows(MLPERF / "Interactive" / "performance" / "run_1" / "mlperf_log_summary.txt")
    assert (row["scenario"], row["output_tok_s"]) == SUMMARIZER["5.1-0001"][:2]
    assert row["tpot_p99_ms"] == pytest.approx(39.507635)
    path_free = [r["scenario"] for r in _rows(MLPERF / "server_mlperf_log_summary.txt")]
    assert path_free == ["Server"]


@pytest.mark.parametrize(("name", "result_id", "percentile"), [
    ("singlestream_llama3.1-8b-edge_mlperf_log_summary.txt", "5.1-0057", 90.0),
    # the result is the early-stopping estimate (503471 ns), not the 503206 ns percentile line
    ("multistream_resnet50_mlperf_log_summary.txt", "5.1-0044", 99.0),
])
def test_a_latency_scenario_reads_its_percentile_as_the_summarizer_does(
        name: str, result_id: str, percentile: float) -> None:
    [row] = _rows(MLPERF / name)
    scenario, result, _ = SUMMARIZER[result_id]
    assert row["scenario"] == scenario and row["latency_percentile"] == percentile
    assert row["latency_ms"] == pytest.approx(result, abs=1e-9)
    # its tokens/s and QPS lines are additional stats, never an offline maximum
    assert row["output_tok_s"] is None and row["request_rate"] is None


def test_an_accuracy_run_summary_is_refused_with_what_to_submit() -> None:
    path = MLPERF / "Interactive" / "accuracy" / "mlperf_log_summary.txt"
    with pytest.raises(EvidenceError, match="accuracy run's summary") as caught:
        by_id("mlperf-inference-summary").parse(Probe(path))
    assert "performance/run_1/mlperf_log_summary.txt" in str(caught.value)


V61 = MLPERF / "v6.1" / "deepseek-r1" / "Server" / "performance" / "result_summary.json"


def test_the_v61_result_summary_json() -> None:
    """VR NVL72 DeepSeek-R1 Server (preview): 1,175,890.2 tok/s at 310.08 QPS, Poisson at 325,
    over the LoadGen-compatible window (tps x window = the output tokens)."""
    [row] = _rows(V61)
    assert (row["tool"], row["scenario"]) == ("mlperf-inference-result-summary", "Server")
    assert row["output_tok_s"] == pytest.approx(1175890.2208168241)
    assert row["request_rate"] == 325.0 and row["concurrency"] is None
    assert row["completed"] == 600000 and row["failed"] == 0
    assert row["output_tokens"] == pytest.approx(row["output_tok_s"] * row["duration_s"],
                                                 rel=1e-6)
    assert row["ttft_p99_ms"] == pytest.approx(303.546985)
    assert row["tpot_p99_ms"] == pytest.approx(48.215361, rel=1e-6)


@pytest.mark.parametrize(("edit", "what"), [
    (lambda d: d.update(tps="fast"), "tps is not a non-negative number"),
    (lambda d: d["run_config"].update(load_pattern={"type": "burst"}), "names no scenario"),
])
def test_a_broken_v61_summary_is_one_error(edit: Any, what: str, tmp_path: Path) -> None:
    data = json.loads(V61.read_text())
    edit(data)
    path = tmp_path / "result_summary.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match=what):
        by_id("mlperf-inference-result-summary").parse(Probe(path))


def _bundle_with(tmp_path: Path, entry: str) -> Path:
    shutil.copy(AIPERF / "profile_export_aiperf.csv", tmp_path / "aiperf.csv")
    (tmp_path / "cmax.toml").write_text(manifest_text(
        '[[inference]]\nresult = "aiperf.csv"\nmodel = "llama3.3-70b"\nprecision = "fp8"\n'
        f"gpus = 2\ninput_len = 1024\noutput_len = 1024\n{entry}"))
    return tmp_path


def test_aiperf_csv_takes_the_declared_concurrency(tmp_path: Path) -> None:
    """The CSV records no load: the table holds none, the ledger the entry's declaration, and
    the case's view of the entry's rows is paced at it, named as declared."""
    with load(_bundle_with(tmp_path, "concurrency = 64\n")) as loaded:
        case = loaded.case
    [stated] = case.tables["inference"].iter_rows(named=True)
    assert stated["concurrency"] is None and stated["request_rate"] is None
    claim = case.claims.get("inference[0]", "serving_load")
    assert claim is not None and (claim.value, claim.status) == ("64", "declared")
    [row] = case.with_declared("inference").iter_rows(named=True)
    assert row["concurrency"] == 64.0 and row["request_rate"] is None
    assert row["declared"] == ["concurrency"]
    assert row["scenario"] == "concurrency 64 declared in cmax.toml (the file records no load)"


def test_a_declared_concurrency_never_paces_a_result_that_records_its_load(
        tmp_path: Path) -> None:
    """vLLM records its load (none: an offline run); an entry's concurrency is no claim on it,
    and its rows stay as the file states them."""
    shutil.copy(INFERENCE / "vllm_bench_serve_llama3.3-70b.json", tmp_path / "one.json")
    (tmp_path / "cmax.toml").write_text(manifest_text(
        '[[inference]]\nresult = "one.json"\nmodel = "llama3.3-70b"\nprecision = "fp8"\n'
        "gpus = 8\ninput_len = 1024\noutput_len = 1024\nconcurrency = 64\n"))
    with load(tmp_path) as loaded:
        case = loaded.case
    assert case.claims.get("inference[0]", "serving_load") is None
    [row] = case.with_declared("inference").iter_rows(named=True)
    [stated] = case.tables["inference"].iter_rows(named=True)
    assert row["declared"] is None
    assert (row["concurrency"], row["scenario"]) == (stated["concurrency"], stated["scenario"])


def test_aiperf_csv_without_a_declared_concurrency_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as caught, load(_bundle_with(tmp_path, "")):
        pass
    assert caught.value.field == "inference[0].concurrency"
    assert "records no concurrency or request rate" in str(caught.value)


def test_each_result_row_carries_its_inference_entry(tmp_path: Path) -> None:
    """An --append-result file's rows and a second entry's row each carry the [[inference]]
    entry they were read for; entry_rows finds them by it, whatever their ids read."""
    shutil.copy(INFERENCE / "vllm_bench_serve_sweep.jsonl", tmp_path / "sweep.jsonl")
    shutil.copy(INFERENCE / "vllm_bench_serve_llama3.3-70b.json", tmp_path / "one.json")
    entry = ('model = "llama3.3-70b"\nprecision = "fp8"\ngpus = 8\ninput_len = 1024\n'
             'output_len = 1024\n')
    (tmp_path / "cmax.toml").write_text(manifest_text(
        f'[[inference]]\nresult = "sweep.jsonl"\n{entry}\n'
        f'[[inference]]\nresult = "one.json"\n{entry}'))
    with load(tmp_path) as loaded:
        table = loaded.case.tables["inference"]
    assert table["entry"].to_list() == [0, 0, 0, 1]
    renamed = table.with_columns(pl.format("result-{}", pl.int_range(pl.len())).alias("run_id"))
    assert entry_rows(renamed, 0)["line"].to_list() == [1, 2, 3]
    assert entry_rows(renamed, 1)["source_file"].to_list() == ["one.json"]
