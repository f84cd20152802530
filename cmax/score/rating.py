"""The ClusterMAX-style rating: ten category scores, hard gates, one tier.

ClusterMAX 2.0 (SemiAnalysis, 6 Nov 2025) names ten categories and a few disqualifiers (no
SOC 2 / ISO 27001, ACS not disabled, GPUDirect RDMA off, no modern GPU) but publishes no
weights or formula. cmax scores each category from components the rubric wires to it:
measured evidence (audit checks, throughput, bus bandwidth, MLPerf, reliability, SLA, price)
and self-declarations, which count but leave the category marked unverified. Each component
leaves an evidence line (what was seen, where) and a rule line (how it became points), so
every point on a scorecard can be traced and challenged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cmax.judgement.bearings import rules_of
from cmax.judgement.witnesses import cited
from cmax.score.network import WRONG_RESULTS_NOTE
from cmax.score.rubric import (
    ONE_CLAIM_GATES,
    Component,
    GateRule,
    ResultKind,
    Rubric,
    TierName,
)
from cmax.score.scale import fabric_scale, needed_nodes
from cmax.score.stats import log_ratio_score, ratio_score
from cmax.score.verdicts import rated, serving_rated
from cmax.scorecard import (
    TIERS,
    CategoryScore,
    ClaimKind,
    ComponentScore,
    ExemplarJudgement,
    Gate,
    GateKind,
    InferenceResult,
    Judgement,
    MlperfResult,
    NetworkResult,
    ReliabilityResult,
    SlaResult,
    StorageResult,
    WorkloadResult,
    gentler,
    tier_rank,
)
from cmax.states import AT_THE_BAR, NOT_PASSING, GateVerdict, State

UNKNOWN_OBSERVED = frozenset({"unknown", "not-found", "none", "n/a", "", "not-installed",
                              "not-present", "untested", "unavailable"})
"""ClusterMAX audit sentinels for "not read" (clustermax_audit_format §0): no verdict."""

GRADED = ("PASS", "WARNING", "FAIL")


@dataclass(frozen=True)
class RatingInputs:
    """Everything the rating reads, already measured by the other scoring modules."""

    gpu: str
    declarations: Mapping[str, bool | str | int | float]
    audit: pl.DataFrame
    audit_file: str | None
    workloads: Sequence[WorkloadResult] = ()
    network: Sequence[NetworkResult] = ()
    mlperf: Sequence[MlperfResult] = ()
    inference: Sequence[InferenceResult] = ()
    storage: Sequence[StorageResult] = ()
    reliability: ReliabilityResult | None = None
    sla: SlaResult | None = None
    quoted_usd_per_gpu_hour: float | None = None
    throughput_ratio: float | None = None
    market_usd_per_gpu_hour: float | None = None
    market_source: str | None = None
    nodes: int = 0
    """the nodes the manifest claims ([system] nodes): the scale the fabric must be proven at"""
    exemplar: ExemplarJudgement | None = None
    """the Exemplar suite's one judgement (cmax/judgement/exemplar.py)"""
    judgements: Sequence[Judgement] = ()
    """every claim judged once (cmax/judgement/claims.py): the measured gates read the
    verdicts at the bar from these, never from the results"""
    def judgement(self, kind: ClaimKind, id: str) -> Judgement | None:
        """The judgement of one claim, or None when none was made."""
        return next((j for j in self.judgements if j.kind == kind and j.id == id), None)

    def audit_doubts(self) -> list[str]:
        """Why the audit may decide no gate (contradictory, partial or foreign): the findings
        on the audit's judgement whose rule declares the effect ``doubt``."""
        audit = self.judgement("audit", "audit")
        return ([f"{b.rule}: {b.message}" for b in audit.findings if b.effect == "doubt"]
                if audit is not None else [])

    def verdict(self, kind: ClaimKind, id: str) -> GateVerdict:
        """A result's verdict at its bar, from its judgement (not rated when it has none)."""
        judged = self.judgement(kind, id)
        return judged.verdict if judged is not None and judged.verdict else "not_rated"


