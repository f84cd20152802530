"""Findings: one row per problem the validator found in a submission."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}

Effect = Literal["none", "not_comparable", "unverified", "not_counted", "doubt", "not_rated",
                 "other_system", "not_independent"]
"""What a finding does to the claim it bears on, declared with its rule
(``cmax/validate/registry.py``) and applied by the judgement layer:

- ``none``: the reader is told; the claim stands as the evidence leaves it (an error still
  withholds a pass from the result it bears on);
- ``not_comparable``: the result is not compared with its reference;
- ``unverified``: a pass is held until other evidence corroborates it;
- ``not_counted``: the file decides nothing (another cluster's sweep, a copy);
- ``doubt``: the audit decides no gate;
- ``not_rated``: the result is shown, not rated (another submitter's, or cited as context);
- ``other_system``: the result's files put it on another system than the rated cluster (an
  MLPerf result is then shown, not rated; on a training run, an error, it withholds a pass);
- ``not_independent``: the result's runs are copies or edited: no valid result, failed.
"""

EFFECTS: tuple[Effect, ...] = get_args(Effect)

Subject = Literal["run", "file", "result", "audit", "fleet", "bundle"]
"""What a rule's finding is about: a training run (its ``run_id``, else its log), an evidence
file, a result (a serving or MLPerf result, through its files), the audit, the fleet and its
incident log, or the bundle as a whole."""


class Finding(BaseModel):
    """A rule that fired: where, why it matters and how to fix it."""

    model_config = ConfigDict(frozen=True)

    rule: str
    """rule id (cmax validate --rules, cmax docs rules)"""
    severity: Severity
    """error (the bundle fails validation), warning or info"""
    file: str | None = None
    """the file in the bundle it concerns"""
    line: int | None = None
    """the line in that file"""
    message: str
    """what was found"""
    fix: str
    """how to fix it"""
    run_id: str | None = None
    """the run it concerns, e.g. runs[0]"""


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Deterministic order: severity, then file, line, rule, message."""
    return sorted(
        findings,
        key=lambda f: (SEVERITY_ORDER[f.severity], f.file or "", f.line or 0, f.rule, f.message),
    )


def count_findings(findings: Iterable[Finding]) -> dict[str, int]:
    counts = Counter(f.severity for f in findings)
    return {sev: counts.get(sev, 0) for sev in ("error", "warning", "info")}
