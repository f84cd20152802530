"""Price advice for an inference contract: a bundle whose only compared evidence is serving
results is priced on their ratio, and its advice says what a million tokens costs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.pipeline import assess
from tests.fakes import manifest_text
from tests.paths import DATA

MANIFEST = manifest_text("""
[[inference]]
result = "{result}"
model = "llama3.3-70b"
precision = "fp8"
gpus = 2
input_len = 1000
output_len = 1000

[pricing]
usd_per_gpu_hour = 2.10
""", name="Lumen Serve", cluster="lumen-h100-serve", nodes=1, interconnect=None,
                         date="2026-11-02")


def _card(tmp_path: Path, result: str):  # type: ignore[no-untyped-def]
    shutil.copy(DATA / "inference" / result, tmp_path / result)
    (tmp_path / "cmax.toml").write_text(MANIFEST.format(result=result))
    return assess(tmp_path)


def test_a_serving_only_bundle_is_priced_on_its_serving_ratio(tmp_path: Path) -> None:
    card = _card(tmp_path, "trtllm_bench_report_llama3.3-70b.json")
    price = card.price
    assert price is not None
    # 2,145 output tok/s per GPU against TensorRT-LLM's 2,209 (H100 FP8 TP2, 1000/1000)
    assert price.throughput_ratio == pytest.approx(2145 / 2209, abs=1e-6)
    assert price.parity_usd_per_gpu_hour == pytest.approx(2.10 * 2145 / 2209, abs=1e-4)
    assert price.ask_usd_per_gpu_hour == 2.04
    [driver] = [d for d in price.drivers if d.name == "Serving throughput"]
    assert "97.1% of the public per-GPU serving reference" in driver.detail
    text = "\n".join(price.reasoning)
    assert "an inference contract" in text and "useful serving work" in text
    # $2.10 / (2,145 x 3,600) x 1e6 = $0.272; at the $2.04 ask $0.264
    assert "$0.272 per million output tokens at the quote" in text
    assert "at the ask $0.264" in text


def test_a_declared_gpu_count_sets_no_price(tmp_path: Path) -> None:
    card = _card(tmp_path, "vllm_bench_serve_sweep.jsonl")
    price = card.price
    assert price is not None and card.inference[0].verdict == "unverified"
    assert price.throughput_ratio is None and price.ask_usd_per_gpu_hour is None
    assert not any(d.name == "Serving throughput" for d in price.drivers)
    # nor a cost: per GPU it divides by the GPU count only cmax.toml states (declaring fewer
    # GPUs would make it cheaper), so the reasoning names it unpriced and why
    steps = "\n".join(price.reasoning)
    assert "per million output tokens at the quote" not in steps
    assert "Not priced, their figures not earned" in steps and "): not verified." in steps
