"""Honest gates: passed, failed or not evaluated, and what each caps (issue 12).

The shipped rubric's measured gates tie the tier to delivered performance (the Exemplar bar on
training throughput, the network bar on nccl-tests bus bandwidth); a gate with no conclusive
evidence is "not evaluated", never "passed", and caps the tier (docs/scoring.md, section 5).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from cmax import load_reference, open_bundle
from cmax.ingest import ingest
from cmax.judgement.bar import bar_verdict
from cmax.judgement.bearings import Bearings
from cmax.judgement.claims import judge_exemplar_claim
from cmax.judgement.exemplar import judge_exemplar
from cmax.judgement.fabric import fabric_standing
from cmax.pipeline import assess
from cmax.score import Rubric, load_rubric
from cmax.score.core import score
from cmax.score.rating import RatingInputs, evaluate_gates, final_tier
from cmax.score.scale import fabric_scale
from cmax.scorecard import (
    Bearing,
    ClaimKind,
    ExemplarJudgement,
    Gate,
    InferenceResult,
    Judgement,
    MlperfResult,
    NetworkResult,
    Scorecard,
    WorkloadResult,
)
from cmax.states import State, bar_state
from cmax.validate import validate
from tests.score.test_rating import audit
from tools.sensitivity import BEGIN, doc_table, slower, table

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = load_rubric(None)
DECLARED = {"soc2_type2": True, "acs_disabled": True, "gpudirect_rdma": True}


def wl(ratio: float, verdict: str) -> WorkloadResult:
    return WorkloadResult(workload="llama3.1-405b", precision="bf16", num_gpus=512, log="t.log",
                          status="success", steps_total=50, ratio=ratio, verdict=verdict,
                          bar=0.95)


def net(ratio: float, verdict: str) -> NetworkResult:
    return NetworkResult(file="nccl.txt", collective="all_reduce", ranks=512, nodes=64,
                         large_message_bytes=1 << 33, busbw_gbps=368 * ratio,
                         max_busbw_gbps=368 * ratio, reference_busbw_gbps=368.0, ratio=ratio,
                         verdict=verdict)


def _judgement(kind: ClaimKind, id: str, verdict: str, ratio: float | None,
               errors: bool = False) -> Judgement:
    return Judgement(kind=kind, id=id, label=id, state=State.EARNED,
                     bar_state=bar_state(verdict),
                     verdict=bar_verdict(verdict, ratio, errors=errors))


def fabric(network: list[NetworkResult], nodes: int,
           findings: Bearings | None = None) -> Judgement:
    """The fabric's judgement as cmax/judgement/claims.py makes it: its standing from the
    sweeps spanning the claimed nodes (cmax/score/scale.py), errors from ``findings``."""
    standing = fabric_standing(fabric_scale(
        network, claimed_nodes=nodes, min_node_share=RUBRIC.network.min_node_share,
        bar=RUBRIC.network.bar), findings or Bearings([]))
    return Judgement(kind="fabric", id="fabric", label="fabric", state=State.EARNED,
                     bar_state=standing.bar_state, verdict=standing.verdict,
                     reason=standing.reason)


def audited(doubts: list[str]) -> Judgement:
    """The audit's judgement, each doubt a finding of effect ``doubt`` on it (as
    cmax/judgement/claims.py judge_audit finds them: ``rule: message``)."""
    findings = [Bearing(rule=d.split(": ", 1)[0], severity="error", effect="doubt",
                        subject="audit", file="a.json", message=d.split(": ", 1)[1])
                for d in doubts]
    return Judgement(kind="audit", id="audit", label="the ClusterMAX audit",
                     state=State.CONTRADICTED if doubts else State.EARNED, findings=findings)


def judged(workloads: list[WorkloadResult], inference: list[InferenceResult],
           exemplar: ExemplarJudgement, network: list[NetworkResult] | None = None,
           nodes: int = 0, mlperf: list[MlperfResult] | None = None) -> list[Judgement]:
    """The judgements the gates read, made as cmax/judgement/claims.py makes them from each
    result's verdict (the case they also rest on is not needed by a gate)."""
    runs = [_judgement("training_run", w.run_id or "", w.verdict, w.ratio,
                       bool(w.validation_errors)) for w in workloads]
    return [*runs, judge_exemplar_claim(exemplar, runs, Bearings([]), ()),
            *(_judgement("serving_result", r.entry, r.verdict, r.ratio) for r in inference),
            *(_judgement("mlperf_result", f"mlperf[{i}]", m.verdict, m.ratio)
              for i, m in enumerate(mlperf or [])),
            fabric(network or [], nodes)]


