"""cmax.reading.safetext: control and bidirectional-control characters from a bundle are shown,
never
obeyed, in every text output, message and report."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.reading.safetext import SafeStream, csv_cell, escape, json_text, one_line
from tests.paths import SAMPLES

HOSTILE = "Evil\x1b]0;pwned\x07\x1b[2J\rTier: Platinum \x9b31m evil\u202egnp.exe\u2066"
FORGED = "Evil\nTier: Platinum\u2028\tx"


def test_escape_makes_every_control_visible_and_keeps_plain_text() -> None:
    assert escape("plain text: 1.5 ± 0.2 µs\n\tnext") == "plain text: 1.5 ± 0.2 µs\n\tnext"
    shown = escape(HOSTILE)
    assert shown == ("Evil\\u001b]0;pwned\\u0007\\u001b[2J\\u000dTier: Platinum \\u009b31m "
                     "evil\\u202egnp.exe\\u2066")
    assert json.loads(f'"{shown}"') == HOSTILE  # inside JSON the escape means the same
    stream = io.StringIO()
    SafeStream(stream).write(HOSTILE)
    assert stream.getvalue() == shown


def _hostile_bundle(tmp_path: Path) -> Path:
    dest = tmp_path / "b"
    shutil.copytree(SAMPLES / "aurora-compute", dest)
    manifest = dest / "cmax.toml"
    toml_name = json.dumps(HOSTILE)  # a TOML basic string is JSON's syntax for these
    text = re.sub(r'^name = "Aurora Compute"', lambda _: f"name = {toml_name}",
                  manifest.read_text(), count=1, flags=re.M)
    manifest.write_text(text.replace('region = "us-east-1"', 'region = "us\\u001b[31m-east"'))
    return dest


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0
            or c in "\u202e\u2066"]


def test_text_output_and_errors_show_controls_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _hostile_bundle(tmp_path)
    assert main(["score", str(bundle)]) == 0
    out = capsys.readouterr().out
    assert _raw_controls(out) == []
    assert "Evil\\u001b]0;pwned\\u0007" in out and "evil\\u202egnp.exe" in out
    assert "(us\\u001b[31m-east)" in out  # shown, like every other control
    assert main(["score", str(bundle), "--format", "json"]) == 0
    card = json.loads(capsys.readouterr().out)  # still JSON, and the same name
    assert card["provider"] == HOSTILE
    (bundle / "incidents.csv").unlink()  # an error that quotes the manifest
    text = (bundle / "cmax.toml").read_text().replace('incidents = "incidents.csv"',
                                                      'incidents = "inc\\r\\u0007.csv"')
    (bundle / "cmax.toml").write_text(text)
    assert main(["score", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert _raw_controls(err) == [] and err.count("\n") == 1


def test_reports_neutralise_bidirectional_overrides(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _hostile_bundle(tmp_path)
    out = tmp_path / "out"
    assert main(["report", str(bundle), "-o", str(out), "--no-pdf"]) == 0
    capsys.readouterr()
    pages = list(out.glob("*.html"))
    assert pages
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert _raw_controls(html) == [], page.name
    assert any("evil\\u202egnp.exe" in page.read_text(encoding="utf-8") for page in pages)


@pytest.mark.slow
def test_pdfs_show_the_override_escaped_not_obeyed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The review found "evil\\u202egnp.exe" reading "evilexe.png" in the PDFs: their text
    now holds the escape and no bidirectional or other control character."""
    pypdf = pytest.importorskip("pypdf")
    out = tmp_path / "out"
    assert main(["report", str(_hostile_bundle(tmp_path)), "-o", str(out)]) == 0
    capsys.readouterr()
    pdfs = sorted(out.glob("*.pdf"))
    assert pdfs
    for pdf in pdfs:
        text = "".join(page.extract_text() or "" for page in pypdf.PdfReader(pdf).pages)
        assert _raw_controls(text) == [], pdf.name
    assert any("u202egnp.exe" in "".join(p.extract_text() or "" for p in
                                         pypdf.PdfReader(pdf).pages) for pdf in pdfs)


