"""Which claim each finding bears on, and with what effect: validation's findings mapped once,
through the data each rule declares (``Rule.effect``, ``cmax/validate/registry.py``).

A finding names a run (its ``run_id``) or a file; the claim it bears on is the run, or the
result, sweep, audit or incident log whose evidence that file is. What it does there is its
rule's declared effect (``cmax.findings.Effect``), and, for an error, that evidence failing
validation is no evidence of a pass. Score reads these bearings, never a rule id: a new rule
changes a rating by declaring its effect, nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cmax.findings import Effect, Finding, Subject
from cmax.scorecard import Bearing
from cmax.validate.registry import effect_of, subject_of


def same_file(a: str | None, b: str) -> bool:
    """Two bundle paths naming one file (one may be written relative to a folder entry)."""
    return a is not None and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


def _bearing(f: Finding) -> Bearing:
    return Bearing(rule=f.rule, severity=f.severity, effect=effect_of(f.rule),
                   subject=subject_of(f.rule), file=f.file, line=f.line, message=f.message)


class Bearings:
    """Every finding of a bundle with its declared effect, looked up by what it bears on."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.items: tuple[tuple[Finding, Bearing], ...] = tuple((f, _bearing(f))
                                                                for f in findings)

    @classmethod
    def of(cls, findings: Bearings | Iterable[Finding]) -> Bearings:
        """``findings`` mapped (a Bearings is returned as it is)."""
        return findings if isinstance(findings, Bearings) else cls(findings)

    def on(self, *, run_id: str | None = None, files: Iterable[str | None] = (),
           subjects: Iterable[Subject] = ()) -> list[Bearing]:
        """The findings bearing on a claim: those naming its run (``run_id``), and those naming
        no run but one of its ``files`` or about one of its ``subjects`` (the fleet, the audit,
        the bundle: what its rule declares); a finding with a run id bears only on that run."""
        names = [n for n in files if n]
        about = frozenset(subjects)
        out = []
        for f, b in self.items:
            if f.run_id is not None:
                hit = run_id is not None and f.run_id == run_id
            else:
                hit = b.subject in about or any(same_file(f.file, n) for n in names)
            if hit:
                out.append(b)
        return out

    def files_with(self, effect: Effect) -> set[str]:
        """The files findings of ``effect`` name (``not_counted``: the files that decide
        nothing)."""
        return {b.file for _, b in self.items if b.file and b.effect == effect}

    def files_with_errors(self) -> set[str]:
        """The files an error names: a result resting on one cannot pass."""
        return {b.file for _, b in self.items if b.file and b.severity == "error"}

    def with_effect(self, effect: Effect) -> list[Bearing]:
        """Every finding of ``effect``, in finding order."""
        return [b for _, b in self.items if b.effect == effect]


def rules_of(bearings: Sequence[Bearing], effect: Effect | None = None, *,
             errors: bool = False) -> list[str]:
    """The sorted rule ids among ``bearings`` of ``effect`` (any effect when None), only the
    errors when ``errors``."""
    return sorted({b.rule for b in bearings
                   if (effect is None or b.effect == effect)
                   and (not errors or b.severity == "error")})
