"""Which workload results count for the price and the tier (scorecard models only, so the
report code that reads finished scorecards needs none of the scoring stack)."""

from __future__ import annotations

from collections.abc import Sequence

from cmax.judgement.bar import counted
from cmax.resolve.claims import EARNS_PASS, HOW_TO_EARN, Claim
from cmax.scorecard import InferenceResult, Scorecard, WorkloadResult
from cmax.states import verdict_label


def rated(result: WorkloadResult) -> bool:
    """Whether a run's ratio goes into the price and the tier: at the bar as the gates count
    it (``cmax/judgement/bar.py``): comparable, measured, and its evidence passed validation.
    A run with a validation error (another precision than declared, a log shared with another
    claim, numbers too good to be true) keeps its ratio on the scorecard, but a figure that
    could flatter the provider must be earned by evidence. ``unverified`` is not counted: its
    ratio is shown, but it compares the log with the reference of a model, scale or precision
    only cmax.toml vouches for (docs/scoring.md)."""
    return counted(result.verdict, result.ratio, errors=bool(result.validation_errors))


def serving_rated(result: InferenceResult) -> bool:
    """Whether a serving result's ratio goes into the price and the rubric: compared like with
    like (offline against offline, or on the reference curve) on a GPU count its own file
    states. ``unverified`` (a declared GPU count), ``invalid``, capped-without-curve and
    unreferenced results carry no ratio a price may rest on."""
    return counted(result.verdict, result.ratio)


def withheld_label(errors: Sequence[str]) -> str:
    """A result whose pass an error withholds, with the errors that withhold it."""
    return f"withheld ({', '.join(errors)})" if errors else "withheld"


def serving_withheld_by(card: Scorecard, result: InferenceResult) -> list[str]:
    """The errors that withhold a serving result, as its judgement names them (empty when its
    judgement withholds nothing): another model or GPU than declared, a contradicted GPU
    count, a result beyond its reference."""
    judged = card.judgement("serving_result", result.entry)
    if judged is None or judged.verdict != "withheld":
        return []
    return sorted({b.rule for b in judged.findings if b.severity == "error"})


def serving_standing(card: Scorecard, result: InferenceResult) -> str:
    """Why a serving result is not priced, in the words its verdict reads everywhere else:
    'withheld (inference.model-contradicted)', 'not verified', 'not evaluated (no
    reference)'. Read from its judgement and its verdict, never decided here."""
    judged = card.judgement("serving_result", result.entry)
    if judged is not None and judged.verdict == "withheld":
        return withheld_label(serving_withheld_by(card, result))
    return verdict_label(result.verdict)


def why_no_ratio(workloads: Sequence[WorkloadResult]) -> str:
    """Why no training run's ratio counts toward the tier's throughput or the price, in the
    words every report uses: nothing was compared, or runs were compared with a reference but
    none earned its figure (held unverified or withheld by a finding). Saying "nothing was
    compared" of a run measured at 99.8 % of its reference would be false."""
    held = sum(w.ratio is not None for w in workloads)
    if not workloads:
        return "nothing could be compared with a reference"
    if not held:
        return "no run could be compared with a reference"
    total = len(workloads)
    which = ((f"the {total} run" if total == 1 else f"all {total} runs") if held == total
             else f"{held} of the {total} runs")
    return (f"no run's ratio to a reference counts ({which} compared with one "
            f"{'is' if held == 1 else 'are'} not earned; the findings say why)")


def unverified_note(unearned: Sequence[Claim]) -> str:
    """Why a run is held at ``unverified`` and which evidence would earn the pass."""
    what = ", ".join(f"{c.kind.replace('_', ' ')} {c.value or '?'} ({c.status})"
                     for c in unearned)
    how = "; ".join(f"{kind.replace('_', ' ')}: {HOW_TO_EARN[kind]}" for kind in EARNS_PASS
                    if any(c.kind == kind for c in unearned))
    return (f"unverified: the run's {what} rest on cmax.toml alone, so its ratio cannot earn a "
            "pass. Submit the whole log, including its configuration header, stating "
            f"{how}")
