"""The fabric at the claimed scale, judged once against the network bar.

A manifest claims ``[system] nodes``; a one-node NVLink sweep or a two-node pair does not show
that the claimed system's scale-out fabric works as one. Only inter-node sweeps spanning at
least ``[network] min_node_share`` of the claimed nodes decide the fabric
(``cmax/score/scale.py`` picks them, a :class:`FabricScale`; docs/network.md, Scale).

Each deciding sweep's verdict is the one rule at the bar (:func:`cmax.judgement.bar.bar_verdict`):
an error naming its file withholds a pass, never a fail. The fabric is **met** when every
sweep counted passes, **not met** when one counted does not (a fail, an inconclusive, an
unverified result, or one whose pass an error withholds: a contested sweep is counted, so it
cannot drop out and leave the fabric to the others), and **not evaluated** when no sweep
spanning the claimed system was measured against the bar. Its verdict as the gates count it
is the sweeps' together: pass, fail when one fails, else withheld, inconclusive or
unverified; not rated when none decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cmax.judgement.bar import bar_verdict
from cmax.judgement.bearings import Bearings, rules_of
from cmax.scorecard import NetworkResult
from cmax.states import GateVerdict, State


@dataclass(frozen=True)
class FabricScale:
    """The sweeps that may decide the fabric, the sentence saying why, and the network bar."""

    deciding: Sequence[NetworkResult]
    scale: str
    bar: float


@dataclass(frozen=True)
class FabricStanding:
    """The fabric against its bar: the verdict the gates count, its bar state, and why."""

    verdict: GateVerdict
    bar_state: State
    reason: str


_WORST_FIRST: tuple[GateVerdict, ...] = ("fail", "withheld", "inconclusive", "unverified")
"""How sweeps counted together fall short: one failing fails the fabric."""


def _together(verdicts: Sequence[GateVerdict]) -> GateVerdict:
    for worst in _WORST_FIRST:
        if worst in verdicts:
            return worst
    return "pass"


def fabric_standing(scale: FabricScale, findings: Bearings) -> FabricStanding:
    """The fabric's standing from its deciding sweeps and the errors that name them."""
    if not scale.deciding:
        return FabricStanding("not_rated", State.NOT_EVALUATED, scale.scale)
    counted: list[GateVerdict] = []
    detail = []
    for n in scale.deciding:
        errors = rules_of(findings.on(files=[n.file]), errors=True)
        verdict = bar_verdict(n.verdict, n.ratio, errors=bool(errors))
        line = f"{n.collective} {n.nodes} node(s) {n.ratio or 0.0:.3f} {n.verdict}"
        if verdict == "withheld":
            line += (f" (withheld by {', '.join(errors)}: not passing until a sweep the "
                     "error does not name shows the bar)")
        if verdict == "not_rated":
            line += " (not counted: not rated)"
        else:
            counted.append(verdict)
        detail.append(line)
    what = (f"inter-node nccl-tests sweeps pass the [network] bar ({scale.bar:.0%} of reference "
            "busbw)")
    if not counted:
        return FabricStanding("not_rated", State.NOT_EVALUATED,
                              f"no sweep spanning the claimed system can decide it: "
                              f"{', '.join(detail)}; {scale.scale}")
    together = _together(counted)
    met = counted.count("pass")
    below = counted.count("fail")
    return FabricStanding(
        together, State.MET if together == "pass" else State.NOT_MET,
        f"{met} of {len(counted)} {what}, {below} conclusively below (needs every one above "
        f"it): {', '.join(detail)}; {scale.scale}")
