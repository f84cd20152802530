"""The serving rules (cmax/validate/inference_rules.py) on every format's own test file: clean
as the tools wrote them, tripping on the contradictions and verdicts each one can carry."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cmax.findings import Finding
from cmax.validate import validate
from tests.fakes import FakeReference
from tests.paths import DATA
from tests.validate.validate_fakes import HonestBundle

INFERENCE = DATA / "inference"
LLAMA = {"model": "llama3.3-70b", "precision": "fp8", "gpus": 2}


def _findings(path: Path, spec: dict[str, Any], gpu: str, tmp_path: Path,
              edit: Callable[[str], str] | None = None,
              reference: Any = None) -> list[Finding]:
    """The serving findings of the honest bundle holding ``path`` (its text changed by
    ``edit``, as a tampered file would read) as its one [[inference]] result, on ``gpu``."""
    bundle = HonestBundle()
    text = path.read_text(encoding="utf-8")
    bundle.extra_files[_name(path)] = edit(text) if edit is not None else text
    bundle.manifest_extra["inference"] = [{"result": _name(path), **spec}]
    bundle.manifest_extra["system"] = {**bundle.manifest_dict()["system"], "gpu": gpu}
    found = validate(bundle.ingest(tmp_path), reference or FakeReference())
    return [f for f in found if f.rule.startswith("inference.")]


def _name(path: Path) -> str:
    """Where the bundle holds ``path``: its place under tests/data/inference (an MLPerf
    summary's folders name its scenario), else its name."""
    return "serve/" + (path.relative_to(INFERENCE).as_posix() if path.is_relative_to(INFERENCE)
                       else path.name)


CLEAN = [
    ("vllm_bench_serve_llama3.3-70b.json", {**LLAMA, "input_len": 1000, "output_len": 1000},
     "h100-sxm"),
    ("trtllm_bench_report_llama3.3-70b.json", {**LLAMA, "input_len": 1000, "output_len": 1000},
     "h100-sxm"),
    ("sglang_bench_serving_llama3.3-70b.jsonl", {**LLAMA, "input_len": 1024, "output_len": 1024},
     "h200"),
    ("aiperf/profile_export_aiperf.json", {**LLAMA, "input_len": 1024, "output_len": 1024},
     "h200"),
    # the CSV export records no concurrency: cmax.toml states the --concurrency it ran at
    ("aiperf/profile_export_aiperf.csv", {**LLAMA, "input_len": 1024, "output_len": 1024,
                                          "concurrency": 64}, "h200"),
    ("inferencex_agg_bmk_h200.json", {"model": "deepseek-r1-0528", "precision": "fp8",
                                      "gpus": 8, "input_len": 1024, "output_len": 1024}, "h200"),
    ("inferencex_agg_gb200_disagg.json", {"model": "deepseek-r1-0528", "precision": "nvfp4",
                                          "gpus": 24, "input_len": 8192, "output_len": 1024},
     "gb200"),
    # the recipe's random dataset at range ratio 0.8: 7,384 / 921 tokens per request on average
    ("sa_bench_benchmark.out", {"model": "glm-5", "precision": "nvfp4", "gpus": 32,
                                "input_len": 7384, "output_len": 921}, "gb300"),
    # Llama 2 70B on OpenOrca: 301 output tokens per sample (tokens/s over samples/s)
    ("mlperf/server_mlperf_log_summary.txt", {"model": "llama2-70b", "precision": "fp8",
                                              "gpus": 8, "input_len": 1000, "output_len": 301},
     "h200"),
    ("mlperf/offline_mlperf_log_summary.txt", {"model": "llama2-70b", "precision": "fp8",
                                               "gpus": 8, "input_len": 1000, "output_len": 301},
     "h200"),
]


@pytest.mark.parametrize(("name", "spec", "gpu"), CLEAN, ids=[c[0] for c in CLEAN])
def test_each_format_as_written_is_clean(name: str, spec: dict[str, Any], gpu: str,
                                         tmp_path: Path) -> None:
    assert _findings(INFERENCE / name, spec, gpu, tmp_path) == []


def _json(edit: Callable[[Any], None]) -> Callable[[str], str]:
    """A JSON result (one object, or a list of rows: each row) with ``edit`` made to it."""
    def fn(text: str) -> str:
        data = json.loads(text)
        for row in data if isinstance(data, list) else [data]:
            edit(row)
        return json.dumps(data, indent=1)
    return fn


def _jsonl(**values: Any) -> Callable[[str], str]:
    """A JSON-lines result with ``values`` set on every line."""
    return lambda text: "".join(json.dumps({**json.loads(line), **values}) + "\n"
                                for line in text.splitlines() if line.strip())


def _line(label: str, value: str) -> Callable[[str], str]:
    """A text result whose every ``label <sep> number`` line states ``value`` instead."""
    pattern = re.compile(rf"^({re.escape(label)}\s*:?\s*)\S+", re.M)
    return lambda text: pattern.sub(lambda m: m.group(1) + value, text)


def _set(**values: Any) -> Callable[[Any], None]:
    return lambda row: row.update(values)


def _aiperf_interactivity(data: dict[str, Any]) -> None:
    """AIPerf's per-user output speed at 30 tok/s, its inter-token latency not reported."""
    data["output_token_throughput_per_user"]["avg"] = 30.0
    del data["inter_token_latency"]


def _intvty_only(row: dict[str, Any]) -> None:
    row["mean_intvty"] = 10.0
    del row["mean_tpot"]


def _aiperf_errors(text: str) -> str:
    """The CSV export with an Error Request Count row (40 failed beside 640 completed)."""
    head, _, rest = text.partition("\n")
    return f"{head}\nError Request Count,40.00,40.00,40.00,,,,,,,,,,0.00\n{rest}"


def _aiperf_isl_1000(text: str) -> str:
    """The CSV export of the same run with 1,000-token prompts: its Input Sequence Length
    row one value (min = max = avg) and the total over its 640 requests to match."""
    row = "Input Sequence Length (tokens)," + ",".join(["1000.00"] * 12) + ",0.00"
    return re.sub(r"^Input Sequence Length \(tokens\),.*$", row, text, flags=re.M).replace(
        "Total Input Sequence Length (tokens),655360.00",
        "Total Input Sequence Length (tokens),640000.00")


TRIPPING = [
    # tokens / duration against the rates the file reports
    ("sa_bench_benchmark.out", _line("Total Token throughput (tok/s)", "41000.00"),
     "inference.throughput-arithmetic",
     "input + 943250 output tokens in 282.64 s is 30,089.5 tok/s, the file reports 41,000.0"),
    ("trtllm_bench_report_llama3.3-70b.json",
     _json(lambda d: d["performance"].update(output_throughput_per_gpu_tok_s=2600.0)),
     "inference.throughput-arithmetic", "over the 2 GPUs it states is 2,145.0 per GPU"),
    # per-user speed x concurrency beyond the total, from the interactivity alone
    ("aiperf/profile_export_aiperf.json", _json(_aiperf_interactivity),
     "inference.per-user-beyond-total", "at 30 tok/s per user (at most 1,920.0 tok/s)"),
    ("inferencex_agg_bmk_h200.json", _json(_intvty_only),
     "inference.per-user-beyond-total", "from 64 concurrent requests at 10 tok/s per user"),
    # the lengths the file states, and an MLPerf run's tokens per sample
    ("inferencex_agg_bmk_h200.json", _json(_set(osl=2048)), "inference.lengths-mismatch",
     "the file states 2048 output tokens per request, the manifest rates 1024"),
    ("mlperf/server_mlperf_log_summary.txt", _line("Completed samples per second", "40.0"),
     "inference.lengths-mismatch", "615 output tokens per sample, the manifest rates 301"),
    ("aiperf/profile_export_aiperf.csv", _aiperf_errors, "inference.failed-requests",
     "40 of 680 requests failed"),
    # every request 1,000 input tokens: within the totals' 5 %, but not the declared 1024
    ("aiperf/profile_export_aiperf.csv", _aiperf_isl_1000, "inference.lengths-mismatch",
     "the file states 1000 input tokens per request, the manifest rates 1024"),
    # a p99 edited below the median to meet a latency SLO
    ("vllm_bench_serve_llama3.3-70b.json", _json(_set(p99_tpot_ms=20.0)),
     "inference.percentiles-disordered", "p99 TPOT 20.000 ms is below its median"),
    ("sglang_bench_serving_llama3.3-70b.jsonl", _jsonl(p99_ttft_ms=1.0),
     "inference.percentiles-disordered", "p99 TTFT 1.000 ms is below its mean"),
    # Little's law: a mean TPOT cut to a third to sit higher on the curve, the total as measured
    ("inferencex_agg_bmk_h200.json", _json(lambda r: r.update(mean_tpot=r["mean_tpot"] / 3)),
     "inference.littles-law", "requests in flight x 1024 tokens over"),
]


@pytest.mark.parametrize(("name", "edit", "rule", "message"), TRIPPING)
def test_a_contradicting_number_trips(name: str, edit: Callable[[str], str], rule: str,
                                      message: str, tmp_path: Path) -> None:
    """``edit`` changes every result row of the file; each row that now contradicts itself
    is one finding naming the file."""
    _, spec, gpu = next(c for c in CLEAN if c[0] == name)
    hits = [f for f in _findings(INFERENCE / name, spec, gpu, tmp_path, edit) if f.rule == rule]
    assert any(message in f.message for f in hits), [f.message for f in hits]
    assert {f.file for f in hits} == {_name(INFERENCE / name)}


def test_the_tools_own_invalid_verdict_is_an_error(tmp_path: Path) -> None:
    data = json.loads((INFERENCE / "aiperf/profile_export_aiperf.json").read_text())
    data["metadata"] = {"submission_valid": False,
                        "submission_invalid_reason": "context_overflow_rate_exceeded"}
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    _, spec, gpu = CLEAN[3]
    [hit] = _findings(path, spec, gpu, tmp_path / "b")
    assert (hit.rule, hit.severity) == ("inference.tool-invalid", "error")
    assert "aiperf-json marks the result invalid: context_overflow_rate_exceeded" in hit.message


def test_a_measured_block_without_its_warmup_is_a_warning(tmp_path: Path) -> None:
    lines = (INFERENCE / "sa_bench_benchmark.out").read_text().splitlines()
    path = tmp_path / "benchmark.out"
    path.write_text("\n".join(lines[25:]) + "\n")  # the concurrency-64 warm-up block cut away
    _, spec, gpu = next(c for c in CLEAN if c[0] == "sa_bench_benchmark.out")
    [hit] = _findings(path, spec, gpu, tmp_path / "b")
    assert (hit.rule, hit.severity, hit.line) == ("inference.no-warmup", "warning", 4)
    assert "no warm-up requests before the 1024 measured requests" in hit.message


V61 = INFERENCE / "mlperf" / "v6.1" / "deepseek-r1" / "Server" / "performance" / \
    "result_summary.json"
INTERACTIVE = INFERENCE / "mlperf" / "Interactive" / "performance" / "run_1" / \
    "mlperf_log_summary.txt"


def test_another_systems_result_beyond_every_reference_is_an_error(tmp_path: Path) -> None:
    """Vera Rubin NVL72's DeepSeek-R1 Server result (v6.1, preview) declared as 72 GB200: 16,332
    tok/s per GPU against the best available GB200 NVL72 system's 2,327.5 in v5.1 (7.0x)."""
    from cmax.reference import load_reference
    spec = {"model": "deepseek-r1", "precision": "nvfp4", "gpus": 72, "input_len": 1000,
            "output_len": 3792}
    hits = [f for f in _findings(V61, spec, "gb200", tmp_path, reference=load_reference())
            if f.rule == "inference.beyond-reference"]
    assert [f.message for f in hits] == [
        "16,331.8 output tok/s per GPU is 7.02x the best available MLPerf Server system on "
        "gb200 (2,327.5); the references of one GPU lie within 1.6x"]


@pytest.mark.parametrize(("path", "spec", "gpu"), [
    # AMD's real Interactive result on 8 MI300X, declared as 8 H200: 0.38x, slower, not flagged
    (INTERACTIVE, {"model": "llama2-70b", "precision": "fp8", "gpus": 8, "input_len": 1000,
                   "output_len": 301}, "h200"),
    # TensorRT-LLM's own H100 report against TensorRT-LLM's H100 offline row: 0.97x
    (INFERENCE / "trtllm_bench_report_llama3.3-70b.json",
     {**LLAMA, "input_len": 1000, "output_len": 1000}, "h100-sxm"),
])
def test_an_honest_result_within_the_references_is_clean(path: Path, spec: dict[str, Any],
                                                          gpu: str, tmp_path: Path) -> None:
    from cmax.reference import load_reference
    assert _findings(path, spec, gpu, tmp_path, reference=load_reference()) == []
