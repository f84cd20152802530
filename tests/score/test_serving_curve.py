"""A sweep point against a reference throughput-vs-interactivity curve
(cmax/score/serving_curve.py): interpolated at the point's own interactivity, never
extrapolated, never peak against peak."""

from __future__ import annotations

import pytest

from cmax.score.serving_curve import CurvePoint, interactivity, interpolate

# a curve in InferenceX's shape: throughput per GPU falls as tokens/s per user rise
CURVE = [CurvePoint(40.0, 1000.0), CurvePoint(10.0, 2000.0), CurvePoint(20.0, 1600.0)]


def test_interpolates_between_the_bracketing_points() -> None:
    assert interpolate(CURVE, 15.0) == pytest.approx(1800.0)
    assert interpolate(CURVE, 30.0) == pytest.approx(1300.0)
    assert interpolate(CURVE, 20.0) == pytest.approx(1600.0)  # a reference point itself


def test_never_extrapolates() -> None:
    assert interpolate(CURVE, 9.99) is None
    assert interpolate(CURVE, 40.01) is None
    assert interpolate([], 15.0) is None


def test_repeated_points_are_averaged() -> None:
    assert interpolate([CurvePoint(10.0, 900.0), CurvePoint(10.0, 1100.0)], 10.0) == 1000.0


def test_interactivity_is_1000_over_tpot() -> None:
    assert interactivity(25.0) == pytest.approx(40.0)
    assert interactivity(0.0) is None and interactivity(None) is None
