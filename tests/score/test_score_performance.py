"""Throughput ratio, bootstrap CI and verdicts, pinned on hand-computed cases."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cmax.findings import Finding
from cmax.judgement.bar import against_bar
from cmax.judgement.exemplar import judge_exemplar
from cmax.score import load_rubric
from cmax.score.performance import suite_throughput, workload_results
from cmax.score.stats import bootstrap_ci, geometric_mean
from cmax.scorecard import WorkloadResult
from cmax.states import State
from tests.fakes import FakeReference
from tests.score.score_fakes import (
    BASE_MANIFEST,
    baseline,
    evidence,
    flat_steps,
    manifest,
    run_row,
    step_rows,
)

RUBRIC = load_rubric(None)
KEY = ("llama3.1-70b", "bf16", 64)


def one(ref: FakeReference, runs: list[dict[str, object]], steps: list[dict[str, object]],
        findings: list[Finding] | None = None) -> WorkloadResult:
    results = workload_results(evidence(runs=runs, steps=steps), findings or [], ref, RUBRIC)
    assert len(results) == 1
    return results[0]


def test_exactly_at_reference_is_ratio_one_and_pass() -> None:
    # reference 10.0 s/step; provider 10.0 s in every window step (35-44), slow warm-up outside
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row()], flat_steps("runs[0]", 10.0))
    assert r.ratio == 1.0 and r.ci_low == 1.0 and r.ci_high == 1.0
    assert r.verdict == "pass"
    assert r.window == (35, 44) and r.steps_in_window == 10 and r.steps_total == 50
    # tokens/s/GPU = GBS × seq / step / GPUs = 128 × 8192 / 10 / 64
    assert r.tokens_per_s_per_gpu == pytest.approx(1638.4)
    assert r.mean_step_time_s == 10.0
    assert r.baseline is not None and r.baseline.release == "test-2026.1"
    assert any("step time" in n for n in r.notes)
    assert len(r.step_series) == 50


def test_ninety_percent_of_reference_fails() -> None:
    # reference 9.0 s, provider 10.0 s → 9 / 10 = 0.90 < 0.95
    r = one(FakeReference({KEY: baseline(9.0)}), [run_row()], flat_steps("runs[0]", 10.0))
    assert r.ratio == pytest.approx(0.9) and r.ci_high == pytest.approx(0.9)
    assert r.verdict == "fail"


def test_warmup_and_tail_are_outside_the_window() -> None:
    times = {i: 30.0 for i in range(50)}
    times.update({i: 10.0 for i in range(35, 45)})
    times.update({45: 99.0, 49: 99.0})
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row()], step_rows("runs[0]", times))
    assert r.ratio == 1.0


def test_two_sample_bootstrap_matches_hand_computation() -> None:
    # window holds 8 s and 12 s. Resampled means are 8, 10, 12 with prob 1/4, 1/2, 1/4, so the
    # ratio 10/mean takes 1.25, 1.0, 0.8333: 2.5th percentile 0.8333, 97.5th 1.25.
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row()],
            step_rows("runs[0]", {35: 8.0, 36: 12.0}))
    assert r.ratio == 1.0
    assert r.ci_low == pytest.approx(10 / 12, abs=1e-6)
    assert r.ci_high == pytest.approx(1.25, abs=1e-6)
    assert r.verdict == "inconclusive"


def test_noisy_run_straddling_the_bar_is_inconclusive_and_deterministic() -> None:
    # mean 10.5 s → ratio 10/10.5 = 0.952; ±1 s alternation makes the CI straddle 0.95
    times = {i: (9.5 if i % 2 else 11.5) for i in range(35, 45)}
    ref = FakeReference({KEY: baseline(10.0)})
    a = one(ref, [run_row()], step_rows("runs[0]", times))
    b = one(ref, [run_row()], step_rows("runs[0]", times))
    assert a.ratio == pytest.approx(10 / 10.5, abs=1e-6)
    assert a.ci_low is not None and a.ci_high is not None
    assert a.ci_low < 0.95 < a.ci_high
    assert a.verdict == "inconclusive"
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)


def test_exactly_at_the_bar_is_not_a_pass() -> None:
    # NVIDIA's criterion is "> 95%": 380 / 400 TFLOP/s = 0.95 exactly is not above it
    tflops = {i: 380.0 for i in range(35, 45)}
    ref = FakeReference({KEY: baseline(None, model_tflops_per_gpu=400.0)})
    r = one(ref, [run_row(gbs=None, seq_len=None)],
            step_rows("runs[0]", {i: 10.0 for i in range(35, 45)}, tflops))
    assert r.ratio == 0.95 and r.verdict == "inconclusive"
    assert any("TFLOP/s/GPU" in n for n in r.notes)
    # MFU = 380 / 989 peak BF16
    assert r.mfu_pct == pytest.approx(38.423, abs=1e-3)


def test_tokens_basis_when_the_baseline_has_no_step_time() -> None:
    ref = FakeReference({KEY: baseline(None, tokens_per_s_per_gpu=1638.4)})
    r = one(ref, [run_row()], flat_steps("runs[0]", 10.0))
    assert r.ratio == pytest.approx(1.0)
    assert any("tokens/s/GPU" in n for n in r.notes)


def test_different_gbs_is_compared_per_token() -> None:
    # baseline GBS 256 at 20 s = 1638.4 tokens/s/GPU; provider GBS 128 at 10 s = the same rate
    ref = FakeReference({KEY: baseline(20.0, gbs=256)})
    r = one(ref, [run_row(gbs=128)], flat_steps("runs[0]", 10.0))
    assert r.ratio == pytest.approx(1.0)
    assert any("tokens/s/GPU" in n for n in r.notes)
    assert any("matched the recipe's GBS 256" in n for n in r.notes)
    # the validator reports the GBS mismatch as an error: then the run is not comparable
    bad = Finding(rule="comparability.config-mismatch", severity="error",
                  file="training/run0.log", message="gbs 128 (reference 256)", fix="rerun",
                  run_id="runs[0]")
    r = one(ref, [run_row(gbs=128)], flat_steps("runs[0]", 10.0), [bad])
    assert r.verdict == "not_comparable"
    # a finding for another run (by run_id) does not touch this one
    other = bad.model_copy(update={"run_id": "runs[7]"})
    assert one(ref, [run_row(gbs=128)], flat_steps("runs[0]", 10.0), [other]).verdict == "pass"


def test_missing_gbs_is_taken_from_the_recipe() -> None:
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row(gbs=None, seq_len=None)],
            flat_steps("runs[0]", 10.0))
    assert r.ratio == 1.0 and r.tokens_per_s_per_gpu == pytest.approx(1638.4)
    assert any("GBS 128 taken from the reference recipe" in n for n in r.notes)


def test_old_recipe_window_is_the_last_step() -> None:
    # DGXC <= v25.04 reports the last step: one sample, verdict from the point estimate
    ref = FakeReference({KEY: baseline(10.0, recipe_release="v25.04.01")})
    times = {i: 50.0 for i in range(49)}
    times[49] = 10.0
    r = one(ref, [run_row(max_iteration=49)], step_rows("runs[0]", times))
    assert r.window == (49, 49) and r.ratio == 1.0
    assert r.ci_low is None and r.verdict == "pass"


def test_v25_05_window_is_11_to_44() -> None:
    ref = FakeReference({KEY: baseline(10.0, recipe_release="v25.05.02")})
    r = one(ref, [run_row()], flat_steps("runs[0]", 10.0))
    assert r.window == (11, 44) and r.steps_in_window == 34


def test_no_baseline_is_no_reference() -> None:
    r = one(FakeReference({}), [run_row()], flat_steps("runs[0]", 10.0))
    assert r.verdict == "no_reference" and r.ratio is None and r.baseline is None


def test_comparability_error_makes_the_run_not_comparable() -> None:
    bad = Finding(rule="comparability.config-mismatch", severity="error", file="training/run0.log",
                  message="GBS 64 differs from the recipe's 128", fix="rerun")
    ok = Finding(rule="comparability.note", severity="warning", file="training/run0.log",
                 message="x", fix="y")
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row()], flat_steps("runs[0]", 10.0),
            [bad, ok])
    assert r.verdict == "not_comparable" and r.ratio == 1.0
    assert any("comparability.config-mismatch" in n for n in r.notes)


def test_a_run_with_a_validation_error_cannot_pass() -> None:
    wrong_model = Finding(rule="consistency.manifest-vs-log", severity="error",
                          file="training/run0.log", run_id="runs[0]",
                          message="the log is of another workload", fix="submit the right log")
    other_run = Finding(rule="consistency.manifest-vs-log", severity="error",
                        file="training/run9.log", run_id="runs[9]", message="x", fix="y")
    ref = FakeReference({KEY: baseline(10.0)})
    r = one(ref, [run_row()], flat_steps("runs[0]", 10.0), [wrong_model])
    assert r.ratio == 1.0 and r.verdict == "inconclusive"
    assert any("consistency.manifest-vs-log" in n for n in r.notes)
    # an error on another run does not touch this one
    assert one(ref, [run_row()], flat_steps("runs[0]", 10.0), [other_run]).verdict == "pass"


def test_diverged_and_incomplete_runs_cannot_pass() -> None:
    ref = FakeReference({KEY: baseline(10.0)})
    diverged = one(ref, [run_row(status="invalid_grad_norm")], flat_steps("runs[0]", 10.0))
    assert diverged.verdict == "fail"
    incomplete = one(ref, [run_row(status="incomplete")], flat_steps("runs[0]", 10.0))
    assert incomplete.verdict == "inconclusive"


def test_no_steps_in_window_is_inconclusive() -> None:
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row(status="no_data")], [])
    assert r.verdict == "inconclusive" and r.ratio is None


def test_mfu_from_logged_tflops() -> None:
    tflops = {i: 494.5 for i in range(35, 45)}
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row()],
            step_rows("runs[0]", {i: 10.0 for i in range(35, 45)}, tflops))
    assert r.model_tflops_per_gpu == pytest.approx(494.5)
    assert r.mfu_pct == pytest.approx(50.0)


def test_exemplar_needs_every_suite_workload_to_pass() -> None:
    ref = FakeReference({KEY: baseline(10.0), ("llama3.1-70b", "fp8", 64): baseline(9.0)})
    runs = [run_row("runs[0]"), run_row("runs[1]", precision="fp8", log="training/run1.log",
                                           entry=1)]
    steps = flat_steps("runs[0]", 10.0) + flat_steps("runs[1]", 10.0, log="training/run1.log")
    m = manifest(runs=[*BASE_MANIFEST["runs"], {
        "workload": "llama3.1-70b", "precision": "fp8", "num_gpus": 64,
        "log": "training/run1.log"}])
    results = workload_results(evidence(m, runs=runs, steps=steps), [], ref, RUBRIC)
    judged = judge_exemplar(results, 0.95)
    assert [r.verdict for r in results] == ["pass", "fail"]
    assert judged.state is State.NOT_MET and "llama3.1-70b fp8 64 GPUs" in judged.reason
    assert judge_exemplar(results[:1], 0.95).state is State.MET
    assert judge_exemplar([], 0.95).state is State.NOT_EVALUATED
    # geometric mean of 1.0 and 0.9
    t, lines = suite_throughput(results)
    assert t == pytest.approx(0.9 ** 0.5) and len(lines) == 2


def test_stats_helpers() -> None:
    assert against_bar(0.96, 0.99, 0.95) == "pass"
    assert against_bar(0.90, 0.94, 0.95) == "fail"
    assert against_bar(0.94, 0.96, 0.95) == "inconclusive"
    assert geometric_mean([2.0, 0.5]) == pytest.approx(1.0)
    lo, hi = bootstrap_ci([1.0, 2.0, 3.0], lambda m: m, resamples=500, confidence=0.9, seed=1)
    assert 1.0 <= lo < 2.0 < hi <= 3.0
    with pytest.raises(ValueError):
        bootstrap_ci([], lambda m: m, resamples=100, confidence=0.9, seed=1)
    assert isinstance(np.float64(lo), np.float64)


def test_a_long_run_carries_a_bounded_series_with_every_step_counted() -> None:
    """The ratio reads every window step; the scorecard keeps at most 1,500 points of a long
    run's series (cmax/score/series.py), its spike among them, and counts every step."""
    times: dict[int, float] = {i: (10.0 if i >= 35 else 30.0) for i in range(20_000)}
    times[12_345] = 95.0
    times[777] = float("nan")  # printed, not a point
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row()], step_rows("runs[0]", times))
    assert r.ratio == 1.0 and r.steps_total == 20_000
    assert len(r.step_series) <= 1500 and (12_345, 95.0) in r.step_series
    assert all(t == t for _, t in r.step_series)


