"""Which workload results count for the price and the tier (scorecard models only, so the
report code that reads finished scorecards needs none of the scoring stack)."""

from __future__ import annotations

from cmax.scorecard import WorkloadResult

COMPARABLE_VERDICTS = ("pass", "fail", "inconclusive")
"""Verdicts that carry a real provider ÷ reference ratio (used by the suite and by pricing)."""


def rated(result: WorkloadResult) -> bool:
    """Whether a run's ratio goes into the price and the tier: comparable, measured, and its
    evidence passed validation. A run with a validation error (another precision than
    declared, a log shared with another claim, numbers too good to be true) keeps its ratio
    on the scorecard, but a figure that could flatter the provider must be earned by evidence.
    """
    return (result.verdict in COMPARABLE_VERDICTS and result.ratio is not None
            and not result.validation_errors)