@dataclass
class _Part:
    score: float
    weight: float
    measured: bool
    evidence: list[str] = field(default_factory=list)
    rule: str = ""
    present: bool = True


def _measured(cid: str, comp: Component, score: float, evidence: list[str],
              rule: str) -> _Part:
    """A measured component's points, with its rule line ending in the component weight."""
    return _Part(score, comp.weight, True, evidence,
                 f"{cid}: {rule}; component weight {comp.weight:g}")


def truthy(value: bool | str | int | float) -> bool:
    """A declaration counts when it is true, a non-empty 'yes'-like string or a non-zero number."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() not in {"", "false", "no", "0", "none", "n/a"}
    return value != 0


def _fmt(value: bool | str | int | float) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


def _audit_rows(audit: pl.DataFrame, comp_categories: Sequence[str],
                criteria: Sequence[str]) -> pl.DataFrame:
    if audit.is_empty():
        return audit
    cats = [c.lower() for c in comp_categories]
    return audit.filter(
        pl.col("category").str.to_lowercase().is_in(cats)
        | pl.col("criterion").is_in(list(criteria)) | pl.col("check_id").is_in(list(criteria))
    )


def _status(value: Any) -> str:
    return str(value or "").strip().upper()


def _audit_part(comp: Component, inputs: RatingInputs, rubric: Rubric, cid: str) -> _Part | None:
    rows = _audit_rows(inputs.audit, comp.audit_categories, comp.criteria)
    if rows.is_empty():
        return None
    statuses = [_status(s) for s in rows["status"]]
    graded = [s for s in statuses if s in GRADED]
    pts = rubric.scoring.audit_points
    counts = {s: statuses.count(s) for s in (*GRADED, "SKIPPED")}
    where = inputs.audit_file or "audit"
    scope = ", ".join(comp.audit_categories + comp.criteria)
    rule = (f"each graded audit check in [{scope}] scores PASS={pts['PASS']:g}, "
            f"WARNING={pts['WARNING']:g}, FAIL={pts['FAIL']:g}; SKIPPED is not graded; "
            f"points = 100 × mean")
    if not graded:
        return None
    points: dict[str, float] = {str(k): v for k, v in pts.items()}
    score = 100.0 * sum(points[s] for s in graded) / len(graded)
    evidence = [f"{where}: [{scope}] {counts['PASS']} PASS, {counts['WARNING']} WARNING, "
                f"{counts['FAIL']} FAIL, {counts['SKIPPED']} SKIPPED → {score:.1f}"]
    for status in ("FAIL", "WARNING"):
        ids = [str(c) for c, s in zip(rows["check_id"], statuses, strict=True) if s == status]
        if ids:
            evidence.append(f"{where}: {status}: " + ", ".join(ids))
    return _measured(cid, comp, score, evidence, rule)


def _ratio_part(cid: str, comp: Component, items: list[tuple[str, float]], floor: float,
                what: str) -> _Part | None:
    if not items:
        return None
    scores = [(label, ratio_score(r, floor)) for label, r in items]
    score = sum(s for _, s in scores) / len(scores)
    evidence = [f"{label}: ratio {r:.4f} → {s:.1f}" for (label, r), (_, s)
                in zip(items, scores, strict=True)]
    return _measured(cid, comp, score, evidence,
                     f"{what}; points per item = 100 × (ratio − {floor:g}) ÷ (1 − {floor:g}), "
                     "0-100; mean over items")


def _training_part(cid: str, comp: Component, inputs: RatingInputs, rubric: Rubric) -> _Part | None:
    items = [(f"{w.workload} {w.precision} {w.num_gpus} GPUs ({w.verdict}) [{w.log}]", w.ratio)
             for w in inputs.workloads if rated(w) and w.ratio is not None]
    # a declared run whose evidence failed validation scores nothing rather than dropping
    # out: otherwise bad evidence for the weakest workload would lift the average
    items += [(f"{w.workload} {w.precision} {w.num_gpus} GPUs (evidence failed validation: "
               f"{', '.join(w.validation_errors)}) [{w.log}]", 0.0)
              for w in inputs.workloads
              if w.validation_errors and w.verdict in AT_THE_BAR]
    # nor does a run whose model, scale or precision only cmax.toml vouches for: stripping a
    # log's configuration header must not be a way to choose which runs count
    items += [(f"{w.workload} {w.precision} {w.num_gpus} GPUs (unverified: ratio "
               f"{w.ratio:.4f} not earned by the evidence) [{w.log}]", 0.0)
              for w in inputs.workloads if w.verdict == "unverified" and w.ratio is not None]
    return _ratio_part(cid, comp, items, rubric.scoring.ratio_floor,
                       "training throughput ÷ reference over the steady-state window")


def _nccl_part(cid: str, comp: Component, inputs: RatingInputs, rubric: Rubric) -> _Part | None:
    """Fabric points come from the sweeps that may decide the fabric gate (inter-node, spanning
    ``[network] min_node_share`` of the claimed nodes): a one-node NVLink sweep or a two-node
    pair is rated in its own row but says nothing about the claimed fabric (docs/network.md,
    Scale), so it earns no fabric points; they are listed as not counted."""
    deciding = fabric_scale(inputs.network, claimed_nodes=inputs.nodes,
                            min_node_share=rubric.network.min_node_share,
                            bar=rubric.network.bar).deciding
    at_scale = {id(n) for n in deciding}
    items = []
    left_out = []
    for n in inputs.network:
        if n.ratio is None:
            continue
        label = (f"{n.collective} {n.nodes} node(s) busbw {n.busbw_gbps:g} GB/s vs "
                 f"{n.reference_busbw_gbps:g} ({n.verdict}) [{n.file}]")
        if id(n) not in at_scale:
            need = needed_nodes(inputs.nodes, rubric.network.min_node_share)
            left_out.append(f"{label}: not counted, it does not span the claimed fabric (an "
                            f"inter-node sweep across ≥ {need} nodes)")
            continue
        corrupt = any(note.startswith(WRONG_RESULTS_NOTE) for note in n.notes)
        items.append((label, 0.0 if corrupt else n.ratio))
    part = _ratio_part(cid, comp, items, rubric.scoring.ratio_floor,
                       "nccl-tests bus bandwidth at large messages ÷ fabric reference, over the "
                       "sweeps spanning the claimed fabric (a sweep with wrong results scores 0)")
    if part is not None:
        part.evidence.extend(left_out)
    return part


def _mlperf_part(cid: str, comp: Component, inputs: RatingInputs, rubric: Rubric) -> _Part | None:
    items = []
    for m in inputs.mlperf:
        if m.ratio is not None:
            items.append((f"MLPerf {m.benchmark} ({m.verdict})", m.ratio))
        elif m.verdict == "fail":
            items.append((f"MLPerf {m.benchmark} (no valid result)", 0.0))
    return _ratio_part(cid, comp, items, rubric.scoring.ratio_floor,
                       "MLPerf reference time to train ÷ provider olympic time to train")


def _inference_part(cid: str, comp: Component, inputs: RatingInputs,
                    rubric: Rubric) -> _Part | None:
    """Serving throughput: only results compared like with like on a GPU count the result file
    states (verdict pass or fail) count; a declared-only, capped or unreferenced result is no
    evidence here, so the component then drops out of its category."""
    items = [(f"serving {r.model} {r.precision} {r.input_len}/{r.output_len} ({r.verdict})",
              r.ratio) for r in inputs.inference
             if serving_rated(r) and r.ratio is not None]
    return _ratio_part(cid, comp, items, rubric.scoring.ratio_floor,
                       "provider output tok/s per GPU ÷ the public reference's at the same "
                       "model, GPU, precision and input/output length")


def _storage_part(cid: str, comp: Component, inputs: RatingInputs,
                  rubric: Rubric) -> _Part | None:
    """Storage measured against its references: only results compared like with like count; a
    result shown or not rated (its reason on the scorecard) is no evidence here, so without a
    rated one the component drops out and the category rests on the audit and declarations."""
    items = [(f"{s.benchmark} {s.workload or ''} {s.direction} {s.measured:,.4g} {s.unit} vs "
              f"{s.reference:,.4g} [{s.source_file}]", s.ratio) for s in inputs.storage
             if s.verdict == "rated" and s.ratio is not None and s.measured is not None
             and s.reference is not None]
    part = _ratio_part(cid, comp, items, rubric.scoring.ratio_floor,
                       "storage measured ÷ its reference (MLPerf Storage median of the same "
                       "round, workload and accelerator; checkpoint save bandwidth per GPU; "
                       "the contract for fio)")
    if part is not None:
        part.evidence += [f"{s.benchmark} {s.workload or ''} {s.direction} [{s.source_file}]: "
                          f"{s.verdict}, {s.reason}" for s in inputs.storage
                          if s.verdict != "rated"]
    return part


def _goodput_part(cid: str, comp: Component, inputs: RatingInputs, rubric: Rubric) -> _Part | None:
    rel = inputs.reliability
    if rel is None:
        return None
    return _ratio_part(
        cid, comp,
        [(f"E[ETTR] {rel.ettr:.4f} vs reference {rel.reference_ettr:.4f} for a "
          f"{rel.job_gpus}-GPU job (checkpoint {rel.checkpoint_interval_min:g} min, restart "
          f"{rel.restart_min:g} min)", rel.goodput_ratio)],
        rubric.scoring.ratio_floor, "goodput ratio = provider E[ETTR] ÷ reference E[ETTR]")


def _mtbf_part(cid: str, comp: Component, inputs: RatingInputs, rubric: Rubric) -> _Part | None:
    rel = inputs.reliability
    if rel is None:
        return None
    floor = rubric.scoring.mtbf_ratio_floor
    ratio = (1.0 / rel.ratio_vs_reference) if rel.ratio_vs_reference else float("inf")
    score = log_ratio_score(ratio, floor)
    mtbf = f"{rel.mtbf_gpu_hours:,.0f} GPU-hours" if rel.mtbf_gpu_hours else "no interruptions"
    evidence = [f"{rel.unexpected_interruptions} unexpected interruptions in "
                f"{rel.gpu_days:,.0f} GPU-days = {rel.per_1000_gpu_days:.4f} per 1,000 GPU-days "
                f"(MTBF {mtbf}) vs reference {rel.reference_per_1000_gpu_days:.4f} "
                f"({rel.reference_source}) → {score:.1f}"]
    return _measured(cid, comp, score, evidence,
                     f"MTBF ratio = reference rate ÷ provider rate; points = 100 × (1 − "
                     f"log10(ratio) ÷ log10({floor:g})), 100 at or above the reference, 0 at "
                     f"or below {floor:g}×")


def _sla_part(cid: str, comp: Component, inputs: RatingInputs, rubric: Rubric) -> _Part | None:
    sla = inputs.sla
    if sla is None or sla.node_months == 0:
        return None
    met = sla.node_months - sla.node_months_below
    score = 100.0 * met / sla.node_months
    worst = f"{sla.worst_uptime_pct:.3f}%" if sla.worst_uptime_pct is not None else "n/a"
    evidence = [f"contracted {sla.contracted_uptime_pct:g}% per node-month: {met} of "
                f"{sla.node_months} node-months met (worst {worst}; fleet "
                f"{sla.measured_uptime_pct:.3f}%); credit owed {sla.credit_pct:.3f}% of the "
                f"bill → {score:.1f}"]
    return _measured(cid, comp, score, evidence,
                     "points = 100 × share of node-months at or above the contracted uptime")


def _price_part(cid: str, comp: Component, inputs: RatingInputs, rubric: Rubric) -> _Part | None:
    quoted, market, t = (inputs.quoted_usd_per_gpu_hour, inputs.market_usd_per_gpu_hour,
                         inputs.throughput_ratio)
    if quoted is None or market is None or t is None:
        return None
    g = inputs.reliability.goodput_ratio if inputs.reliability else 1.0
    value = market * t * g / quoted
    floor = rubric.scoring.ratio_floor
    score = ratio_score(value, floor)
    evidence = [f"value for money = market ${market:.2f} ({inputs.market_source or 'reference'}) "
                f"× throughput {t:.4f} × goodput {g:.4f} ÷ quoted ${quoted:.2f} = {value:.4f} "
                f"→ {score:.1f}"]
    return _measured(cid, comp, score, evidence,
                     f"useful work per dollar relative to a reference-speed cluster at the "
                     f"market price; points = 100 × (value − {floor:g}) ÷ (1 − {floor:g}), 0-100")


def _declaration_part(cid: str, comp: Component, inputs: RatingInputs,
                      rubric: Rubric) -> _Part | None:
    decl = inputs.declarations
    evidence: list[str] = []
    met = 0
    present = False
    for requirement in comp.keys:
        alternatives = [k.strip() for k in requirement.split("|") if k.strip()]
        found = [(k, decl[k]) for k in alternatives if k in decl]
        if found:
            present = True
            ok = any(truthy(v) for _, v in found)
            met += ok
            evidence.append("declared (unverified): " + ", ".join(
                f"{k} = {_fmt(v)}" for k, v in found))
        else:
            evidence.append(f"not declared: {' or '.join(alternatives)}")
    credit = rubric.scoring.declaration_credit
    score = 100.0 * met / len(comp.keys) * credit
    evidence.append(f"{met} of {len(comp.keys)} declared requirement(s) met → {score:.1f}")
    rule = (f"{cid}: self-declarations in the manifest's [declarations]; points = 100 × share "
            f"of requirements declared true (a|b: either) × declaration credit {credit:g}; "
            f"unverified; component weight {comp.weight:g}")
    return _Part(score, comp.weight, False, evidence, rule, present=present)


_BUILDERS = {
    "training": _training_part, "nccl": _nccl_part, "mlperf": _mlperf_part,
    "inference": _inference_part, "storage": _storage_part,
    "goodput": _goodput_part, "mtbf": _mtbf_part, "sla": _sla_part,
    "price_value": _price_part, "declarations": _declaration_part,
}


def rate_categories(inputs: RatingInputs, rubric: Rubric) -> list[CategoryScore]:
    """Score every rubric category.

    A category is *evidenced* when a measured component has evidence or any of its
    declaration keys appears in the manifest. In an evidenced category an undeclared
    requirement scores 0 (declaring part of a list must never score worse than declaring
    none). A category with no evidence at all is reported with weight 0: it is left out of the
    weighted score and counts against evidence coverage instead (see :func:`coverage_gate`).
    """
    out = []
    for name, cat in rubric.categories.items():
        parts: list[_Part] = []
        kinds: list[str] = []
        rules: list[str] = []
        for comp in cat.components:
            cid = f"{name}.{comp.kind}"
            if comp.kind == "audit":
                part = _audit_part(comp, inputs, rubric, cid)
            else:
                part = _BUILDERS[comp.kind](cid, comp, inputs, rubric)
            if part is None:
                rules.append(f"{cid}: no evidence, not counted")
                continue
            parts.append(part)
            kinds.append(comp.kind)
            rules.append(part.rule)
        if any(p.present for p in parts):
            total_w = sum(p.weight for p in parts)
            score = sum(p.score * p.weight for p in parts) / total_w
            evidence = [line for p in parts for line in p.evidence]
            rules.append(f"{name}: category score = weight-averaged components "
                         f"({' + '.join(f'{p.score:.1f}×{p.weight:g}' for p in parts)}) "
                         f"÷ {total_w:g} = {score:.1f}; category weight {cat.weight:g}")
            weight = cat.weight
            components = [ComponentScore(kind=k, score=round(p.score, 4), weight=p.weight,
                                         measured=p.measured)
                          for k, p in zip(kinds, parts, strict=True)]
        else:
            components = []
            score = 0.0
            weight = 0.0
            evidence = ["no evidence and no declarations for this category"]
            rules.append(f"{name}: no evidence: left out of the weighted score (rubric weight "
                         f"{cat.weight:g} counts against evidence coverage)")
        out.append(CategoryScore(
            name=name, score=round(min(100.0, max(0.0, score)), 4), weight=weight,
            verified=any(p.measured for p in parts), evidence=evidence, rules=rules,
            title=cat.title, components=components))
    return out


def evidence_coverage(categories: Sequence[CategoryScore], rubric: Rubric) -> float:
    """Share of the rubric's category weight that has any evidence."""
    total = sum(c.weight for c in rubric.categories.values())
    return sum(c.weight for c in categories) / total if total else 0.0


