"""$ per million training tokens (cmax/price/tokens.py), hand-checked."""

from __future__ import annotations

from typing import Any

import pytest

from cmax.errors import UsageError
from cmax.price.tokens import (
    Offer,
    at_scale,
    breakeven_price,
    breakeven_speedup,
    compare,
    estimate_cost,
    token_costs,
    weighted_cost,
)
from cmax.reference.view import RefView
from cmax.scorecard import ScalePoint, Scorecard, TokenCost, WorkloadResult
from cmax.submission.basket import parse_basket
from cmax.throughput import usd_per_million_tokens
from tests.fakes import FakeReference
from tests.score.scorecard_factory import make_scorecard, serving_result


def test_seed_llama3_405b_bf16_at_54_percent_mfu_and_1_42_is_1_95() -> None:
    # SemiAnalysis: Llama 3 405B BF16 at 54% MFU (NVIDIA's FLOPs count) on H100 at
    # $1.42/GPU-hour -> $1.95 per million tokens. 0.54 x 989 TFLOP/s / 2.651e12 FLOPs/token
    # (NVIDIA's per-sample 2.17e16 / 8192) = 201.5 tokens/s/GPU; 1.42e6 / (201.5 x 3600)
    # = $1.958: the seed's $1.95 to the cent below.
    from cmax.reference import load_reference
    from cmax.reference.calc import what_if

    out = what_if(load_reference("latest"), model="llama3.1-405b", gpu="h100-sxm",
                  precision="bf16", mfu=0.54, flops_convention="nvidia-llama")
    tps = out["tokens_per_s_per_gpu"]
    assert tps == pytest.approx(201.5, abs=0.1)
    cost = usd_per_million_tokens(1.42, tps)
    assert cost == pytest.approx(1.42e6 / (tps * 3600))
    assert int(cost * 100) / 100 == 1.95


def test_goodput_prices_interruptions_in() -> None:
    # 2.00 / (250 x 3600) x 1e6 = $2.2222; at a goodput ratio of 0.9, $2.4691
    assert usd_per_million_tokens(2.0, 250.0) == pytest.approx(2.222222, rel=1e-6)
    assert usd_per_million_tokens(2.0, 250.0, 0.9) == pytest.approx(2.469136, rel=1e-6)


def test_breakeven_speedup_is_the_seeds_1_6x() -> None:
    # GB200 at 1.6x the H100 cost per GPU must train 1.6x faster per GPU
    assert breakeven_speedup(1.42 * 1.6, 1.42) == pytest.approx(1.6)
    # GB200 keeps 95% of the useful time H100 keeps: it must be 1.6 / 0.95 = 1.684x faster
    assert breakeven_speedup(2.272, 1.42, 0.95, 1.0) == pytest.approx(1.6 / 0.95)
    # 2.2x faster per GPU at equal goodput: GB200 breaks even at 1.42 x 2.2 = $3.124
    assert breakeven_price(1.42, 2.2 * 200, 200) == pytest.approx(3.124)


def test_parse_basket_normalises_shares_and_refuses_bad_keys() -> None:
    assert parse_basket("llama3.1-405b:bf16") == {"llama3.1-405b:bf16": 1.0}
    assert parse_basket("llama3.1-405b:BF16=3, llama3.1-70b:fp8=1") == {
        "llama3.1-405b:bf16": 0.75, "llama3.1-70b:fp8": 0.25}
    for bad in ("llama3.1-405b", "x:bf16=-1", "x:bf16=nan", "x:bf16=a", " , "):
        with pytest.raises(UsageError):
            parse_basket(bad)


def test_weighted_cost_needs_every_workload() -> None:
    costs = {"a:bf16": 2.0, "b:fp8": 1.0}
    assert weighted_cost(costs, {"a:bf16": 0.75, "b:fp8": 0.25}) == pytest.approx(1.75)
    assert weighted_cost(costs, {"a:bf16": 0.5, "c:fp8": 0.5}) is None


def _run(workload: str, precision: str, n: int, tps: float, **kw: object) -> WorkloadResult:
    fields: dict[str, object] = dict(workload=workload, precision=precision, num_gpus=n,
                                     log=f"training/{workload}_{precision}_{n}.log",
                                     status="ok", steps_total=50, tokens_per_s_per_gpu=tps,
                                     ratio=0.9, verdict="fail", bar=0.95)
    fields.update(kw)
    return WorkloadResult.model_validate(fields)


H100 = Offer(gpu="h100-sxm", quote=2.0, goodput_ratio=0.98, throughput_ratio=0.9,
             watts_per_gpu=1989.0, scale=512)


def test_measured_and_estimated_costs_with_their_basis() -> None:
    ref = RefView(FakeReference())
    costs = token_costs([_run("llama3.1-405b", "bf16", 512, 186.0),
                         _run("grok1-314b", "fp8", 512, 1000.0, validation_errors=["x.y"])],
                        H100, ref, basket=["llama3.1-405b:bf16", "llama3.1-405b:fp8"])
    assert [(c.workload, c.precision, c.basis) for c in costs] == [
        ("llama3.1-405b", "bf16", "measured"), ("llama3.1-405b", "fp8", "estimate")]
    bf16, fp8 = costs
    # 2.0e6 / (186 x 3600) / 0.98 = 3.0479; J/token 1989 / 186 = 10.6935
    assert bf16.usd_per_million_tokens == pytest.approx(3.0479, abs=1e-4)
    assert bf16.joules_per_token == pytest.approx(10.6935, abs=1e-4)
    assert [p.num_gpus for p in bf16.reference_scaling] == [128, 512, 1024]
    # estimate: 0.9 x the reference 314.6 tokens/s/GPU (256 x 8192 / 13.02 s / 512)
    assert fp8.tokens_per_s_per_gpu == pytest.approx(0.9 * 314.6)
    assert fp8.usd_per_million_tokens == pytest.approx(
        2.0e6 / (0.9 * 314.6 * 3600) / 0.98, abs=1e-4)
    assert "estimate" in fp8.basis_detail and "dgxc-405b-fp8-512" in fp8.basis_detail


