"""The ClusterMAX audit (``audit.values.json`` written by SemiAnalysis' ``cmax audit``).

Recognised by its JSON shape (``audit_data`` and ``cluster``, or the bare collector JSON);
graded into ``audit_checks`` rows by :mod:`cmax.ingest.clustermax_audit` (research
clustermax_audit_format.md).
"""

from __future__ import annotations

from typing import Any

from cmax.errors import CmaxError
from cmax.facts import Fact
from cmax.ingest import clustermax_audit
from cmax.ingest.clustermax_audit import AuditReport
from cmax.ingest.formats import AuditFormat, Probe, register

Parsed = tuple[dict[str, Any], AuditReport]


class ClusterMaxAudit(AuditFormat[Parsed]):
    id = "clustermax-audit"
    title = "ClusterMAX audit values"
    tool = "SemiAnalysis ClusterMAX `cmax audit` (audit.values.json, raw Slurm or k8s shape)"
    sample = "ingest/example_audit.values.json"
    priority = 90
    json_shape = staticmethod(clustermax_audit.is_audit_json)

    def parse(self, probe: Probe) -> Parsed:
        values = clustermax_audit.audit_from_data(
            probe.require_json("a ClusterMAX audit.values.json"), probe.path)
        try:
            report = clustermax_audit.grade_audit(values)
        except CmaxError as exc:
            if exc.file is not None:
                raise
            raise exc.with_context(file=probe.path) from None
        return values, report

    def summarise(self, parsed: Parsed, probe: Probe) -> dict[str, Any]:
        return clustermax_audit.audit_summary(parsed[1])

    def facts(self, parsed: Parsed) -> tuple[Fact, ...]:
        return clustermax_audit.audit_facts(parsed[0])

    def checks(self, parsed: Parsed, *,
               source_file: str) -> tuple[list[dict[str, Any]], str | None]:
        report = parsed[1]
        records = [{
            "check_id": c.key, "category": c.category, "criterion": c.criterion,
            "status": c.status, "observed": c.observed, "minimum": c.minimum,
            "evidence": f"{c.group}: audit_data.{c.key}" + (f" ({c.basis})" if c.basis else ""),
            "source_file": source_file,
        } for c in report.checks]
        return records, report.cluster


register(ClusterMaxAudit())