def coverage_gate(categories: Sequence[CategoryScore], rubric: Rubric) -> Gate:
    """The tier a partial picture allows, as a gate: passed only when the evidence covers
    what the top tier needs, else failed with the highest tier the coverage allows as its cap
    (whether that cap binds is the tier's business, not the gate's).

    Coverage is always evaluated: the share of category weight with evidence is a fact of the
    bundle, so this gate is passed or failed, never not evaluated.
    """
    cov = evidence_coverage(categories, rubric)
    allowed = rubric.coverage.highest_tier(cov)
    missing = [c.name for c in categories if c.weight == 0 and rubric.categories[c.name].weight]
    steps = [f"{name} {share:.0%}" for name, share in rubric.coverage.steps()]
    reason = (f"evidence covers {cov:.0%} of the category weight"
              + (f" (none for {', '.join(missing)})" if missing else "")
              + f"; {steps[0].replace(' ', ' needs ', 1)}, {', '.join(steps[1:])}: at most "
              f"{allowed} [coverage; {rubric.label}]")
    passed = allowed == TIERS[0]
    return Gate(name="Evidence coverage", id="coverage", passed=passed,
                status="passed" if passed else "failed", cap=allowed, reason=reason,
                kind="coverage")


def weighted_score(categories: Sequence[CategoryScore]) -> float:
    total = sum(c.weight for c in categories)
    return round(sum(c.score * c.weight for c in categories) / total, 4) if total else 0.0


