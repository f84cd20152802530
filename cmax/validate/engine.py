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


def blocks_comparison(item: Finding) -> bool:
    """An error in the comparability family: the run it concerns is not comparable.

    The one home of that decision; the scorer rates such a run ``not_comparable``.
    """
    return item.severity == "error" and item.rule.startswith("comparability.")


#: errors that make the file they name not counted where it would decide something (a sweep of
#: another cluster or a copy of another sweep does not decide the fabric gate)
NOT_COUNTED_RULES = frozenset({"crossfile.hosts-of-another-cluster", "crossfile.copied-sweep",
                               "network.hosts-outside-cluster"})


def uncounted_files(findings: Iterable[Finding]) -> set[str]:
    """Files an error of :data:`NOT_COUNTED_RULES` names: the scorer does not count them."""
    return {f.file for f in findings
            if f.file and f.severity == "error" and f.rule in NOT_COUNTED_RULES}


def holds_unverified(item: Finding) -> bool:
    """A warning that betrays fabrication (the ``fabrication`` family) or a run faster than
    the other runs of its configuration (``crossfile.runs-disagree``): the run it concerns
    cannot count as a pass until other evidence corroborates it; the scorer rates it
    ``unverified``."""
    return item.rule.startswith("fabrication.") or item.rule == "crossfile.runs-disagree"


def not_comparable_runs(findings: Iterable[Finding]) -> set[str]:
    """Run ids with an error in the comparability family: the scorer rates them not_comparable."""
    return {f.run_id for f in findings if f.run_id and blocks_comparison(f)}


def runs_with_errors(findings: Iterable[Finding]) -> set[str]:
    """Run ids with any error finding (incomplete, insane, inconsistent or not comparable)."""
    return {f.run_id for f in findings if f.run_id and f.severity == "error"}
