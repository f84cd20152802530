"""At the bar: the one rule that turns a ratio and its confidence range into pass, fail or
inconclusive, for training runs, serving results, MLPerf results and nccl-tests sweeps alike,
and the one rule for which of those verdicts a gate, the price and the tier count.

NVIDIA's bar is strict ("> 95% of baseline", dgxc-benchmarking Exemplar_validation.md), so a
result passes only when its whole range lies above the bar, fails only when its whole range
lies below it, and is inconclusive when the range reaches the bar: measured, but not shown to
be on either side. A point estimate is the degenerate range (``low == high``): one exactly at
the bar is inconclusive, as a range touching it is. Each kind of result may withhold a pass
for reasons of its own (a run that did not finish, evidence that failed validation, a pass
not earned); none moves the bar.

The vocabulary (which verdicts are at the bar, the gates' verdicts, a verdict's bar state) is
stated once in :mod:`cmax.states`, below the scorecard models that type their fields with it.
"""

from __future__ import annotations

from cmax.states import AT_THE_BAR, MEASURED_VERDICTS, AtBar, GateVerdict


def against_bar(low: float, high: float, bar: float) -> AtBar:
    """pass when the whole range [low, high] is above ``bar``, fail when it is wholly below,
    inconclusive when it straddles or touches it."""
    if low > bar:
        return "pass"
    if high < bar:
        return "fail"
    return "inconclusive"


def point_against_bar(value: float, bar: float) -> AtBar:
    """A single figure (no spread to bootstrap) against the bar: the degenerate range."""
    return against_bar(value, value, bar)


def bar_verdict(verdict: str, ratio: float | None, *, errors: bool = False,
                contradicted: bool = False) -> GateVerdict:
    """A result's verdict at its bar as the gates count it, from the one verdict its result
    carries: pass / fail / inconclusive when its ratio was compared like with like and no
    error bears on it; unverified when it was measured but its pass rests on what only the
    manifest states; withheld when it was measured against the bar and not shown below it,
    but an error bears on it (a serving result's ``invalid`` with a ratio is one); not rated
    when nothing was measured against the bar (no ratio, not comparable, no reference).

    An error withholds what could flatter the provider, never a fail: a result wholly below
    its bar fails whatever else is wrong with it. A withheld or unverified result is counted
    by every gate and passes none (:data:`cmax.states.NOT_PASSING`), so an error on one
    result never lets a gate that needs every result pass on the others.

    ``contradicted``: the result's own files put it on another model or GPU than it is
    declared as (a serving result an error of effect ``not_comparable`` names). It was
    offered as evidence of the declared claim and is compared with no reference, so it has
    neither a ratio nor a fail: it is withheld, counted by every gate and passing none."""
    if contradicted:
        return "withheld"
    if ratio is None:
        return "not_rated"
    if verdict == "fail":
        return "fail"
    if verdict not in (*MEASURED_VERDICTS, "invalid"):
        return "not_rated"
    if errors or verdict == "invalid":
        return "withheld"
    for at in AT_THE_BAR:
        if verdict == at:
            return at
    return "unverified"


def counted(verdict: str, ratio: float | None, *, errors: bool = False) -> bool:
    """Whether a result's ratio counts for the price, the tier and the scale the evidence
    proves: compared like with like at its bar, measured, and no error bears on it (a ratio
    an error contests may flatter the provider however low it is)."""
    return not errors and bar_verdict(verdict, ratio) in AT_THE_BAR
