"""Serving results in the reports: the throughput-vs-interactivity chart, the page-1 tile, the
leaderboard's serving column and the brief's cost per served token (Halcyon Serve sample)."""

from __future__ import annotations

import pytest

from cmax.pipeline import assess
from cmax.render import charts, page_one, views
from cmax.render.reports import brief_html, leaderboard_csv, leaderboard_html
from cmax.scorecard import Scorecard
from tests.paths import SAMPLES


@pytest.fixture(scope="module")
def halcyon() -> Scorecard:
    return assess(SAMPLES / "halcyon-serve")


def test_the_chart_draws_each_sweep_against_its_reference(halcyon: Scorecard) -> None:
    svg = charts.serving_chart(halcyon.inference)
    assert svg is not None
    # the DeepSeek-R1 sweep against InferenceX's official H200 curve, not an offline ceiling
    assert "deepseek-r1-0528 fp8" in svg and "reference curve" in svg
    assert "offline maximum" not in svg
    assert "interactivity (output tokens/s per user" in svg
    # with only an offline reference the ceiling is drawn instead
    ceiling = halcyon.inference[2].model_copy(update={
        "reference_curve": [], "comparison": "none", "reference_tok_s_per_gpu": 1620.0})
    flat = charts.serving_chart([ceiling])
    assert flat is not None and "reference offline maximum 1,620" in flat


def test_no_chart_without_a_sweep(halcyon: Scorecard) -> None:
    # the trtllm-bench reports are offline and not streamed: no interactivity to plot
    assert charts.serving_chart(halcyon.inference[:2]) is None


def test_page_one_leads_with_serving_throughput(halcyon: Scorecard) -> None:
    first = page_one.key_numbers(halcyon)[0]
    # the DeepSeek-R1 sweep on InferenceX's H200 curve is inconclusive (CI 0.949-0.964)
    assert first.label == "Serving throughput" and first.value == "2 of 3 results pass"
    assert "lowest 95.5% of reference, deepseek-r1-0528" in first.detail


def test_leaderboard_serving_columns(halcyon: Scorecard) -> None:
    [row] = views.leaderboard_rows([("halcyon", halcyon)])
    assert row.serving_ratio == pytest.approx(halcyon.inference[2].ratio)
    # the cheapest compared result: GPT-OSS-120B at $3.40 / (6,612 x 3,600) x 1e6
    assert row.serving_usd == pytest.approx(3.40e6 / (6612.0 * 3600))
    header, line = leaderboard_csv([row]).splitlines()
    assert "serving_lowest_ratio,serving_usd_per_million_output_tokens" in header
    assert f"{row.serving_ratio}" in line
    html = leaderboard_html([row], "html", {"score": None, "price": None})
    assert "Serving ratio; $/M out" in html and "$0.143/M" in html
    # a board without serving evidence keeps its columns
    training = halcyon.model_copy(update={"inference": []})
    [plain] = views.leaderboard_rows([("t", training)])
    assert "Serving ratio" not in leaderboard_html([plain], "html", {"score": None,
                                                                     "price": None})


def test_brief_prices_each_served_token(halcyon: Scorecard) -> None:
    costs = views.serving_costs(halcyon)
    assert [c.ratio is not None for c in costs] == [True, True, True]
    # the parity price: the geometric mean of the three compared results' ratios
    assert halcyon.price is not None and halcyon.price.ask_usd_per_gpu_hour == 3.28
    assert costs[0].at_ask == pytest.approx(3.28e6 / (6612.0 * 3600))
    html = brief_html(halcyon)
    assert "Per served token" in html


def test_a_serving_contract_is_not_asked_for_training_runs(halcyon: Scorecard) -> None:
    asks = page_one.missing_evidence(halcyon)
    assert not any("training runs" in a for a in asks)
    declared = halcyon.model_copy(update={"inference": [
        r.model_copy(update={"verdict": "unverified"}) for r in halcyon.inference]})
    assert any("states its GPU count" in a for a in page_one.missing_evidence(declared))