def gates(**kw: Any) -> dict[str, Gate]:
    base: dict[str, Any] = {"gpu": "h100-sxm", "declarations": DECLARED, "audit": audit(),
                            "audit_file": None}
    base.update(kw)
    base["workloads"] = [w.model_copy(update={"run_id": f"runs[{i}]"})
                         for i, w in enumerate(base.get("workloads", []))]
    base["inference"] = [r.model_copy(update={"entry": f"inference[{i}]"})
                         for i, r in enumerate(base.get("inference", []))]
    base["exemplar"] = judge_exemplar(base["workloads"], RUBRIC.performance.bar)
    base["judgements"] = [*judged(base["workloads"], base["inference"], base["exemplar"],
                                  base.get("network", []), base.get("nodes", 0),
                                  base.get("mlperf", [])),
                          audited(base.pop("doubts", []))]
    rules = {r.name: r.id for r in RUBRIC.gates}
    return {rules[g.name]: g for g in evaluate_gates(RatingInputs(**base), RUBRIC)}


ACS_PASS = {"check_id": "gpus.pcieAcs.enabled", "category": "gpu-stack", "criterion": "pcie-acs",
            "status": "PASS", "observed": "false", "minimum": None, "evidence": None,
            "source_file": "audit/audit.values.json"}
AT_REFERENCE: dict[str, Any] = {"workloads": [wl(1.0, "pass"), wl(0.99, "pass")],
                                "network": [net(1.0, "pass")]}


def test_at_reference_every_gate_passes_and_platinum_is_open() -> None:
    shown = audit(ACS_PASS, {**ACS_PASS, "check_id": "gpus.gpuDirectRdmaPath",
                             "criterion": "gpudirect-rdma", "observed": "{}"})
    gs = gates(audit=shown, **AT_REFERENCE)
    declared = {k for k, g in gs.items() if g.status == "declared"}
    assert declared == {"attestation"}  # SOC 2 is only ever declared: never "passed"
    assert all(g.status == "passed" and g.passed and g.binding_cap is None
               for k, g in gs.items() if k not in declared)
    assert final_tier(95.0, list(gs.values()), RUBRIC) == "Platinum"


def test_a_gate_only_declared_is_declared_never_passed() -> None:
    """issue 26: with no audit, acs_disabled = true and gpudirect_rdma = true made both
    Underperforming-cap gates read "passed"."""
    gs = gates(**AT_REFERENCE)  # no audit: ACS, GPUDirect and SOC 2 rest on declarations
    for gid in ("acs_disabled", "gpudirect_rdma", "attestation"):
        g = gs[gid]
        assert g.status == "declared" and not g.passed and g.binding_cap is None
        assert g.reason.startswith("declared, not shown:")
    gs = gates(declarations={"soc2_type2": True, "acs_disabled": False}, **AT_REFERENCE)
    assert gs["acs_disabled"].status == "failed"  # declaring a failure is conclusive


def test_one_workload_below_the_bar_fails_the_exemplar_suite_gate() -> None:
    gs = gates(workloads=[wl(1.0, "pass"), wl(0.90, "fail")], network=[net(1.0, "pass")])
    suite = gs["exemplar_suite"]
    assert suite.status == "failed" and not suite.passed and suite.cap == "Gold"
    assert "Exemplar suite not met" in suite.reason and "0.900 fail" in suite.reason
    assert gs["performance_floor"].status == "passed"  # one workload still meets the bar
    assert final_tier(95.0, list(gs.values()), RUBRIC) == "Gold"


def test_every_workload_below_the_bar_caps_at_silver() -> None:
    gs = gates(workloads=[wl(0.90, "fail"), wl(0.899, "fail")], network=[net(1.0, "pass")])
    floor = gs["performance_floor"]
    assert floor.status == "failed" and floor.cap == "Silver"
    assert "2 conclusively below" in floor.reason
    assert final_tier(95.0, list(gs.values()), RUBRIC) == "Silver"


def test_an_inconclusive_workload_does_not_fail_the_floor() -> None:
    """The floor gate needs every workload *conclusively* below the bar."""
    gs = gates(workloads=[wl(0.90, "fail"), wl(0.95, "inconclusive")],
               network=[net(1.0, "pass")])
    assert gs["performance_floor"].status == "passed"
    assert gs["exemplar_suite"].status == "failed"  # inconclusive is not a pass either


