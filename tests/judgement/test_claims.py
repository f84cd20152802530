"""One typed judgement per claim (cmax/judgement/claims.py), judged from real bundles: the
state, the witnesses with their authors, the findings with their declared effects."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from cmax.pipeline import load
from cmax.score import score
from cmax.score.rubric import load_rubric
from cmax.scorecard import POWER_CLAIM, Judgement, Scorecard, Witness
from cmax.states import State
from tests.paths import DATA, SAMPLES
from tests.sample_bundles import aurora_with_slurm_jobs, straighten_fp8_loss

SWEEP = "nccl/all_reduce_perf_64n.txt"


def _sample(tmp_path: Path, name: str = "aurora-compute") -> Path:
    bundle = tmp_path / name
    shutil.copytree(SAMPLES / name, bundle)
    return bundle


def _card(bundle: Path) -> Scorecard:
    with load(bundle) as loaded:
        return score(loaded.case, loaded.findings, loaded.reference, load_rubric())


@pytest.fixture(scope="module")
def aurora() -> Scorecard:
    return _card(SAMPLES / "aurora-compute")


def test_every_run_of_an_honest_sample_is_earned_on_its_log(aurora: Scorecard) -> None:
    for result in aurora.workloads:
        assert result.run_id is not None
        judged = aurora.judgement("training_run", result.run_id)
        assert judged is not None
        assert (judged.state, judged.bar_state) == (State.EARNED, State.MET)
        (log,) = judged.witnesses
        assert log.file == result.log and log.author == "provider" and not log.independent
        assert log.line is not None and f"{result.mean_step_time_s:.4g} s" in log.fact
        assert judged.provenance == "provider-attested"
        assert "performance_floor" in judged.gates


def test_the_suite_the_audit_and_the_declarations(aurora: Scorecard) -> None:
    suite = aurora.judgement("exemplar_suite", "exemplar")
    assert suite is not None and suite.bar_state is aurora.exemplar_state is State.MET
    assert suite.gates == ["exemplar_suite"]
    audit = aurora.judgement("audit", "audit")
    # the collector's JSON names no auditor: the provider can run it on its own cluster
    assert audit is not None and audit.provenance == "provider-attested"
    assert audit.witnesses[0].author == "provider"
    declared = aurora.judgement("declaration", "soc2_type2")
    assert declared is not None and declared.state is State.DECLARED
    assert declared.provenance == "declared" and declared.gates == ["attestation"]
    assert declared.witnesses[0].file == "cmax.toml"


def test_judgements_are_in_the_json_with_their_provenance(aurora: Scorecard) -> None:
    written = aurora.model_dump_json()
    data = json.loads(written)
    kinds = {j["kind"] for j in data["judgements"]}
    assert {"training_run", "exemplar_suite", "fabric", "reliability", "sla", "audit",
            "declaration"} <= kinds
    run = next(j for j in data["judgements"] if j["kind"] == "training_run")
    assert run["provenance"] == "provider-attested" and run["state"] == "earned"
    assert run["witnesses"][0]["independent"] is False
    assert Scorecard.model_validate_json(written) == aurora


def test_a_run_held_by_a_fabrication_warning_is_judged_with_it(tmp_path: Path) -> None:
    """The aurora fp8 run with its loss replaced by a straight line: fast enough to pass, but
    its judgement carries the warning, its effect, and a pass it has not earned: not
    verified, its figure still the log's (provider-attested), never 'declared'."""
    bundle = _sample(tmp_path)
    straighten_fp8_loss(bundle)
    card = _card(bundle)
    judged = card.judgement("training_run", "runs[1]")
    assert judged is not None
    held = [b for b in judged.findings if b.rule == "fabrication.formula-loss"]
    assert held and held[0].effect == "unverified" and judged.effects == ["unverified"]
    assert judged.state is State.NOT_VERIFIED and judged.bar_state is State.NOT_EVALUATED
    assert "fabrication.formula-loss" in judged.reason
    assert judged.provenance == "provider-attested"
    other = card.judgement("training_run", "runs[0]")
    assert other is not None and other.state is State.EARNED and not other.effects


def test_a_run_judged_unverified_passes_no_bar_gate(tmp_path: Path) -> None:
    """The gates read each run's verdict at the bar from its judgement: the held fp8 run
    (its loss a straight line) is fast enough to pass, but it passes no gate."""
    bundle = _sample(tmp_path)
    straighten_fp8_loss(bundle)
    card = _card(bundle)
    held, other = (card.judgement("training_run", f"runs[{i}]") for i in (1, 0))
    assert held is not None and held.verdict == "unverified"
    assert other is not None and other.verdict == "pass"
    gates = {g.id: g for g in card.gates}
    assert gates["exemplar_suite"].status == "not_evaluated"
    floor = gates["performance_floor"]
    assert "2 of 3 training runs" in floor.reason
    assert re.search(r"fp8 512 GPUs \d\.\d{3} unverified", floor.reason)
    assert card.tier != "Platinum"


def test_a_sweep_of_another_cluster_is_not_counted_by_its_declared_effect(
        tmp_path: Path) -> None:
    bundle = _sample(tmp_path)
    sweep = bundle / SWEEP
    sweep.write_text(re.sub(r"aurora-h100-east-0(\d\d)", lambda m: f"aurora-h100-east-1{m[1]}",
                            sweep.read_text(encoding="utf-8")), encoding="utf-8")
    fabric = _card(bundle).judgement("fabric", "fabric")
    assert fabric is not None
    assert "not_counted" in fabric.effects
    assert any(b.rule == "crossfile.hosts-of-another-cluster" and b.file == SWEEP
               for b in fabric.findings)
    assert (fabric.state, fabric.bar_state) == (State.NOT_ASSESSED, State.NOT_EVALUATED)
    assert fabric.provenance == "not assessed"


