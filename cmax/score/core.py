"""score(): assemble one bundle's Scorecard from the scoring modules.

Pure and deterministic: the same evidence, findings, reference and rubric always give the same
Scorecard (the bootstrap seed is in the rubric), because reports must be reproducible and an
auditor re-running a score months later must get the same tier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import polars as pl

from cmax._about import __version__
from cmax.findings import Finding, count_findings, sort_findings
from cmax.ingest.evidence import Evidence
from cmax.judgement.bearings import Bearings
from cmax.judgement.claims import GateReads, judge_claims
from cmax.judgement.exemplar import judge_exemplar
from cmax.reference.view import RefView
from cmax.resolve.case import resolve
from cmax.score.acceptance import unit_acceptance
from cmax.score.inference import inference_results
from cmax.score.mlperf import mlperf_results
from cmax.score.network import network_results, uncounted
from cmax.score.nodes import network_pairs, suspect_nodes
from cmax.score.performance import suite_throughput, workload_results
from cmax.score.rating import (
    RatingInputs,
    coverage_gate,
    evaluate_gates,
    final_tier,
    rate_categories,
    weighted_score,
)
from cmax.score.reference_api import ReferenceData, canonical_gpu, market_price
from cmax.score.reliability import reliability_result, sla_result
from cmax.score.rubric import Rubric
from cmax.score.scale import fabric_scale, proven_scale
from cmax.score.storage import storage_results
from cmax.scorecard import (
    AuditCheck,
    AuditSummary,
    CategoryScore,
    ClaimEntry,
    EvidenceFileRef,
    Gate,
    Scorecard,
    Tier,
)

AUDIT_STATUSES = ("PASS", "WARNING", "FAIL", "SKIPPED")


def audit_summary(evidence: Evidence) -> AuditSummary | None:
    table = evidence.audit_checks
    spec = evidence.manifest.audit
    if spec is None and table.is_empty():
        return None
    file = spec.path if spec else str(table["source_file"].drop_nulls().first() or "audit")
    checks = []
    for row in table.iter_rows(named=True):
        status = str(row["status"] or "").strip().upper()
        if status not in AUDIT_STATUSES:
            continue
        checks.append(AuditCheck(
            check_id=str(row["check_id"]), category=str(row["category"] or ""),
            criterion=str(row["criterion"] or ""), status=status,
            observed=row["observed"], minimum=row["minimum"]))
    counts = {s: sum(1 for c in checks if c.status == s) for s in AUDIT_STATUSES}
    return AuditSummary(file=file, cluster=evidence.audit_cluster, counts=counts, checks=checks)


def _unmapped_audit(evidence: Evidence, rubric: Rubric) -> list[str]:
    table = evidence.audit_checks
    if table.is_empty():
        return []
    cats: set[str] = set()
    ids: set[str] = set()
    for cat in rubric.categories.values():
        for comp in cat.components:
            cats.update(c.lower() for c in comp.audit_categories)
            ids.update(comp.criteria)
    left = table.filter(~pl.col("category").str.to_lowercase().is_in(sorted(cats))
                        & ~pl.col("criterion").is_in(sorted(ids))
                        & ~pl.col("check_id").is_in(sorted(ids)))
    if left.is_empty():
        return []
    names = sorted({str(c) for c in left["category"].to_list()})
    return [f"{left.height} audit check(s) in categories {', '.join(names)} are not mapped to "
            f"any rubric category and carry no points (rubric {rubric.label})"]


def _rate(inputs: RatingInputs, rubric: Rubric
          ) -> tuple[list[CategoryScore], float, Tier, list[Gate], Tier]:
    """Categories, weighted score, its tier, the gates and the final tier for ``inputs``."""
    categories = rate_categories(inputs, rubric)
    total = weighted_score(categories)
    by_score = rubric.tiers.tier_for(total)
    gates = [*evaluate_gates(inputs, rubric), coverage_gate(categories, rubric)]
    return categories, total, by_score, gates, final_tier(total, gates, rubric)


def score(
    evidence: Evidence,
    findings: Sequence[Finding],
    reference: ReferenceData,
    rubric: Rubric,
) -> Scorecard:
    """Rate one case (plain Evidence is resolved first). ``price`` is left None; cmax.price
    fills it."""
    evidence = resolve(evidence, reference)
    manifest = evidence.manifest
    system = manifest.system
    ordered = sort_findings(findings)
    bearings = Bearings(ordered)
    workloads = workload_results(evidence, bearings, reference, rubric)
    exemplar = judge_exemplar(workloads, rubric.performance.bar)
    not_counted = bearings.files_with("not_counted")
    network = uncounted(network_results(evidence, reference, rubric), not_counted)
    pairs = network_pairs(evidence, not_counted)
    mlperf = mlperf_results(evidence, reference, rubric, bearings)
    inference = inference_results(
        evidence, bearings, RefView(reference), rubric.performance,
        manifest.pricing.usd_per_gpu_hour if manifest.pricing else None)
    reliability = reliability_result(evidence, reference)
    storage, checkpoint = storage_results(evidence, RefView(reference))
    sla = sla_result(evidence, reference)
    audit = audit_summary(evidence)
    throughput, _ = suite_throughput(workloads)
    gpu = canonical_gpu(reference, system.gpu) or system.gpu
    market, market_source = market_price(reference, gpu)
    # judged before the rating: the measured gates read these verdicts
    judgements = judge_claims(
        evidence, bearings, workloads=workloads, exemplar=exemplar, inference=inference,
        mlperf=mlperf, network=network, reliability=reliability, sla=sla, audit=audit,
        storage=storage, fabric=fabric_scale(
            network, claimed_nodes=system.nodes, min_node_share=rubric.network.min_node_share,
            bar=rubric.network.bar),
        gates=[GateReads(id=g.id, measured=g.measured, keys=tuple(g.keys),
                         checks=tuple(g.checks)) for g in rubric.gates])
    inputs = RatingInputs(
        gpu=gpu, declarations=manifest.declarations, audit=evidence.audit_checks,
        audit_file=audit.file if audit else None, workloads=workloads, network=network,
        mlperf=mlperf, inference=inference, reliability=reliability, sla=sla,
        storage=storage,
        quoted_usd_per_gpu_hour=manifest.pricing.usd_per_gpu_hour if manifest.pricing else None,
        throughput_ratio=throughput, market_usd_per_gpu_hour=market,
        market_source=market_source, nodes=system.nodes, exemplar=exemplar,
        judgements=judgements,
    )
    categories, total, by_score, gates, tier = _rate(inputs, rubric)
    scale = proven_scale(claimed_nodes=system.nodes, gpus_per_node=system.gpus_per_node,
                         min_node_share=rubric.network.min_node_share, workloads=workloads,
                         network=network, mlperf=mlperf)
    undeclared = (_rate(dataclasses.replace(inputs, declarations={}), rubric)
                  if manifest.declarations else None)
    notes = [f"Exemplar: {exemplar.state.label}: {exemplar.reason}",
             f"weighted category score {total:.1f} → {by_score} under rubric {rubric.label} "
             f"(Platinum ≥ {rubric.tiers.Platinum:g}, Gold ≥ {rubric.tiers.Gold:g}, Silver ≥ "
             f"{rubric.tiers.Silver:g}, Bronze ≥ {rubric.tiers.Bronze:g})"]
    for g in gates:
        if g.status == "failed":
            notes.append(f"gate failed: {g.name} caps the tier at {g.cap}")
        elif g.status == "not_evaluated":
            notes.append(f"gate not evaluated: {g.name} caps the tier at "
                         f"{g.not_evaluated_cap} until evidence shows it")
    if tier != by_score:
        notes.append(f"final tier {tier} (gates applied)")
    if undeclared is not None and undeclared[4] != tier:
        notes.append(f"without self-declarations the tier would be {undeclared[4]} (weighted "
                     f"score {undeclared[1]:.1f}; declared gates not evaluated)")
    unverified = [c.name for c in categories if not c.verified and c.weight > 0]
    if unverified:
        notes.append("categories resting on declarations only (unverified): "
                     + ", ".join(unverified))
    absent = [c.name for c in categories if c.weight == 0 and rubric.categories[c.name].weight]
    if absent:
        notes.append("categories with no evidence, left out of the weighted score: "
                     + ", ".join(absent))
    notes.extend(_unmapped_audit(evidence, rubric))
    acceptance, unassigned = unit_acceptance(evidence, workloads, network)
    notes.extend(unassigned)
    return Scorecard(
        cmax_version=__version__, reference_release=reference.release,
        rubric=rubric.label, provider=manifest.provider.name, cluster=manifest.provider.cluster,
        region=manifest.provider.region, gpu=system.gpu, nodes=system.nodes,
        gpus_per_node=system.gpus_per_node, interconnect=system.interconnect,
        benchmark_date=manifest.benchmark.date, tier=tier, score=total, score_tier=by_score,
        tier_without_declarations=None if undeclared is None else undeclared[4],
        tier_thresholds=rubric.tiers.as_data(),
        exemplar=exemplar,
        workloads=workloads, network=network, network_pairs=pairs,
        suspect_nodes=suspect_nodes(evidence, pairs, not_counted), mlperf=mlperf,
        inference=inference,
        storage=storage, checkpoint=checkpoint, reliability=reliability,
        sla=sla, audit=audit, categories=categories, gates=gates, scale=scale,
        findings=ordered,
        finding_counts=count_findings(ordered),
        evidence_files=[EvidenceFileRef(path=f.path, kind=f.kind, sha256=f.sha256,
                                        size_bytes=f.size_bytes) for f in evidence.files],
        claims=[ClaimEntry.model_validate(c) for c in evidence.claims.as_json()],
        acceptance=acceptance, notes=notes, judgements=judgements,
    )