def test_weak_fabric_fails_the_network_gate() -> None:
    gs = gates(workloads=AT_REFERENCE["workloads"], network=[net(0.80, "fail")])
    assert gs["network_bar"].status == "failed" and gs["network_bar"].cap == "Gold"
    assert "0.800 fail" in gs["network_bar"].reason
    assert final_tier(95.0, list(gs.values()), RUBRIC) == "Gold"


def test_no_comparable_run_is_not_evaluated_and_caps_as_hard_as_failing() -> None:
    """Hiding the runs (or making them not comparable) must never rate better than failing."""
    gs = gates(workloads=[wl(1.2, "not_comparable")], network=[net(1.0, "pass")])
    floor, suite = gs["performance_floor"], gs["exemplar_suite"]
    for g in (floor, suite):
        assert g.status == "not_evaluated" and not g.passed
    assert "not evaluated (no comparable training result)" in floor.reason
    assert "(1.200 not comparable)" in suite.reason
    assert floor.not_evaluated_cap == floor.binding_cap == "Silver"
    assert suite.not_evaluated_cap == "Gold"  # the rubric's [scoring] not_evaluated_cap
    assert final_tier(95.0, list(gs.values()), RUBRIC) == "Silver"


def test_unchecked_disqualifier_is_not_evaluated_and_rules_out_platinum() -> None:
    gs = gates(declarations={"soc2_type2": True}, **AT_REFERENCE)
    acs = gs["acs_disabled"]
    assert acs.status == "not_evaluated" and not acs.passed
    assert acs.cap == "Underperforming" and acs.not_evaluated_cap == "Gold"
    assert "failing it would cap at Underperforming" in acs.reason
    assert final_tier(95.0, list(gs.values()), RUBRIC) == "Gold"
    assert final_tier(70.0, list(gs.values()), RUBRIC) == "Silver"  # a cap never raises


def test_not_evaluated_cap_is_never_harsher_than_failing(tmp_path: Path) -> None:
    text = (ROOT / "reference" / "rubric.toml").read_text(encoding="utf-8")
    text = text.replace('not_evaluated_cap = "Gold"', 'not_evaluated_cap = "Underperforming"')
    text = text.replace('not_evaluated_cap = "Silver"\n', "")
    path = tmp_path / "rubric.toml"
    path.write_text(text, encoding="utf-8")
    harsh: Rubric = load_rubric(path)
    base: dict[str, Any] = {"gpu": "h100-sxm", "declarations": DECLARED, "audit": audit(),
                            "audit_file": None, "workloads": [wl(1.0, "pass")]}
    by_id = {r.name: r.id for r in harsh.gates}
    gs = {by_id[g.name]: g for g in evaluate_gates(RatingInputs(**base), harsh)}
    assert gs["network_bar"].not_evaluated_cap == "Gold"  # failing it caps at Gold


def test_gate_status_and_passed_agree() -> None:
    # each Gate below leaves out passed or status on purpose: the model fills one from the other
    assert Gate(name="g", status="not_evaluated", cap="Gold",  # type: ignore[call-arg]
                reason="r").passed is False
    assert Gate(name="g", passed=True, cap="Gold",  # type: ignore[call-arg]
                reason="r").status == "passed"
    assert Gate(name="g", passed=False, cap="Gold",  # type: ignore[call-arg]
                reason="r").status == "failed"
    with pytest.raises(ValidationError, match="contradicts"):
        Gate(name="g", passed=True, status="not_evaluated", cap="Gold", reason="r")


def test_a_gate_written_before_status_existed_still_loads() -> None:
    old = {"name": "ACS", "passed": False, "cap": "Underperforming", "reason": "audit: FAIL"}
    gate = Gate.model_validate_json(json.dumps(old))
    assert gate.status == "failed" and gate.binding_cap == "Underperforming"
    assert json.loads(gate.model_dump_json())["status"] == "failed"


@pytest.fixture(scope="module")
def samples() -> dict[str, tuple[Any, Any, Scorecard]]:
    reference = load_reference()
    out = {}
    for name in ("aurora-compute", "borealis-cloud"):
        with open_bundle(ROOT / "samples" / name) as bundle:
            evidence = ingest(bundle)
        findings = list(validate(evidence, reference))
        out[name] = (evidence, findings, score(evidence, findings, reference, RUBRIC))
    return out


