"""At the bar: the one rule that turns a ratio and its confidence range into pass, fail or
inconclusive, for training runs, serving results, MLPerf results and nccl-tests sweeps alike.

NVIDIA's bar is strict ("> 95% of baseline", dgxc-benchmarking Exemplar_validation.md), so a
result passes only when its whole range lies above the bar, fails only when its whole range
lies below it, and is inconclusive when the range reaches the bar: measured, but not shown to
be on either side. A point estimate is the degenerate range (``low == high``): one exactly at
the bar is inconclusive, as a range touching it is. Each kind of result may withhold a pass
for reasons of its own (a run that did not finish, evidence that failed validation, a pass
not earned); none moves the bar.
"""

from __future__ import annotations

from typing import Literal

BarVerdict = Literal["pass", "fail", "inconclusive"]


def against_bar(low: float, high: float, bar: float) -> BarVerdict:
    """pass when the whole range [low, high] is above ``bar``, fail when it is wholly below,
    inconclusive when it straddles or touches it."""
    if low > bar:
        return "pass"
    if high < bar:
        return "fail"
    return "inconclusive"


def point_against_bar(value: float, bar: float) -> BarVerdict:
    """A single figure (no spread to bootstrap) against the bar: the degenerate range."""
    return against_bar(value, value, bar)