def _measured_gate(rule: GateRule, inputs: RatingInputs,
                   rubric: Rubric) -> tuple[bool | None, str] | None:
    """(passed, reason) for a gate decided by scored results against the rubric's bar;
    (None, why) or None when no result can decide it."""
    items: list[tuple[str, float | None, str]] = []
    claims: list[tuple[ClaimKind, str, float | None, str]]
    kind = rule.measured
    if kind in ONE_CLAIM_GATES:
        what, claim_kind, claim_id = ONE_CLAIM_GATES[kind]
        claim = inputs.judgement(claim_kind, claim_id)
        if claim is None or claim.bar_state in (None, State.NOT_EVALUATED):
            return None, (claim.reason if claim else f"no {what} judgement")
        return claim.bar_state is State.MET, (f"{what} {claim.bar_state.label}: "
                                              f"{claim.reason}")
    if kind == "training":
        bar = rubric.performance.bar
        claims = [("training_run", w.run_id or "", w.ratio,
                   f"{w.workload} {w.precision} {w.num_gpus} GPUs") for w in inputs.workloads]
        what = f"training runs pass the [performance] bar ({bar:.0%} of reference)"
    elif kind == "serving":
        bar = rubric.performance.bar
        claims = [("serving_result", i.entry, i.ratio,
                   f"{i.model} {i.precision} {i.input_len}/{i.output_len} x{i.gpus}")
                  for i in inputs.inference]
        what = f"serving results pass the [performance] bar ({bar:.0%} of reference)"
    elif kind == "mlperf":
        bar = rubric.mlperf.bar
        claims = [("mlperf_result", f"mlperf[{n}]", m.ratio,
                   f"MLPerf {m.benchmark} x{m.num_gpus or '?'}")
                  for n, m in enumerate(inputs.mlperf)]
        what = (f"MLPerf Training results pass the [mlperf] bar ({bar:.0%} of NVIDIA's time to "
                "train)")
    else:
        raise ValueError(f"gate {rule.id}: no measured results of kind {kind!r}")
    withheld: list[str] = []
    for claim_kind, claim_id, ratio, label in claims:
        verdict = inputs.verdict(claim_kind, claim_id)
        if verdict == "not_rated":
            continue
        items.append((label, ratio, verdict))
        if verdict == "withheld":
            withheld.append(_withheld(label, inputs.judgement(claim_kind, claim_id)))
    if not items:
        return None
    met = sum(verdict == "pass" for *_, verdict in items)
    below = sum(verdict == "fail" for *_, verdict in items)
    # a withheld result of another model or GPU than declared is compared with no reference
    detail = ", ".join(f"{label} {'not compared' if ratio is None else f'{ratio:.3f}'} "
                       f"{verdict}" for label, ratio, verdict in items)
    if withheld:
        detail += "; " + "; ".join(withheld)
    if rule.require == "any" and all(verdict in NOT_PASSING for *_, verdict in items):
        # a floor passes on evidence that is not conclusively below it; a result resting on
        # what only cmax.toml states, or one an error contests, is no such evidence, so it
        # leaves the floor unjudged (capped as the rubric caps no comparable result), never
        # passed
        return None, (f"none of the {len(items)} results is earned (each rests on what only "
                      f"cmax.toml states or is contested by an error): {detail}")
    if rule.require == "all":
        # a result measured against the bar whose pass is not earned (unverified, or
        # withheld by an error) is counted and does not pass: dropping it would let the
        # gate pass on the others
        passed, need = met == len(items), "needs every one above it"
    else:
        # an unearned result is no evidence of being above the floor either: beside earned
        # results conclusively below, it rescues nothing
        earned = [verdict for *_, verdict in items if verdict not in NOT_PASSING]
        passed = below < len(earned)
        need = "fails only when every earned one is conclusively below"
    return passed, (f"{met} of {len(items)} {what}, {below} conclusively below ({need}): "
                    f"{detail}")