def test_a_slow_weak_cluster_cannot_share_the_reference_clusters_tier(
        samples: dict[str, tuple[Any, Any, Scorecard]]) -> None:
    """Borealis: ~0.90 of reference on every workload, all_reduce busbw at 80% of the fabric
    reference; Aurora: at reference. Issue 12 found the slow one three points below Gold."""
    aurora, borealis = samples["aurora-compute"][2], samples["borealis-cloud"][2]
    assert aurora.tier == "Gold" and borealis.tier in ("Bronze", "Underperforming")
    status = {g.name: g.status for g in borealis.gates}
    by_id = {r.id: r.name for r in RUBRIC.gates}
    assert status[by_id["performance_floor"]] == status[by_id["network_bar"]] == "failed"
    assert aurora.score - borealis.score > 20


def test_ten_percent_slower_drops_the_reference_cluster_a_tier(
        samples: dict[str, tuple[Any, Any, Scorecard]]) -> None:
    evidence, findings, card = samples["aurora-compute"]
    slow = score(slower(evidence, 0.10, RUBRIC), findings, load_reference(), RUBRIC)
    assert card.tier == "Gold" and slow.tier == "Silver"
    assert all(w.verdict == "fail" for w in slow.workloads)


def test_sensitivity_table_in_docs_is_in_step_with_the_scorer() -> None:
    doc = (ROOT / "docs" / "scoring.md").read_text(encoding="utf-8")
    assert BEGIN in doc, "docs/scoring.md lost its sensitivity table markers"
    assert doc_table(doc) == table(), (
        "docs/scoring.md's sensitivity table is out of step: run "
        "python tools/sensitivity.py --write docs/scoring.md")


def _sweep(nodes: int, ratio: float = 1.0, verdict: str = "pass") -> NetworkResult:
    return net(ratio, verdict).model_copy(update={"nodes": nodes, "ranks": 8 * nodes})


def test_a_one_node_nvlink_sweep_never_decides_the_fabric_gate() -> None:
    gs = gates(workloads=AT_REFERENCE["workloads"], network=[_sweep(1)], nodes=64)
    g = gs["network_bar"]
    assert g.status == "not_evaluated" and not g.passed
    assert "no inter-node nccl-tests sweep (1 intra-node NVLink sweep(s)" in g.reason


def test_a_two_node_sweep_cannot_certify_a_64_node_fabric() -> None:
    gs = gates(workloads=AT_REFERENCE["workloads"], network=[_sweep(2)], nodes=64)
    g = gs["network_bar"]
    assert g.status == "not_evaluated"
    assert ("largest inter-node sweep 2 nodes / 16 ranks of 64 nodes claimed: the fabric gate "
            "needs a sweep across at least 32 nodes (50% of the claimed system)") in g.reason
    # a 2-node pilot is covered by its own 2-node sweep
    assert gates(network=[_sweep(2)], nodes=2)["network_bar"].status == "passed"


def test_a_sweep_across_the_claimed_system_decides_and_states_its_scale() -> None:
    gs = gates(workloads=AT_REFERENCE["workloads"], network=[_sweep(1, 0.5, "fail"),
                                                             _sweep(32)], nodes=64)
    g = gs["network_bar"]
    assert g.status == "passed"  # the failing NVLink row is its own row, not the fabric
    assert "proven at largest inter-node sweep 32 nodes / 256 ranks of 64 nodes claimed" in g.reason
    assert "1 node(s)" not in g.reason



def test_fabric_points_come_only_from_sweeps_across_the_claimed_fabric() -> None:
    """A one-node NVLink sweep or a two-node pair at 100 % earned full networking points on a
    64-node claim; only a sweep spanning the claimed fabric earns them, the others are listed
    as not counted."""
    from cmax.score.rating import rate_categories

    def networking(network: list[NetworkResult]) -> Any:
        inputs = RatingInputs(gpu="h100-sxm", declarations={}, audit=audit(), audit_file=None,
                              network=network, nodes=64)
        return next(c for c in rate_categories(inputs, RUBRIC) if c.name == "networking")

    for narrow in ([_sweep(1)], [_sweep(2)], [_sweep(1), _sweep(2)]):
        cat = networking(narrow)
        assert cat.weight == 0 and "networking.nccl: no evidence, not counted" in cat.rules
    cat = networking([_sweep(1, 1.0), _sweep(2, 1.0), _sweep(32, 0.9, "pass")])
    assert cat.evidence[0].startswith("all_reduce 32 node(s)") and "→ 60.0" in cat.evidence[0]
    assert sum("not counted, it does not span the claimed fabric (an inter-node sweep across "
               "≥ 32 nodes)" in e for e in cat.evidence) == 2


