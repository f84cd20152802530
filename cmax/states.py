"""The one vocabulary of states every output uses: what a gate, a run, a category or the
Exemplar suite may honestly be said to be.

A report that calls the same fact "FAIL" on the terminal, "not evaluated" in the HTML and
"declared" in the appendix makes the reader guess which is true. Every output (the CLI's text,
the scorecard JSON, the HTML and PDF reports) names a state through :class:`State`: its
``value`` in JSON, its ``label`` in text and on a page, its ``tone`` for the page's colour.
The mappings from each model's own field (a gate's ``status``, a run's ``verdict``, a
category's evidence) to a state live here too, so a new status is added in one place.

The states, strongest claim first:

- ``passed`` / ``failed``: decided by measured evidence against a stated bar;
- ``met`` / ``not met``: a suite of results (the Exemplar suite) judged as a whole against
  its bar: met when every result of every workload in it passes, not met when one fails or
  cannot be told from the bar (``cmax/judgement/exemplar.py``);
- ``inconclusive``: measured, but the confidence range straddles the bar;
- ``measured``: scored from measured evidence (a category, which has no bar of its own);
- ``earned``: a claim the evidence stands behind: measured, its identity corroborated, nothing
  found against it (a judgement, ``cmax/judgement/claims.py``);
- ``declared``: the provider's own statement, not checked against evidence;
- ``assumed``: taken from the reference recipe because nothing states it;
- ``contradicted``: the evidence says otherwise (a finding or a ledger entry shows it);
- ``not verified``: evidence was submitted but what validation found holds it (an error, or
  a finding that holds a pass until corroborated): it earns no pass;
- ``not evaluated``: nothing conclusive was submitted to decide it;
- ``not assessed``: a claim no evidence bears on, or that could not be put to its test;
- ``not scored``: too little evidence to give a number at all (a score of 0 would be a claim).
"""

from __future__ import annotations

import enum
from typing import Literal, get_args

Tone = Literal["good", "warn", "bad", "neutral"]


