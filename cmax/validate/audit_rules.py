"""ClusterMAX audit: FAIL verdicts of the audit, each with the criterion it breaks.

ClusterMAX's own CLI treats the security profile (the ``versions`` and ``isolation`` checks)
as the one with a failing exit code: ``cmax audit security`` exits 2 on any FAIL there, while
the full audit exits 0 whatever it finds. cmax follows that split: a security FAIL is an error,
any other FAIL a warning, and WARNING verdicts (often "attestation required", not an observed
defect) are summarised as info.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from cmax.findings import Finding
from cmax.validate.context import Context, norm_path
from cmax.validate.registry import Rule, finding, register

SECURITY_CATEGORIES = frozenset({"versions", "isolation", "security"})
SECURITY_EXTENSIONS = frozenset({"bmc-ipmi", "ufm-profile", "pcie-passthrough",
                                 "nvlink-boundary", "kubernetes-nodes-proxy"})

register(Rule(
    "audit.security-fail", "error", "ClusterMAX security check FAILs",
    "A check of the ClusterMAX security profile (component versions against published "
    "minimums, tenant isolation) grades FAIL: the cluster runs known-vulnerable software or "
    "lets tenants reach each other. ClusterMAX's `cmax audit security` exits non-zero on it.",
    "Patch or reconfigure as the criterion describes (https://www.clustermax.ai/criteria), then "
    "re-run the audit.",
    "SemiAnalysisAI/ClusterMAX audit_runner (security profile, exit 2 on FAIL) and "
    "audit_findings.py severities MISSING/VERSION.",
))
register(Rule(
    "audit.fail", "warning", "ClusterMAX check FAILs",
    "A non-security ClusterMAX check grades FAIL (a required component is missing or below its "
    "minimum). It lowers the rating category it belongs to.",
    "Install or configure the component the criterion names, then re-run the audit.",
    "SemiAnalysisAI/ClusterMAX criteria catalogue (criteria-checks.json).",
))
register(Rule(
    "audit.warnings", "info", "ClusterMAX checks graded WARNING",
    "WARNING verdicts are configuration gaps or unverified readings (\"attestation required\"), "
    "not observed defects; they are listed so a reviewer can ask for attestations.",
    "Provide the attestation or fix the configuration; re-run the audit.",
))
register(Rule(
    "audit.cluster-mismatch", "warning", "The audit is of a different cluster",
    "The audit's cluster name differs from [provider] cluster in cmax.toml, so the audit may not "
    "describe the system whose benchmarks are rated.",
    "Include the audit of the benchmarked cluster, or correct [provider] cluster.",
))


def _is_security(check_id: str, category: str) -> bool:
    return (category in SECURITY_CATEGORIES or check_id in SECURITY_EXTENSIONS
            or check_id.startswith(("securityVersions.", "security.")))


def check(ctx: Context) -> Iterator[Finding]:
    checks = ctx.tables["audit_checks"].filter(pl.col("check_id").is_not_null())
    audit_file = ctx.manifest.audit.path if ctx.manifest.audit else None
    if not checks.is_empty():
        status = pl.col("status").cast(pl.String).str.to_uppercase()
        for row in checks.filter(status == "FAIL").sort("check_id").iter_rows(named=True):
            check_id = str(row["check_id"])
            category = str(row.get("category") or "").lower()
            criterion = row.get("criterion") or "no published criterion (CLI-only check)"
            detail = [f"criterion {criterion}"]
            if row.get("observed"):
                detail.append(f"observed {row['observed']}")
            if row.get("minimum"):
                detail.append(f"minimum {row['minimum']}")
            rule = "audit.security-fail" if _is_security(check_id, category) else "audit.fail"
            yield finding(rule, f"{check_id} ({category or 'uncategorised'}) FAIL: "
                          + ", ".join(detail), file=row.get("source_file") or audit_file)
        warned = checks.filter(status == "WARNING").sort("check_id")
        if not warned.is_empty():
            ids = [str(c) for c in warned["check_id"].to_list()]
            shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
            yield finding("audit.warnings", f"{len(ids)} check(s) graded WARNING: {shown}",
                          file=audit_file)
    cluster = ctx.evidence.audit_cluster
    declared = ctx.manifest.provider.cluster
    if cluster and declared and norm_path(cluster).lower() != norm_path(declared).lower():
        yield finding("audit.cluster-mismatch",
                      f"the audit is of cluster {cluster!r}, cmax.toml names {declared!r}",
                      file=audit_file)
