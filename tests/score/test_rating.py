"""The ClusterMAX-style rating: rubric file, category points, gates and tier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.errors import CmaxError, RubricError
from cmax.ingest.evidence import AUDIT_SCHEMA, conform, empty
from cmax.score import Rubric, load_rubric
from cmax.score.rating import (
    RatingInputs,
    coverage_gate,
    evaluate_gates,
    evidence_coverage,
    final_tier,
    rate_categories,
    weighted_score,
)
from cmax.score.rubric import CATEGORY_NAMES
from cmax.score.stats import log_ratio_score, ratio_score
from cmax.scorecard import Gate, ReliabilityResult, SlaResult, WorkloadResult
from tests.score.score_fakes import audit_row

SMALL = """
id = "test-rubric"
title = "test"
basis = "test"
[scoring]
declaration_credit = 1.0
ratio_floor = 0.5
[tiers]
Platinum = 90
Gold = 80
Silver = 68
Bronze = 55
[categories.security]
title = "Security"
weight = 30
[[categories.security.components]]
kind = "audit"
weight = 3
audit_categories = ["versions"]
[[categories.security.components]]
kind = "declarations"
weight = 1
keys = ["soc2_type1|soc2_type2|iso27001", "tenant_network_isolation", "patch_process"]
[categories.networking]
title = "Networking"
weight = 50
[[categories.networking.components]]
kind = "training"
weight = 1
[categories.reliability]
title = "Reliability"
weight = 20
[[categories.reliability.components]]
kind = "goodput"
weight = 2
[[categories.reliability.components]]
kind = "mtbf"
weight = 1
[[categories.reliability.components]]
kind = "sla"
weight = 1
[[gates]]
id = "attestation"
name = "SOC 2 / ISO 27001"
cap = "Underperforming"
keys = ["soc2_type1", "soc2_type2", "iso27001"]
missing = "fail"
source = "ClusterMAX 2.0"
[[gates]]
id = "acs"
name = "ACS disabled"
cap = "Bronze"
checks = ["gpus.pcieAcs.enabled"]
fail_statuses = ["FAIL", "WARNING"]
keys = ["acs_disabled"]
source = "ClusterMAX 2.0"
[[gates]]
id = "gpu"
name = "Modern GPU"
cap = "Underperforming"
allowed_gpus = ["h100", "b200"]
source = "ClusterMAX 2.0"
"""
OTHERS = "".join(
    f'[categories.{n}]\ntitle = "{n}"\nweight = 0\n[[categories.{n}.components]]\n'
    f'kind = "declarations"\nkeys = ["{n}_x"]\n'
    for n in CATEGORY_NAMES if n not in ("security", "networking", "reliability"))


@pytest.fixture
def small(tmp_path: Path) -> Rubric:
    path = tmp_path / "rubric.toml"
    path.write_text(SMALL + OTHERS)
    return load_rubric(path)


def audit(*rows: dict[str, Any]) -> pl.DataFrame:
    if not rows:
        return empty(AUDIT_SCHEMA)
    return conform(pl.DataFrame(list(rows)), AUDIT_SCHEMA)


def workload(ratio: float, verdict: str = "pass") -> WorkloadResult:
    return WorkloadResult(workload="llama3.1-70b", precision="bf16", num_gpus=64, log="t.log",
                          status="success", steps_total=50, ratio=ratio, verdict=verdict,
                          bar=0.95)


def reliability(goodput: float, ratio_vs_ref: float) -> ReliabilityResult:
    import datetime as dt

    return ReliabilityResult(
        period_start=dt.date(2026, 6, 1), period_end=dt.date(2026, 6, 30), gpus_in_service=512,
        gpu_days=15360, unexpected_interruptions=3, planned_interruptions=0,
        per_1000_gpu_days=0.1953125, mtbf_gpu_hours=122880.0, reference_per_1000_gpu_days=0.4736,
        reference_source="Llama 3", ratio_vs_reference=ratio_vs_ref, job_gpus=512,
        checkpoint_interval_min=30, restart_min=15, ettr=0.99, reference_ettr=0.99,
        goodput_ratio=goodput)


def inputs(**kw: Any) -> RatingInputs:
    base: dict[str, Any] = {"gpu": "h100-sxm", "declarations": {}, "audit": audit(),
                            "audit_file": "audit/audit.values.json"}
    base.update(kw)
    return RatingInputs(**base)


def by_name(cats: list[Any]) -> dict[str, Any]:
    return {c.name: c for c in cats}


def test_category_points_by_hand(small: Rubric) -> None:
    rows = [audit_row("securityVersions.a", "versions", s)
            for s in ("PASS", "PASS", "PASS", "WARNING", "FAIL", "SKIPPED")]
    sla = SlaResult(contracted_uptime_pct=99.9, measured_uptime_pct=99.95, met=False,
                    credit_pct=0.1, downtime_node_hours=1, node_hours=1000, node_months=4,
                    node_months_below=1, worst_uptime_pct=99.5)
    cats = by_name(rate_categories(inputs(
        audit=audit(*rows),
        declarations={"soc2_type2": True, "tenant_network_isolation": False},
        workloads=[workload(1.0), workload(0.9, "fail"), workload(0.5, "not_comparable")],
        reliability=reliability(goodput=0.95, ratio_vs_ref=10 ** 0.5),
        sla=sla), small))
    sec = cats["security"]
    # audit: (3 × 1 + 0.5 + 0) / 5 graded = 70; declarations: 1 of 3 requirements = 33.33
    # (SMALL gives declarations full credit); category = (70 × 3 + 33.33 × 1) / 4 = 60.8333
    assert sec.score == pytest.approx((70 * 3 + 100 / 3) / 4, abs=1e-4)
    assert sec.verified
    assert any("3 PASS, 1 WARNING, 1 FAIL, 1 SKIPPED" in e for e in sec.evidence)
    assert any(e.startswith("declared (unverified): soc2_type2 = true") for e in sec.evidence)
    assert any("not declared: patch_process" in e for e in sec.evidence)
    # training: ratio 1.0 → 100, 0.9 → 80 (floor 0.5); not_comparable left out → mean 90
    assert cats["networking"].score == pytest.approx(90.0)
    # reliability: goodput 0.95 → 90 (×2); MTBF ratio 1/√10 → 50 on the log scale (×1);
    # SLA 3 of 4 node-months → 75 (×1) → (180 + 50 + 75) / 4 = 76.25
    assert cats["reliability"].score == pytest.approx(76.25)
    # a category with nothing at all is left out (weight 0) and unverified
    assert cats["storage"].weight == 0.0 and not cats["storage"].verified
    assert "no evidence" in cats["storage"].evidence[0]
    assert all(c.rules for c in cats.values())


def test_declarations_only_category_is_unverified(small: Rubric) -> None:
    cats = by_name(rate_categories(inputs(declarations={"soc2_type2": True}), small))
    sec = cats["security"]
    assert not sec.verified and sec.score == pytest.approx(100 / 3, abs=1e-4)


def test_weighted_score_coverage_and_tiers(small: Rubric) -> None:
    cats = rate_categories(inputs(workloads=[workload(1.0)]), small)
    # only networking (weight 50) has evidence: the others are left out, not scored 0
    assert weighted_score(cats) == pytest.approx(100.0)
    assert [c.weight for c in cats if c.name in ("security", "networking")] == [0.0, 50.0]
    # but evidence covers 50 of 100 weight: at most Silver (Gold needs 75 %)
    assert evidence_coverage(cats, small) == pytest.approx(0.5)
    gate = coverage_gate(cats, small)
    assert not gate.passed and gate.cap == "Silver" and "security, reliability" in gate.reason
    assert gate.binding_cap == "Silver" and gate.kind == "coverage"
    assert final_tier(100.0, [gate], small) == "Silver"
    # failed whatever the score: a gate that caps is never "passed", even when a lower score
    # tier leaves the cap with nothing to do
    assert final_tier(56.0, [gate], small) == "Bronze"
    # declaring one security key makes security evidenced: its audit part is absent, and the
    # two undeclared requirements score 0 → 33.3, now counted
    cats = rate_categories(inputs(workloads=[workload(1.0)],
                                  declarations={"iso27001": True}), small)
    assert weighted_score(cats) == pytest.approx((100 / 3 * 30 + 100 * 50) / 80, abs=1e-3)
    assert small.tiers.tier_for(90) == "Platinum" and small.tiers.tier_for(89.99) == "Gold"
    assert small.tiers.tier_for(54.9) == "Underperforming"


def test_gates_cap_the_tier(small: Rubric) -> None:
    gates = {g.name: g for g in evaluate_gates(inputs(), small)}
    assert not gates["SOC 2 / ISO 27001"].passed  # missing = fail
    acs = gates["ACS disabled"]  # no audit, nothing declared: not evaluated, never passed
    assert acs.status == "not_evaluated" and not acs.passed and "not evaluated" in acs.reason
    assert acs.not_evaluated_cap == "Gold"  # the shipped [scoring] not_evaluated_cap
    assert gates["Modern GPU"].passed and gates["Modern GPU"].status == "passed"
    assert final_tier(95.0, list(gates.values()), small) == "Underperforming"

    unchecked = evaluate_gates(inputs(declarations={"iso27001": True}), small)
    assert final_tier(95.0, unchecked, small) == "Gold"  # an unchecked disqualifier: no Platinum
    ok = evaluate_gates(inputs(declarations={"iso27001": True, "acs_disabled": True}), small)
    # declared gates do not cap, but never read as passed (scorecard: tier without them)
    assert final_tier(95.0, ok, small) == "Platinum"
    assert [g.status for g in ok if not g.passed] == ["declared", "declared"]
    assert "declared, not shown: iso27001 = true" in ok[0].reason

    acs_on = audit(audit_row("gpus.pcieAcs.enabled", "hardware", "WARNING", observed="true"))
    gs = evaluate_gates(inputs(declarations={"iso27001": True, "acs_disabled": True},
                               audit=acs_on), small)
    acs = next(g for g in gs if g.name == "ACS disabled")
    assert not acs.passed and "observed true" in acs.reason  # audit beats the declaration
    assert final_tier(85.0, gs, small) == "Bronze"
    assert final_tier(50.0, gs, small) == "Underperforming"  # a cap never raises a tier

    unknown = audit(audit_row("gpus.pcieAcs.enabled", "hardware", "WARNING", observed="unknown"))
    gs = evaluate_gates(inputs(declarations={"iso27001": True, "acs_disabled": False},
                               audit=unknown), small)
    assert not next(g for g in gs if g.name == "ACS disabled").passed  # falls to declaration

    old = evaluate_gates(inputs(gpu="a100-sxm", declarations={"iso27001": True}), small)
    assert not next(g for g in old if g.name == "Modern GPU").passed


def test_gate_model_fields(small: Rubric) -> None:
    g = evaluate_gates(inputs(), small)[0]
    assert isinstance(g, Gate) and g.cap == "Underperforming" and "[attestation;" in g.reason


def test_curves() -> None:
    assert ratio_score(0.9, 0.5) == pytest.approx(80.0)
    assert ratio_score(1.2, 0.5) == 100.0 and ratio_score(0.4, 0.5) == 0.0
    assert log_ratio_score(0.1, 0.1) == 0.0 and log_ratio_score(1.0, 0.1) == 100.0
    assert log_ratio_score(10 ** -0.5, 0.1) == pytest.approx(50.0)


# ------------------------------------------------------------------------------ rubric file

def test_shipped_rubric() -> None:
    r = load_rubric(None)
    assert r.id == "cmax-clustermax2" and len(r.digest) == 64
    assert r.label.startswith("cmax-clustermax2@")
    assert list(r.categories) == list(CATEGORY_NAMES)
    assert sum(c.weight for c in r.categories.values()) == 100
    assert r.performance.bar == 0.95
    assert {g.id for g in r.gates} >= {"attestation", "acs_disabled", "gpudirect_rdma",
                                       "modern_gpu"}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "needle"), [
    (SMALL, "categories"),                                             # 7 categories missing
    (SMALL.replace("Gold = 80", "Gold = 95") + OTHERS, "tiers"),       # not descending
    (SMALL.replace('title = "test"', 'title = "test"\ncolour = 1') + OTHERS, "colour"),
    (SMALL.replace('kind = "goodput"', 'kind = "vibes"') + OTHERS,
     "categories.reliability.components[0].kind"),
    (SMALL.replace('cap = "Bronze"', 'cap = "Tin"') + OTHERS, "gates[1].cap"),
    (SMALL.replace('id = "test-rubric"\n', "") + OTHERS, "id"),
])
def test_malformed_rubric_names_file_and_key(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CmaxError) as exc:
        load_rubric(path)
    line = exc.value.one_line()
    assert str(path) in line and needle in line


def test_omitted_threshold_keys_come_from_the_shipped_rubric(small: Rubric) -> None:
    """One home per value: a custom rubric that leaves a threshold out gets the shipped
    file's value, never a default written in code (SMALL states only declaration_credit and
    ratio_floor of [scoring])."""
    shipped = load_rubric(None)
    assert small.scoring.declaration_credit == 1.0
    assert shipped.scoring.declaration_credit == 0.8
    assert small.scoring.ratio_floor == 0.5 and shipped.scoring.ratio_floor == 0.75
    assert small.performance == shipped.performance and small.coverage == shipped.coverage
    assert small.scoring.mtbf_ratio_floor == shipped.scoring.mtbf_ratio_floor
    assert small.scoring.not_evaluated_cap == shipped.scoring.not_evaluated_cap == "Gold"


def test_rubric_file_errors(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="not found"):
        load_rubric(tmp_path / "nope.toml")
    with pytest.raises(RubricError, match="categories"):
        load_rubric(write(tmp_path, SMALL))
    with pytest.raises(CmaxError, match=r"r\.toml:2: invalid TOML"):
        load_rubric(write(tmp_path, 'id = "x"\n[tiers\n'))
