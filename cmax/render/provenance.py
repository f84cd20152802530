"""What each figure of a report rests on, as its label says it.

The provenance of a claim is decided once, by its judgement (``Scorecard.judgements``,
:mod:`cmax.judgement`); a report only reads it and names the witnesses behind it. A label names
who witnessed a figure the provider did not write, and what an independent witness of its
context only states: Slurm accounting witnesses a job's span, not the speed its log prints, so
a run it corroborates reads "provider-attested; Slurm accounting witnesses the context only:
job 123 in the accounting, held 2,460 s".
"""

from __future__ import annotations

from dataclasses import dataclass

from cmax.scorecard import (
    POWER_CLAIM,
    ClaimKind,
    InferenceResult,
    Judgement,
    Scorecard,
    WorkloadResult,
)
from cmax.states import INDEPENDENT_AUTHORS, Author, Provenance, State

SHORT: dict[Provenance, str] = {
    "independently witnessed": "witnessed", "provider-attested": "attested",
    "declared": "declared", "not assessed": "not assessed",
}
"""The label beside a figure in a table; :data:`LEGEND` says what each means."""

AUTHORS: dict[Author, str] = {
    "scheduler": "Slurm accounting", "buyer": "the buyer's monitoring",
    "third_party": "the third-party audit", "mlcommons": "MLCommons' published result",
    "provider": "the provider's files", "manifest": "the provider's manifest",
}
"""Who wrote a witness, in a report's words."""

ASSUMED_FROM: dict[ClaimKind, str] = {"energy": "reference default power"}
"""What an assumed figure of a kind was taken from: the label says it ("assumed (reference
default power)"), so a J/token the bundle never measured reads neither as attested nor as the
provider's word."""

LEGEND = ("Evidence labels: (independently) witnessed, stated by a source the provider did not "
          "write, named beside it; (provider-)attested, only the provider's own files; "
          "declared, only its word.")
"""What the evidence labels mean, said once in a scorecard (before its first table of them)
and in the text of ``cmax score``."""

_SHOWN = 2
"""Independent witnesses named in a label; the rest are counted."""


@dataclass(frozen=True)
class Source:
    """A figure's provenance (its judgement's), who witnessed the figure independently, and
    what independent witnesses of its context only (a job's span) state."""

    provenance: Provenance
    witnessed_by: tuple[str, ...] = ()
    """the independent authors of witnesses of the figure itself"""
    attested_too: bool = False
    """whether the provider's own files state the figure as well"""
    context: tuple[tuple[str, str], ...] = ()
    """(who, what it states) for each independent witness of the figure's context only"""
    assumed: str = ""
    """what an assumed figure was taken from (:data:`ASSUMED_FROM`); empty when not assumed"""

    @property
    def short(self) -> str:
        return "assumed" if self.assumed else SHORT[self.provenance]

    @property
    def heading(self) -> str:
        """The label's group in :func:`grouped`: its provenance, or "assumed"."""
        return "assumed" if self.assumed else self.provenance

    @property
    def note(self) -> str:
        """What the label adds to the provenance: what an assumed figure was taken from, who
        witnessed the figure (and that the provider's files state it too), or what an
        independent witness of its context states (Slurm accounting witnesses a run's span,
        not its speed); empty when nothing."""
        if self.assumed:
            return self.assumed
        parts = []
        if self.witnessed_by:
            parts.append(f"by {' and '.join(self.witnessed_by)}"
                         + (", and by the provider's files" if self.attested_too else ""))
        by: dict[str, list[str]] = {}
        for who, fact in self.context:
            by.setdefault(who, []).append(fact)
        parts += [f"{who} witnesses the context only: {', '.join(facts[:_SHOWN])}"
                  + (f" and {len(facts) - _SHOWN} more" if len(facts) > _SHOWN else "")
                  for who, facts in by.items()]
        return "; ".join(parts)

    @property
    def text(self) -> str:
        """The label in a sentence: the provenance and its :attr:`note`."""
        note = self.note
        if self.assumed:
            return f"assumed ({note})"
        if not note:
            return self.provenance
        return f"{self.provenance} {note}" if self.witnessed_by else f"{self.provenance}; {note}"


HEADINGS = ("independently witnessed", "provider-attested", "declared", "assumed",
            "not assessed")
"""The groups of :func:`grouped`, strongest first: the provenances, an assumed figure after
the declared ones."""


def grouped(named: list[tuple[str, Source]]) -> list[str]:
    """Figures by provenance, one sentence each ('Provider-attested: training throughput,
    fabric.'), a figure whose label says more with it in brackets; in the order of
    :data:`HEADINGS`."""
    out = []
    for heading in HEADINGS:
        these = [(name, s) for name, s in named if s.heading == heading]
        if not these:
            continue
        parts = [f"{name} ({s.note})" if s.note else name for name, s in these]
        out.append(f"{heading[:1].upper()}{heading[1:]}: {', '.join(parts)}.")
    return out


def source_of(judgement: Judgement | None) -> Source | None:
    """A judgement's provenance as a report states it; None without a judgement."""
    if judgement is None:
        return None
    independent = [w for w in judgement.witnesses if w.author in INDEPENDENT_AUTHORS]
    figure = [w for w in independent if w.attests == "figure"]
    context = [w for w in independent if w.attests != "figure"]
    assumed = (ASSUMED_FROM.get(judgement.kind, "")
               if judgement.state is State.ASSUMED else "")
    return Source(
        judgement.provenance, tuple(dict.fromkeys(AUTHORS[w.author] for w in figure)),
        any(w.author == "provider" and w.attests == "figure" for w in judgement.witnesses),
        tuple(dict.fromkeys((AUTHORS[w.author], w.fact) for w in context)), assumed)


def source(card: Scorecard, kind: ClaimKind, claim: str) -> Source | None:
    return source_of(card.judgement(kind, claim))


@dataclass(frozen=True)
class Sources:
    """A scorecard's figures' sources, looked up by what the templates hold (a run, a serving
    result, an MLPerf result's place)."""

    card: Scorecard

    def run(self, w: WorkloadResult) -> Source | None:
        return source(self.card, "training_run", w.run_id or "")

    def energy(self, w: WorkloadResult) -> Source | None:
        return source(self.card, "energy", w.run_id or w.log)

    def power(self) -> Source | None:
        """The power per GPU every priced J/token divides by: declared ([pricing]
        watts_per_gpu) or assumed (the reference's default)."""
        return source(self.card, "energy", POWER_CLAIM)

    def power_note(self) -> str | None:
        """The priced J/token's basis in a sentence, said once under a table of them: 'J/token:
        power per GPU ÷ tokens/s per GPU, the power assumed (reference default power).'"""
        power = self.power()
        if power is None:
            return None
        return f"J/token: power per GPU ÷ tokens/s per GPU, the power {power.text}."

    def serving(self, r: InferenceResult) -> Source | None:
        return source(self.card, "serving_result", r.entry)

    def storage(self, index: int) -> Source | None:
        return source(self.card, "storage_result", f"storage[{index}]")

    def mlperf(self, index: int) -> Source | None:
        return source(self.card, "mlperf_result", f"mlperf[{index}]")

    def of(self, kind: ClaimKind) -> Source | None:
        """The kind's one claim: exemplar_suite, fabric, reliability, sla, audit."""
        return source(self.card, kind, "exemplar" if kind == "exemplar_suite" else kind)
