"""Thin evidence says so on page 1: not scored instead of a 0, no sentence claiming the
absence of a shortfall when nothing was compared, the validation error count and what to
submit; `cmax report` warns on stderr as `cmax price` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.cli import main, report_cmd
from cmax.findings import Finding, count_findings
from cmax.judgement.exemplar import judge_exemplar
from cmax.render import page_one, reports
from cmax.scorecard import CategoryScore, Scorecard
from cmax.states import State
from tests.score.scorecard_factory import make_scorecard


def thin_card() -> Scorecard:
    """Two logs submitted that matched no reference, five validation errors, no incident log,
    no audit, no SLA: nothing scored."""
    card = make_scorecard()
    runs = [w.model_copy(update={"verdict": "no_reference", "ratio": None, "ci_low": None,
                                 "ci_high": None, "baseline": None}) for w in card.workloads]
    errors = [Finding(rule=f"comparability.r{i}", severity="error", file="cmax.toml",
                      message=f"problem {i}", fix="fix it") for i in range(5)]
    price = card.price.model_copy(update={  # type: ignore[union-attr]
        "throughput_ratio": None, "parity_usd_per_gpu_hour": None, "ask_usd_per_gpu_hour": None,
        "adjustment_pct": None, "usd_per_reference_gpu_hour": None, "goodput_ratio": 1.0,
        "goodput_loss_usd": 0.0, "drivers": [], "reasoning": []})
    return card.model_copy(update={
        "workloads": runs, "network": [], "mlperf": [], "reliability": None, "sla": None,
        "audit": None, "exemplar": judge_exemplar(runs, 0.95), "score": 0.0,
        "tier": "Underperforming",
        "score_tier": "Underperforming", "gates": [], "findings": errors,
        "finding_counts": count_findings(errors), "price": price, "suspect_nodes": [],
        "categories": [CategoryScore(name="networking", score=0, weight=0, verified=False)]})


def test_the_card_reads_not_scored() -> None:
    card = thin_card()
    assert card.score_state is State.NOT_SCORED
    gap = page_one.evidence_gap(card)
    assert gap is not None and gap.errors == 5
    assert any("none of the 2 training runs could be compared with a reference (no reference)"
               in s for s in gap.submit)
    assert any("interruption log" in s for s in gap.submit)


def test_scorecard_page_one_says_not_rated_and_what_to_submit() -> None:
    html = reports.scorecard_html(thin_card(), "x", "html", reports.ScorecardCharts())
    page1 = html[:html.index('id="price"')]
    assert "Not rated" in page1 and "weighted score 0.0" not in page1
    assert "5 validation errors in the evidence" in page1
    assert "To earn a rating, submit:" in page1
    assert "no shortfall" not in page1
    assert "no run could be compared with a reference, so there is neither a shortfall" in page1
    # the tile says the logs were submitted and not compared, not "not provided"
    assert "none compared" in page1 and "2 run(s) submitted" in page1
    assert "(no reference)" in page1 and "(not evaluated (no reference))" not in page1
    assert "— of reference" not in html
    # goodput is not claimed at 100% without an incident log
    assert "goodput 100.0%" not in page1 and "goodput not measured" in page1


def test_brief_claims_no_absence_of_shortfall_and_no_zero_loss() -> None:
    html = reports.brief_html(thin_card())
    assert "negotiate on market price" not in html
    assert "No measured argument yet" in html
    assert "$0" not in html and "not assessed: no incident log" in html
    assert "To earn a rating, submit what the list below asks for." in html


def test_a_rated_sample_like_card_has_no_gap() -> None:
    assert page_one.evidence_gap(make_scorecard()) is None


def test_cmax_report_warns_on_stderr(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(report_cmd, "_assess", lambda *args, **kwargs: thin_card())
    (tmp_path / "thin").mkdir()
    assert main(["report", str(tmp_path / "thin"), "-o", str(tmp_path / "out"),
                 "--no-pdf"]) == 0
    err = capsys.readouterr().err
    assert "cmax: warning: Example Cloud / example-h100-a: 5 validation error(s)" in err
    assert "not rated (no category scored)" in err


def test_a_missing_step_time_is_a_dash_without_a_unit() -> None:
    from cmax.render import formatting

    assert formatting.seconds(None) == "—" and formatting.seconds(12.345) == "12.35 s"
    card = thin_card()
    runs = [w.model_copy(update={"mean_step_time_s": None}) for w in card.workloads]
    html = reports.scorecard_html(card.model_copy(update={"workloads": runs}), "x", "html",
                                  reports.ScorecardCharts())
    assert "— s" not in html and "—s" not in html


def test_an_mlperf_only_bundle_says_why_its_results_count_for_nothing() -> None:
    """Seen on an MLPerf-only bundle (Azure's H200 llama2_70b_lora at 512 GPUs): page 1 said
    nothing could be scored without a word about the MLPerf result it held."""
    from cmax.scorecard import MlperfResult

    why = ("no NVIDIA llama2_70b_lora on NVIDIA H200-SXM5-141GB within 4x of 512 GPUs (NVIDIA "
           "ran [8]): time to train does not scale linearly that far, so there is no fair "
           "reference")
    card = thin_card().model_copy(update={"workloads": [], "mlperf": [MlperfResult(
        benchmark="llama2_70b_lora", runs=10, score_min=1.6085, verdict="no_reference",
        num_gpus=512, notes=["official score 1.60852 min", why])]})
    gap = page_one.evidence_gap(card)
    assert gap is not None
    assert gap.headline.endswith(f"The MLPerf result submitted could not be compared with a "
                                 f"reference: {why}.")
    html = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    assert "The MLPerf result submitted could not be compared" in html
    assert page_one.evidence_gap(thin_card()).headline.count("MLPerf") == 0  # type: ignore[union-attr]
