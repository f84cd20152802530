"""Every shipped sample's PDFs keep every table cell on the page and every text in its cell
(the layout check of tests/render/test_render_layout.py, over the samples' real documents: a
training table's verdict column was cut at the page edge)."""

from __future__ import annotations

from functools import cache

import pytest

from cmax.pipeline import assess
from cmax.render import reports
from cmax.render.pdf import layout
from cmax.scorecard import Scorecard
from tests.paths import SAMPLES
from tests.render.test_render_layout import overflows

SAMPLE_NAMES = sorted(p.name for p in SAMPLES.iterdir() if (p / "cmax.toml").exists())


@cache
def _cards() -> tuple[Scorecard, ...]:
    return tuple(assess(SAMPLES / name) for name in SAMPLE_NAMES)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(SAMPLE_NAMES)), ids=SAMPLE_NAMES)
def test_a_samples_scorecard_and_brief_stay_on_the_page(index: int) -> None:
    cards = _cards()
    card = cards[index]
    scorecard = layout(reports.scorecard_html(card, "x", "pdf", reports.scorecard_charts(card)))
    assert overflows(scorecard) == []
    brief = layout(reports.brief_html(card, peers=cards))
    assert overflows(brief) == []
    assert len(brief.pages) <= reports.BRIEF_MAX_PAGES