def test_a_contradictory_partial_or_foreign_audit_decides_no_gate() -> None:
    trusted = gates(declarations={}, audit=audit(ACS_PASS), audit_file="a.json",
                    **AT_REFERENCE)["acs_disabled"]
    assert trusted.status == "passed" and "a.json: gpus.pcieAcs.enabled is PASS" in trusted.reason
    doubt = "audit.partial: the audit checked 2 node(s) of the 64 [system] claims"
    g = gates(declarations={}, audit=audit(ACS_PASS), audit_file="a.json", doubts=[doubt],
              **AT_REFERENCE)["acs_disabled"]
    assert g.status == "not_evaluated" and not g.passed
    assert f"a.json cannot decide it: {doubt}" in g.reason


def test_an_unverified_workload_does_not_pass_the_exemplar_suite_gate() -> None:
    """Issue 25: a ratio resting on declarations alone is not a pass for the tier."""
    fp8 = wl(1.0, "unverified").model_copy(update={"precision": "fp8"})
    gs = gates(workloads=[wl(1.0, "pass"), fp8], network=[net(1.0, "pass")])
    suite = gs["exemplar_suite"]
    # not earned is not evaluated, and caps the tier as failing it would (Gold)
    assert suite.status == "not_evaluated" and suite.binding_cap == "Gold"
    assert "1.000 unverified" in suite.reason
    assert gs["performance_floor"].status == "passed"  # unverified is not conclusively below


def test_the_bar_gates_follow_the_judgement_not_the_result() -> None:
    """A run whose result says pass but whose judgement holds it unverified passes no bar gate:
    the gates read the verdict at the bar from the judgements (cmax/judgement/claims.py)."""
    runs = [wl(1.0, "pass").model_copy(update={"run_id": "runs[0]"})]
    exemplar = judge_exemplar(runs, RUBRIC.performance.bar)
    held = [_judgement("training_run", "runs[0]", "unverified", 1.0),
            judge_exemplar_claim(exemplar.model_copy(update={
                "state": State.NOT_EVALUATED, "reason": "held"}), [], Bearings([]), ())]
    by_id = {r.name: r.id for r in RUBRIC.gates}
    gs = {by_id[g.name]: g for g in evaluate_gates(RatingInputs(
        gpu="h100-sxm", declarations=DECLARED, audit=audit(), audit_file=None,
        workloads=runs, network=[net(1.0, "pass")], exemplar=exemplar,
        judgements=[*held, fabric([net(1.0, "pass")], 0)]),
        RUBRIC)}
    assert gs["exemplar_suite"].status == "not_evaluated"
    assert "none of the 1 results is earned" in gs["performance_floor"].reason
    assert "1.000 unverified" in gs["performance_floor"].reason
    # a floor passes on evidence not conclusively below it; an unverified result is no such
    # evidence, so the floor is left unjudged and caps as the rubric caps no comparable run
    assert gs["performance_floor"].status == "not_evaluated"
    assert gs["performance_floor"].binding_cap == "Silver"
    # a result with no judgement is counted by no gate
    unjudged = {by_id[g.name]: g.status for g in evaluate_gates(RatingInputs(
        gpu="h100-sxm", declarations=DECLARED, audit=audit(), audit_file=None,
        workloads=runs, exemplar=exemplar), RUBRIC)}
    assert unjudged["exemplar_suite"] == unjudged["performance_floor"] == "not_evaluated"


def serving(ratio: float, verdict: str) -> InferenceResult:
    return InferenceResult(entry="inference[0]", tool="trtllm-bench", source_file="r.json",
                           model="llama3.3-70b", precision="fp8", gpu="h100-sxm",
                           input_len=1000, output_len=1000, gpus=2, gpus_basis="corroborated",
                           results=1, offline=True, output_tok_s=2000.0 * ratio, ratio=ratio,
                           comparison="offline", verdict=verdict)


def test_a_serving_only_bundle_is_judged_by_serving_gates_and_no_training_gate() -> None:
    """Issue 37: samples/halcyon-serve was capped at Silver by performance_floor and at Gold by
    exemplar_suite, two training gates it can never satisfy, and no gate judged its serving."""
    gs = gates(inference=[serving(0.97, "pass"), serving(0.90, "fail")],
               network=[net(1.0, "pass")])
    assert "exemplar_suite" not in gs and "performance_floor" not in gs
    assert gs["serving_bar"].status == "failed" and gs["serving_bar"].cap == "Gold"
    assert gs["serving_floor"].status == "passed"
    assert "0.900 fail" in gs["serving_bar"].reason
    gs = gates(inference=[serving(0.90, "fail")], network=[net(1.0, "pass")])
    assert gs["serving_floor"].status == "failed" and gs["serving_floor"].cap == "Silver"