def test_one_line_fields_also_escape_line_breaks() -> None:
    assert one_line("plain · µs") == "plain · µs"
    assert one_line(FORGED) == "Evil\\u000aTier: Platinum\\u2028\\u0009x"
    assert one_line(HOSTILE) == escape(HOSTILE)  # the same table, plus the line breaks
    assert json.loads(f'"{one_line(FORGED)}"') == FORGED


def test_csv_cells_are_one_line_and_never_formulas() -> None:
    assert csv_cell("=HYPERLINK(x)") == "'=HYPERLINK(x)"
    assert csv_cell(None) == "" and csv_cell(3) == "3"
    assert csv_cell("a\u202eb\nc") == "a\\u202eb\\u000ac"


def test_json_text_is_the_same_document_without_raw_controls() -> None:
    text = json.dumps({"provider": HOSTILE + FORGED, "n": [1, "\u0085"]}, ensure_ascii=False)
    assert _raw_controls(text) != []  # json.dumps leaves C1 and bidirectional controls raw
    assert _raw_controls(json_text(text)) == []
    assert json.loads(json_text(text)) == json.loads(text)


def test_a_line_break_in_a_name_forges_no_line_on_the_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _hostile_bundle(tmp_path)
    manifest = bundle / "cmax.toml"
    manifest.write_text(re.sub(r'^name = ".*"$', lambda _: f"name = {json.dumps(FORGED)}",
                               manifest.read_text(), count=1, flags=re.M))
    for command in ("score", "price"):
        assert main([command, str(bundle)]) == 0
        out = capsys.readouterr().out
        assert not any(line.startswith("Tier: Platinum") for line in out.splitlines())
        assert out.splitlines()[0].startswith("Evil\\u000aTier: Platinum\\u2028\\u0009x · ")


def test_a_leaderboard_of_hostile_names_is_written_with_every_writer_neutralised(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39: ESC/BEL in a provider name made the leaderboard's SVG chart ill-formed XML
    (`cmax report` exit 70); right-to-left overrides survived into the CSV and JSON."""
    from cmax.pipeline import assess
    from cmax.render import reports, views

    hostile = _hostile_bundle(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(SAMPLES / "borealis-cloud", other)
    out = tmp_path / "out"
    assert main(["report", str(hostile), str(other), "-o", str(out), "--no-pdf"]) == 0
    capsys.readouterr()
    assert (out / "leaderboard.html").is_file()
    for path in out.iterdir():
        assert _raw_controls(path.read_text(encoding="utf-8")) == [], path.name
    card = next(out.glob("*evil*.scorecard.json"))
    assert json.loads(card.read_text(encoding="utf-8"))["provider"] == HOSTILE
    cards = [assess(hostile), assess(other)]
    rows = views.leaderboard_rows(list(zip(["a", "b"], cards, strict=True)), "tier")
    table = reports.leaderboard_csv(rows)
    assert _raw_controls(table) == [] and "evil\\u202egnp.exe" in table
    for svg in reports.leaderboard_charts(cards, reports.leaderboard_labels(rows)).values():
        assert svg is not None and _raw_controls(svg) == []


def test_a_finding_quoting_a_line_break_prints_one_line_per_field() -> None:
    from cmax.cli.validate_cmd import findings_text
    from cmax.findings import Finding

    text = findings_text([Finding(rule="r.x", severity="error", file="log\n.txt", line=3,
                                  message=f"model {FORGED!s} is unknown", fix="a\rb")])
    lines = text.splitlines()
    assert "  r.x  log\\u000a.txt:3" in lines
    assert "      model Evil\\u000aTier: Platinum\\u2028\\u0009x is unknown" in lines
    assert "      fix: a\\u000db" in lines
    assert not any(line.startswith("Tier: Platinum") for line in lines)
