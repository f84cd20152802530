"""The Exemplar suite judged once (cmax/judgement/exemplar.py): every run of a workload counts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cmax.judgement.exemplar import judge_exemplar
from cmax.scorecard import ExemplarJudgement, WorkloadResult
from cmax.states import State

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
