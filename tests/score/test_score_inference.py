"""Serving throughput against the public per-GPU references (cmax/score/inference.py), end to
end from real-format result files: like with like, a pass earned by a stated GPU count."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cmax.cli.score_cmd import scorecard_text
from cmax.pipeline import assess
from cmax.scorecard import Gate, Scorecard
from cmax.states import State
from cmax.throughput import usd_per_million_tokens
from tests.fakes import manifest_text
from tests.paths import DATA


def _manifest(*, gpu: str, entries: str) -> str:
    """Lumen Serve's one-node cmax.toml: its ``[[inference]]`` entries and a $2.10 quote."""
    return manifest_text(f"{entries}\n[pricing]\nusd_per_gpu_hour = 2.10\n",
                         name="Lumen Serve", cluster="lumen-h100-serve", gpu=gpu, nodes=1,
                         interconnect=None, date="2026-11-02")


ENTRY = """
[[inference]]
result = "{result}"
model = "{model}"
precision = "fp8"
gpus = {gpus}
input_len = 1000
output_len = {output_len}
"""


def _bundle(tmp_path: Path, *entries: dict[str, object], gpu: str = "h100-sxm") -> Path:
    for name in ("trtllm_bench_report_llama3.3-70b.json", "vllm_bench_serve_sweep.jsonl",
                 "vllm_bench_serve_llama3.3-70b.json"):
        shutil.copy(DATA / "inference" / name, tmp_path / name)
    text = "".join(ENTRY.format(**{"model": "llama3.3-70b", "gpus": 2, "output_len": 1000,
                                   **e}) for e in entries)
    (tmp_path / "cmax.toml").write_text(_manifest(gpu=gpu, entries=text))
    return tmp_path


def _results(path: Path) -> list[dict[str, object]]:
    card = assess(path)
    return [r.model_dump() for r in card.inference]


def test_a_stated_gpu_count_earns_the_pass(tmp_path: Path) -> None:
    [trt, vllm] = _results(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"},
                                   {"result": "vllm_bench_serve_sweep.jsonl"}))
    assert trt["verdict"] == "pass" and trt["gpus_basis"] == "corroborated"
    assert trt["ratio"] == pytest.approx(2145 / 2209)  # TensorRT-LLM perf overview, H100 TP2
    assert "perf-overview.md@03e27c7" in str(trt["reference_source"])
    # vLLM states no GPU count: the same speed is held at unverified, and says why
    assert vllm["verdict"] == "unverified" and vllm["gpus_basis"] == "declared"
    assert vllm["output_tok_s"] == pytest.approx(4350.0)  # the sweep's offline result rated
    assert "records no GPU count" in str(vllm["notes"])


def test_dollars_per_million_output_tokens_by_hand(tmp_path: Path) -> None:
    [trt] = _results(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"}))
    # $2.10 per GPU-hour / (2,145 tok/s x 3,600 s) x 1e6 = $0.27195 per million output tokens
    assert trt["usd_per_million_output_tokens"] == pytest.approx(0.271950, abs=1e-6)
    assert trt["usd_per_million_output_tokens_at_reference"] == pytest.approx(
        2.10 / (2209 * 3600) * 1e6)
    assert usd_per_million_tokens(1.0, 1e6 / 3600) == pytest.approx(1.0)


def test_only_capped_results_are_not_comparable(tmp_path: Path) -> None:
    lines = (DATA / "inference" / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()
    bundle = _bundle(tmp_path, {"result": "capped.jsonl"})
    (bundle / "capped.jsonl").write_text("\n".join(lines[:2]))
    [res] = _results(bundle)
    assert res["verdict"] == "not_comparable" and not res["offline"]
    assert res["ratio"] is None  # never a capped point against the offline maximum
    assert "latency curve" in str(res["notes"])


@pytest.mark.parametrize(("entry", "verdict"), [
    # the report says world_size 2: over the 4 GPUs declared its per-GPU figure is wholly
    # below the bar, and an error withholds a pass, never a fail
    ({"gpus": 4}, "fail"),
    ({"gpus": 1}, "invalid"),  # over 1 GPU it would pass: the contradiction withholds it
    # the report served Llama 3.3 70B: gpt-oss-120b's reference is of another model, so it
    # is compared with none (before, it failed at 0.458 of that reference)
    ({"model": "gpt-oss-120b"}, "not_comparable"),
    ({"output_len": 4000}, "invalid"),  # the requests were 1000/1000: lengths-mismatch
    ({"model": "mistral-large-2"}, "no_reference"),  # no published row for that model
])
def test_contradicted_or_unreferenced(entry: dict[str, object], verdict: str,
                                      tmp_path: Path) -> None:
    [res] = _results(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json",
                                        **entry}))
    assert res["verdict"] == verdict


