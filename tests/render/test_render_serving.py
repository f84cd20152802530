"""Serving results in the reports: the throughput-vs-interactivity chart, the page-1 tile, the
leaderboard's serving column and the brief's cost per served token (Halcyon Serve sample)."""

from __future__ import annotations

import pytest

from cmax.pipeline import assess
from cmax.render import charts, views
from cmax.render.reports import brief_html, leaderboard_csv, leaderboard_html
from cmax.scorecard import ReferenceCurvePoint, Scorecard
from tests.paths import SAMPLES


@pytest.fixture(scope="module")
def halcyon() -> Scorecard:
    return assess(SAMPLES / "halcyon-serve")


def test_the_chart_draws_each_sweep_against_its_reference(halcyon: Scorecard) -> None:
    svg = charts.serving_chart(halcyon.inference)
    assert svg is not None
    assert "gpt-oss-120b fp8" in svg and "reference offline maximum 6,798" in svg
    assert "interactivity (output tokens/s per user" in svg
    # with a reference curve the curve is drawn instead of the offline ceiling
    sweep = halcyon.inference[2].model_copy(update={"reference_curve": [
        ReferenceCurvePoint(interactivity=20.0, output_tok_s_per_gpu=6000.0),
        ReferenceCurvePoint(interactivity=160.0, output_tok_s_per_gpu=1500.0)]})
    curved = charts.serving_chart([sweep])
    assert curved is not None and "reference curve" in curved
    assert "offline maximum" not in curved


def test_no_chart_without_a_sweep(halcyon: Scorecard) -> None:
    # the trtllm-bench reports are offline and not streamed: no interactivity to plot
    assert charts.serving_chart(halcyon.inference[:2]) is None


def test_page_one_leads_with_serving_throughput(halcyon: Scorecard) -> None:
    first = views.key_numbers(halcyon)[0]
    assert first.label == "Serving throughput" and first.value == "2 of 2 results pass"
    assert "lowest 97.2% of reference, llama3.3-70b" in first.detail


def test_leaderboard_serving_columns(halcyon: Scorecard) -> None:
    [row] = views.leaderboard_rows([("halcyon", halcyon)])
    assert row.serving_ratio == pytest.approx(halcyon.inference[1].ratio)
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
    assert [c.ratio is not None for c in costs] == [True, True, False]
    assert halcyon.price is not None and halcyon.price.ask_usd_per_gpu_hour == 3.30
    assert costs[0].at_ask == pytest.approx(3.30e6 / (6612.0 * 3600))
    html = brief_html(halcyon)
    assert "Per served token" in html and "not compared" in html


def test_a_serving_contract_is_not_asked_for_training_runs(halcyon: Scorecard) -> None:
    asks = views.missing_evidence(halcyon)
    assert not any("training runs" in a for a in asks)
    declared = halcyon.model_copy(update={"inference": [
        r.model_copy(update={"verdict": "unverified"}) for r in halcyon.inference]})
    assert any("states its GPU count" in a for a in views.missing_evidence(declared))
