"""The audit gates read the audit's judgement: an audit of another cluster is judged
contradicted (a finding of effect ``doubt`` on it) and the gates its checks would decide say
it cannot decide them; the honest audit's judgement is earned and names no doubt."""

from __future__ import annotations

from pathlib import Path

from cmax.pipeline import assess
from cmax.states import State
from tests.validate.validate_fakes import HonestBundle


def test_an_audit_of_another_cluster_decides_no_gate(tmp_path: Path) -> None:
    honest = assess(HonestBundle().write_bundle(tmp_path / "honest"))
    assert not any("cannot decide it" in g.reason for g in honest.gates)
    judged = honest.judgement("audit", "audit")
    assert judged is not None and judged.state is State.EARNED

    foreign = HonestBundle()
    foreign.audit_cluster = "other-h100-west"
    card = assess(foreign.write_bundle(tmp_path / "foreign"))
    judged = card.judgement("audit", "audit")
    assert judged is not None and judged.state is State.CONTRADICTED
    doubts = [b.rule for b in judged.findings if b.effect == "doubt"]
    assert doubts == ["audit.cluster-mismatch"]
    acs = next(g for g in card.gates if g.id == "acs_disabled")
    assert acs.status == "not_evaluated"
    assert "cannot decide it: audit.cluster-mismatch" in acs.reason
    assert set(judged.gates) >= {"acs_disabled", "gpudirect_rdma"}
