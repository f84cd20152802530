"""The cost table (``PriceAdvice.workloads``) prices a run only as its judgement counts it: a
run whose pass an error withholds, or whose identity rests on cmax.toml alone, keeps its row
and its measured rate, never a $ per million tokens or J/token the evidence has not earned."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.cli.price_cmd import price_text
from cmax.pipeline import assess
from cmax.scorecard import PriceAdvice, Scorecard
from tests.sample_bundles import (
    fp8_run_declared_bf16,
    one_of_two_runs_contested,
    only_run_unverified,
)


def _priced(card: Scorecard) -> PriceAdvice:
    assert card.price is not None
    return card.price


def test_a_withheld_run_is_not_priced_and_reads_what_its_log_states(tmp_path: Path) -> None:
    """Aurora's fp8 log declared bf16 measures 152.7 % of the bf16 reference: it read
    '$2.1516 vs ref $3.2909' as 'bf16' beside the earned runs."""
    card = assess(fp8_run_declared_bf16(tmp_path))
    rows = _priced(card).workloads
    held = next(e for e in rows if e.log == "training/llama3.1-405b_fp8_512.log")
    assert held.verdict == "withheld" and not held.priced
    assert "identity.precision" in held.withheld_by
    assert held.tokens_per_s_per_gpu == pytest.approx(315.705)
    assert held.usd_per_million_tokens is None and held.joules_per_token is None
    # the bf16 reference's cost is not this fp8 run's
    assert held.reference_usd_per_million_tokens is None
    assert held.log_states == {"precision": "fp8"}
    earned = [e for e in rows if e is not held]
    assert all(e.priced and e.verdict == "pass" and e.usd_per_million_tokens is not None
               and e.reference_usd_per_million_tokens is not None for e in earned)

    lines = price_text(card, _priced(card))
    row = next(line for line in lines if "315.7" in line)
    assert "fp8 (declared bf16)" in row
    assert "not priced: withheld (identity.arithmetic, identity.precision, " in row
    assert "2.1516" not in "\n".join(lines)
    assert any("Not priced" in step and "training/llama3.1-405b_fp8_512.log (withheld by"
               in step for step in _priced(card).reasoning)


def test_two_runs_of_one_workload_are_told_apart_and_the_contested_one_unpriced(
        tmp_path: Path) -> None:
    """A second bf16 run whose log prints TFLOP/s its step times do not give: its pass is
    withheld, so it carries no cost; its reference's cost is still the bf16 reference's (its
    identity is not contradicted); the text table names each bf16 run's log."""
    card = assess(one_of_two_runs_contested(tmp_path))
    rows = _priced(card).workloads
    first, second = (e for e in rows if e.workload == "llama3.1-405b" and e.precision == "bf16")
    assert first.priced and not second.priced and second.verdict == "withheld"
    assert second.usd_per_million_tokens is None
    assert second.reference_usd_per_million_tokens == first.reference_usd_per_million_tokens
    lines = [line for line in price_text(card, _priced(card))
             if line.startswith("  llama3.1-405b") and " bf16 " in line]
    assert len(lines) == 2 and len(set(lines)) == 2
    assert lines[0].rstrip().endswith("training/llama3.1-405b_bf16_512.log")
    assert "training/llama3.1-405b_bf16_512_second.log" in lines[1]
    assert "not priced: withheld (consistency.tflops-vs-step-time" in lines[1]


def test_an_unverified_run_prices_no_tokens(tmp_path: Path) -> None:
    """A header-less log (what it ran rests on cmax.toml alone) neither prices its row nor
    the buyer's basket: the token costs follow the same judgement."""
    card = assess(only_run_unverified(tmp_path))
    advice = _priced(card)
    (only,) = advice.workloads
    assert only.verdict == "unverified" and not only.priced
    assert only.usd_per_million_tokens is None and only.joules_per_token is None
    assert only.reference_usd_per_million_tokens is not None  # its identity is not contradicted
    assert not [c for c in advice.token_costs if c.basis == "measured"]
    assert advice.usd_per_million_tokens is None
    row = next(line for line in price_text(card, advice) if line.startswith("  llama3.1-405b"))
    assert row.rstrip().endswith("not priced: not verified")
