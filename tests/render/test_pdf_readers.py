"""Reports for every reader: tagged PDF (PDF/A-3a, PDF/UA-1 named), Letter or A4 paper, and
PDFs poppler reads without a complaint. One render of two scorecards on Letter is shared."""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from pypdf.generic import DictionaryObject, PdfObject

from cmax.errors import CmaxError
from cmax.render import pdf, render_reports
from cmax.resources import data_dir
from tests.score.scorecard_factory import make_minimal_scorecard, make_scorecard

REF = "example-cloud-example-h100-a"
LETTER, LETTER_WIDE = (612, 792), (792, 612)


@pytest.fixture(scope="module")
def letter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("letter")
    render_reports([make_scorecard(), make_minimal_scorecard()], out, paper="letter")
    return out


def _size(path: Path, page: int = 0) -> tuple[int, int]:
    box = PdfReader(path).pages[page].mediabox
    return round(float(box.width)), round(float(box.height))


def test_letter_paper_for_every_report(letter: Path) -> None:
    for name in (f"{REF}.scorecard.pdf", f"{REF}.brief.pdf"):
        reader = PdfReader(letter / name)
        assert {_size(letter / name, i) for i in range(len(reader.pages))} == {LETTER}, name
    assert _size(letter / "leaderboard.pdf") == LETTER_WIDE  # landscape stays landscape
    # the HTML prints on the same paper from a browser
    assert "@page wide { size: letter landscape; }" in (letter / "leaderboard.html").read_text()
    assert ("@page { size: letter; margin-top: 12mm; margin-bottom: 11mm; }"
            in (letter / f"{REF}.brief.html").read_text())


def test_on_paper_restates_each_page_size_keeping_orientation() -> None:
    html = ("<html><head><style>@page {\n  size: A4;\n  margin: 1mm; }\n"
            "@page wide { size: A4 landscape; margin: 2mm; }</style></head><body></body></html>")
    assert pdf.on_paper(html, "a4") == html  # the stylesheets are written for A4
    lettered = pdf.on_paper(html, "letter")
    assert lettered.count("</style>") == 1
    # letter is 18 mm shorter: its portrait pages give 5 mm of margin back at top and bottom
    assert lettered.endswith("@page { size: letter; margin-top: 12mm; margin-bottom: 11mm; }\n"
                             "@page wide { size: letter landscape; }\n"
                             "</style></head><body></body></html>")
    trend_css = (data_dir("templates") / "trend.css").read_text()
    trend = pdf.on_paper(f"<head><style>{trend_css}</style></head>", "letter")
    assert "@page { size: letter landscape; }" in trend
    with pytest.raises(CmaxError, match="unknown paper size 'legal'"):
        pdf.on_paper(html, "legal")


def _dictionary(value: PdfObject) -> DictionaryObject:
    """``value`` (followed if it is a reference), which must be a PDF dictionary."""
    target = value.get_object()
    assert isinstance(target, DictionaryObject)
    return target


def _structure(reader: PdfReader) -> Iterator[Any]:
    """Every structure element of a tagged PDF, depth first."""
    stack = [_dictionary(reader.root_object["/StructTreeRoot"])]
    while stack:
        element = stack.pop()
        yield element
        kids = element.get("/K")
        kids = kids if isinstance(kids, list) else [kids]
        for kid in kids:
            kid = kid.get_object() if hasattr(kid, "get_object") else kid
            if isinstance(kid, DictionaryObject) and "/S" in kid:
                stack.append(kid)


@pytest.mark.parametrize("name", [f"{REF}.scorecard.pdf", f"{REF}.brief.pdf", "leaderboard.pdf"])
def test_pdfs_are_tagged_for_assistive_tools(letter: Path, name: str) -> None:
    reader = PdfReader(letter / name)
    root = reader.root_object
    assert bool(_dictionary(root["/MarkInfo"])["/Marked"]) and str(root["/Lang"]) == "en"
    assert bool(_dictionary(root["/ViewerPreferences"])["/DisplayDocTitle"])
    xmp = reader.xmp_metadata
    assert xmp is not None and (xmp.pdfaid_part, xmp.pdfaid_conformance) == ("3", "A")
    assert "<pdfuaid:part>1</pdfuaid:part>" in xmp.rdf_root.toxml()
    kinds = [str(e.get("/S")) for e in _structure(reader)]
    assert {"/Document", "/H1", "/Table", "/TH", "/TD"} <= set(kinds)
    figures = [e for e in _structure(reader) if e.get("/S") == "/Figure"]
    assert all(str(f.get("/Alt", "")).strip() for f in figures)  # every chart has its words
    if name != f"{REF}.brief.pdf":
        assert figures  # the scorecard's and leaderboard's charts are figures


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed")
def test_poppler_reads_every_pdf_without_a_warning(letter: Path) -> None:
    for path in sorted(letter.glob("*.pdf")):
        for command in (["pdfinfo", "-meta", str(path)],
                        ["pdftotext", "-layout", str(path), "-"]):
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            assert done.stderr == "", (path.name, command[0], done.stderr)


def test_the_lean_ua_stylesheet_parses_without_warnings(caplog: pytest.LogCaptureFixture) -> None:
    """WeasyPrint's counter styles are already defined when cmax parses its lean copy of the
    user-agent stylesheet; parsed into the same set, 'disc' and 'decimal' were refused with an
    'Invalid counter style name' warning (seen whenever a process laid out its first report)."""
    pdf._html_class.cache_clear()
    with caplog.at_level(logging.WARNING, logger="weasyprint"):
        html_class = pdf._html_class()
    assert html_class is not pdf.weasyprint_module().HTML  # the lean sheet is in use
    assert [r.getMessage() for r in caplog.records] == []
