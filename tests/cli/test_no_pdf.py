"""``--no-pdf`` on report and demo: HTML and JSON only, and WeasyPrint never imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.paths import SAMPLES

ROOT = Path(__file__).parents[2]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(f"""
        import sys
        from cmax.cli import main
        code = main({args!r})
        print("weasyprint imported:", "weasyprint" in sys.modules)
        sys.exit(code)
    """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, cwd=ROOT)


def test_report_no_pdf_writes_html_and_json_only(tmp_path: Path) -> None:
    out = tmp_path / "r"
    proc = _run(["report", str(SAMPLES / "aurora-compute"), str(SAMPLES / "cinder-gpu"),
                 "-o", str(out), "--no-pdf"])
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert not [n for n in names if n.endswith(".pdf")]
    assert "leaderboard.html" in names
    assert len([n for n in names if n.endswith(".brief.html")]) == 2
    assert len([n for n in names if n.endswith(".scorecard.json")]) == 2
    # the CSV tables a PDF attaches are written beside the HTML too, for a spreadsheet
    assert "leaderboard.csv" in names
    assert len([n for n in names if n.endswith(".findings.csv")]) == 2
    assert len([n for n in names if n.endswith(".runs.csv")]) == 2
    assert (out / "leaderboard.csv").read_text().startswith("rank,provider,cluster,tier,")
    assert "weasyprint imported: False" in proc.stdout


def test_demo_no_pdf(tmp_path: Path) -> None:
    out = tmp_path / "d"
    proc = _run(["demo", "-o", str(out), "--no-pdf"])
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names and not [n for n in names if n.endswith(".pdf")]
    assert len([n for n in names if n.endswith(".scorecard.html")]) == 5
    # the cross-generation ranking: per training token, never per GPU-hour across types
    assert "Across GPU generations: $ per million training tokens" in proc.stdout
    assert "2. Zenith Racks       gb200     $2.299/M tokens" in proc.stdout
    assert "Zenith Racks must train 2.13x as fast per GPU as this offer" in proc.stdout
    assert "weasyprint imported: False" in proc.stdout


def test_report_paper_letter_reaches_the_html_print_style(tmp_path: Path) -> None:
    out = tmp_path / "r"
    proc = _run(["report", str(SAMPLES / "aurora-compute"), "-o", str(out), "--no-pdf",
                 "--paper", "letter"])
    assert proc.returncode == 0, proc.stderr
    for name in ("aurora-compute-aurora-h100-east.brief.html",
                 "aurora-compute-aurora-h100-east.scorecard.html"):
        assert "@page { size: letter;" in (out / name).read_text(), name
    assert _run(["report", str(SAMPLES / "aurora-compute"), "-o", str(out), "--no-pdf",
                 "--paper", "legal"]).returncode == 2
