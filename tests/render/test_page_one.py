"""One page 1 for every surface (issue 37): the HTML scorecard, the brief, the text of
`cmax score` and `cmax price` and the demo's table show the decision, tier, score, Exemplar
state and prices of one :class:`PageOne`, and no template computes a figure."""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

import pytest
from jinja2 import nodes

from cmax.cli.demo_cmd import table
from cmax.cli.price_cmd import price_text
from cmax.cli.score_cmd import scorecard_text
from cmax.pipeline import assess
from cmax.render import reports
from cmax.render.page_one import PageOne, page_one
from cmax.render.templates import environment
from cmax.scorecard import Scorecard
from tests.paths import SAMPLES
from tests.sample_bundles import only_run_unverified

NAMES = ("aurora-compute", "borealis-cloud", "cinder-gpu", "halcyon-serve", "zenith-nvl72")


@cache
def _card(name: str) -> Scorecard:
    return assess(SAMPLES / name)


def _text(page: str) -> str:
    body = page.split("<body", 1)[1]
    body = re.sub(r"<style.*?</style>", " ", body, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))).strip()


def _page1(page: str) -> str:
    """The scorecard's first section (page 1), as text."""
    return _text(page.split('<section class="major newpage" id="price">', 1)[0])


def _shared(page: PageOne) -> list[str]:
    """What every surface must state alike."""
    out = [page.tier, page.score, page.exemplar.label]
    if page.prices is not None:
        out += [page.prices.quoted.value, page.prices.ask.value]
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_surface_states_page_one_alike(name: str) -> None:
    card = _card(name)
    page = page_one(card)
    scorecard = _page1(reports.scorecard_html(card, "x", "html", reports.ScorecardCharts()))
    brief = _text(reports.brief_html(card))
    score_text = "\n".join(scorecard_text(card))
    [row] = table([page])[1:]
    surfaces = {"scorecard": scorecard, "brief": brief, "cmax score": score_text,
                "demo": row}
    if card.price is not None:
        surfaces["cmax price"] = "\n".join(price_text(card, card.price))
    for surface, text in surfaces.items():
        for value in _shared(page):
            if not (surface == "brief" and value == page.score):  # the brief states no score
                assert value in text, (surface, value)
    # the decision and the ask in the same words wherever a sentence fits
    for surface in ("brief", "cmax score", "cmax price"):
        if surface in surfaces:
            assert page.ask in surfaces[surface], surface
    assert page.decision in row and page.decision in score_text
    assert page.verdict in scorecard
    # the key figures: the scorecard's tiles and the text's lines are the same strings
    for key in page.shown_keys:
        assert f"{key.label} {key.value} {key.detail}" in scorecard, key.label
    for key in page.keys[:-1]:
        assert f"{key.label}: {key.value} ({key.detail})" in score_text, key.label
    if page.prices is not None:
        tiles = page.prices
        for tile in (tiles.quoted, tiles.parity, tiles.ask, tiles.value):
            assert f"{tile.label} {tile.value} {tile.detail}" in scorecard, tile.label


def test_price_text_states_the_page_one_of_its_own_advice() -> None:
    """`cmax price` builds page 1 from the advice it prints, not the scorecard's."""
    card = _card("borealis-cloud")
    assert card.price is not None
    dearer = card.price.model_copy(update={"ask_usd_per_gpu_hour": 1.5,
                                           "adjustment_pct": -33.3})
    text = "\n".join(price_text(card, dearer))
    assert "Ask for $1.50 per GPU-hour against $2.25 quoted (−33.3%)." in text



def test_a_quote_with_no_ask_is_not_a_buy(tmp_path: Path) -> None:
    """A tier earned on the other categories while the only run is held unverified (its log
    states no configuration) leaves no price to buy at: the decision is not rated, never "buy
    at the ask" beside "no evidence-based ask"."""
    card = assess(only_run_unverified(tmp_path))
    assert card.price is not None and card.price.ask_usd_per_gpu_hour is None
    assert card.tier == "Silver"
    first = page_one(card)
    assert first.decision == "not rated"
    assert "Not rated" in first.headline and "No evidence-based ask" in first.ask

_ARITHMETIC = (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow)
_COMPUTING_FILTERS = frozenset({"sum", "round", "abs", "int", "float", "max", "min"})


def _computations(source: str) -> list[str]:
    """Each place a template's syntax tree adds, subtracts, multiplies, divides or sums;
    a minus sign only on a literal (a slice's ``[-12:]``) is not arithmetic."""
    tree = environment().parse(source)
    found = [f"line {n.lineno}: {type(n).__name__}" for n in tree.find_all(_ARITHMETIC)]
    found += [f"line {n.lineno}: minus" for n in tree.find_all(nodes.Neg)
              if not isinstance(n.node, nodes.Const)]
    found += [f"line {n.lineno}: {n.name}" for n in tree.find_all(nodes.Filter)
              if n.name in _COMPUTING_FILTERS]
    return found


def _templates() -> list[str]:
    return [n for n in environment().list_templates() if n.endswith(".j2")]


@pytest.mark.parametrize("name", _templates())
def test_no_template_computes(name: str) -> None:
    """Templates lay out what the view models hold: a sum or a product in one is a figure no
    other surface states (cmax.render.page_one and cmax.price compute them)."""
    env = environment()
    assert env.loader is not None
    source = env.loader.get_source(env, name)[0]
    assert _computations(source) == [], name


def test_the_arithmetic_check_sees_arithmetic() -> None:
    assert _computations("{{ a * b }}{{ (x | sum) / 2 }}{{ c - d }}{{ -e }}") == [
        "line 1: Mul", "line 1: Div", "line 1: Sub", "line 1: minus", "line 1: sum"]
    assert _computations("{{ rows[-12:] }}{{ a ~ b }}{{ items | columns(3) }}") == []