def test_a_pass_resting_on_declarations_alone_is_unverified() -> None:
    """Issue 25: a log that states nothing about itself cannot earn a pass; the ratio stays."""
    results = workload_results(evidence(runs=[run_row()], steps=flat_steps("runs[0]", 10.0),
                                        stated=False),
                               [], FakeReference({KEY: baseline(10.0)}), RUBRIC)
    r = results[0]
    assert r.verdict == "unverified" and r.ratio == 1.0
    note = next(n for n in r.notes if n.startswith("unverified"))
    assert "model llama3.1-70b (declared)" in note and "precision bf16 (declared)" in note
    assert "Submit the whole log, including its configuration header" in note
    # not passing for the Exemplar suite, and nothing for the price
    assert judge_exemplar(results, RUBRIC.performance.bar).state is State.NOT_EVALUATED
    assert suite_throughput(results) == (None, [])


def test_a_fail_resting_on_declarations_alone_stays_a_fail() -> None:
    results = workload_results(evidence(runs=[run_row()], steps=flat_steps("runs[0]", 10.0),
                                        stated=False),
                               [], FakeReference({KEY: baseline(9.0)}), RUBRIC)
    assert results[0].verdict == "fail" and results[0].ratio == pytest.approx(0.9)


def test_measured_energy_gives_the_runs_j_per_token_with_its_telemetry_checks() -> None:
    """Megatron --log-energy readings over the window (700 W x 10 s = 7,000 J/iter/GPU) give
    7,000 ÷ (128 x 8192 ÷ 64 = 16,384 tokens per GPU per step) = 0.4272 J/token, measured;
    iteration 40 carries no reading, which the telemetry check names."""
    steps = flat_steps("runs[0]", 10.0)
    for s in steps:
        reading = 35 <= int(s["iteration"]) <= 44 and s["iteration"] != 40
        s["energy_j_per_gpu"] = 7000.0 if reading else None
        s["power_w_per_gpu"] = 700.0 if reading else None
    r = one(FakeReference({KEY: baseline(10.0)}), [run_row()], steps)
    assert r.measured_joules_per_token == pytest.approx(7000 / 16384, abs=1e-6)
    assert r.measured_power_w_per_gpu == pytest.approx(700.0)
    assert r.energy_checks == ["1 of 10 steps carry no energy reading (gaps in the telemetry)"]
    plain = one(FakeReference({KEY: baseline(10.0)}), [run_row()], flat_steps("runs[0]", 10.0))
    assert plain.measured_joules_per_token is None and plain.energy_checks == []


