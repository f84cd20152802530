"""Hostile bundle text: escaped in HTML, shown as text in PDFs, never fetched.

Two layers are tested separately: the templates escape everything (so no bundle text becomes
markup), and the PDF fetcher refuses every URL except data: and cmax's own template files (so
even markup that slipped through could not read a local file or reach the network).
"""

from __future__ import annotations

import base64
import logging
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pypdf import PdfReader

from cmax.render import reports, views, write_pdf
from cmax.render.pdf import is_allowed_url
from cmax.resources import data_dir
from tests.score.scorecard_factory import (
    HOSTILE_CLUSTER,
    HOSTILE_PROVIDER,
    make_hostile_scorecard,
    make_scorecard,
)

# a 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _hostile_html() -> dict[str, str]:
    card = make_hostile_scorecard()
    rows = views.leaderboard_rows([("a", card), ("b", make_scorecard())])
    return {
        "scorecard": reports.scorecard_html(card, "a", "html", reports.ScorecardCharts()),
        "brief": reports.brief_html(card),
        "leaderboard": reports.leaderboard_html(rows, "html", {"score": None, "price": None}),
    }


def test_hostile_text_is_escaped_in_every_report() -> None:
    for name, html in _hostile_html().items():
        assert HOSTILE_PROVIDER not in html, name
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, name
        assert HOSTILE_CLUSTER not in html, name
        assert "<h1>injected</h1>" not in html and "<svg onload" not in html, name
        tags = _tags(html)
        names = {t for t, _ in tags}
        assert not names & {"script", "iframe", "object", "embed", "svg", "link", "base"}, name
        assert "style" in names  # only the report's own stylesheet
        for tag, attrs in tags:
            assert not any(k.startswith("on") for k in attrs), (name, tag, attrs)
            if tag == "img":
                assert (attrs.get("src") or "").startswith("data:image/svg+xml;base64,")
            if tag == "a":
                href = attrs.get("href") or ""
                assert href.startswith("#") or href.endswith((".scorecard.html", ".brief.html"))


def test_hostile_text_reads_literally_in_the_pdf(tmp_path: Path) -> None:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    paths = reports.render_brief(make_hostile_scorecard(), "hostile", tmp_path)
    reader = PdfReader(paths[1])
    assert list(reader.attachments) == ["hostile.price.json"]
    text = subprocess.run(["pdftotext", str(paths[1]), "-"], check=True, capture_output=True,
                          text=True).stdout
    assert HOSTILE_PROVIDER in text
    assert '<img src="file:///etc/passwd">' in " ".join(text.split())  # markup read literally


@pytest.mark.parametrize(("url", "allowed"), [
    ("data:image/png;base64,AAAA", True),
    ("DATA:text/plain,x", True),
    ("file:///etc/passwd", False),
    ("file://localhost/etc/passwd", False),
    ("file://evil.example/share/x.png", False),
    ("http://127.0.0.1:9/x.png", False),
    ("https://example.invalid/x.css", False),
    ("ftp://example.invalid/x", False),
    ("javascript:alert(1)", False),
    ("", False),
])
def test_fetcher_policy(url: str, allowed: bool) -> None:
    assert is_allowed_url(url) is allowed


def test_fetcher_allows_only_files_inside_the_templates(tmp_path: Path) -> None:
    root = tmp_path / "templates"
    (root / "img").mkdir(parents=True)
    inside = (root / "img" / "logo.png").as_uri()
    assert is_allowed_url(inside, root)
    assert is_allowed_url(inside.replace("file://", "file://localhost"), root)
    assert not is_allowed_url((root / "img" / ".." / ".." / "secret").as_uri(), root)
    assert not is_allowed_url(f"{root.as_uri()}/%2e%2e/secret", root)
    assert is_allowed_url((data_dir("templates") / "report.css").as_uri())


def _image_count(pdf: Path) -> int:
    count = 0
    for page in PdfReader(pdf).pages:
        resources = page.get("/Resources") or {}
        xobjects = resources.get("/XObject") or {}
        count += sum(1 for x in xobjects.values() if x.get_object().get("/Subtype") == "/Image")
    return count


def test_pdf_never_fetches_local_files_or_urls(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG)
    data_png = "data:image/png;base64," + base64.b64encode(PNG).decode()
    hostile = (
        f'<p>x</p><img src="{secret.as_uri()}"><img src="http://127.0.0.1:9/a.png">'
        f'<link rel="attachment" href="{secret.as_uri()}">'
        f'<a rel="attachment" href="{secret.as_uri()}">a</a>'
        f'<link rel="stylesheet" href="https://example.invalid/x.css">'
        f'<div style="background: url({secret.as_uri()})">y</div>'
    )
    with caplog.at_level(logging.WARNING, logger="weasyprint"):
        write_pdf(f"<html><body>{hostile}</body></html>", tmp_path / "blocked.pdf")
    assert _image_count(tmp_path / "blocked.pdf") == 0
    assert PdfReader(tmp_path / "blocked.pdf").attachments == {}
    assert "blocked URL" in caplog.text
    # the control: the same image as a data: URL is embedded
    write_pdf(f'<html><body><img src="{data_png}"></body></html>', tmp_path / "allowed.pdf")
    assert _image_count(tmp_path / "allowed.pdf") == 1
