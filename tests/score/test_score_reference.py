"""Scoring against the real shipped reference release (baselines, fabric, Llama 3 figures)."""

from __future__ import annotations

import datetime as dt

import pytest

from cmax.price import price
from cmax.reference import load_reference
from cmax.score import load_rubric, score
from tests.score.score_fakes import evidence, flat_steps, incident, manifest, run_row

RUBRIC = load_rubric(None)
SYSTEM = {"gpu": "h100-sxm", "nodes": 64, "gpus_per_node": 8,
          "interconnect": "infiniband-ndr-8x400"}
RUN = {"workload": "llama3.1-405b", "precision": "bf16", "num_gpus": 512,
       "log": "training/run0.log", "seq_len": 8192, "gbs": 256}


@pytest.fixture(scope="module")
def ref():  # type: ignore[no-untyped-def]
    return load_reference("latest")


def test_405b_at_the_dgxc_baseline(ref) -> None:  # type: ignore[no-untyped-def]
    base = ref.match_baseline("llama3.1-405b", "h100-sxm", "bf16", 512, gbs=256, seq_len=8192)
    assert base is not None
    step = float(base["step_time_s"])
    m = manifest(system=SYSTEM, runs=[RUN])
    row = run_row(workload="llama3.1-405b", num_gpus=512, gbs=256, seq_len=8192)
    # the window follows the baseline's recipe release (v25.05.x: iterations 11-44)
    ev = evidence(m, runs=[row], steps=flat_steps("runs[0]", step))
    card = score(ev, [], ref, RUBRIC)
    [w] = card.workloads
    assert w.baseline is not None and w.baseline.baseline_id == base["baseline_id"]
    assert w.baseline.release == ref.release == card.reference_release
    # steps 11-34 are flat_steps' 30-s "warm-up", so they count here: mean over 34 steps
    assert w.window == (11, 44) and w.steps_in_window == 34 and w.verdict == "fail"
    assert w.ratio == pytest.approx(step / ((24 * 30.0 + 10 * step) / 34), abs=1e-6)
    # a clean run at the baseline's step time:
    ev = evidence(m, runs=[row], steps=flat_steps("runs[0]", step, warmup=step))
    [w] = score(ev, [], ref, RUBRIC).workloads
    assert (w.ratio, w.ci_low, w.ci_high, w.verdict) == (1.0, 1.0, 1.0, "pass")
    # tokens/s/GPU = 256 × 8192 / step / 512; the DGXC table prints 206.8
    assert w.tokens_per_s_per_gpu == pytest.approx(256 * 8192 / step / 512, abs=1e-3)
    assert w.tokens_per_s_per_gpu == pytest.approx(206.8, abs=0.1)


def test_ninety_percent_against_the_real_baseline(ref) -> None:  # type: ignore[no-untyped-def]
    base = ref.match_baseline("llama3.1-405b", "h100-sxm", "bf16", 512, gbs=256, seq_len=8192)
    step = float(base["step_time_s"]) / 0.9
    m = manifest(system=SYSTEM, runs=[RUN])
    row = run_row(workload="llama3.1-405b", num_gpus=512, gbs=256, seq_len=8192)
    ev = evidence(m, runs=[row], steps=flat_steps("runs[0]", step, warmup=step))
    card = score(ev, [], ref, RUBRIC)
    assert card.workloads[0].ratio == pytest.approx(0.9) and card.workloads[0].verdict == "fail"
    advice = price(ev, card, ref)
    assert advice.parity_usd_per_gpu_hour == pytest.approx(2.10 * 0.9)
    assert advice.recommended_usd_per_gpu_hour == 1.89 and advice.adjustment_pct == -10.0
    assert advice.contract_gpus == 512


def test_llama3_reference_rate_comes_from_the_reference(ref) -> None:  # type: ignore[no-untyped-def]
    rel = {"incidents": "i.csv", "period_start": dt.date(2026, 6, 1),
           "period_end": dt.date(2026, 6, 30), "gpus_in_service": 512}
    ev = evidence(manifest(system=SYSTEM, reliability=rel),
                  incidents=[incident("2026-06-02T00:00:00", "2026-06-02T01:00:00")])
    card = score(ev, [], ref, RUBRIC)
    r = card.reliability
    assert r is not None
    assert r.reference_per_1000_gpu_days == pytest.approx(419 / (16384 * 54) * 1000, abs=1e-9)
    assert "2407.21783" in r.reference_source


def test_fabric_baseline_for_64_nodes(ref) -> None:  # type: ignore[no-untyped-def]
    rows = [{"run_id": "nccl[0]", "collective": "all_reduce", "ranks": 512, "nodes": 64,
             "size_bytes": s, "busbw_gbps": bw, "in_place": False, "wrong": 0,
             "source_file": "nccl/ar.txt", "line": 1}
            for s, bw in ((1 << 27, 300.0), (1 << 33, 368.0))]
    card = score(evidence(manifest(system=SYSTEM), nccl=rows), [], ref, RUBRIC)
    [n] = card.network
    assert n.reference_busbw_gbps == 368.0 and n.ratio == 1.0 and n.verdict == "pass"
    assert n.large_message_bytes == 1 << 33