def test_below_the_bar_fails(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"})
    report = bundle / "trtllm_bench_report_llama3.3-70b.json"
    data = json.loads(report.read_text())
    data["performance"]["system_output_throughput_tok_s"] = 3800.0
    data["performance"]["system_total_throughput_tok_s"] = 7600.0
    data["performance"]["output_throughput_per_gpu_tok_s"] = 1900.0
    data["performance"]["total_latency_ms"] = 3_000_000 / 3800 * 1000
    report.write_text(json.dumps(data))
    [slow] = _results(bundle)
    assert slow["ratio"] == pytest.approx(1900 / 2209) and slow["verdict"] == "fail"


def _serving_gate(card: Scorecard) -> Gate:
    return next(g for g in card.gates if g.id == "serving_bar")


def _second_report(bundle: Path, output_tok_s: float) -> None:
    """A second TensorRT-LLM report at ``output_tok_s`` system output tokens/s (world_size
    2), its other figures following from it: written as ``second.json``."""
    data = json.loads((bundle / "trtllm_bench_report_llama3.3-70b.json").read_text())
    data["performance"]["system_output_throughput_tok_s"] = output_tok_s
    data["performance"]["system_total_throughput_tok_s"] = 2 * output_tok_s
    data["performance"]["output_throughput_per_gpu_tok_s"] = output_tok_s / 2
    data["performance"]["total_latency_ms"] = 3_000_000 / output_tok_s * 1000
    (bundle / "second.json").write_text(json.dumps(data))


def test_a_failing_result_the_file_contradicts_still_fails_serving_bar(tmp_path: Path) -> None:
    """One result passes; the other (3,800 tok/s) declares 4 GPUs where its report states
    world_size 2, so its per-GPU figure is 0.43 of reference. The contradiction withholds no
    fail: it fails, and serving_bar with it (before, the contradiction made it invalid, it
    dropped out and the gate passed on the other result alone)."""
    bundle = _bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"},
                     {"result": "second.json", "gpus": 4})
    _second_report(bundle, 3800.0)
    card = assess(bundle)
    assert [(r.verdict, r.gpus_basis) for r in card.inference] == [
        ("pass", "corroborated"), ("fail", "contradicted")]
    slow = card.judgement("serving_result", "inference[1]")
    assert slow is not None and slow.verdict == "fail" and slow.state is State.CONTRADICTED
    gate = _serving_gate(card)
    assert gate.status == "failed" and "1 of 2" in gate.reason and "x4 0.430 fail" in gate.reason


def test_a_passing_result_the_file_contradicts_does_not_pass_serving_bar(
        tmp_path: Path) -> None:
    """The other result (4,200 tok/s) declared over 1 GPU (its report states 2) would pass at
    1.90: the contradiction withholds its pass, it is counted as not passing, and serving_bar
    fails beside a passing result, saying which result and why."""
    bundle = _bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"},
                     {"result": "second.json", "gpus": 1})
    _second_report(bundle, 4200.0)
    card = assess(bundle)
    assert [r.verdict for r in card.inference] == ["pass", "invalid"]
    judged = card.judgement("serving_result", "inference[1]")
    assert judged is not None and judged.verdict == "withheld"
    gate = _serving_gate(card)
    assert gate.status == "failed" and "x1 1.901 withheld" in gate.reason
    # the error the serving rules raise on the entry bears on its judgement and is named
    assert "withheld by inference.beyond-reference, inference.gpu-count-contradicted" \
        in gate.reason
    assert judged.state is State.CONTRADICTED