def _withheld(label: str, judged: Judgement | None) -> str:
    """Why a result's pass is withheld, and what would earn it: the errors that bear on it,
    else what its judgement found against it (a GPU count the file contradicts)."""
    errors = rules_of(judged.findings, errors=True) if judged is not None else []
    why = (f"withheld by {', '.join(errors)}" if errors else
           f"withheld ({judged.reason})" if judged is not None and judged.reason else
           "withheld by its evidence's errors")
    return (f"{label} {why}: not passing until evidence clear of it shows the bar "
            "exceeded")


def _gate(rule: GateRule, inputs: RatingInputs, rubric: Rubric) -> Gate:
    """One gate's verdict: passed or failed on conclusive evidence, else ``not_evaluated``
    (or failed where the rubric says missing evidence fails). A not-evaluated gate caps the
    tier at the rubric's not-evaluated cap, never harsher than failing the gate would."""
    where = f"[{rule.id}; {rule.source}]"

    kind: GateKind = rule.kind

    def gate(passed: bool, reason: str) -> Gate:
        return Gate(name=rule.name, id=rule.id, passed=passed,
                    status="passed" if passed else "failed",
                    cap=rule.cap, reason=f"{reason} {where}", kind=kind)

    if rule.allowed_gpus:
        gpu = inputs.gpu.lower()
        ok = any(gpu.startswith(a.lower()) for a in rule.allowed_gpus)
        return gate(ok, f"GPU {inputs.gpu!r} is {'' if ok else 'not '}one of "
                        f"{', '.join(rule.allowed_gpus)}")
    why_not = ""
    if rule.measured:
        decided = _measured_gate(rule, inputs, rubric)
        if decided is not None and decided[0] is not None:
            return gate(decided[0], decided[1])
        if decided is not None:
            why_not = decided[1]
    audit_note = ""
    doubts = inputs.audit_doubts() if rule.checks else []
    if rule.checks and not inputs.audit.is_empty() and doubts:
        audit_note = (f"; {inputs.audit_file or 'the audit'} cannot decide it: "
                      + "; ".join(doubts))
    elif rule.checks and not inputs.audit.is_empty():
        rows = inputs.audit.filter(pl.col("check_id").is_in(rule.checks)
                                   | pl.col("criterion").is_in(rule.checks))
        conclusive = []
        for row in rows.iter_rows(named=True):
            status = _status(row["status"])
            observed = row.get("observed")
            if status not in GRADED:
                continue
            if observed is not None and str(observed).strip().lower() in UNKNOWN_OBSERVED:
                continue
            conclusive.append((str(row["check_id"]), status, observed))
        bad = [c for c in conclusive if c[1] in rule.fail_statuses]
        audit = inputs.audit_file or "audit"
        if bad:
            return gate(False, f"{audit}: " + "; ".join(
                f"{c} is {s}" + (f" (observed {o})" if o is not None else "") for c, s, o in bad))
        if conclusive:
            return gate(True, f"{audit}: " + "; ".join(f"{c} is {s}" for c, s, _ in conclusive))
    if rule.keys:
        found = [(k, inputs.declarations[k]) for k in rule.keys if k in inputs.declarations]
        if found:
            said = ", ".join(f"{k} = {_fmt(v)}" for k, v in found)
            if not any(truthy(v) for _, v in found):
                return gate(False, f"declared (unverified): {said}{audit_note}")
            return Gate(name=rule.name, id=rule.id, passed=False, status="declared",
                        cap=rule.cap, kind=kind,
                        reason=f"declared, not shown: {said} (self-declaration only; no "
                        f"evidence decided it){audit_note} {where}")
    if rule.missing == "fail":
        return gate(False, "no evidence: "
                    + (f"none of {', '.join(rule.keys)} declared" if rule.keys else "not shown")
                    + audit_note)
    if rule.measured:
        what = why_not or f"no comparable {rule.measured} result"
    elif rule.checks:
        what = ("no conclusive audit check" + (" and nothing declared" if rule.keys else "")
                + audit_note)
    else:
        what = "no evidence"
    cap = gentler(rule.not_evaluated_cap or rubric.scoring.not_evaluated_cap, rule.cap)
    return Gate(name=rule.name, id=rule.id, passed=False, status="not_evaluated", cap=rule.cap,
                not_evaluated_cap=cap, kind=kind,
                reason=f"not evaluated ({what}): caps the tier at {cap} until evidence shows "
                       f"it (failing it would cap at {rule.cap}) {where}")


