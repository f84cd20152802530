"""Report sentences say what happened to each run: a run measured against a reference but
held unverified was compared (its ratio is printed), counts are of runs where runs are
counted, and two runs of one workload are told apart in the cost table."""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path

from cmax.pipeline import assess
from cmax.render import reports
from cmax.render.page_one import evidence_gap, page_one
from cmax.render.views import brief_reasons
from tests.sample_bundles import (
    fp8_run_declared_bf16,
    one_of_two_runs_fails,
    only_run_unverified,
)


def test_a_held_run_reads_compared_but_not_verified(tmp_path: Path) -> None:
    card = assess(only_run_unverified(tmp_path))
    gap = evidence_gap(card)
    assert gap is not None
    assert gap.headline.startswith(
        "Thin evidence: the 1 training run was compared with a reference (99.8%) but is not "
        "verified: its pass rests on values only the manifest states (model declared, "
        "gpu_count declared, precision declared), so no throughput figure counts toward the "
        "rating or the price.")
    assert "could be compared" not in gap.headline and "1 runs" not in gap.headline
    assert any(s.startswith("Provide training runs whose throughput a reference can rate: "
                            "the 1 training run was compared with a reference (99.8%)")
               for s in gap.submit)
    first = page_one(card)
    assert first.keys[0].value == "0 of 1 run passes"
    assert "No run's ratio to a reference counts" in first.verdict


def test_two_runs_of_one_workload_are_counted_as_runs_and_told_apart(tmp_path: Path) -> None:
    card = assess(one_of_two_runs_fails(tmp_path))
    short = [p.text for p in brief_reasons(card) if "not clearly above" in p.text]
    assert len(short) == 1 and short[0].startswith("1 of the 4 runs is not clearly above 95%")
    page = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    cost = page.split("<h3>Cost per workload</h3>", 1)[1].split("</table>", 1)[0]
    rows = [re.sub(r"<[^>]+>", "", html.unescape(r)).replace("\n", " ")
            for r in cost.split("<tr><td>")[1:]]
    bf16 = [r for r in rows if r.startswith("llama3.1-405b BF16 · 512 GPUs")]
    assert len(bf16) == 2 and len(set(bf16)) == 2
    assert any("training/llama3.1-405b_bf16_512.log" in r for r in bf16)
    assert any("training/llama3.1-405b_bf16_512_second.log" in r for r in bf16)
    # a workload run once keeps its one-line label
    assert any(r.startswith("grok1-314b FP8 · 512 GPUs ") for r in rows)
    assert not any("grok1" in r and ".log" in r for r in rows)


def test_no_report_says_a_held_run_was_not_compared(tmp_path: Path) -> None:
    """The price's reasoning, page 1's ask and decision, the price table, "What moves the price"
    and the brief all say a run measured at 99.8 % of its reference was compared but did not
    earn its figure; none says that nothing was compared or measured."""
    card = assess(only_run_unverified(tmp_path))
    said = ("no run's ratio to a reference counts (the 1 run compared with one is not "
            "earned; the findings say why)")
    charts = reports.ScorecardCharts()
    pages = {"scorecard": reports.scorecard_html(card, "x", "html", charts),
             "brief": reports.brief_html(card)}
    for name, page in pages.items():
        text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))
        assert said in text, name
        for false in ("could be compared", "no run compared", "nothing was measured"):
            assert false not in text, (name, false)
    assert said in page_one(card).ask
    assert card.price is not None
    assert any(said in step for step in card.price.reasoning)


def test_a_withheld_run_reads_withheld_on_every_surface(tmp_path: Path) -> None:
    """Aurora's fp8 run declared bf16: its judgement withholds the pass, and the scorecard's
    training table, runs.csv and cmax score's table say withheld with the errors, never the
    run's own 'inconclusive' beside it."""
    from cmax.cli.score_cmd import scorecard_text
    from cmax.render.views import run_verdict

    card = assess(fp8_run_declared_bf16(tmp_path))
    held = [w for w in card.workloads
            if (j := card.judgement("training_run", w.run_id or "")) is not None
            and j.verdict == "withheld"]
    assert len(held) == 1 and held[0].verdict == "inconclusive"
    said = run_verdict(card, held[0])
    assert said.startswith("withheld (") and "identity.precision" in said
    page = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    table = page.split("<h2>Training performance</h2>", 1)[1].split("</table>", 1)[0]
    assert ">withheld</span>" in table and ">passed</span>" in table
    assert f"by {', '.join(held[0].validation_errors)}" in html.unescape(table)
    csv_rows = list(csv.DictReader(io.StringIO(reports.runs_csv(card))))
    assert [r["verdict"] for r in csv_rows].count("withheld") == 1
    assert any(said in line for line in scorecard_text(card))


def test_the_brief_says_a_withheld_run_does_not_count_not_that_it_is_slow(
        tmp_path: Path) -> None:
    """The brief listed the fp8 run declared bf16, at 152.7 %, among runs 'not clearly above
    95% of NVIDIA's reference'; it is above the bar and its pass is withheld."""
    card = assess(fp8_run_declared_bf16(tmp_path))
    reasons = [p.text for p in brief_reasons(card)]
    assert not any("not clearly above" in r for r in reasons)
    assert ("1 of the 3 runs does not count, its pass withheld by errors in its evidence: "
            "llama3.1-405b FP8 (declared BF16) · 512 GPUs at 152.7% (identity.arithmetic, "
            "identity.precision, sanity.too-good-to-be-true).") in reasons
    assert card.price is not None
    (throughput,) = [d for d in card.price.drivers if d.name == "Training throughput"]
    assert "reference speed over 2 runs; slowest llama3.1-405b bf16" in throughput.detail


def test_the_throughput_driver_counts_runs(tmp_path: Path) -> None:
    """The driver counts the runs its ratio is the geometric mean of (it said 'workloads')."""
    from cmax.score.verdicts import rated

    card = assess(one_of_two_runs_fails(tmp_path))
    assert card.price is not None
    (throughput,) = [d for d in card.price.drivers if d.name == "Training throughput"]
    counted = sum(rated(w) for w in card.workloads)
    assert f"reference speed over {counted} runs;" in throughput.detail
