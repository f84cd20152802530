"""The Exemplar suite judged once (cmax/judgement/exemplar.py): every run of a workload counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from cmax.judgement.exemplar import judge_exemplar
from cmax.pipeline import assess
from cmax.scorecard import ExemplarJudgement, WorkloadResult
from cmax.states import State
from tests.sample_bundles import one_of_two_runs_contested

BAR = 0.95


def run(verdict: str, ratio: float | None = 1.0, *, precision: str = "bf16",
        log: str = "a.log") -> WorkloadResult:
    return WorkloadResult(workload="llama3.1-405b", precision=precision, num_gpus=512, log=log,
                          status="success", steps_total=50, ratio=ratio, verdict=verdict,
                          bar=BAR)


def test_every_run_passing_meets_the_suite() -> None:
    judged = judge_exemplar([run("pass", 1.005), run("pass", 0.99, precision="fp8")], BAR)
    assert judged.state is State.MET
    assert [w.state for w in judged.workloads] == [State.MET, State.MET]
    assert "all 2 suite workloads meet the bar" in judged.reason


def test_one_failing_run_of_a_workload_is_not_met() -> None:
    """Issue 37: one run at 1.005 and one at 0.849 of the same workload read as passed."""
    judged = judge_exemplar([run("pass", 1.005), run("fail", 0.849, log="b.log")], BAR)
    assert judged.state is State.NOT_MET
    (workload,) = judged.workloads
    assert workload.state is State.NOT_MET and [r.log for r in workload.runs] == ["a.log", "b.log"]
    assert "b.log 0.849 fail" in judged.reason and "a.log" not in judged.reason


def test_measured_runs_that_never_show_the_bar_exceeded_are_not_met() -> None:
    judged = judge_exemplar([run("inconclusive", 0.95), run("inconclusive", 0.96, log="b.log")],
                            BAR)
    assert judged.state is State.NOT_MET


def test_a_noisy_run_beside_an_earned_pass_does_not_sink_it() -> None:
    assert judge_exemplar([run("pass", 1.02), run("inconclusive", 0.97, log="b.log")],
                          BAR).state is State.MET
    assert judge_exemplar([run("pass", 1.02), run("unverified", 1.0, log="b.log")],
                          BAR).state is State.MET


def test_a_lucky_pass_among_slow_runs_pools_below_the_bar() -> None:
    judged = judge_exemplar([run("pass", 1.02), run("unverified", 0.85, log="b.log"),
                             run("inconclusive", 0.86, log="c.log")], BAR)
    assert judged.state is State.NOT_MET and "its 3 runs pool to 0.907" in judged.reason


def test_the_only_run_unverified_is_not_evaluated() -> None:
    judged = judge_exemplar([run("unverified", 1.0)], BAR)
    assert judged.state is State.NOT_EVALUATED
    assert "(1.000 unverified)" in judged.reason


def test_a_failing_workload_outweighs_an_unverified_one() -> None:
    judged = judge_exemplar([run("unverified"), run("fail", 0.8, precision="fp8")], BAR)
    assert judged.state is State.NOT_MET


def test_no_training_runs_is_not_evaluated() -> None:
    judged = judge_exemplar([], BAR)
    assert judged.state is State.NOT_EVALUATED and judged.workloads == []
    assert judge_exemplar([run("no_reference", None)], BAR).workloads == []


def test_a_suite_is_never_in_a_run_state() -> None:
    with pytest.raises(ValidationError, match="met, not_met or not_evaluated"):
        ExemplarJudgement(state=State.PASSED, bar=BAR, reason="x")


def test_a_run_an_error_contests_is_not_met_beside_a_pass() -> None:
    """A run not below the bar whose evidence an error names does not pass: it never drops
    out and leaves its workload to an earned pass; a failing one still fails."""
    contested = run("pass", 1.0, log="b.log").model_copy(
        update={"validation_errors": ["consistency.tflops-vs-step-time"]})
    judged = judge_exemplar([run("pass", 1.005), contested], BAR)
    assert judged.state is State.NOT_MET
    assert "b.log 1.000 withheld by consistency.tflops-vs-step-time" in judged.reason
    assert judge_exemplar([run("pass", 1.005)], BAR).state is State.MET
    failing = run("fail", 0.80, log="b.log").model_copy(
        update={"validation_errors": ["consistency.tflops-vs-step-time"]})
    assert judge_exemplar([run("pass", 1.005), failing], BAR).state is State.NOT_MET


def test_a_contested_run_fails_the_exemplar_gate_from_files(tmp_path: Path) -> None:
    """Aurora plus a second bf16 run whose TFLOP/s its step times contradict (an error on it):
    the suite is not met and exemplar_suite fails (before, the contested run dropped out and
    the suite was met on the first run). Aurora alone still meets it."""
    card = assess(one_of_two_runs_contested(tmp_path))
    [second] = [w for w in card.workloads if w.log.endswith("_second.log")]
    assert "consistency.tflops-vs-step-time" in second.validation_errors
    judged = card.judgement("training_run", second.run_id or "")
    assert judged is not None and judged.verdict == "withheld"
    gate = next(g for g in card.gates if g.id == "exemplar_suite")
    assert gate.status == "failed" and "withheld by consistency.tflops-vs-step-time" in gate.reason
    assert card.exemplar_state is State.NOT_MET


def test_a_workload_is_named_as_its_runs_logs_state_it() -> None:
    """A workload whose only run's log states fp8 against a declared bf16 is named by what the
    log states, the declaration marked, as the run's judgement and every report table name it."""
    contradicted = run("fail", 0.80).model_copy(update={"log_states": {"precision": "fp8"}})
    judged = judge_exemplar([contradicted], BAR)
    assert "not met: llama3.1-405b fp8 (declared bf16) 512 GPUs (0.800 fail)" in judged.reason
