"""Price drivers read one way everywhere: positive is worth less than the quote, a minus sign
worth more, said in plain words (no 'does -0.1% less work', no 'below the the')."""

from __future__ import annotations

from cmax.price.drivers import drivers
from cmax.render import page_one, reports, views
from tests.score.scorecard_factory import make_scorecard


def test_a_surplus_reads_more_work_never_a_negative_shortfall() -> None:
    card = make_scorecard()
    out = drivers(2.0, 1.001, 1.0, card, 0.0, 0.0)
    through = next(d for d in out if d.name == "Training throughput")
    assert through.usd_per_gpu_hour < 0
    assert "0.1% more work than the quote assumes" in through.detail
    assert "-0" not in through.detail and "−0" not in through.detail
    short = next(d for d in drivers(2.0, 0.9, 1.0, card, 0.0, 0.0)
                 if d.name == "Training throughput")
    assert short.usd_per_gpu_hour > 0 and "10.0% less work" in short.detail


def test_sla_credit_detail_has_no_doubled_article() -> None:
    card = make_scorecard()
    sla = card.sla.model_copy(update={"node_months": 192, "node_months_below": 19})  # type: ignore[union-attr]
    out = drivers(2.0, 0.9, 1.0, card.model_copy(update={"sla": sla}), 100.0, 1000.0)
    credit = next(d for d in out if d.kind == "credit")
    assert "below the contracted 99.9% uptime" in credit.detail and "the the" not in credit.detail


def test_the_scorecard_states_the_sign_convention_beside_the_drivers() -> None:
    html = reports.scorecard_html(make_scorecard(), "x", "html", reports.ScorecardCharts())
    assert page_one.DRIVER_LEGEND.replace("'", "&#39;") in html


def test_the_brief_says_a_favourable_driver_in_words() -> None:
    card = make_scorecard()
    p = card.price.model_copy(update={"drivers": drivers(  # type: ignore[union-attr]
        2.0, 1.05, 1.0, card, 0.0, 0.0)})
    reasons = [r.text for r in views.brief_reasons(card.model_copy(update={"price": p}))]
    assert any("In the provider's favour: worth $0.100 more per GPU-hour." in r for r in reasons)
