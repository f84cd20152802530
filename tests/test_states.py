"""One vocabulary of states: every state goes through every output (the CLI's text, the
scorecard JSON, the HTML and the PDF) with the same words."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import get_args

import pytest

from cmax.cli.score_cmd import scorecard_text
from cmax.render import render_reports
from cmax.scorecard import SUITE_STATES, CategoryScore, Gate, Judgement, Scorecard
from cmax.states import CLAIM_STATES, GATE_STATES, State, Verdict, verdict_label
from tests.score.scorecard_factory import make_scorecard, with_overrides


def every_state_card() -> Scorecard:
    """A scorecard holding each state at least once: gates in every status, runs in every
    verdict, categories measured, declared and not scored."""
    card = make_scorecard()
    base = card.workloads[0]
    runs = [base.model_copy(update={"verdict": v, "validation_errors":
                                    ["consistency.x"] if v == "unverified" else []})
            for v in get_args(Verdict)]
    # a second workload whose one run passes: the text shows a met workload beside a not met
    runs.append(base.model_copy(update={"precision": "fp16", "verdict": "pass"}))
    gates = [Gate(name=f"gate {status}", passed=status == "passed", status=status,
                  cap="Silver", reason=f"reason {status}",
                  not_evaluated_cap="Gold" if status == "not_evaluated" else None)
             for status in GATE_STATES]
    cats = [CategoryScore(name="measured cat", score=80, weight=10, verified=True),
            CategoryScore(name="declared cat", score=60, weight=5, verified=False),
            CategoryScore(name="empty cat", score=0, weight=0, verified=False)]
    judgements = [Judgement(kind="declaration", id=f"key_{s.value}", label=s.label, state=s)
                  for s in CLAIM_STATES]
    return with_overrides(card, {"workloads": runs, "gates": gates, "categories": cats,
                                 "judgements": judgements})


def test_every_state_has_one_label_and_tone() -> None:
    assert [s.label for s in State] == [s.value.replace("_", " ") for s in State]
    assert all(s.tone in ("good", "warn", "bad", "neutral") and s.meaning for s in State)
    assert verdict_label("no_reference") == "not evaluated (no reference)"
    assert verdict_label("unverified") == "not verified"


def _json_states(data: object) -> set[str]:
    found: set[str] = set()
    if isinstance(data, dict):
        for k, v in data.items():
            if k in ("state", "score_state", "exemplar_state") and isinstance(v, str):
                found.add(v)
            found |= _json_states(v)
    elif isinstance(data, list):
        for v in data:
            found |= _json_states(v)
    return found


def test_every_state_through_text_json_html_and_pdf(tmp_path: Path) -> None:
    card = every_state_card()
    # JSON: each state's value, and a written scorecard reads back identical
    written = card.model_dump_json()
    assert _json_states(json.loads(written)) >= {s.value for s in State}
    assert Scorecard.model_validate_json(written) == card
    # text (cmax score); a claim's state reaches the pages as its judgement's provenance
    # label, so the page checks below cover the states of results, gates and categories
    text = "\n".join(scorecard_text(card))
    shown_claims = (State.DECLARED, State.NOT_VERIFIED)
    for s in (s for s in State if s not in CLAIM_STATES or s in shown_claims):
        assert re.search(rf"(^|\s){re.escape(s.label)}(\s|$|:|\()", text, re.M), s
    # HTML: the same label in a chip whose class names the state
    paths = render_reports([card], tmp_path)
    html = next(p for p in paths if p.name.endswith(".scorecard.html")).read_text("utf-8")
    # a page holds one Exemplar suite, so of met / not met only the suite's own state
    shown = [s for s in State if (s not in SUITE_STATES or s is card.exemplar_state)
             and (s not in CLAIM_STATES or s in shown_claims)]
    for s in shown:
        assert re.search(rf'class="chip {s.tone} state-{s.value}">{re.escape(s.label)}', html), s
    # PDF: the same words on the page
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    pdf = next(p for p in paths if p.name.endswith(".scorecard.pdf"))
    page_text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True,
                               text=True).stdout
    flat = " ".join(page_text.split())
    for s in shown:
        assert s.label in flat, s


def test_thin_evidence_reads_not_scored_and_exemplar_not_evaluated() -> None:
    card = make_scorecard(categories=[], workloads=[
        w.model_copy(update={"verdict": "no_reference", "ratio": None})
        for w in make_scorecard().workloads])
    assert card.score_state is State.NOT_SCORED
    assert card.exemplar_state is State.NOT_EVALUATED
    first = scorecard_text(card)[2]
    assert "score not scored" in first and "suite: not evaluated" in first
    assert "FAIL" not in first and "0.0/100" not in first