def result_kinds(inputs: RatingInputs, rubric: Rubric) -> frozenset[ResultKind]:
    """The kinds of result the bundle is judged as: those it holds (an MLPerf result it
    submits as its own; one it cites is context), else the rubric's
    ``[scoring] results_when_none``."""
    held: set[ResultKind] = set()
    if inputs.workloads:
        held.add("training")
    if inputs.inference:
        held.add("serving")
    if any(j.kind == "mlperf_result" and not cited(j.witnesses) for j in inputs.judgements):
        held.add("mlperf")
    return frozenset(held or {rubric.scoring.results_when_none})


def evaluate_gates(inputs: RatingInputs, rubric: Rubric) -> list[Gate]:
    """Every gate that judges this bundle: a gate keyed to a result kind (``results``) the
    bundle is not judged as is left out, never failed or not evaluated."""
    kinds = result_kinds(inputs, rubric)
    return [_gate(rule, inputs, rubric) for rule in rubric.gates
            if rule.results is None or rule.results in kinds]


def final_tier(score: float, gates: Sequence[Gate], rubric: Rubric) -> TierName:
    """The score's tier, lowered to the cap of every failed gate and to the not-evaluated cap
    of every gate that could not be evaluated."""
    tier: TierName = rubric.tiers.tier_for(score)
    for g in gates:
        cap = g.binding_cap
        if cap is not None and tier_rank(cap) > tier_rank(tier):
            tier = cap
    return tier