class State(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    MET = "met"
    NOT_MET = "not_met"
    INCONCLUSIVE = "inconclusive"
    MEASURED = "measured"
    EARNED = "earned"
    DECLARED = "declared"
    ASSUMED = "assumed"
    CONTRADICTED = "contradicted"
    NOT_VERIFIED = "not_verified"
    NOT_EVALUATED = "not_evaluated"
    NOT_ASSESSED = "not_assessed"
    NOT_SCORED = "not_scored"

    @property
    def label(self) -> str:
        """How text, HTML and PDF write the state: lower case, words spaced."""
        return self.value.replace("_", " ")

    @property
    def tone(self) -> Tone:
        return _TONES[self]

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_TONES: dict[State, Tone] = {
    State.PASSED: "good", State.FAILED: "bad", State.MET: "good", State.NOT_MET: "bad",
    State.INCONCLUSIVE: "warn",
    State.MEASURED: "good", State.EARNED: "good", State.DECLARED: "warn",
    State.ASSUMED: "warn", State.CONTRADICTED: "bad", State.NOT_VERIFIED: "bad",
    State.NOT_EVALUATED: "neutral", State.NOT_ASSESSED: "neutral", State.NOT_SCORED: "neutral",
}

_MEANINGS: dict[State, str] = {
    State.PASSED: "measured evidence meets the bar",
    State.FAILED: "measured evidence falls short of the bar",
    State.MET: "every result of the suite passes its bar",
    State.NOT_MET: "a result of the suite falls short of its bar or cannot be told from it",
    State.INCONCLUSIVE: "measured, but the 95% confidence range straddles the bar",
    State.MEASURED: "scored from measured evidence",
    State.EARNED: "measured, its identity corroborated and nothing found against it",
    State.DECLARED: "the provider's own statement, not checked against evidence",
    State.ASSUMED: "taken from the reference recipe because nothing states it",
    State.CONTRADICTED: "the evidence says otherwise",
    State.NOT_VERIFIED: "evidence was submitted but what validation found holds it: it earns "
                        "no pass",
    State.NOT_EVALUATED: "nothing conclusive was submitted to decide it",
    State.NOT_ASSESSED: "no evidence bears on it, or it could not be put to its test",
    State.NOT_SCORED: "too little evidence to give a score",
}

CLAIM_STATES = (State.EARNED, State.DECLARED, State.ASSUMED, State.NOT_VERIFIED,
                State.CONTRADICTED, State.NOT_ASSESSED)
"""What a claim amounts to (a judgement's ``state``, ``cmax/judgement/claims.py``)."""

BAR_STATES = (State.MET, State.NOT_MET, State.NOT_EVALUATED)
"""A claim judged against a bar (a judgement's ``bar_state``; the Exemplar suite's state)."""

Author = Literal["provider", "manifest", "buyer", "third_party", "mlcommons", "scheduler"]
"""Who wrote a witness: the provider's own files (logs, sweeps, diagnostics, incident log,
telemetry), its manifest (cmax.toml), the buyer's monitoring, a third-party audit, an
MLCommons-published result, or the scheduler's accounting."""

INDEPENDENT_AUTHORS: frozenset[str] = frozenset({"buyer", "third_party", "mlcommons",
                                                 "scheduler"})
"""Authors who are not the provider: a witness of theirs is independent of the provider."""

Provenance = Literal["independently witnessed", "provider-attested", "declared",
                     "not assessed"]
"""What a figure rests on, as every report labels it: a witness the provider did not write,
only the provider's own files, only its statement, or nothing assessed."""

PROVENANCES: tuple[Provenance, ...] = ("independently witnessed", "provider-attested",
                                       "declared", "not assessed")


AtBar = Literal["pass", "fail", "inconclusive"]
"""A result compared like with like against its bar: its whole range above it, wholly below
it, or reaching it (the rule: ``cmax/judgement/bar.py``). The one statement of which verdicts
are comparable: every other verdict vocabulary is built from this one."""

AT_THE_BAR: tuple[AtBar, ...] = get_args(AtBar)
"""The comparable verdicts: a result holding one carries a real provider ÷ reference ratio."""

Verdict = Literal[AtBar, "not_comparable", "no_reference", "unverified"]
"""A training run's, sweep's or MLPerf result's verdict: at the bar, not comparable with its
reference, without a reference, or measured but resting on what only cmax.toml states."""

MEASURED_VERDICTS: tuple[str, ...] = (*AT_THE_BAR, "unverified")
"""Verdicts of a result measured against its reference (``unverified`` included: its ratio is
real, its pass is not earned)."""

GateVerdict = Literal[AtBar, "unverified", "withheld", "not_rated"]
"""A result's verdict at its bar as the gates count it (``cmax/judgement/bar.py``
``bar_verdict``): at the bar; unverified (measured, but its pass rests on what only the
manifest states: counted, never passing); withheld (measured against the bar and not below
it, but an error bears on it: counted, never passing); not rated (no ratio, not comparable,
no reference: no gate counts it)."""

NOT_PASSING: tuple[GateVerdict, ...] = ("unverified", "withheld")
"""Gate verdicts of a result measured against its bar whose pass is not earned: a gate that
needs every result of its kind to pass is never met while one exists, and a floor is not
rescued by one."""


def bar_state(verdict: str) -> State:
    """A result's standing against its bar: met when it passes, not met when it was compared
    and did not pass (inconclusive is measured but not shown above the bar, as the Exemplar
    suite counts it), not evaluated when it was not compared like with like."""
    if verdict not in AT_THE_BAR:
        return State.NOT_EVALUATED
    return State.MET if verdict == "pass" else State.NOT_MET


GATE_STATES: dict[str, State] = {
    "passed": State.PASSED, "failed": State.FAILED, "not_evaluated": State.NOT_EVALUATED,
    "declared": State.DECLARED,
}
"""A gate's ``status`` → its state."""

VERDICT_STATES: dict[str, State] = {
    "pass": State.PASSED, "fail": State.FAILED, "inconclusive": State.INCONCLUSIVE,
    "not_comparable": State.NOT_EVALUATED, "no_reference": State.NOT_EVALUATED,
    "unverified": State.NOT_VERIFIED, "invalid": State.NOT_VERIFIED,
}
"""A run's, sweep's or MLPerf result's ``verdict`` → its state (a run that could not be
compared, or has no reference, was not evaluated against the bar)."""


_NOT_EVALUATED_BECAUSE: dict[str, str] = {
    "not_comparable": "not comparable", "no_reference": "no reference",
}


def verdict_label(verdict: str) -> str:
    """A verdict in words: its state's label, with why when a run was not evaluated
    ("not evaluated (no reference)"). Text, HTML and PDF all write verdicts with this."""
    state = VERDICT_STATES.get(verdict)
    if state is None:
        return verdict
    why = _NOT_EVALUATED_BECAUSE.get(verdict)
    return f"{state.label} ({why})" if why else state.label


def gate_state(status: str) -> State:
    """The state of a gate status; an unknown status is a programming error, never a pass."""
    return GATE_STATES[status]


def verdict_state(verdict: str) -> State:
    return VERDICT_STATES[verdict]


NOT_ASSESSED = "not assessed"
"""The one word for a sum of money cmax could not assess (a goodput loss without an incident
log, an SLA credit without terms or incidents): JSON null, never printed as $0, which would
read as "assessed, and nothing is owed"."""
