"""Money cmax could not assess is "not assessed" (JSON null), never $0 (issues 38 and 40).

A bundle without an incident log has no goodput loss and no SLA credit to show: printing
"$0.00 owed" would tell the buyer the provider was measured and owes nothing.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cmax.cli import main
from tests.paths import SAMPLES


@pytest.fixture
def no_incidents(tmp_path: Path) -> Path:
    """The Aurora sample without its incident log (its [sla] terms kept)."""
    bundle = shutil.copytree(SAMPLES / "aurora-compute", tmp_path / "aurora")
    (bundle / "incidents.csv").unlink()
    toml = bundle / "cmax.toml"
    text = re.sub(r"\[reliability\]\n.*?\n\n", "", toml.read_text(), flags=re.S)
    assert "[reliability]" not in text and "[sla]" in text
    toml.write_text(text)
    return bundle


def test_price_json_is_null_for_money_not_assessed(
        no_incidents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["price", str(no_incidents), "--format", "json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    for key in ("goodput_loss_usd", "sla_credit_usd", "sla_period_bill_usd", "sla_credit_pct",
                "effective_term_cost_usd"):
        assert advice[key] is None, key
    assert advice["term_cost_usd"] == 10_988_544.0  # 2.45 × 512 GPUs × 730 h × 12


def test_price_text_says_not_assessed(no_incidents: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["price", str(no_incidents)]) == 0
    out = capsys.readouterr().out
    assert "goodput loss not assessed" in out
    assert "SLA credit   not assessed" in out
    assert "$0.00" not in out
    assert "7. SLA credit: not assessed (no incident log in the bundle" in out


def test_price_text_names_the_bill_a_credit_is_a_share_of(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["price", str(SAMPLES / "cinder-gpu")]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if "SLA credit  " in x]
    assert re.search(r"\$[\d,]+\.\d\d owed \([\d.]+% of the measured period's bill of "
                     r"\$[\d,]+\.\d\d\)", line), line


def test_reports_say_not_assessed(no_incidents: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["-q", "report", str(no_incidents), "-o", str(out), "--no-pdf"]) == 0
    [brief] = out.glob("*.brief.html")
    [card] = out.glob("*.scorecard.html")
    [data] = out.glob("*.scorecard.json")
    text = brief.read_text()
    assert "not assessed: no incident log" in text
    assert "not assessed: no SLA terms or no incident log" in text
    page = card.read_text()
    assert page.count("not assessed <span") == 3  # goodput loss, effective cost, SLA credit
    assert json.loads(data.read_text())["price"]["sla_credit_usd"] is None


def _quote(bundle: Path, pricing: str) -> None:
    toml = bundle / "cmax.toml"
    toml.write_text(re.sub(r"usd_per_gpu_hour = 2\.45\n", pricing, toml.read_text()))


def test_a_quote_in_another_currency_needs_a_stated_rate(
        no_incidents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38: a quote in EUR was taken as USD. A currency other than USD is converted only
    at the rate the manifest states; without one, the bundle is refused naming the keys."""
    _quote(no_incidents, 'currency = "EUR"\nquote_per_gpu_hour = 2.27\n')
    assert main(["price", str(no_incidents)]) == 2
    err = capsys.readouterr().err
    assert "pricing" in err and "usd_per_currency_unit (US dollars per 1 EUR" in err
    assert "cmax converts a quote only at a rate you state" in err and err.count("\n") == 1


def test_a_figure_in_euros_is_never_read_as_dollars(
        no_incidents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _quote(no_incidents, 'currency = "EUR"\nusd_per_gpu_hour = 2.27\n')
    assert main(["price", str(no_incidents)]) == 2
    assert "a figure in EUR read as dollars is off by the exchange rate" in \
        capsys.readouterr().err


def test_a_quote_in_euros_at_a_stated_rate(no_incidents: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _quote(no_incidents, 'currency = "EUR"\nquote_per_gpu_hour = 2.27\n'
                         'usd_per_currency_unit = 1.08\nrate_source = "ECB, 2026-11-27"\n')
    assert main(["price", str(no_incidents), "--format", "json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert advice["quoted_usd_per_gpu_hour"] == pytest.approx(2.4516)  # 2.27 EUR x 1.08
    assert (advice["quote_currency"], advice["quote_in_currency"],
            advice["usd_per_currency_unit"]) == ("EUR", 2.27, 1.08)
    assert advice["reasoning"][0].startswith(
        "1. Quoted price: $2.45/GPU-hour: 2.27 EUR × 1.08 USD per EUR (the rate the manifest "
        "states, ECB, 2026-11-27)")


def test_one_cost_per_million_tokens_per_workload(capsys: pytest.CaptureFixture[str]) -> None:
    """Borealis' llama3.1-405b bf16 read $3.3611 in the workload table and $3.3647 in the
    basket (one without, one with interruptions): both now price interruptions in."""
    assert main(["price", str(SAMPLES / "borealis-cloud"), "--format", "json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    costs = {(c["workload"], c["precision"]): c["usd_per_million_tokens"]
             for c in advice["token_costs"] if c["num_gpus"] == 512}
    for w in advice["workloads"]:
        assert w["usd_per_million_tokens"] == costs[(w["workload"], w["precision"])]
    assert costs[("llama3.1-405b", "bf16")] == 3.3647


def test_the_sla_line_names_the_rule_and_the_average(capsys: pytest.CaptureFixture[str]) -> None:
    """"99.973% measured vs 99.9% contracted: NOT met" set a fleet average beside a
    node-month rule."""
    main(["score", str(SAMPLES / "cinder-gpu"), "--fail-on", "none"])
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("SLA:")]
    assert line.startswith("SLA: contracted 99.9% per node per month: NOT met, 72 of 192 "
                           "node-months below, worst node-month 95.667% (fleet average uptime")