def test_a_partial_audit_is_doubted(tmp_path: Path) -> None:
    """cinder's audit checked a small part of its nodes (audit.partial): it decides no gate."""
    audit = _card(SAMPLES / "cinder-gpu").judgement("audit", "audit")
    assert audit is not None and audit.state is State.CONTRADICTED
    assert "doubt" in audit.effects and "audit.partial" in audit.reason


def test_the_schedulers_accounting_witnesses_a_runs_job_not_its_speed(tmp_path: Path) -> None:
    """The aurora runs with their Slurm jobs (sacct -P output, tests/data/ingest/slurm): the
    accounting is an independent witness of the job's span, but the speed is still only what
    the provider's log prints."""
    judged = _card(aurora_with_slurm_jobs(tmp_path)).judgement("training_run", "runs[0]")
    assert judged is not None
    job = [w for w in judged.witnesses if w.author == "scheduler"]
    assert job and job[0].file == "slurm/sacct_parsable.txt" and job[0].independent
    assert "job 41001" in job[0].fact and job[0].attests == "context"
    assert judged.provenance == "provider-attested"


def test_a_serving_only_bundle_judges_its_results_and_no_run() -> None:
    card = _card(SAMPLES / "halcyon-serve")
    serving = [j for j in card.judgements if j.kind == "serving_result"]
    assert [j.id for j in serving] == [r.entry for r in card.inference]
    assert not [j for j in card.judgements if j.kind == "training_run"]
    suite = card.judgement("exemplar_suite", "exemplar")
    assert suite is not None and suite.provenance == "not assessed"
    assert all(set(j.gates) == {"serving_bar", "serving_floor"} for j in serving)


def test_a_judgement_speaks_the_one_vocabulary() -> None:
    with pytest.raises(ValidationError, match="earned, declared"):
        Judgement(kind="fabric", id="fabric", label="x", state=State.PASSED)
    with pytest.raises(ValidationError, match="met, not_met or not_evaluated"):
        Judgement(kind="fabric", id="fabric", label="x", state=State.EARNED,
                  bar_state=State.PASSED)


def test_provenance_follows_the_authors() -> None:
    def judged(*authors: str, state: State = State.EARNED) -> str:
        return Judgement(kind="fabric", id="fabric", label="x", state=state, witnesses=[
            Witness(fact="f", author=a) for a in authors]).provenance

    assert judged("provider") == "provider-attested"
    context = Witness(fact="job span", author="scheduler", attests="context")
    assert Judgement(kind="fabric", id="fabric", label="x", state=State.EARNED, witnesses=[
        Witness(fact="f", author="provider"), context]).provenance == "provider-attested"
    assert judged("provider", "buyer") == "independently witnessed"
    assert judged("manifest") == "declared"
    assert judged("provider", state=State.ASSUMED) == "declared"
    assert judged("buyer", state=State.NOT_ASSESSED) == "not assessed"
    assert judged() == "not assessed"


def test_the_quote_and_storage_are_judged() -> None:
    """halcyon-serve quotes a price and aurora submits storage results: each a judgement."""
    quote = _card(SAMPLES / "halcyon-serve").judgement("quote", "pricing")
    assert quote is not None and quote.state is State.DECLARED
    assert quote.provenance == "declared" and quote.witnesses[0].file == "cmax.toml"


def test_a_rated_storage_result_is_earned_on_its_file(tmp_path: Path) -> None:
    """HPE's MLPerf Storage v1.0 resnet50 result (tests/data/storage), rated on what its
    summary.json states."""
    from tests.fakes import manifest_text

    folder = tmp_path / "mlperf_storage_v1.0" / "HPE"
    shutil.copytree(DATA / "storage" / "mlperf_storage_v1.0" / "HPE", folder)
    (tmp_path / "cmax.toml").write_text(manifest_text(
        '[[storage]]\nresult = "mlperf_storage_v1.0/HPE/summary.json"\n'), encoding="utf-8")
    card = _card(tmp_path)
    judged = card.judgement("storage_result", "storage[0]")
    assert card.storage[0].verdict == "rated" and judged is not None
    assert judged.state is State.EARNED and judged.provenance == "provider-attested"
    assert judged.witnesses[0].file == "mlperf_storage_v1.0/HPE/summary.json"


def test_the_priced_power_is_assumed_from_the_reference_default(aurora: Scorecard) -> None:
    """aurora states no power per GPU: each J/token of its price divides the reference's
    default all-in power (1,989 W per H100), a figure nothing in the bundle measured."""
    from cmax.render.provenance import Sources

    power = aurora.judgement("energy", POWER_CLAIM)
    assert power is not None and power.state is State.ASSUMED and power.witnesses == []
    assert power.provenance != "provider-attested"
    label = Sources(aurora).power()
    assert label is not None and label.text == "assumed (reference default power)"


def test_a_stated_power_per_gpu_is_declared(tmp_path: Path) -> None:
    bundle = _sample(tmp_path)
    manifest = bundle / "cmax.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(
        "[pricing]\n", "[pricing]\nwatts_per_gpu = 1500\n", 1), encoding="utf-8")
    power = _card(bundle).judgement("energy", POWER_CLAIM)
    assert power is not None and power.state is State.DECLARED
    assert power.provenance == "declared"
    assert [(w.file, w.fact, w.author) for w in power.witnesses] == [
        ("cmax.toml", "[pricing] watts_per_gpu = 1500", "manifest")]

