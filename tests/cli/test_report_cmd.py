"""``cmax report``: files written and printed, exit codes, one-line user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmax.cli import main, report_cmd
from cmax.resources import data_dir
from cmax.scorecard import Scorecard
from tests.score.scorecard_factory import make_minimal_scorecard

# light cards: the full reports are tested in test_render_*.py; here only the command matters
CARDS = {"a": make_minimal_scorecard(provider="Other Ltd"), "b": make_minimal_scorecard()}


@pytest.fixture
def fake_assess(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Bundles named a/ and b/ in tmp_path rate as the factory cards (no pipeline)."""
    calls: list[str] = []

    def assess(bundle: str, rubric: str | None, commercial: object = None) -> Scorecard:
        calls.append(bundle)
        return CARDS[Path(bundle).name]

    monkeypatch.setattr(report_cmd, "_assess", assess)
    for name in CARDS:
        (tmp_path / name).mkdir()
    return calls


def test_writes_reports_and_prints_paths(
    fake_assess: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(out),
                 "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0
    files = json.loads(captured.out)["files"]
    assert len(files) == 17  # 2 x (3 scorecard, 2 brief, findings and runs CSV) + leaderboard x 3
    assert str(out / "leaderboard.pdf") in files
    assert all(Path(f).is_file() for f in files)
    assert "[1/2] rating" in captured.err and "[2/2] rating" in captured.err
    assert fake_assess == [str(tmp_path / "a"), str(tmp_path / "b")]


def test_text_output_is_one_path_per_line(
    fake_assess: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "b"), "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [Path(line).name for line in lines] == [
        "bare-metal-ltd-bm-1.brief.html", "bare-metal-ltd-bm-1.brief.pdf",
        "bare-metal-ltd-bm-1.findings.csv", "bare-metal-ltd-bm-1.runs.csv",
        "bare-metal-ltd-bm-1.scorecard.html",
        "bare-metal-ltd-bm-1.scorecard.json", "bare-metal-ltd-bm-1.scorecard.pdf",
    ]


def test_missing_bundle_fails_before_any_rating(
    fake_assess: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["report", str(tmp_path / "a"), str(tmp_path / "nope"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert fake_assess == []  # the typo is caught before the first bundle is rated
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "nope: bundle not found" in err
    assert not out.exists()


@pytest.mark.parametrize("case", ["rubric", "outfile"])
def test_bad_options_are_one_line_errors(
    case: str, fake_assess: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = ["report", str(tmp_path / "a"), "-o", str(out)]
    if case == "rubric":
        args += ["--rubric", str(tmp_path / "missing.toml")]
        expected = "rubric file not found"
    else:
        out.write_text("not a folder")
        expected = "not a directory"
    assert main(args) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1
    assert fake_assess == []


def test_bundles_are_required(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", "-o", str(tmp_path)]) == 2
    assert "Missing argument" in capsys.readouterr().err


def test_a_real_sample_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = sorted(p for p in data_dir("samples").iterdir() if (p / "cmax.toml").is_file())
    assert samples, "the sample bundles are part of the repository"
    code = main(["report", str(samples[0]), "-o", str(tmp_path), "--format", "json"])
    assert code == 0, capsys.readouterr().err
    files = [Path(f) for f in json.loads(capsys.readouterr().out)["files"]]
    assert sorted(f.suffix for f in files) == [".csv", ".csv", ".html", ".html", ".json", ".pdf",
                                               ".pdf"]
    card = Scorecard.model_validate_json(
        next(f for f in files if f.suffix == ".json").read_text())
    assert card.provider in next(f for f in files if f.name.endswith("scorecard.html")).read_text()
