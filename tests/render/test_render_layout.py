"""Print layout: nothing runs off the page or out of its table cell, the brief fits two pages.

The check walks WeasyPrint's laid-out boxes: every box must end inside the page's content
area, and every piece of text inside a table cell must end inside that cell. That is what a
reader would see as a clipped number or a path running into the next column.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from pypdf import PdfReader

from cmax.render import formatting, pdf, reports, views
from cmax.render.pdf import layout
from cmax.resources import data_dir
from cmax.scorecard import Scorecard
from tests.paths import REPO
from tests.score.scorecard_factory import (
    make_hostile_scorecard,
    make_minimal_scorecard,
    make_scorecard,
    make_strong_scorecard,
    make_weak_scorecard,
)

TOLERANCE_PX = 0.5


def _walk(box: Any) -> Iterator[Any]:
    for child in getattr(box, "children", None) or []:
        yield child
        yield from _walk(child)


def _right(box: Any) -> float:
    return float(box.position_x + box.margin_width())


def overflows(document: Any) -> list[str]:
    problems = []
    for number, page in enumerate(document.pages, start=1):
        html = page._page_box.children[0]
        edge = _right(html)
        for box in _walk(html):
            if getattr(box, "width", None) is None:
                continue
            if _right(box) > edge + TOLERANCE_PX:
                what = getattr(box, "text", type(box).__name__)
                problems.append(f"page {number}: {what[:50]!r} runs off the page")
            if type(box).__name__ == "TableCellBox":
                cell_edge = float(box.position_x + box.border_width())
                for inner in _walk(box):
                    text = getattr(inner, "text", None)
                    if text and getattr(inner, "width", None) is not None \
                            and _right(inner) > cell_edge + TOLERANCE_PX:
                        problems.append(f"page {number}: {text[:50]!r} runs out of its cell")
    return problems


def _scorecard_document(card: Scorecard) -> Any:
    html = reports.scorecard_html(card, "x", "pdf", reports.scorecard_charts(card))
    return layout(html)


def test_hostile_scorecard_with_long_paths_stays_on_the_page() -> None:
    document = _scorecard_document(make_hostile_scorecard())
    assert overflows(document) == []
    assert len(document.pages) <= 10


def test_briefs_fit_and_stay_in_their_cells() -> None:
    for card in (make_weak_scorecard(), make_minimal_scorecard()):
        document = layout(reports.brief_html(card))
        assert overflows(document) == []
        assert len(document.pages) <= reports.BRIEF_MAX_PAGES


def test_long_demands_fall_back_to_compact_until_the_brief_fits(tmp_path: Any) -> None:
    card = make_scorecard()
    assert card.audit is not None
    checks = [c.model_copy(update={"status": "FAIL", "category": f"category {i} " * 6})
              for i, c in enumerate(card.audit.checks)]
    audit = card.audit.model_copy(update={"checks": checks, "counts": {"FAIL": len(checks)}})
    gates = [g.model_copy(update={"passed": False, "name": f"gate {i}: " + "x " * 80})
             for i, g in enumerate(card.gates * 4)]
    card = card.model_copy(update={"audit": audit, "gates": gates})
    paths = reports.render_brief(card, "long", tmp_path, [card, make_weak_scorecard()])
    assert len(PdfReader(paths[1]).pages) <= 2
    html = paths[0].read_text()
    assert "ask for $" in html.lower() and "What the provider must fix or credit" in html


@pytest.mark.parametrize("count", [2, 5])
def test_leaderboard_fits_landscape(count: int) -> None:
    cards = [make_strong_scorecard(), make_scorecard(), make_weak_scorecard(),
             make_minimal_scorecard(), make_hostile_scorecard()][:count]
    rows = views.leaderboard_rows([(f"s{i}", c) for i, c in enumerate(cards)])
    html = reports.leaderboard_html(rows, "pdf", {"score": None, "price": None})
    document = layout(html)
    assert overflows(document) == []
    assert len(document.pages) == 1


# ---------------------------------------------------------------- the fast layout path


def test_the_lean_ua_stylesheet_gives_the_same_bytes_as_weasyprints_own(tmp_path: Any) -> None:
    """cmax lays reports out with WeasyPrint's UA stylesheet minus the footnote and note
    pseudo-elements (a speed-up); a report must come out byte for byte as with the full one."""
    import weasyprint

    lean = pdf._html_class()
    assert lean is not weasyprint.HTML, "this WeasyPrint's UA stylesheet was not slimmed"
    card = make_weak_scorecard()  # numbered lists (markers), tables, charts, chips
    html = reports.scorecard_html(card, "x", "pdf", reports.scorecard_charts(card))
    stock = weasyprint.HTML(string=html.replace("<wbr>", "\u200b"),
                            base_url=data_dir("templates").as_uri() + "/",
                            url_fetcher=pdf._safe_fetcher()).render()
    pdf.write_document(stock, tmp_path / "stock.pdf")
    pdf.write_document(layout(html), tmp_path / "lean.pdf")
    assert (tmp_path / "lean.pdf").read_bytes() == (tmp_path / "stock.pdf").read_bytes()


def test_lean_ua_css_drops_only_the_unused_pseudo_elements() -> None:
    from weasyprint import html as wp_html

    lean = pdf.lean_ua_css(wp_html.UA)
    removed = set(wp_html.UA.splitlines()) - set(lean.splitlines())
    assert {line.split(" {")[0] for line in removed} == {
        "::footnote-call", "::footnote-marker", "::note-call", "::note-marker",
        "::note-callback", "::marker"}
    assert "li::marker {" in lean and "wbr::before" in lean


def _line_texts(document: Any) -> list[str]:
    lines = []
    for box in _walk(document.pages[0]._page_box):
        if type(box).__name__ == "LineBox":
            lines.append("".join(getattr(b, "text", "") for b in _walk(box)))
    return lines


def test_breakable_text_wraps_at_its_joints_in_the_pdf() -> None:
    path = "training/llama3.1-405b_bf16_512.log/cluster:worker=7,rank=12/" * 3
    html = (f'<p style="width: 28mm; font-size: 9pt; overflow-wrap: anywhere">'
            f"{formatting.breakable(path)}</p>")
    lines = [t for t in _line_texts(layout(html)) if t]
    assert len(lines) > 3
    assert "".join(lines).replace("\u200b", "") == path
    for text in lines[:-1]:
        assert text.rstrip("\u200b")[-1] in "./_:=,", lines


def test_paused_gc_restores_the_collector_even_on_error() -> None:
    import gc

    assert gc.isenabled()
    with pytest.raises(RuntimeError), pdf.paused_gc():
        assert not gc.isenabled()
        raise RuntimeError
    assert gc.isenabled()
    gc.disable()
    try:
        with pdf.paused_gc():
            pass
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()


LISTING = (b"3 libs found in cache `/etc/ld.so.cache'\n"
           b"\tlibpango-1.0.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libpango-1.0.so.0\n"
           b"\tlibpangoft2-1.0.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libpangoft2-1.0.so.0\n"
           b"\tlibfoo.so.2 (libc6) => /lib32/libfoo.so.2\n")


def test_cached_find_library_answers_like_the_loader_cache_step(monkeypatch: Any) -> None:
    """WeasyPrint's import asks find_library for ~20 names; cmax answers from one reading of
    the loader's cache, with CPython's pattern (a name, its ABI) and no gcc/ld probes."""
    import os

    machine = type("U", (), {"machine": "x86_64"})()
    monkeypatch.setattr(os, "uname", lambda: machine)
    find = pdf.cached_find_library(LISTING)
    assert find("pango-1.0") == "libpango-1.0.so.0"  # not libpangoft2-1.0
    assert find("pangoft2-1.0") == "libpangoft2-1.0.so.0"
    assert find("libpango-1.0-0") is None  # WeasyPrint's Windows-style names: on to the next
    assert find("foo") is None  # a 32-bit library on a 64-bit interpreter
    assert find("harfbuzz-vector") is None
    assert pdf.cached_find_library(b"")("pango-1.0") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ldconfig is Linux's")
def test_cached_find_library_agrees_with_ctypes_on_this_machine() -> None:
    import ctypes.util

    find = pdf.cached_find_library(pdf._loader_cache())
    for name in ("gobject-2.0", "pango-1.0", "harfbuzz", "harfbuzz-subset", "fontconfig",
                 "pangoft2-1.0", "harfbuzz-vector", "libgobject-2.0-0", "c", "m"):
        assert find(name) == ctypes.util._findSoname_ldconfig(name), name  # type: ignore[attr-defined]


def test_weasyprint_is_imported_with_the_real_find_library_restored() -> None:
    """The look-up is swapped only while WeasyPrint imports; the same libraries load."""
    code = ("import ctypes.util; real = ctypes.util.find_library; "
            "from cmax.render.pdf import weasyprint_module; wp = weasyprint_module(); "
            "from weasyprint.text import ffi; "
            "print(ctypes.util.find_library is real, ffi.harfbuzz_subset is not None, "
            "wp.__name__)")
    fast = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=REPO).stdout.split()
    stock = subprocess.run([sys.executable, "-c", "from weasyprint.text import ffi; "
                            "print(True, ffi.harfbuzz_subset is not None, 'weasyprint')"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert fast == stock
