"""Run every rule family over one bundle's evidence and return sorted, de-duplicated findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from cmax.evidence import Evidence
from cmax.findings import Finding, sort_findings
from cmax.validate import (
    audit_rules,
    comparability,
    completeness,
    consistency,
    mlperf_rules,
    sanity,
    schema_rules,
    software,
    statistics,
)
from cmax.validate.context import Context, build_context
from cmax.validate.refview import ReferenceLike, RefView

FAMILY_CHECKS: tuple[Callable[[Context], Iterator[Finding]], ...] = (
    schema_rules.check,
    completeness.check,
    comparability.check,
    sanity.check,
    consistency.check,
    mlperf_rules.check,
    statistics.check,
    software.check,
    audit_rules.check,
)


def validate(evidence: Evidence, reference: ReferenceLike) -> list[Finding]:
    """Findings for ``evidence`` judged against ``reference``, in a deterministic order.

    Never raises for problems in the evidence: every problem is a finding. (Unreadable input
    is the ingest stage's job to reject with a CmaxError.)
    """
    ctx = build_context(evidence, RefView(reference))
    seen: set[tuple[object, ...]] = set()
    out: list[Finding] = []
    for check in FAMILY_CHECKS:
        for item in check(ctx):
            key = (item.rule, item.file, item.line, item.message, item.run_id)
            if key not in seen:
                seen.add(key)
                out.append(item)
    return sort_findings(out)


def not_comparable_runs(findings: Iterable[Finding]) -> set[str]:
    """Run ids with an error in the comparability family: the scorer rates them not_comparable."""
    return {f.run_id for f in findings
            if f.run_id and f.severity == "error" and f.rule.startswith("comparability.")}


def runs_with_errors(findings: Iterable[Finding]) -> set[str]:
    """Run ids with any error finding (incomplete, insane, inconsistent or not comparable)."""
    return {f.run_id for f in findings if f.run_id and f.severity == "error"}
