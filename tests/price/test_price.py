"""score() end to end on fake inputs, and the price arithmetic, pinned by hand."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

import cmax
from cmax.errors import CmaxError
from cmax.findings import Finding
from cmax.price import price
from cmax.score import load_rubric, score
from cmax.scorecard import PriceAdvice, Scorecard
from tests.fakes import FakeReference
from tests.score.score_fakes import (
    baseline,
    evidence,
    flat_steps,
    incident,
    manifest,
    run_row,
)

RUBRIC = load_rubric(None)
KEY = ("llama3.1-70b", "bf16", 64)
# 2.10 $/GPU-h × 64 GPUs × 730 h × 12 months
TERM_COST = 2.10 * 64 * 730 * 12


def card_for(ref_step: float, provider_step: float,
             **m: Any) -> tuple[Any, Scorecard, FakeReference]:
    ref = FakeReference({KEY: baseline(ref_step)},
                        economics={"market_usd_per_gpu_hour": {"h100-sxm": 2.10},
                                   "market_source": "test market"})
    ev = evidence(manifest(**m), runs=[run_row()], steps=flat_steps("runs[0]", provider_step))
    return ev, score(ev, [], ref, RUBRIC), ref


def test_scorecard_at_reference() -> None:
    ev, card, ref = card_for(10.0, 10.0)
    assert card.exemplar_pass and card.exemplar_bar == 0.95
    [w] = card.workloads
    assert (w.ratio, w.ci_low, w.ci_high, w.verdict) == (1.0, 1.0, 1.0, "pass")
    assert card.reference_release == "test-2026.1"
    assert card.rubric == RUBRIC.label and card.cmax_version == cmax.__version__
    assert [c.name for c in card.categories] == list(RUBRIC.categories)
    assert card.price is None
    # no [declarations]: the attestation gate fails and caps the tier
    assert card.tier == "Underperforming"
    assert any("attestation" in g.reason and not g.passed for g in card.gates)
    data = json.loads(card.model_dump_json())
    for key in ("tier", "exemplar_pass", "reference_release"):
        assert key in data
    assert set(data["workloads"][0]) >= {"workload", "precision", "num_gpus", "ratio", "ci_low",
                                         "ci_high", "verdict"}
    assert set(data["categories"][0]) >= {"name", "score", "evidence"}
    # deterministic
    assert score(ev, [], ref, RUBRIC) == card


def test_price_exactly_at_reference() -> None:
    ev, card, ref = card_for(10.0, 10.0)
    advice = price(ev, card, ref)
    assert advice.quoted_usd_per_gpu_hour == 2.10
    assert advice.throughput_ratio == 1.0 and advice.goodput_ratio == 1.0
    assert advice.parity_usd_per_gpu_hour == pytest.approx(2.10)
    assert advice.ask_usd_per_gpu_hour == 2.10 and advice.adjustment_pct == 0.0
    assert advice.contract_gpus == 64 and advice.term_months == 12
    assert advice.term_cost_usd == pytest.approx(TERM_COST)  # 1,177,344.00
    assert advice.term_cost_usd == 1177344.0
    # no incident log: money not assessed is null, never $0
    assert advice.goodput_loss_usd is None and advice.sla_credit_usd is None
    assert advice.effective_term_cost_usd is None
    [econ] = advice.workloads
    # $/M tokens = 2.10 × 10^6 / (1,638.4 × 3,600) = 0.3560; J/token = 700 W / 1,638.4
    assert econ.tokens_per_s_per_gpu == pytest.approx(1638.4)
    assert econ.usd_per_million_tokens == pytest.approx(0.356, abs=1e-4)
    assert econ.reference_usd_per_million_tokens == pytest.approx(0.356, abs=1e-4)
    assert econ.joules_per_token == pytest.approx(0.4272, abs=1e-4)
    assert any("1.0 is assumed (unverified)" in s for s in advice.reasoning)
    assert any("justifies no discount" in s for s in advice.reasoning)


def test_price_at_ninety_percent_is_ten_percent_below_the_quote() -> None:
    ev, card, ref = card_for(9.0, 10.0)
    assert card.workloads[0].verdict == "fail" and not card.exemplar_pass
    advice = price(ev, card, ref)
    assert advice.throughput_ratio == pytest.approx(0.9)
    # parity = 2.10 × 0.9 × 1.0 = 1.89
    assert advice.parity_usd_per_gpu_hour == pytest.approx(1.89)
    assert advice.ask_usd_per_gpu_hour == 1.89
    assert advice.adjustment_pct == pytest.approx(-10.0)
    steps = "\n".join(advice.reasoning)
    assert "$2.10 × 0.9000 × 1.0000 = $1.8900" in steps
    assert "-10.00%" in steps and "pay in proportion to delivered work" in steps
    # value: 2.10 ÷ (0.9 × 1.0) = 2.3333 per reference-grade GPU-hour
    assert advice.usd_per_reference_gpu_hour == pytest.approx(2.3333, abs=1e-4)
    [driver] = advice.drivers
    assert driver.name == "Training throughput"
    assert driver.usd_per_gpu_hour == pytest.approx(2.10 - 1.89)
    # the reference run would cost 10 % less per token at the same price
    [econ] = advice.workloads
    assert econ.reference_usd_per_million_tokens == pytest.approx(
        econ.usd_per_million_tokens * 0.9, abs=1e-4)  # type: ignore[operator]


def test_faster_than_reference_pays_the_quote() -> None:
    ev, card, ref = card_for(11.0, 10.0)
    advice = price(ev, card, ref)
    assert advice.parity_usd_per_gpu_hour == pytest.approx(2.31)
    assert advice.ask_usd_per_gpu_hour == 2.10 and advice.adjustment_pct == 0.0


def test_goodput_and_sla_credits_enter_the_price() -> None:
    # 64 GPUs (8 nodes), June 2026: one node down 10 h (credit 25 % on that node-month)
    rel = {"incidents": "i.csv", "period_start": dt.date(2026, 6, 1),
           "period_end": dt.date(2026, 6, 30), "gpus_in_service": 64}
    sla = {"uptime_pct": 99.9, "credits": [[99.9, 10], [99.0, 25], [95.0, 100]]}
    ref = FakeReference({KEY: baseline(10.0)})
    ev = evidence(manifest(reliability=rel, sla=sla), runs=[run_row()],
                  steps=flat_steps("runs[0]", 10.0),
                  incidents=[incident("2026-06-05T00:00:00", "2026-06-05T10:00:00", "n1")])
    card = score(ev, [], ref, RUBRIC)
    assert card.reliability is not None and card.sla is not None
    # one interruption in 64 × 30 GPU-days = 46,080 GPU-h; job = 64 GPUs → 64/46,080 per hour
    ettr = 1 - (64 / 46080) * 0.5
    assert card.reliability.ettr == pytest.approx(ettr, abs=1e-6)
    ref_ettr = 1 - 64 * 419 / (16384 * 54 * 24) * 0.5
    assert card.reliability.goodput_ratio == pytest.approx(ettr / ref_ettr, abs=1e-6)
    assert card.sla.credit_pct == pytest.approx(25 / 8)  # 25 % on 1 of 8 node-months
    advice = price(ev, card, ref)
    g = card.reliability.goodput_ratio
    assert advice.goodput_ratio == pytest.approx(g)
    assert advice.parity_usd_per_gpu_hour == pytest.approx(round(2.10 * g, 4))
    assert advice.goodput_loss_usd == pytest.approx(TERM_COST * (1 - card.reliability.ettr),
                                                    abs=0.01)
    # owed = the measured period's bill (8 nodes × 8 GPUs × 720 h × $2.10) × 3.125 %
    period_bill = 2.10 * 64 * 720
    assert advice.sla_period_bill_usd == pytest.approx(period_bill, abs=0.01)
    assert advice.sla_credit_usd == pytest.approx(period_bill * 0.03125, abs=0.01)
    # the term projection is labelled and never subtracted
    assert advice.sla_credit_term_projection_usd == pytest.approx(TERM_COST * 0.03125, abs=0.01)
    assert advice.goodput_loss_usd is not None
    assert advice.effective_term_cost_usd == pytest.approx(
        TERM_COST + advice.goodput_loss_usd, abs=0.02)
    assert any("Projection only, not owed" in s for s in advice.reasoning)


def _sla_advice(down_hours: dict[str, float], *, month: int = 7,
                days: int = 31) -> PriceAdvice:
    """512 GPUs (64 nodes × 8), one month, 99.9 % contracted, 10 % credit below it."""
    nodes = {"gpu": "h100-sxm", "nodes": 64, "gpus_per_node": 8,
             "interconnect": "infiniband-ndr-8x400"}
    rel = {"incidents": "i.csv", "period_start": dt.date(2026, month, 1),
           "period_end": dt.date(2026, month, days), "gpus_in_service": 512}
    sla = {"uptime_pct": 99.9, "credits": [[99.9, 10], [99.0, 25], [95.0, 100]]}
    key = ("llama3.1-70b", "bf16", 64)
    ref = FakeReference({key: baseline(10.0)})
    incidents = [incident(f"2026-{month:02d}-05T00:00:00",
                          f"2026-{month:02d}-05T{int(h):02d}:{int(h % 1 * 60):02d}:00", node,
                          line=i + 2)
                 for i, (node, h) in enumerate(sorted(down_hours.items()))]
    ev = evidence(manifest(system=nodes, reliability=rel, sla=sla), runs=[run_row()],
                  steps=flat_steps("runs[0]", 10.0), incidents=incidents)
    return price(ev, score(ev, [], ref, RUBRIC), ref)


def test_sla_credit_is_the_measured_periods_bill_times_the_credit() -> None:
    # issue 12: 3 node-months below 99.9 % in one 31-day month at $2.10 on 512 GPUs owe
    # 3 × (8 GPUs × 744 h × $2.10) × 10 % = $3,749.76 (not the term cost × the rate)
    advice = _sla_advice({"n1": 1.0, "n2": 1.0, "n3": 1.0})
    assert advice.sla_credit_usd == 3749.76
    assert advice.sla_period_bill_usd == pytest.approx(2.10 * 512 * 744, abs=0.01)
    assert advice.goodput_loss_usd is not None
    assert advice.effective_term_cost_usd == pytest.approx(
        advice.term_cost_usd + advice.goodput_loss_usd, abs=0.01)
    [credit] = [d for d in advice.drivers if d.kind == "credit"]
    assert credit.usd_per_gpu_hour == pytest.approx(3749.76 / (512 * 744), abs=1e-4)


def test_lower_reliability_never_lowers_the_effective_cost() -> None:
    # same quote, more and longer outages: more credit owed, never a cheaper effective cost
    fleets = [{}, {"n1": 1.0}, {"n1": 1.0, "n2": 1.0, "n3": 1.0},
              {f"n{i}": 12.0 for i in range(20)}, {f"n{i}": 20.0 for i in range(64)}]
    advices = [_sla_advice(f) for f in fleets]
    costs = [a.effective_term_cost_usd for a in advices if a.effective_term_cost_usd is not None]
    assert len(costs) == len(advices) and costs == sorted(costs) and costs[-1] > costs[0]
    credits = [a.sla_credit_usd for a in advices if a.sla_credit_usd is not None]
    assert len(credits) == len(advices) and credits == sorted(credits) and credits[0] == 0.0
    asks = [a.ask_usd_per_gpu_hour or 0.0 for a in advices]
    assert asks == sorted(asks, reverse=True)


def test_no_comparable_run_gives_no_parity() -> None:
    ev = evidence(manifest(), runs=[run_row()], steps=flat_steps("runs[0]", 10.0))
    card = score(ev, [], FakeReference({}), RUBRIC)
    advice = price(ev, card, FakeReference({}))
    assert advice.parity_usd_per_gpu_hour is None and advice.ask_usd_per_gpu_hour is None
    assert advice.adjustment_pct is None and advice.term_cost_usd == pytest.approx(TERM_COST)
    assert any("no defensible parity price" in s for s in advice.reasoning)
    # without a parity price and an ask those two steps are left out, and the numbers shown
    # run on without a gap (issue 30: 1, 2, 3, 6, 7)
    numbers = [s.split(".", 1)[0] for s in advice.reasoning if s[:1].isdigit()]
    assert numbers == [str(n) for n in range(1, len(numbers) + 1)] and len(numbers) >= 5
    assert not any(s.startswith(("4. Parity", "5. Ask")) for s in advice.reasoning)


def test_missing_pricing_is_a_user_error() -> None:
    ev = evidence(manifest(pricing=None), runs=[run_row()], steps=flat_steps("runs[0]", 10.0))
    card = score(ev, [], FakeReference({KEY: baseline(10.0)}), RUBRIC)
    with pytest.raises(CmaxError) as exc:
        price(ev, card, FakeReference({KEY: baseline(10.0)}))
    line = exc.value.one_line()
    assert "cmax.toml" in line and "pricing" in line and "usd_per_gpu_hour" in line


def test_findings_are_copied_and_counted() -> None:
    ev = evidence(manifest(), runs=[run_row()], steps=flat_steps("runs[0]", 10.0))
    findings = [Finding(rule="x.b", severity="warning", message="w", fix="f"),
                Finding(rule="x.a", severity="error", message="e", fix="f")]
    card = score(ev, findings, FakeReference({KEY: baseline(10.0)}), RUBRIC)
    assert [f.rule for f in card.findings] == ["x.a", "x.b"]
    assert card.finding_counts == {"error": 1, "warning": 1, "info": 0}


def test_declarations_lift_the_gate_and_price_value_scores() -> None:
    decl = {"soc2_type2": True, "acs_disabled": True, "gpudirect_rdma": True}
    _, card, _ = card_for(10.0, 10.0, declarations=decl)
    # the declared disqualifier gates are "declared": they do not cap, nor read as passed
    declared = [g for g in card.gates if g.reason.startswith("declared, not shown")]
    assert len(declared) == 3 and all(g.status == "declared" for g in declared)
    assert card.tier_without_declarations == "Underperforming"  # no SOC 2 shown
    pricing = next(c for c in card.categories if c.name == "pricing")
    # value = market 2.10 × throughput 1.0 × goodput 1.0 ÷ quoted 2.10 = 1.0 → 100 points
    # (weight 2); no pricing declarations in an evidenced category → 0 (weight 1): 200 / 3
    assert pricing.verified and pricing.score == pytest.approx(200 / 3, abs=1e-4)
    assert any("value for money" in e for e in pricing.evidence)
    assert isinstance(PriceAdvice.model_json_schema(), dict)


def test_joules_per_token_power_sources() -> None:
    # reference all-in default: DGX H100 10.2 kW / 8 GPUs × PUE 1.56 = 1,989 W per GPU
    econ = {"default_watts_per_gpu": {"h100-sxm": 1989.0}, "default_watts_source": "DGX"}
    ref = FakeReference({KEY: baseline(10.0)}, economics=econ)
    ev = evidence(manifest(), runs=[run_row()], steps=flat_steps("runs[0]", 10.0))
    advice = price(ev, score(ev, [], ref, RUBRIC), ref)
    assert advice.workloads[0].joules_per_token == pytest.approx(1989 / 1638.4, abs=1e-4)
    assert any("all-in default" in s for s in advice.reasoning)
    # the provider's metered figure wins
    metered = manifest(pricing={"usd_per_gpu_hour": 2.10, "term_months": 12,
                                "watts_per_gpu": 1000.0})
    ev = evidence(metered, runs=[run_row()], steps=flat_steps("runs[0]", 10.0))
    advice = price(ev, score(ev, [], ref, RUBRIC), ref)
    assert advice.workloads[0].joules_per_token == pytest.approx(1000 / 1638.4, abs=1e-4)


def test_a_run_that_failed_validation_moves_neither_price_nor_value(tmp_path: Any) -> None:
    """Issue 12: the fp8 log declared as the bf16 run 'passes' at ~1.5x NVIDIA's bf16 number.
    Validation catches it (too good to be true, one log for two claims); the price and the
    value per reference-grade GPU-hour must then rest on the runs that passed validation."""
    import shutil

    from cmax.pipeline import assess
    from tests.paths import SAMPLES

    bundle = tmp_path / "aurora"
    shutil.copytree(SAMPLES / "aurora-compute", bundle)
    manifest = bundle / "cmax.toml"
    text = manifest.read_text(encoding="utf-8")
    bf16_log = 'log = "training/llama3.1-405b_bf16_512.log"'
    assert bf16_log in text
    manifest.write_text(text.replace(bf16_log, 'log = "training/llama3.1-405b_fp8_512.log"', 1),
                        encoding="utf-8")
    honest = assess(SAMPLES / "aurora-compute")
    gamed = assess(bundle)
    bf16 = next(w for w in gamed.workloads if w.precision == "bf16")
    assert bf16.ratio is not None and bf16.ratio > 1.4  # the ratio stays visible
    assert "sanity.too-good-to-be-true" in bf16.validation_errors
    assert bf16.verdict != "pass"
    assert gamed.price is not None and honest.price is not None
    assert gamed.price.throughput_ratio is not None
    assert gamed.price.throughput_ratio < 1.01  # only the clean grok run is priced
    assert gamed.price.usd_per_reference_gpu_hour is not None
    assert honest.price.usd_per_reference_gpu_hour is not None
    assert gamed.price.usd_per_reference_gpu_hour >= honest.price.usd_per_reference_gpu_hour * 0.99
    assert gamed.score <= honest.score + 1e-9


def test_the_term_at_the_ask_is_priced_in_the_advice() -> None:
    """The brief shows the term at the ask; the figure has one home, PriceAdvice."""
    from cmax.pipeline import assess
    from cmax.price import HOURS_PER_MONTH
    from tests.paths import SAMPLES

    advice = assess(SAMPLES / "borealis-cloud").price
    assert advice is not None and advice.ask_usd_per_gpu_hour is not None
    assert advice.ask_term_cost_usd == pytest.approx(
        advice.ask_usd_per_gpu_hour * advice.contract_gpus * advice.term_months * HOURS_PER_MONTH,
        abs=0.01)
    assert advice.ask_term_cost_usd is not None
    assert advice.ask_term_cost_usd < advice.term_cost_usd  # Borealis' ask is below its quote


def test_manifest_basket_prices_a_workload_the_bundle_did_not_run() -> None:
    # measured: 70B BF16 at 12.5 s vs the reference 10 s (ratio 0.8), 128 x 8192 / 12.5 / 64
    # = 1,310.72 tokens/s/GPU: 2.10e6 / (1,310.72 x 3,600) = $0.4450 per M tokens.
    # estimated: 70B FP8, not run: 0.8 x the reference 128 x 8192 / 8 s / 64 = 2,048 tokens/s
    # = 1,638.4: $0.3560. Basket 3:1 = 0.75 x 0.4450 + 0.25 x 0.3560 = $0.4228.
    ref = FakeReference({KEY: baseline(10.0), ("llama3.1-70b", "fp8", 64): baseline(8.0)})
    pricing = {"usd_per_gpu_hour": 2.10, "term_months": 12,
               "workloads": "llama3.1-70b:bf16=3, llama3.1-70b:fp8=1"}
    ev = evidence(manifest(pricing=pricing), runs=[run_row()],
                  steps=flat_steps("runs[0]", 12.5))
    advice = price(ev, score(ev, [], ref, RUBRIC), ref)
    bf16, fp8 = advice.token_costs
    assert (bf16.basis, fp8.basis) == ("measured", "estimate")
    assert bf16.usd_per_million_tokens == pytest.approx(2.10e6 / (1310.72 * 3600), abs=1e-4)
    assert fp8.tokens_per_s_per_gpu == pytest.approx(0.8 * 2048)
    assert fp8.usd_per_million_tokens == pytest.approx(2.10e6 / (1638.4 * 3600), abs=1e-4)
    assert advice.token_basket == {"llama3.1-70b:bf16": 0.75, "llama3.1-70b:fp8": 0.25}
    assert advice.usd_per_million_tokens == pytest.approx(
        0.75 * bf16.usd_per_million_tokens + 0.25 * fp8.usd_per_million_tokens, abs=1e-4)


@pytest.mark.parametrize("basket", ["llama3.1-70b", "llama3.1-70b:bf16=0", ""])
def test_manifest_basket_refused_with_its_field(basket: str) -> None:
    with pytest.raises(CmaxError) as caught:
        manifest(pricing={"usd_per_gpu_hour": 2.10, "workloads": basket})
    assert caught.value.field == "pricing.workloads"
    assert "workload:precision" in str(caught.value) or "share" in str(caught.value)
