"""The brief opens with the decision and the ask (issue 40): the Cinder brief (Underperforming)
opened "Ask for $1.89", its "do not sign" was on page 2, which called it the best value; its
fix list asked for gates that cannot move its tier; the serving brief asked for training
evidence."""

from __future__ import annotations

import html
import re
from functools import cache

import pytest

from cmax.pipeline import assess
from cmax.render import page_one, reports, views
from cmax.scorecard import Scorecard
from tests.paths import SAMPLES

NAMES = ("aurora-compute", "borealis-cloud", "cinder-gpu", "halcyon-serve", "zenith-nvl72")


@cache
def _cards() -> dict[str, Scorecard]:
    return {name: assess(SAMPLES / name) for name in NAMES}


def _text(page: str) -> str:
    body = page.split("<body", 1)[1]
    body = re.sub(r"<style.*?</style>", " ", body, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))).strip()


def _brief(name: str) -> str:
    cards = _cards()
    return _text(reports.brief_html(cards[name], peers=list(cards.values())))


@pytest.mark.parametrize(("name", "first"), [
    ("cinder-gpu", "Do not sign without the fixes below Once they are fixed, ask for $1.89 per "
                   "GPU-hour against $1.95 quoted (−3.1%)."),
    ("borealis-cloud", "Buy at the ask Ask for $2.02 per GPU-hour against $2.25 quoted "
                       "(−10.2%)."),
    ("aurora-compute", "Buy The quoted $2.45 per GPU-hour is fair on performance"),
])
def test_the_brief_opens_with_the_decision_then_the_ask(name: str, first: str) -> None:
    text = _brief(name)
    opening = text.split("without self-declarations")[-1] if "without self-" in text else text
    assert first in opening
    assert opening.index(first) < opening.index("Why")


def test_the_decision_comes_from_the_rating() -> None:
    cards = _cards()
    said = {name: page_one.opening(card).decision for name, card in cards.items()}
    assert said == {"aurora-compute": "buy", "borealis-cloud": "buy at the ask",
                    "cinder-gpu": "do not sign without fixes",
                    "halcyon-serve": "buy at the ask", "zenith-nvl72": "buy at the ask"}


def test_the_fix_list_holds_only_what_can_change_the_decision() -> None:
    """Cinder is Underperforming by its score: the attestation gate (capping at
    Underperforming) is asked for, the gates capping at Gold are named as left out."""
    card = _cards()["cinder-gpu"]
    demands = " ".join(p.text for p in views.brief_demands(card))
    assert "Third-party security attestation" in demands
    for gold in ("Evidence coverage", "PCIe ACS", "GPUDirect RDMA"):
        assert gold not in demands
    note = views.other_gates_note(card)
    assert note is not None and note.startswith(
        "Not asked for here, because each caps above Underperforming")
    assert "“Evidence coverage” (failed, caps at Gold)" in note


def test_a_buy_decision_asks_for_no_gate() -> None:
    card = _cards()["aurora-compute"]
    assert views.decisive_gates(card) == []


def test_a_serving_brief_asks_for_serving_evidence() -> None:
    """Halcyon's GPT-OSS-120B result as if its file stated no GPU count (vLLM's): the brief asks
    for a file that states it, and for nothing a training contract needs."""
    cards = _cards()
    card = cards["halcyon-serve"]
    declared = card.model_copy(update={"inference": [
        r.model_copy(update={"gpus_basis": "declared", "verdict": "unverified"}) if i == 0
        else r for i, r in enumerate(card.inference)]})
    text = _text(reports.brief_html(declared, peers=list(cards.values())))
    fixes = text.split("What the provider must fix or credit", 1)[1].split("Over the term")[0]
    assert "Provide serving results whose own file states the GPUs that served them" in fixes
    assert "gpt-oss-120b fp8 1024/1024 is only declared" in fixes
    for training in ("nccl-tests", "Exemplar bar", "training runs", "network bar"):
        assert training not in fixes, training


def test_an_offer_not_to_sign_is_never_called_the_best_value() -> None:
    text = _brief("cinder-gpu")
    assert "This is the best value" not in text
    assert ("The lowest price per reference-grade GPU-hour of the 3 clusters rated together "
            "($2.02), but rated Underperforming: value counts only once the fixes above are "
            "made. The best value you can sign today is Aurora Compute (Gold: buy) at $2.44."
            ) in text