def _telemetry(hosts: int, start: float, end: float, watts: float) -> pl.DataFrame:
    import polars as pl

    from cmax.ingest.evidence import POWER_SCHEMA

    # each reading 0.5 W either side of ``watts`` (one value throughout is a flat line)
    rows = [{"host": f"node-{h:02d}", "gpu": g, "time_s": float(t),
             "power_w": watts + 0.5 * (-1) ** (t + g),
             "source_file": f"power/node-{h:02d}.csv", "line": 2 + t}
            for h in range(hosts) for g in range(8) for t in range(int(start), int(end) + 1)]
    return pl.DataFrame(rows, schema=POWER_SCHEMA)


def test_power_telemetry_over_the_window_gives_measured_j_per_token() -> None:
    """nvidia-smi telemetry of all 64 GPUs at 700 W over the window's wall-clock span (the
    first window step's stamp less its 10 s, to the last stamp) = 700 W ÷ 1,638.4 tokens/s/GPU
    = 0.4272 J/token; telemetry of one host only names the GPUs it misses."""
    from tests.score.score_fakes import evidence as make_evidence

    t0 = 1_789_372_800.0
    steps = flat_steps("runs[0]", 10.0)
    for s in steps:  # a stamp at the end of each step
        s["wall_time_s"] = t0 + 10.0 * (int(s["iteration"]) + 1)
    ref = FakeReference({KEY: baseline(10.0)})
    ev = make_evidence(runs=[run_row()], steps=steps)
    ev.power = _telemetry(8, t0 + 300, t0 + 500, 700.0)
    [r] = workload_results(ev, [], ref, RUBRIC)
    assert r.measured_joules_per_token == pytest.approx(700 / 1638.4, abs=1e-5)
    assert r.measured_power_w_per_gpu == pytest.approx(700.0, abs=0.01)
    assert r.energy_checks == ["power telemetry: 64 GPU(s) sampled every 1 s over the whole "
                               "window, no gap, every sample read"]
    ev.power = _telemetry(1, t0 + 380, t0 + 500, 700.0)
    [r] = workload_results(ev, [], ref, RUBRIC)
    assert "the telemetry covers 8 GPU(s) of the run's 64" in r.energy_checks[0]
    assert any("not all of it" in c for c in r.energy_checks)  # starts 30 s into the window
    # 8 of 64 GPUs (13 %) is a sample, not the run: no J/token
    assert r.measured_joules_per_token is None
    assert any(c.startswith("J/token withheld: 8 of the run's 64 GPUs") for c in r.energy_checks)
    ev.power = _telemetry(8, t0 + 900, t0 + 950, 700.0)
    [r] = workload_results(ev, [], ref, RUBRIC)
    assert r.measured_joules_per_token is None
    assert r.energy_checks[0].startswith("no telemetry sample inside the window")