@pytest.mark.parametrize(("entry", "gpu", "rule"), [
    ({"model": "gpt-oss-120b"}, "h100-sxm", "inference.model-contradicted"),
    ({}, "h200", "inference.gpu-contradicted"),  # the report's machine is an H100
])
def test_a_result_of_another_model_or_gpu_is_compared_with_no_reference(
        entry: dict[str, object], gpu: str, rule: str, tmp_path: Path) -> None:
    """The report served Llama 3.3 70B on H100s. Declared as gpt-oss-120b (or on H200s) it
    is not compared with the declared reference at all: no ratio and no fail (it read 0.458
    of gpt-oss-120b's reference, failed), its measured rate shown, the contradiction named.
    Its judgement is withheld (not evaluated, contradicted), so serving_bar counts it as not
    passing and the floor is not evaluated on it."""
    card = assess(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json",
                                     **entry}, gpu=gpu))
    [res] = card.inference
    assert (res.verdict, res.ratio, res.reference_tok_s_per_gpu) == ("not_comparable", None,
                                                                     None)
    assert res.output_tok_s_per_gpu == pytest.approx(2145.0) and res.reference_curve == []
    assert any(n.startswith(f"not comparable ({rule})") for n in res.notes)
    judged = card.judgement("serving_result", "inference[0]")
    assert judged is not None and judged.verdict == "withheld"
    assert (judged.state, judged.bar_state) == (State.CONTRADICTED, State.NOT_EVALUATED)
    assert rule in [b.rule for b in judged.findings]
    gate = _serving_gate(card)
    assert gate.status == "failed" and "not compared withheld" in gate.reason
    assert "withheld by " in gate.reason and f"{rule}: not passing" in gate.reason
    floor = next(g for g in card.gates if g.id == "serving_floor")
    assert floor.status == "not_evaluated"
    # cmax score's serving row reads not evaluated and names the contradiction
    [row] = [line for line in scorecard_text(card) if "2,145 vs       -" in line]
    assert "not evaluated (not comparable); withheld (" in row and rule in row


