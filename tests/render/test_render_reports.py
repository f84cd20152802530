"""render_reports end to end: the files, what the first page says, attachments, PDF/A, notes
for missing sections. One render of two scorecards is shared by the whole module."""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pypdf import PdfReader

from cmax.errors import CmaxError
from cmax.render import render_reports
from cmax.scorecard import Scorecard
from tests.score.scorecard_factory import make_minimal_scorecard, make_scorecard

REF = "example-cloud-example-h100-a"
MIN = "bare-metal-ltd-bm-1"


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def rendered(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, list[Path], list[str]]]:
    out = tmp_path_factory.mktemp("reports")
    handler = _Collect()
    logger = logging.getLogger("weasyprint")
    logger.addHandler(handler)
    try:
        paths = render_reports([make_scorecard(), make_minimal_scorecard()], out)
    finally:
        logger.removeHandler(handler)
    yield out, paths, [r.getMessage() for r in handler.records]


def _text(pdf: Path, first: int | None = None, last: int | None = None) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    args = ["pdftotext", "-layout"]
    if first:
        args += ["-f", str(first)]
    if last:
        args += ["-l", str(last)]
    return subprocess.run([*args, str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout


def test_writes_every_report_sorted(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, paths, _ = rendered
    names = [p.name for p in paths]
    expected = sorted(
        [f"{s}.{k}" for s in (REF, MIN) for k in
         ("scorecard.json", "scorecard.html", "scorecard.pdf", "brief.html", "brief.pdf",
          "findings.csv", "runs.csv")]
        + ["leaderboard.html", "leaderboard.pdf", "leaderboard.csv"]
    )
    assert names == expected
    assert paths == sorted(paths)
    assert sorted(p.name for p in out.iterdir()) == expected  # no temporary files left


def test_weasyprint_logged_no_warnings(rendered: tuple[Path, list[Path], list[str]]) -> None:
    _, _, warnings = rendered
    assert warnings == []


def test_json_is_the_scorecard(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    text = (out / f"{REF}.scorecard.json").read_text()
    assert Scorecard.model_validate_json(text) == make_scorecard()


def test_pdf_carries_scorecard_and_findings(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    reader = PdfReader(out / f"{REF}.scorecard.pdf")
    files = reader.attachments
    assert sorted(files) == [f"{REF}.findings.csv", f"{REF}.runs.csv", f"{REF}.scorecard.json"]
    runs = files[f"{REF}.runs.csv"][0].decode().splitlines()
    assert runs[0].startswith("run_id,log,workload,precision,num_gpus,status,")
    assert len(runs) == 1 + len(make_scorecard().workloads)
    assert json.loads(files[f"{REF}.scorecard.json"][0])["provider"] == "Example Cloud"
    csv_lines = files[f"{REF}.findings.csv"][0].decode().splitlines()
    assert csv_lines[0] == "severity,rule,file,line,run_id,message,fix"
    assert len(csv_lines) == 1 + len(make_scorecard().findings)
    assert csv_lines[1].startswith("error,audit.security_version,")
    brief = PdfReader(out / f"{REF}.brief.pdf").attachments
    assert json.loads(brief[f"{REF}.price.json"][0])["ask_usd_per_gpu_hour"] == 1.99
    assert "leaderboard.csv" in PdfReader(out / "leaderboard.pdf").attachments


def test_pdfs_are_pdf_a_3a_a4_and_titled(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    reader = PdfReader(out / f"{REF}.scorecard.pdf")
    xmp = reader.xmp_metadata  # A4 by default; Letter in test_pdf_readers
    assert xmp is not None and xmp.pdfaid_part == "3" and xmp.pdfaid_conformance == "A"
    assert reader.metadata is not None
    assert reader.metadata.title == "Scorecard: Example Cloud / example-h100-a"
    box = reader.pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (595, 842)  # A4 in points
    lb = PdfReader(out / "leaderboard.pdf").pages[0].mediabox
    assert float(lb.width) > float(lb.height)  # the leaderboard is landscape


def test_first_page_is_the_decision(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    page1 = re.sub(r"\s+", " ", _text(out / f"{REF}.scorecard.pdf", 1, 1))
    for needle in (
        "Example Cloud", "Silver", "weighted score 85.3 / 100",
        # the verdict and the three prices, one name each
        "DECISION", "Ask for $1.99 per GPU-hour, −5.2% against the $2.10 quoted",
        "QUOTED", "PARITY", "ASK", "VALUE", "$2.03", "$2.18",
        # the biggest drivers, each in $ per GPU-hour
        "What moves the price", "Training throughput $0.074", "SLA credit owed",
        "What would change the tier", "container runtime security minimum",
        # Exemplar says it covers performance only
        "Exemplar (performance only)", "not a recommendation",
        "99.2% of reference", "3 fail · 7 warn · 24 pass",
        # terms of art explained where they first appear
        "TERMS USED HERE", "busbw:", "goodput:",
    ):
        assert needle in page1, needle
    # the derivation and the findings are in the appendix, not on page 1
    assert "Fix:" not in page1 and "Parity price = " not in page1
    page2 = re.sub(r"\s+", " ", _text(out / f"{REF}.scorecard.pdf", 2, 2))
    assert "Price and term economics" in page2 and "Effective term cost" in page2


def test_every_page_has_header_and_footer(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    pdf = out / f"{REF}.scorecard.pdf"
    pages = len(PdfReader(pdf).pages)
    assert 4 <= pages <= 8
    for n in range(1, pages + 1):
        text = re.sub(r"\s+", " ", _text(pdf, n, n))
        assert "Example Cloud · example-h100-a" in text
        assert f"page {n} of {pages}" in text
        assert "Reference release 2026.10.0" in text


def test_scorecard_has_every_section(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    text = re.sub(r"\s+", " ", _text(out / f"{REF}.scorecard.pdf"))
    for needle in (
        "Appendix A · How the tier was reached", "Training performance", "97.9–98.6%",
        "94.2–95.3%", "inconclusive", "Step time over each run", "Networking", "364.9 GB/s",
        "Reliability and SLA", "0.425 vs reference 0.474", "Configuration and security audit",
        "nvidiaContainerToolkit", "Price and term economics", "Parity",
        "Appendix B · Price derivation", "Appendix D · Every audit check",
        "Appendix E · All findings", "soc2_type2 = true is self-declared",
        "Appendix F · Evidence and reference",
        "audit/audit.values.json", make_scorecard().evidence_files[0].sha256[:16],
    ):
        assert needle in text, needle


def test_missing_sections_are_noted(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    html = (out / f"{MIN}.scorecard.html").read_text()
    for needle in (
        "Training results not provided", "Networking not provided", "Reliability not provided",
        "SLA not provided", "Audit not provided", "No quote in the bundle",
        "No findings: the validator found no problems", "Evidence file list not provided",
    ):
        assert needle in html, needle
    brief = (out / f"{MIN}.brief.html").read_text()
    assert "No quote in the bundle" in brief and "Provide training runs" in brief


def test_brief_is_the_buyers_document(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    pdf = out / f"{REF}.brief.pdf"
    assert len(PdfReader(pdf).pages) <= 2
    text = re.sub(r"\s+", " ", _text(pdf))
    for needle in (
        # the decision first (a gate holds this Silver card below its Gold score), then the ask
        "Do not sign without the fixes below Once they are fixed, ask for $1.99 per GPU-hour",
        "against $2.10 quoted (−5.2%)", "Why",
        "Training throughput: 96.5% of NVIDIA's reference speed",
        "What the provider must fix or credit", "Credit the SLA breach",
        "Fix the 3 failed configuration and security audit checks",
        "Value against the other clusters rated", "TERMS USED HERE",
    ):
        assert needle in text, needle
    # no formula dump, no arguments for the other side, no self-disowning, no raw check ids
    for banned in ("Parity price = ", "may argue", "not a quote from any rating agency",
                   "nvidiaContainerToolkit", "recommended", "target"):
        assert banned not in text, banned


def test_html_stands_alone(rendered: tuple[Path, list[Path], list[str]]) -> None:
    out, _, _ = rendered
    html = (out / f"{REF}.scorecard.html").read_text()
    assert "Content-Security-Policy" in html
    assert "<script" not in html
    urls = re.findall(r"""(?:src|href)="([^"]+)\"""", html)
    assert urls and all(u.startswith(("data:image/svg+xml;base64,", "#")) for u in urls)
    assert len([u for u in urls if u.startswith("data:")]) == 5  # ratio, 2 steps, nccl, incidents
    leaderboard = (out / "leaderboard.html").read_text()
    assert f'href="{REF}.scorecard.html"' in leaderboard
    assert f"{REF}.scorecard.html" not in (out / "leaderboard.pdf").read_bytes().decode("latin-1")


def test_bad_output_path_is_a_user_error(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(CmaxError, match="not a directory"):
        render_reports([make_minimal_scorecard()], target)
    with pytest.raises(CmaxError, match="no scorecards"):
        render_reports([], tmp_path)
