"""A serving result is priced only as the price's throughput ratio counts it
(cmax/score/verdicts.py serving_rated), from real-format result files: one withheld by an
error, one its file puts on another model, or one whose GPU count rests on cmax.toml keeps its
row and its measured rate, never a $ per million tokens the evidence has not earned, and every
report says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cmax.cli.score_cmd import scorecard_text
from cmax.pipeline import assess
from cmax.render import reports, views
from cmax.scorecard import InferenceResult, Scorecard
from tests.score.test_score_inference import _bundle, _second_report

TRT = "trtllm_bench_report_llama3.3-70b.json"


def _reasoning(card: Scorecard) -> str:
    assert card.price is not None
    return "\n".join(card.price.reasoning)


def _unpriced(r: InferenceResult) -> None:
    assert not r.priced
    assert r.usd_per_million_output_tokens is None and r.usd_per_million_input_tokens is None


def test_a_withheld_result_is_not_priced_and_every_report_says_why(tmp_path: Path) -> None:
    """4,200 tok/s declared over 1 GPU where its report states world_size 2: its 1.90 is
    withheld, yet it read $0.139 per million output tokens (half its cost over the 2 GPUs its
    file states) in the score, the price reasoning and the brief."""
    bundle = _bundle(tmp_path, {"result": TRT}, {"result": "second.json", "gpus": 1})
    _second_report(bundle, 4200.0)
    card = assess(bundle)
    honest, held = card.inference
    judged = card.judgement("serving_result", held.entry)
    assert judged is not None and judged.verdict == "withheld"
    _unpriced(held)
    assert held.output_tok_s_per_gpu == pytest.approx(4200.0)  # the measured rate stays
    # the reference's cost is the reference's, not the result's
    assert held.usd_per_million_output_tokens_at_reference == pytest.approx(
        2.10e6 / (2209 * 3600))
    assert honest.priced and honest.usd_per_million_output_tokens == pytest.approx(0.271950,
                                                                                   abs=1e-6)
    why = "withheld (inference.beyond-reference, inference.gpu-count-contradicted)"

    row = next(line for line in scorecard_text(card) if " x1 " in line and "4,200" in line)
    assert "  not priced" in row and "$0.139" not in row
    assert "$0.139" not in "\n".join(scorecard_text(card))

    steps = _reasoning(card)
    assert "$0.139" not in steps and "$0.272 per million output tokens" in steps
    assert "Not priced, their figures not earned" in steps
    assert f"on 1 GPU (second.json): {why}" in steps

    [_, cost] = views.serving_costs(card)
    assert (cost.at_quote, cost.at_ask, cost.input_at_quote) == (None, None, None)
    assert cost.standing == why
    brief = reports.brief_html(card)
    assert "not priced" in brief and why in brief and "$0.139" not in brief

    html = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    table = html[html.index("<h3>Serving throughput</h3>"):]
    assert '<td class="n">$0.272' in table and 'not priced</span></td>' in table
    assert re.search(r"<span class=\"note\">not priced: withheld \(inference\."
                     r"beyond-reference, inference\.gpu-count-contradicted\)</span>", table)
    assert "$0.139" not in html and "$0.272" in table


def test_a_result_of_another_model_is_not_priced(tmp_path: Path) -> None:
    """The report served Llama 3.3 70B, declared gpt-oss-120b: compared with no reference,
    withheld; its row says so where a cost would stand."""
    card = assess(_bundle(tmp_path, {"result": TRT, "model": "gpt-oss-120b"}))
    [res] = card.inference
    _unpriced(res)
    assert res.usd_per_million_output_tokens_at_reference is None  # no reference at all
    assert (f"gpt-oss-120b fp8 1000/1000 on 2 GPUs ({TRT}): withheld "
            "(inference.model-contradicted)") in _reasoning(card)
    [cost] = views.serving_costs(card)
    assert cost.standing == "withheld (inference.model-contradicted)"


def test_a_result_on_a_declared_gpu_count_is_not_priced(tmp_path: Path) -> None:
    """vLLM records no GPU count: its per-GPU rate divides by cmax.toml's 2 GPUs, a
    declaration, so the result is unverified and prices nothing (it read $0.268)."""
    card = assess(_bundle(tmp_path, {"result": "vllm_bench_serve_sweep.jsonl"}))
    [res] = card.inference
    assert res.verdict == "unverified"
    _unpriced(res)
    assert "vllm_bench_serve_sweep.jsonl): not verified" in _reasoning(card)
    assert "$0.268" not in _reasoning(card)