def test_honest_serving_results_pass_serving_bar(tmp_path: Path) -> None:
    card = assess(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"}))
    assert _serving_gate(card).status == "passed"


def test_only_earned_serving_results_enter_the_rating(tmp_path: Path) -> None:
    """The rubric's inference component scores a corroborated result (ratio 0.971 → points
    100 × (0.971 − 0.75) ÷ 0.25) and ignores a declared-only one."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    earned = assess(_bundle(tmp_path / "a", {"result": "trtllm_bench_report_llama3.3-70b.json"}))
    [cat] = [c for c in earned.categories if c.name == "networking"]
    assert any("networking.inference" in r and "0.9710" in " ".join(cat.evidence)
               for r in cat.rules)
    declared = assess(_bundle(tmp_path / "b", {"result": "vllm_bench_serve_sweep.jsonl"}))
    [cat] = [c for c in declared.categories if c.name == "networking"]
    assert "networking.inference: no evidence, not counted" in cat.rules


class _CurveRef:
    """The shipped reference plus an InferenceX-shaped curve for H100 Llama 3.3 70B fp8 1k/1k:
    (10, 2000), (20, 1600), (40, 1000) output tok/s per GPU at tok/s per user."""

    def __init__(self, points: list[tuple[float, float]]) -> None:
        self.points = points

    def __call__(self, model: str, gpu: str, precision: str, input_len: int,
                 output_len: int) -> list[dict[str, object]]:
        return [{"interactivity_tok_s_user": x, "output_tok_s_per_gpu": y,
                 "source": "test curve@0", "software": "vllm", "parallel": "TP2",
                 "scenario": "curve"} for x, y in self.points]


def _sweep_results(tmp_path: Path, lines: list[str], curve: list[tuple[float, float]],
                   monkeypatch: pytest.MonkeyPatch,
                   **entry: object) -> list[dict[str, object]]:
    from cmax.reference.view import RefView

    bundle = _bundle(tmp_path, {"result": "capped.jsonl"})
    (bundle / "capped.jsonl").write_text("\n".join(lines))
    manifest = bundle / "cmax.toml"
    extra = "".join(f"{k} = {v!r}\n" for k, v in entry.items())
    manifest.write_text(manifest.read_text().replace("output_len = 1000\n",
                                                     "output_len = 1000\n" + extra))
    monkeypatch.setattr(RefView, "inference_curve",
                        lambda self, *a: _CurveRef(curve)(*a))
    return _results(bundle)


CURVE = [(10.0, 2000.0), (20.0, 1600.0), (40.0, 1000.0)]


def _sweep_line(concurrency: int, out_tok_s: float, tpot_ms: float) -> str:
    lines = (DATA / "inference" / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()
    data = json.loads(lines[0])
    duration = data["total_output_tokens"] / out_tok_s
    data.update(max_concurrency=concurrency, output_throughput=out_tok_s,
                mean_tpot_ms=tpot_ms, duration=duration, total_token_throughput=(
                    data["total_input_tokens"] + data["total_output_tokens"]) / duration)
    return json.dumps(data)


def test_a_sweep_is_compared_at_its_own_interactivity(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (DATA / "inference" / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()
    [res] = _sweep_results(tmp_path, lines[:2], CURVE, monkeypatch)
    assert res["comparison"] == "curve"
    # concurrency 256: 3,600 tok/s / 2 GPUs = 1,800 at 1000/69.0 = 14.49 tok/s/user, where the
    # curve gives 2000 - 400 x 0.449 = 1,820.3; concurrency 64: 950 at 30.58 -> 1,282.6
    ref_256 = 2000 - 400 * (1000 / 69.0 - 10) / 10
    ref_64 = 1600 - 600 * (1000 / 32.7 - 20) / 20
    points = {p["concurrency"]: p for p in res["points"]}  # type: ignore[attr-defined]
    assert points[256.0]["reference_tok_s_per_gpu"] == pytest.approx(ref_256, abs=1e-4)
    assert points[64.0]["ratio"] == pytest.approx(950 / ref_64, abs=1e-5)
    assert res["ratio"] == pytest.approx(((1800 / ref_256) * (950 / ref_64)) ** 0.5)
    # never peak against peak: the curve's 2,000 peak is not what 1,800 is held to
    assert res["reference_tok_s_per_gpu"] == pytest.approx(ref_256, abs=1e-3)
    assert res["ci_low"] is None and "no confidence interval" in str(res["notes"])
    assert res["verdict"] == "fail"  # 0.86 geometric mean, below the 0.95 bar


def test_sweep_points_give_a_confidence_interval(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # three points each at 99-101 % of the curve: the interval sits above the bar
    lines = [_sweep_line(512, 2 * 1782.0, 1000 / 12.0),  # curve 1,920 at 12 -> 0.928
             _sweep_line(256, 2 * 1616.0, 1000 / 20.0),  # 1,600 at 20 -> 1.01
             _sweep_line(128, 2 * 1190.0, 1000 / 30.0)]  # 1,300 at 30 -> 0.915
    [res] = _sweep_results(tmp_path, lines, CURVE, monkeypatch)
    low, high = res["ci_low"], res["ci_high"]
    assert isinstance(low, float) and isinstance(high, float)
    assert low <= res["ratio"] <= high  # type: ignore[operator]
    assert low < 0.95 < high and res["verdict"] == "unverified"  # straddles; vLLM: declared
    good = [_sweep_line(512, 2 * 1920.0, 1000 / 12.0), _sweep_line(256, 2 * 1600.0, 50.0),
            _sweep_line(128, 2 * 1310.0, 1000 / 30.0)]
    (tmp_path / "g").mkdir()
    [ok] = _sweep_results(tmp_path / "g", good, CURVE, monkeypatch)
    assert ok["ci_low"] > 0.95 and ok["verdict"] == "unverified"  # type: ignore[operator]
    bad = [_sweep_line(512, 2 * 1500.0, 1000 / 12.0), _sweep_line(256, 2 * 1300.0, 50.0),
           _sweep_line(128, 2 * 1000.0, 1000 / 30.0)]
    (tmp_path / "b").mkdir()
    [slow] = _sweep_results(tmp_path / "b", bad, CURVE, monkeypatch)
    assert slow["ci_high"] < 0.95 and slow["verdict"] == "fail"  # type: ignore[operator]


def test_points_outside_the_curve_are_shown_not_compared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [_sweep_line(1024, 2 * 2100.0, 1000 / 8.0), _sweep_line(256, 2 * 1600.0, 50.0)]
    [res] = _sweep_results(tmp_path, lines, CURVE, monkeypatch)
    far = [p for p in res["points"] if p["concurrency"] == 1024.0]  # type: ignore[attr-defined]
    assert far[0]["ratio"] is None and far[0]["reference_tok_s_per_gpu"] is None
    assert res["ratio"] == pytest.approx(1.0) and "outside the curve" in str(res["notes"])


def test_slos_are_checked_per_point_and_pick_the_priced_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (DATA / "inference" / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()
    [res] = _sweep_results(tmp_path, lines[:2], CURVE, monkeypatch, ttft_p99_ms=1000.0)
    # the sweep's p99 TTFT is 301,877 ms at every point: no point meets a 1 s SLO
    assert all(p["slo_met"] is False for p in res["points"])  # type: ignore[attr-defined]
    assert "misses the 1000 ms SLO" in str(res["slo"])


def test_dollars_per_million_input_tokens_by_hand(tmp_path: Path) -> None:
    [trt] = _results(_bundle(tmp_path, {"result": "trtllm_bench_report_llama3.3-70b.json"}))
    data = json.loads((DATA / "inference" / "trtllm_bench_report_llama3.3-70b.json").read_text())
    req, perf = data["request_info"], data["performance"]
    input_rate = (req["num_requests"] * req["avg_input_length"]
                  / (perf["total_latency_ms"] / 1000) / 2)
    assert trt["usd_per_million_input_tokens"] == pytest.approx(
        2.10 / (input_rate * 3600) * 1e6, rel=1e-3)
    # at the reference: 2,209 output tok/s/GPU at 1000/1000 is 2,209 prompt tok/s/GPU
    assert trt["usd_per_million_input_tokens_at_reference"] == pytest.approx(
        2.10 / (2209 * 3600) * 1e6)
    assert trt["comparison"] == "offline" and trt["joules_per_output_token"] is None


def test_a_sweep_on_the_shipped_inferencex_curve(tmp_path: Path) -> None:
    """DeepSeek-V4-Pro NVFP4 8k/1k on 8 B200s against the InferenceX official rows in
    reference/inference.csv: each point at 97 % of the curve at its own interactivity (the
    curve's own points 15.75, 9.50 and 7.07 tok/s/user: 242.1, 289.1, 430.0 tok/s/GPU)."""
    curve = {128: (15.753498719328094, 242.06570211419378),
             256: (9.501733878951795, 289.1201045280685),
             512: (7.074876627569321, 429.9849095084528)}
    base = json.loads((DATA / "inference" / "vllm_bench_serve_sweep.jsonl").read_text()
                      .splitlines()[0])
    lines = []
    for conc, (x, per_gpu) in curve.items():
        out = 0.97 * per_gpu * 8
        prompts = conc * 4
        lines.append(json.dumps({**base, "model_id": "deepseek-ai/DeepSeek-V4-Pro",
                                 "max_concurrency": conc, "mean_tpot_ms": 1000 / x,
                                 "completed": prompts, "total_input_tokens": prompts * 8192,
                                 "total_output_tokens": prompts * 1024,
                                 "duration": prompts * 1024 / out, "output_throughput": out,
                                 "total_token_throughput": out * (8192 + 1024) / 1024}))
    (tmp_path / "dsv4.jsonl").write_text("\n".join(lines))
    (tmp_path / "cmax.toml").write_text(_manifest(gpu="b200", entries=ENTRY.format(
        result="dsv4.jsonl", model="deepseek-v4-pro", gpus=8, output_len=1024).replace(
        'precision = "fp8"', 'precision = "nvfp4"').replace("input_len = 1000",
                                                            "input_len = 8192")))
    [res] = _results(tmp_path)
    assert res["comparison"] == "curve" and res["ratio"] == pytest.approx(0.97, abs=1e-6)
    assert res["ci_low"] == pytest.approx(0.97, abs=1e-6)  # three equal ratios
    assert "InferenceX" in str(res["reference_source"])
    assert res["verdict"] == "unverified"  # vLLM states no GPU count: 8 is a declaration
    assert len(res["reference_curve"]) == 5  # type: ignore[arg-type]


def test_measured_energy_and_stated_interactivity_from_an_inferencex_row(tmp_path: Path) -> None:
    """InferenceX agg rows (H200 DeepSeek-R1-0528 FP8 1k/1k, TP8) state interactivity and, with
    power_valid, joules per output token: the rated point (the fastest, concurrency 64) carries
    its 1.804957 J; the sweep is placed on InferenceX's official H200 curve at each point's own
    interactivity (the file's figures are a format example, not a measurement)."""
    name = "inferencex_agg_bmk_h200.json"
    shutil.copy(DATA / "inference" / name, tmp_path / name)
    (tmp_path / "cmax.toml").write_text(_manifest(gpu="h200", entries=ENTRY.format(
        result=name, model="deepseek-r1-0528", gpus=8, output_len=1024).replace(
        "input_len = 1000", "input_len = 1024")))
    [res] = _results(tmp_path)
    assert res["joules_per_output_token"] == pytest.approx(1.804957)
    assert [round(p["interactivity"], 2) for p in res["points"]] == [  # type: ignore[attr-defined]
        120.48, 80.65, 45.66]
    # the official H200 DeepSeek-R1 FP8 1k/1k curve (InferenceX, release 2026.11.6) spans
    # 29.4-102.8 tok/s per user: the concurrency-4 point lies beyond it and is only shown
    assert res["comparison"] == "curve"
    assert [p["reference_tok_s_per_gpu"] for p in res["points"]] == [  # type: ignore[attr-defined]
        None, pytest.approx(94.457962), pytest.approx(183.291704)]


def _split_bundle(tmp_path: Path, name: str, split: str, *, gpus: int, model: str,
                  gpu: str, input_len: int, output_len: int) -> Path:
    shutil.copy(DATA / "inference" / name, tmp_path / name)
    entry = ENTRY.format(result=name, model=model, gpus=gpus, output_len=output_len).replace(
        "input_len = 1000", f"input_len = {input_len}") + split
    (tmp_path / "cmax.toml").write_text(_manifest(gpu=gpu, entries=entry))
    return tmp_path


def test_a_declared_prefill_decode_split_counts_output_per_decode_gpu(tmp_path: Path) -> None:
    """trtllm-bench states its 2 GPUs but no split: a declared 1 prefill + 1 decode divides the
    4,290 tok/s by the 1 decode GPU, as disaggregated references count it, and since only the
    manifest says so the result cannot earn a pass, and prices nothing (docs/scoring.md §8)."""
    path = _split_bundle(tmp_path, "trtllm_bench_report_llama3.3-70b.json",
                         "prefill_gpus = 1\ndecode_gpus = 1\n", gpus=2, model="llama3.3-70b",
                         gpu="h100-sxm", input_len=1000, output_len=1000)
    [res] = _results(path)
    assert res["output_tok_s_per_gpu"] == pytest.approx(res["output_tok_s"])  # over 1 GPU
    assert res["gpus_basis"] == "declared" and res["verdict"] == "unverified"
    assert "records no prefill/decode split" in str(res["notes"])
    assert res["priced"] is False and res["usd_per_million_output_tokens"] is None


@pytest.mark.parametrize(("split", "basis"), [("prefill_gpus = 8\ndecode_gpus = 16\n",
                                              "corroborated"),
                                             ("prefill_gpus = 12\ndecode_gpus = 12\n",
                                              "contradicted")])
def test_a_stated_split_corroborates_or_contradicts_the_declared_one(
        tmp_path: Path, split: str, basis: str) -> None:
    """InferenceX's disaggregated GB200 row states 8 prefill + 16 decode GPUs."""
    path = _split_bundle(tmp_path, "inferencex_agg_gb200_disagg.json", split, gpus=24,
                         model="deepseek-r1-0528", gpu="gb200", input_len=8192,
                         output_len=1024)
    [res] = _results(path)
    assert res["gpus_basis"] == basis
    assert res["output_tok_s_per_gpu"] == pytest.approx(20000.0 / 16)  # the file's own split
    if basis == "corroborated":  # priced (a fail): money divides by every GPU serving, all paid
        assert res["priced"] and res["usd_per_million_output_tokens"] == pytest.approx(
            usd_per_million_tokens(2.10, 20000.0 / 24))


def test_aiperf_power_telemetry_gives_measured_joules_per_output_token(tmp_path: Path) -> None:
    """AIPerf's export carries the GPU telemetry it collected during the run: H200s 0 and 1 at a
    mean 611.4 and 612.4 W. Two GPUs x 611.9 W over 2,304.5 output tok/s = 0.531044 J per
    output token (GPU boards only)."""
    name = "profile_export_aiperf.json"
    shutil.copy(DATA / "inference" / "aiperf" / name, tmp_path / name)
    (tmp_path / "cmax.toml").write_text(_manifest(gpu="h200", entries=ENTRY.format(
        result=name, model="llama3.3-70b", gpus=2, output_len=1024).replace(
        "input_len = 1000", "input_len = 1024")))
    [res] = _results(tmp_path)
    assert res["joules_per_output_token"] == pytest.approx(round(611.9 * 2 / 2304.5, 6))
    assert "own GPU power telemetry, a mean 611.9 W per GPU" in str(res["notes"])


def _smi(path: Path, start: float, seconds: int, watts: float, gpus: int) -> None:
    """nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv -l 1, one host; each
    reading 0.5 W either side of ``watts`` (a series of one value is flat-lined, not counted)."""
    import datetime as dt

    rows = ["timestamp, index, power.draw [W]"]
    for k in range(seconds):
        stamp = dt.datetime.fromtimestamp(start + k, dt.UTC).strftime("%Y/%m/%d %H:%M:%S.000")
        rows += [f"{stamp}, {g}, {watts + 0.5 * (-1) ** (k + g):.2f} W" for g in range(gpus)]
    path.write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize(("offset", "measured"), [(0.0, True), (-7200.0, False)])
def test_power_telemetry_over_a_vllm_run_gives_joules_per_output_token(
        tmp_path: Path, offset: float, measured: bool) -> None:
    """vLLM saves its result right after the run (``date`` 2026-11-02 10:15:00, the host's
    clock) after 689.655 s: nvidia-smi samples of 2 GPUs at 600 W inside that span give
    600 x 2 ÷ 4,350 output tok/s = 0.275862 J per output token; telemetry from two hours
    earlier says it holds no sample in the window and gives no figure."""
    import datetime as dt

    name = "vllm_bench_serve_llama3.3-70b.json"
    shutil.copy(DATA / "inference" / name, tmp_path / name)
    end = dt.datetime(2026, 11, 2, 10, 15, tzinfo=dt.UTC).timestamp()
    _smi(tmp_path / "serve-node-01.csv", end - 689 + offset, 689, 600.0, 2)
    entries = ENTRY.format(result=name, model="llama3.3-70b", gpus=2, output_len=1000) + (
        '\n[[power]]\npath = "serve-node-01.csv"\n')
    (tmp_path / "cmax.toml").write_text(_manifest(gpu="h100-sxm", entries=entries))
    [res] = _results(tmp_path)
    if measured:
        assert res["joules_per_output_token"] == pytest.approx(round(600.0 * 2 / 4350.0, 6))
        assert "[[power]] telemetry over the run's span (GPU boards only" in str(res["notes"])
    else:
        assert res["joules_per_output_token"] is None
        assert "no telemetry sample inside the window" in str(res["notes"])


def test_a_result_without_a_readable_run_time_gets_no_telemetry_figure(tmp_path: Path) -> None:
    """trtllm-bench reports record no time of their own: [[power]] telemetry beside them cannot
    be placed in the run, so no J per output token, and the scorecard says why."""
    name = "trtllm_bench_report_llama3.3-70b.json"
    shutil.copy(DATA / "inference" / name, tmp_path / name)
    _smi(tmp_path / "serve-node-01.csv", 1_793_000_000.0, 60, 600.0, 2)
    entries = ENTRY.format(result=name, model="llama3.3-70b", gpus=2, output_len=1000) + (
        '\n[[power]]\npath = "serve-node-01.csv"\n')
    (tmp_path / "cmax.toml").write_text(_manifest(gpu="h100-sxm", entries=entries))
    [res] = _results(tmp_path)
    assert res["joules_per_output_token"] is None
    assert "records no run time cmax can read" in str(res["notes"])


def _mlperf_bundle(tmp_path: Path, source: Path, *, gpu: str, model: str, gpus: int,
                   output_len: int = 1000) -> Path:
    """A bundle whose one [[inference]] entry is an MLPerf result kept in its scenario folder."""
    rel = source.relative_to(DATA / "inference" / "mlperf")
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, tmp_path / rel)
    (tmp_path / "cmax.toml").write_text(_manifest(gpu=gpu, entries=ENTRY.format(
        result=rel.as_posix(), model=model, gpus=gpus, output_len=output_len)))
    return tmp_path


def test_an_mlperf_interactive_result_is_compared_with_the_published_interactive_row(
        tmp_path: Path) -> None:
    """AMD's real Interactive summary (8,840.42 tok/s), declared as 8 H200: 1,105.05 per GPU
    against the best available H200 llama2-70b-99 Interactive system (Nebius, 23,080.0 / 8)."""
    path = DATA / "inference" / "mlperf" / "Interactive" / "performance" / "run_1" / \
        "mlperf_log_summary.txt"
    # the lengths an MLPerf run served: 8,840.42 tok/s over 29.41 samples/s
    [res] = _results(_mlperf_bundle(tmp_path, path, gpu="h200", model="llama2-70b", gpus=8,
                                    output_len=301))
    assert res["comparison"] == "scenario"
    assert res["output_tok_s_per_gpu"] == pytest.approx(8840.42 / 8)
    assert "5.1-0075" in str(res["reference_source"])
    assert res["ratio"] == pytest.approx(8840.42 / 8 / res["reference_tok_s_per_gpu"])  # type: ignore[operator]
    assert res["verdict"] == "fail"


def test_a_latency_scenario_is_shown_with_its_percentile_not_rated(tmp_path: Path) -> None:
    path = DATA / "inference" / "mlperf" / "singlestream_llama3.1-8b-edge_mlperf_log_summary.txt"
    [res] = _results(_mlperf_bundle(tmp_path, path, gpu="h100-sxm", model="llama3.1-8b", gpus=1))
    assert res["verdict"] == "no_reference" and res["ratio"] is None
    assert res["notes"] == [
        "latency scenario: not rated against a throughput reference (MLPerf Inference "
        "SingleStream, 90th percentile latency 3,545.9 ms; the release publishes no latency "
        "reference)"]


@pytest.mark.parametrize(("busy", "idle", "fires"), [(4, 0, True), (2, 6, False)])
def test_telemetry_of_more_working_gpus_than_declared_is_an_error(
        tmp_path: Path, busy: int, idle: int, fires: bool) -> None:
    """vLLM's result (declared on 2 GPUs, 4,350 output tok/s) with nvidia-smi samples over its
    689 s: 4 GPUs at 600 W (86 % of the H100's 700 W TDP) served it, so the per-GPU rate
    divided by 2 is doubled: an error, and the result is invalid. The honest control: its 2 GPUs
    at 600 W beside 6 idle ones at 70 W on the same node."""
    import datetime as dt

    from cmax.pipeline import load

    name = "vllm_bench_serve_llama3.3-70b.json"
    shutil.copy(DATA / "inference" / name, tmp_path / name)
    end = dt.datetime(2026, 11, 2, 10, 15, tzinfo=dt.UTC).timestamp()
    _smi(tmp_path / "serve-node-01.csv", end - 689, 689, 600.0, busy)
    power = '\n[[power]]\npath = "serve-node-01.csv"\n'
    if idle:
        _smi(tmp_path / "idle.csv", end - 689, 689, 70.0, idle)
        power += '\n[[power]]\npath = "idle.csv"\n'
    entries = ENTRY.format(result=name, model="llama3.3-70b", gpus=2, output_len=1000) + power
    (tmp_path / "cmax.toml").write_text(_manifest(gpu="h100-sxm", entries=entries))
    with load(tmp_path) as loaded:
        hits = [f for f in loaded.findings if f.rule == "inference.gpus-beyond-declared"]
    if fires:
        assert [f.message for f in hits] == [
            "4 GPUs drew 175 W (a quarter of the TDP) or more during the run, the entry "
            "declares 2"]
        [res] = _results(tmp_path)
        assert res["verdict"] == "invalid"
    else:
        assert hits == []


def test_a_curve_of_several_runs_names_that_it_joins_them() -> None:
    """Halcyon's DeepSeek-R1 sweep sits on InferenceX's H200 front: three points of two runs
    (TensorRT-LLM at concurrency 64, SGLang at 4 and 8)."""
    from tests.paths import SAMPLES

    sweep = assess(SAMPLES / "halcyon-serve").inference[2]
    assert sweep.comparison == "curve"
    assert str(sweep.reference_source).endswith(
        "the curve's 3 points come from 2 published runs, each named in reference/inference.csv")
