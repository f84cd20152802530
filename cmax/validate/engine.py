"""Run every rule family over one bundle's evidence and return sorted, de-duplicated findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from cmax.findings import Finding, sort_findings
from cmax.ingest.evidence import Evidence
from cmax.reference.view import ReferenceData, RefView
from cmax.resolve.case import resolve
from cmax.validate import (
    audit_rules,
    clocks,
    cluster_hosts,
    comparability,
    completeness,
    config_runs,
    consistency,
    copies,
    exemplar,
    fabrication,
    identity,
    inference_rules,
    known_logs,
    mlperf_rules,
    monitoring_rules,
    network_rules,
    reliability_rules,
    sanity,
    schema_rules,
    software,
    statistics,
    witness,
)
from cmax.validate.context import Context, build_context
from cmax.validate.registry import effect_of

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
    network_rules.check,
    reliability_rules.check,
    monitoring_rules.check,
    identity.check,
    witness.check,
    exemplar.check,
    inference_rules.check,
    cluster_hosts.check,
    copies.check,
    clocks.check,
    fabrication.check,
    config_runs.check,
    known_logs.check,
)


def validate(evidence: Evidence, reference: ReferenceData) -> list[Finding]:
    """Findings for a case judged against ``reference``, in a deterministic order.

    ``evidence`` is the resolved :class:`cmax.resolve.case.Case` (plain Evidence is resolved first).
    Reads only the case: no file is opened, so a case validates the same after its bundle is
    closed. Never raises for problems in the evidence: every problem is a finding.
    (Unreadable input is the ingest stage's job to reject with a CmaxError.)
    """
    ctx = build_context(resolve(evidence, reference), RefView(reference))
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
    """Run ids a finding of effect ``not_comparable`` names (the rule declares it, as the
    comparability family's errors do): the scorer rates them not_comparable."""
    return {f.run_id for f in findings if f.run_id and effect_of(f.rule) == "not_comparable"}


def runs_with_errors(findings: Iterable[Finding]) -> set[str]:
    """Run ids with any error finding (incomplete, insane, inconsistent or not comparable)."""
    return {f.run_id for f in findings if f.run_id and f.severity == "error"}
