"""Serving throughput against the public per-GPU references (cmax/score/inference.py), end to
end from real-format result files: like with like, a pass earned by a stated GPU count."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cmax.pipeline import assess
from cmax.price.tokens import usd_per_million_tokens
from tests.paths import DATA

MANIFEST = """
[provider]
name = "Lumen Serve"
cluster = "lumen-h100-serve"

[system]
gpu = "{gpu}"
nodes = 1
gpus_per_node = 8

[benchmark]
date = 2026-11-02
{entries}
[pricing]
usd_per_gpu_hour = 2.10
"""

ENTRY = """
[[inference]]
result = "{result}"
model = "{model}"
precision = "fp8"
gpus = {gpus}
input_len = 1000
output_len = {output_len}
"""


def _bundle(tmp_path: Path, *entries: dict[str, object], gpu: str = "h100-sxm") -> Path:
    for name in ("trtllm_bench_report_llama3.3-70b.json", "vllm_bench_serve_sweep.jsonl",
                 "vllm_bench_serve_llama3.3-70b.json"):
        shutil.copy(DATA / "inference" / name, tmp_path / name)
    text = "".join(ENTRY.format(**{"model": "llama3.3-70b", "gpus": 2, "output_len": 1000,
                                   **e}) for e in entries)
    (tmp_path / "cmax.toml").write_text(MANIFEST.format(gpu=gpu, entries=text))
    return tmp_path


def _results(path: Path) -> list[dict[str, object]]:
    card = assess(path)
    return [r.model_dump() for r in card.inference]


def test_a_stated_gpu_count_earns_the_pass(tmp_path: Path) -> None:
    [trt, vllm] = _results(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"},
                                   {"result": "vllm_bench_serve_sweep.jsonl"}))
    assert trt["verdict"] == "pass" and trt["gpus_basis"] == "corroborated"
    assert trt["ratio"] == pytest.approx(2145 / 2209)  # TensorRT-LLM perf overview, H100 TP2
    assert "perf-overview.md@03e27c7" in str(trt["reference_source"])
    # vLLM states no GPU count: the same speed is held at unverified, and says why
    assert vllm["verdict"] == "unverified" and vllm["gpus_basis"] == "declared"
    assert vllm["output_tok_s"] == pytest.approx(4350.0)  # the sweep's offline result rated
    assert "records no GPU count" in str(vllm["notes"])


def test_dollars_per_million_output_tokens_by_hand(tmp_path: Path) -> None:
    [trt] = _results(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"}))
    # $2.10 per GPU-hour / (2,145 tok/s x 3,600 s) x 1e6 = $0.27195 per million output tokens
    assert trt["usd_per_million_output_tokens"] == pytest.approx(0.271950, abs=1e-6)
    assert trt["usd_per_million_output_tokens_at_reference"] == pytest.approx(
        2.10 / (2209 * 3600) * 1e6)
    assert usd_per_million_tokens(1.0, 1e6 / 3600) == pytest.approx(1.0)


def test_only_capped_results_are_not_comparable(tmp_path: Path) -> None:
    lines = (DATA / "inference" / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()
    bundle = _bundle(tmp_path, {"result": "capped.jsonl"})
    (bundle / "capped.jsonl").write_text("\n".join(lines[:2]))
    [res] = _results(bundle)
    assert res["verdict"] == "not_comparable" and not res["offline"]
    assert "latency curve" in str(res["notes"])


@pytest.mark.parametrize(("entry", "verdict"), [
    ({"gpus": 4}, "invalid"),  # the report says world_size 2
    ({"model": "gpt-oss-120b"}, "invalid"),  # the report served Llama 3.3 70B
    ({"output_len": 4000}, "invalid"),  # the requests were 1000/1000: lengths-mismatch
    ({"model": "mistral-large-2"}, "no_reference"),  # no published row for that model
])
def test_contradicted_or_unreferenced(entry: dict[str, object], verdict: str,
                                      tmp_path: Path) -> None:
    [res] = _results(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json",
                                        **entry}))
    assert res["verdict"] == verdict


def test_below_the_bar_fails(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"})
    report = bundle / "trtllm_bench_report_llama3.3-70b.json"
    data = json.loads(report.read_text())
    data["performance"]["system_output_throughput_tok_s"] = 3800.0
    data["performance"]["total_latency_ms"] = 3_000_000 / 3800 * 1000
    report.write_text(json.dumps(data))
    [slow] = _results(bundle)
    assert slow["ratio"] == pytest.approx(1900 / 2209) and slow["verdict"] == "fail"


def test_only_earned_serving_results_enter_the_rating(tmp_path: Path) -> None:
    """The rubric's inference component scores a corroborated result (ratio 0.971 → points
    100 × (0.971 − 0.75) ÷ 0.25) and ignores a declared-only one."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    earned = assess(_bundle(tmp_path / "a", {"result": "trtllm_bench_report_llama3.3-70b.json"}))
    [cat] = [c for c in earned.categories if c.name == "networking"]
    assert any("networking.inference" in r and "0.9710" in " ".join(cat.evidence)
               for r in cat.rules)
    declared = assess(_bundle(tmp_path / "b", {"result": "vllm_bench_serve_sweep.jsonl"}))
    [cat] = [c for c in declared.categories if c.name == "networking"]
    assert "networking.inference: no evidence, not counted" in cat.rules
