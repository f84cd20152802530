"""Findings: one row per problem the validator found in a submission."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


class Finding(BaseModel):
    """A rule that fired: where, why it matters and how to fix it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

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
