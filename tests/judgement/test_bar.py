"""One rule at the bar (cmax/judgement/bar.py) for training, serving, MLPerf and fabric."""

from __future__ import annotations

import pytest

from cmax.judgement.bar import against_bar, bar_verdict, point_against_bar
from cmax.score.inference import _verdict as serving_verdict
from cmax.states import NOT_PASSING


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (0.96, 0.99, "pass"), (0.90, 0.94, "fail"), (0.94, 0.96, "inconclusive"),
    (0.95, 0.99, "inconclusive"),  # touching the bar is not above it ("> 95 %")
    (0.90, 0.95, "inconclusive"),
])
def test_a_range_against_the_bar(low: float, high: float, verdict: str) -> None:
    assert against_bar(low, high, 0.95) == verdict


def test_a_point_exactly_at_the_bar_is_inconclusive() -> None:
    assert point_against_bar(0.95, 0.95) == "inconclusive"
    assert point_against_bar(0.9501, 0.95) == "pass"
    assert point_against_bar(0.9499, 0.95) == "fail"


def test_a_serving_result_at_the_bar_reads_as_a_training_run_at_the_bar() -> None:
    """Issue 37: a serving point estimate exactly at the bar passed while a training run at
    the bar was inconclusive."""
    at_bar = serving_verdict(0.95, None, "offline", "corroborated", 0.95, invalid=False,
                             reference_shown=True)
    assert at_bar == point_against_bar(0.95, 0.95) == "inconclusive"
    assert serving_verdict(0.95, (0.96, 0.99), "curve", "corroborated", 0.95, invalid=False,
                           reference_shown=True) == "pass"


@pytest.mark.parametrize(("verdict", "ratio"), [
    ("not_comparable", None),  # compared with no reference: nothing else to go on
    ("fail", 0.458),  # even a ratio against the declared model's reference decides nothing
])
def test_a_result_its_files_put_on_another_model_is_withheld(verdict: str,
                                                             ratio: float | None) -> None:
    """A serving result of another model than declared: without the contradiction a result
    with no ratio is counted by no gate; with it, it is withheld (counted, never passing)."""
    assert bar_verdict("not_comparable", None) == "not_rated"
    assert bar_verdict(verdict, ratio, errors=True, contradicted=True) == "withheld"
    assert "withheld" in NOT_PASSING