def test_a_training_only_bundle_is_judged_by_no_serving_gate() -> None:
    gs = gates(**AT_REFERENCE)
    assert "serving_bar" not in gs and "serving_floor" not in gs
    assert gs["exemplar_suite"].status == "passed"


def test_a_bundle_with_neither_is_judged_as_training_and_caps_as_before() -> None:
    gs = gates(network=[net(1.0, "pass")])
    assert {"exemplar_suite", "performance_floor"} <= set(gs) and "serving_bar" not in gs
    assert gs["performance_floor"].binding_cap == "Silver"


def test_an_unverified_serving_result_does_not_pass_the_serving_gate() -> None:
    gs = gates(inference=[serving(1.0, "unverified")], network=[net(1.0, "pass")])
    assert gs["serving_bar"].status == "failed"
    assert gs["serving_floor"].status == "not_evaluated"  # nothing earned either way
    both = gates(inference=[serving(1.0, "unverified"), serving(0.97, "pass")],
                 network=[net(1.0, "pass")])
    assert both["serving_floor"].status == "passed"  # one earned result above the floor
    # an unverified result beside an earned one conclusively below rescues no floor
    below = gates(inference=[serving(1.0, "unverified"), serving(0.90, "fail")],
                  network=[net(1.0, "pass")])
    assert below["serving_floor"].status == "failed"
    fp8 = wl(1.0, "unverified").model_copy(update={"precision": "fp8"})
    runs = gates(workloads=[fp8, wl(0.90, "fail")], network=[net(1.0, "pass")])
    assert runs["performance_floor"].status == "failed"


def test_the_halcyon_sample_is_judged_by_its_serving_results() -> None:
    card = assess(ROOT / "samples" / "halcyon-serve")
    assert card.tier == "Bronze"  # score-bound: 55.8, below Silver whatever the gates
    ids = {g.id for g in card.gates}
    assert {"serving_bar", "serving_floor"} <= ids
    assert not ids & {"exemplar_suite", "performance_floor"}


def mlp(ratio: float | None, verdict: str) -> MlperfResult:
    return MlperfResult(benchmark="llama31_405b", runs=3, num_gpus=512, ratio=ratio,
                        verdict=verdict)


def test_an_mlperf_only_bundle_is_judged_by_mlperf_gates_and_no_training_gate() -> None:
    """An MLPerf Training submission is judged against NVIDIA's at the [mlperf] bar: every
    result must pass for mlperf_bar (cap Gold); mlperf_floor (cap Silver) fails only when
    every one is conclusively below."""
    gs = gates(mlperf=[mlp(1.02, "pass"), mlp(0.90, "fail")], network=[net(1.0, "pass")])
    assert "exemplar_suite" not in gs and "performance_floor" not in gs
    assert gs["mlperf_bar"].status == "failed" and gs["mlperf_bar"].cap == "Gold"
    assert "0.900 fail" in gs["mlperf_bar"].reason
    assert gs["mlperf_floor"].status == "passed"
    gs = gates(mlperf=[mlp(0.90, "fail")], network=[net(1.0, "pass")])
    assert gs["mlperf_floor"].status == "failed" and gs["mlperf_floor"].cap == "Silver"
    # a result shown and not rated (another system's, say) decides neither: hiding the
    # results caps as failing the floor would
    gs = gates(mlperf=[mlp(None, "not_comparable")], network=[net(1.0, "pass")])
    assert gs["mlperf_floor"].status == "not_evaluated"
    assert gs["mlperf_floor"].binding_cap == "Silver"


def test_a_training_bundle_with_its_own_mlperf_results_is_judged_by_both() -> None:
    gs = gates(mlperf=[mlp(1.02, "pass")], **AT_REFERENCE)
    assert {"exemplar_suite", "performance_floor", "mlperf_bar", "mlperf_floor"} <= set(gs)
    assert gs["mlperf_bar"].status == gs["exemplar_suite"].status == "passed"
    assert "serving_bar" not in gates(**AT_REFERENCE) and "mlperf_bar" not in gates(
        **AT_REFERENCE)
