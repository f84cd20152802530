"""Provenance in every report (issue 38): each figure a buyer reads carries its judgement's
label (independently witnessed, provider-attested, declared, not assessed), naming who witnessed
a figure and what an independent witness of its context states: Slurm accounting witnesses a
run's span, not its speed."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path

import pytest

from cmax.cli.score_cmd import scorecard_text
from cmax.pipeline import assess
from cmax.render import reports
from cmax.render.page_one import page_one
from cmax.render.provenance import Source, Sources, source_of
from cmax.scorecard import Scorecard
from tests.paths import SAMPLES
from tests.sample_bundles import aurora_with_slurm_jobs

NAMES = ("aurora-compute", "borealis-cloud", "cinder-gpu", "halcyon-serve", "zenith-nvl72")


@cache
def _card(name: str) -> Scorecard:
    return assess(SAMPLES / name)


def _text(page: str) -> str:
    body = re.sub(r"<style.*?</style>", " ", page.split("<body", 1)[1], flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))).strip()


def _scorecard(card: Scorecard) -> str:
    return _text(reports.scorecard_html(card, "x", "html", reports.ScorecardCharts()))


@pytest.mark.parametrize("name", NAMES)
def test_every_measured_figure_carries_its_judgements_label(name: str) -> None:
    card = _card(name)
    page = page_one(card)
    scorecard, text = _scorecard(card), "\n".join(scorecard_text(card))
    brief = _text(reports.brief_html(card)).lower()
    labelled = [k for k in page.keys if k.source is not None]
    assert labelled, "a sample with no labelled figure"
    for key in labelled:
        assert key.source is not None
        assert f"{key.value} ({key.detail}) [{key.source.text}]" in text, key.label
        assert key.source.provenance in brief, key.label
    for key in page.shown_keys:
        if key.source is not None:
            assert f"{key.detail} · {key.source.text}" in scorecard, key.label
    sources = Sources(card)
    for w in card.workloads:  # every run's row, its run judgement's label
        run = sources.run(w)
        assert run is not None and run == source_of(card.judgement("training_run", w.run_id or ""))
    for kind in ("fabric", "reliability", "sla", "audit"):
        claim = sources.of(kind)
        if claim is not None and claim.provenance != "not assessed":
            assert claim.text in scorecard, kind
    assert "Evidence labels:" in scorecard and "Evidence labels:" in text


def test_the_audit_file_is_the_providers_word() -> None:
    """A ClusterMAX audit file records no auditor and its collector is an open CLI the
    provider can run itself: the report never calls it independently witnessed."""
    first = page_one(_card("borealis-cloud"))
    key = next(k for k in first.keys if k.label == "ClusterMAX audit")
    assert key.source is not None and key.source.text == "provider-attested"
    assert "Independently witnessed" not in first.basis


def test_a_run_slurm_accounting_corroborates_is_witnessed_for_its_span_only(
        tmp_path: Path) -> None:
    """Aurora's runs with their Slurm jobs (sacct -P output): the label names the job and the
    span Slurm recorded, and leaves the speed the log prints to the provider."""
    card = assess(aurora_with_slurm_jobs(tmp_path))
    run = Sources(card).run(card.workloads[0])
    assert run is not None and run.provenance == "provider-attested"
    assert run.text.startswith("provider-attested; Slurm accounting witnesses the context only: "
                               "job 41001 in the accounting, held ")
    assert run.text in _scorecard(card)  # Appendix C names what Slurm witnessed
    text_lines = [line for line in scorecard_text(card) if "job 41001" in line]
    assert text_lines and all("provider-attested; Slurm accounting witnesses the context only"
                              in line for line in text_lines)


@pytest.mark.parametrize(("source", "said"), [
    (Source("provider-attested", (), True), "provider-attested"),
    (Source("independently witnessed", ("the buyer's monitoring",), True),
     "independently witnessed by the buyer's monitoring, and by the provider's files"),
    (Source("independently witnessed", ("the third-party audit",)),
     "independently witnessed by the third-party audit"),
    (Source("provider-attested", (), True, (("Slurm accounting", "job 1, held 60 s"),
                                            ("Slurm accounting", "job 2, held 70 s"),
                                            ("Slurm accounting", "job 3, held 80 s"))),
     "provider-attested; Slurm accounting witnesses the context only: job 1, held 60 s, job 2, "
     "held 70 s and 1 more"),
    (Source("not assessed"), "not assessed"),
    (Source("declared", assumed="reference default power"), "assumed (reference default power)"),
])
def test_a_label_says_who_witnessed_what(source: Source, said: str) -> None:
    assert source.text == said


def test_the_json_carries_each_claims_provenance() -> None:
    data = json.loads(reports.scorecard_json(_card("borealis-cloud")))
    labels = {(j["kind"], j["id"]): j["provenance"] for j in data["judgements"]}
    assert labels[("audit", "audit")] == "provider-attested"
    assert labels[("fabric", "fabric")] == "provider-attested"


@pytest.mark.parametrize("name", ("aurora-compute", "borealis-cloud", "cinder-gpu"))
def test_every_priced_j_per_token_says_its_power_is_assumed(name: str) -> None:
    """The H100 samples state no power per GPU: the price's J/token divides the reference's
    default all-in power, so the cost table's J/token column is labelled assumed, page 1's price
    inputs (also in `cmax score`) say why, and `cmax price` says it under its table; nothing
    calls it attested."""
    from cmax.cli.price_cmd import price_text

    card = _card(name)
    assert card.price is not None
    priced = [w for w in card.price.workloads if w.joules_per_token is not None]
    assert priced
    page = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    cost = page.split("<h3>Cost per workload</h3>", 1)[1].split("</table>", 1)[0]
    assert 'Joules/token <span class="src src-assumed">assumed</span></th>' in cost
    inputs = "; J/token's power per GPU assumed (reference default power)."
    assert page_one(card).prices.inputs.endswith(inputs)  # type: ignore[union-attr]
    assert inputs in _scorecard(card) and inputs in "\n".join(scorecard_text(card))
    note = "J/token: power per GPU ÷ tokens/s per GPU, the power assumed (reference default power)."
    assert f"  {note}" in price_text(card, card.price)