def test_no_estimate_without_a_ratio_or_a_reference_row() -> None:
    ref = RefView(FakeReference())
    no_ratio = Offer(gpu="h100-sxm", quote=2.0, goodput_ratio=1.0, throughput_ratio=None,
                     watts_per_gpu=None, scale=512)
    assert estimate_cost(no_ratio, "llama3.1-405b", "fp8", ref) is None
    assert estimate_cost(H100, "llama3.1-70b", "fp8", ref) is None


def _cost(gpu: str, n: int, tps: float, quote: float, scaling: list[ScalePoint]) -> TokenCost:
    return TokenCost(workload="llama3.1-405b", precision="bf16", gpu=gpu, num_gpus=n,
                     basis="measured", basis_detail="x", tokens_per_s_per_gpu=tps,
                     goodput_ratio=1.0, usd_per_million_tokens=usd_per_million_tokens(quote, tps),
                     reference_scaling=scaling)


H100_SCALING = [ScalePoint(num_gpus=512, tokens_per_s_per_gpu=206.8, baseline_id="h-512"),
                ScalePoint(num_gpus=1024, tokens_per_s_per_gpu=205.3, baseline_id="h-1024")]


def test_another_scale_is_brought_over_by_the_reference_rows_or_not_at_all() -> None:
    c = _cost("h100-sxm", 512, 200.0, 2.0, H100_SCALING)
    scaled = at_scale(c, 1024)
    assert scaled is not None
    assert scaled.tokens_per_s_per_gpu == pytest.approx(200.0 * 205.3 / 206.8)
    assert scaled.note is not None and "h-512" in scaled.note and "h-1024" in scaled.note
    assert at_scale(c, 2048) is None


def _card(costs: list[TokenCost], **overrides: Any) -> Scorecard:
    """The factory's near-reference scorecard, its price carrying ``costs``."""
    card = make_scorecard(**overrides)
    assert card.price is not None
    return card.model_copy(update={"price": card.price.model_copy(update={"token_costs": costs})})


def test_compare_ranks_across_gpu_types_by_dollars_per_million_tokens() -> None:
    h100 = _card([_cost("h100-sxm", 1024, 200.0, 2.0, H100_SCALING)])   # $2.7778
    gb200 = _card([_cost("gb200", 1024, 460.0, 4.0, [])])               # $2.4155
    result = compare([h100, gb200])
    assert [r.index for r in result.ranked] == [1, 0]
    assert result.ranked[0].usd_per_million_tokens == pytest.approx(4.0e6 / (460 * 3600))


def test_compare_leaves_an_offer_at_an_unscalable_scale_unranked() -> None:
    h100 = _card([_cost("h100-sxm", 512, 200.0, 2.0, H100_SCALING)])
    gb200 = _card([_cost("gb200", 1024, 460.0, 4.0, [])])
    gb200_64 = _card([_cost("gb200", 64, 480.0, 4.0, [])])
    result = compare([h100, gb200, gb200_64])
    assert result.scales == {"llama3.1-405b:bf16": 1024}
    assert [r.index for r in result.ranked] == [1, 0]   # H100 scaled 512 -> 1024
    assert set(result.unranked) == {2}
    assert "scale" in result.unranked[2]


def test_gb200_estimate_from_the_real_reference_rows() -> None:
    # GB200 NVL72 offer at 95% of reference: Llama 3.1 405B BF16 at 512 GPUs is estimated
    # from DGXC v25.05's 430.8 tokens/s/GPU (dgxc-v25.05-llama3.1-405b-gb200-bf16-512)
    from cmax.reference import load_reference

    ref = RefView(load_reference("latest"))
    gb200 = Offer(gpu="gb200", quote=2.27, goodput_ratio=1.0, throughput_ratio=0.95,
                  watts_per_gpu=None, scale=512)
    cost = estimate_cost(gb200, "llama3.1-405b", "bf16", ref)
    assert cost is not None and cost.basis == "estimate" and cost.num_gpus == 512
    assert "dgxc-v25.05-llama3.1-405b-gb200-bf16-512" in cost.basis_detail
    assert cost.tokens_per_s_per_gpu == pytest.approx(0.95 * 430.8)
    # 2.27e6 / (409.26 x 3600) = $1.5407 per million tokens
    assert cost.usd_per_million_tokens == pytest.approx(2.27e6 / (0.95 * 430.8 * 3600), abs=1e-4)
    assert {p.num_gpus for p in cost.reference_scaling} >= {128, 256, 512}


def test_compare_says_why_an_offer_is_unranked() -> None:
    """No price, a serving-only bundle and a bundle without a priced training run each get
    their own reason (a serving bundle is priced per output token on its scorecard)."""
    priced = _card([_cost("h100-sxm", 512, 200.0, 2.0, H100_SCALING)])
    no_price = make_scorecard(price=None)
    serving = _card([], inference=[serving_result()])
    untrained = _card([])
    result = compare([priced, no_price, serving, untrained])
    assert [r.index for r in result.ranked] == [0]
    assert result.unranked[1] == "no quoted price"
    assert "output tokens on its scorecard" in result.unranked[2]
    assert "no measured training throughput" in result.unranked[3]
