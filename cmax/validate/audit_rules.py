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
from cmax.ingest.facts import Fact, facts_of
from cmax.validate.context import Context, norm_path
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import AUDIT_MIN_NODE_SHARE

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
    "audit.cluster-mismatch", "error", "The audit is of a different cluster",
    "The audit's cluster name differs from [provider] cluster in cmax.toml: the audit describes "
    "another system than the one whose benchmarks are rated (a contradiction between the "
    "manifest and the evidence, both names quoted). It decides no gate.",
    "Include the audit of the benchmarked cluster, or correct [provider] cluster.",
    effect="doubt",
))
register(Rule(
    "audit.inconsistent", "error", "The audit contradicts itself",
    "The audit's cluster-wide counts and flags disagree (PCIe ACS `enabled` against "
    "`enabledCount`, GPUs against nodes x GPUs per node, nodes checked against nodes): one of "
    "them was edited, so none of the checks resting on them can decide a gate.",
    "Submit the audit.values.json exactly as `cmax audit` wrote it; re-run the audit.",
    "SemiAnalysisAI/ClusterMAX collector JSON (gpus.pcieAcs, gpus.total/nodeCount/perNode; "
    "research clustermax_audit_format.md)",
    effect="doubt",
))
register(Rule(
    "audit.partial", "error", "The audit covers a small part of the claimed system",
    "The audit checked fewer nodes than a quarter of the nodes the manifest claims (a pilot "
    "or a test partition attached to a larger system): it decides no gate.",
    "Run the audit on the rated cluster's production partition, or correct [system] nodes.",
    f"cmax/validate/thresholds.py AUDIT_MIN_NODE_SHARE = {AUDIT_MIN_NODE_SHARE:g}",
    effect="doubt",
))

def _is_security(check_id: str, category: str) -> bool:
    return (category in SECURITY_CATEGORIES or check_id in SECURITY_EXTENSIONS
            or check_id.startswith(("securityVersions.", "security.")))


def _tally(facts: tuple[Fact, ...], key: str) -> str | None:
    return next((f.value for f in facts_of(facts, "tally") if f.where == key), None)


def _int(value: str | None) -> int | None:
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


def _contradictions(facts: tuple[Fact, ...]) -> list[str]:
    out = []
    enabled = (_tally(facts, "gpus.pcieAcs.enabled") or "").lower()
    count = _int(_tally(facts, "gpus.pcieAcs.enabledCount"))
    bridges = _int(_tally(facts, "gpus.pcieAcs.totalBridges"))
    of = f" of {bridges}" if bridges is not None else ""
    if enabled in ("false", "no", "0") and count:
        out.append(f"gpus.pcieAcs.enabled = {enabled} but enabledCount = {count}{of} bridges")
    if enabled in ("true", "yes", "1") and count == 0:
        out.append(f"gpus.pcieAcs.enabled = {enabled} but enabledCount = 0{of} bridges")
    if count is not None and bridges is not None and count > bridges:
        out.append(f"gpus.pcieAcs.enabledCount = {count} exceeds totalBridges = {bridges}")
    total, nodes, per = (_int(_tally(facts, k)) for k in
                         ("gpus.total", "gpus.nodeCount", "gpus.perNode"))
    if total is not None and nodes is not None and per is not None and total != nodes * per:
        out.append(f"gpus.total = {total} but nodeCount x perNode = {nodes} x {per} = "
                   f"{nodes * per}")
    checked = _int(_tally(facts, "gpus.dmesgErrors.nodesChecked"))
    if checked is not None and nodes is not None and checked > nodes:
        out.append(f"gpus.dmesgErrors.nodesChecked = {checked} exceeds nodeCount = {nodes}")
    return out


def _audit_nodes(facts: tuple[Fact, ...]) -> int | None:
    counted = [_int(_tally(facts, "gpus.nodeCount"))]
    counted += [_int(f.value) for f in facts_of(facts, "node_count")]
    found = [n for n in counted if n is not None]
    return max(found) if found else None


def _integrity(ctx: Context) -> Iterator[Finding]:
    for f in ctx.case.files:
        if f.kind != "clustermax-audit":
            continue
        wrong = _contradictions(f.facts)
        if wrong:
            yield finding("audit.inconsistent", "; ".join(wrong), file=f.path)
        nodes = _audit_nodes(f.facts)
        claimed = ctx.manifest.system.nodes
        if nodes is not None and nodes < AUDIT_MIN_NODE_SHARE * claimed:
            yield finding("audit.partial",
                          f"the audit checked {nodes} node(s) of the {claimed} [system] claims "
                          f"({nodes / claimed:.0%}; at least {AUDIT_MIN_NODE_SHARE:.0%} needed "
                          "to decide a gate)", file=f.path)


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
    yield from _integrity(ctx)
    cluster = ctx.evidence.audit_cluster
    declared = ctx.manifest.provider.cluster
    if cluster and declared and norm_path(cluster).lower() != norm_path(declared).lower():
        yield finding("audit.cluster-mismatch",
                      f"the audit is of cluster {cluster!r}, cmax.toml names {declared!r}",
                      file=audit_file)
