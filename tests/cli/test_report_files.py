"""``--junit-xml FILE`` and ``--ctrf FILE`` (cmax/cli/common.py): the checks written to files
beside whatever ``--format`` prints, the same checks ``--format junit|ctrf`` prints."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cmax.cli import exits, main
from tests.paths import SAMPLES

BOREALIS = str(SAMPLES / "borealis-cloud")


@pytest.mark.parametrize("command", ["score", "validate"])
def test_text_on_stdout_and_both_reports_in_files(command: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    junit, ctrf = tmp_path / "cmax.xml", tmp_path / "cmax-ctrf.json"
    code = main([command, BOREALIS, "--junit-xml", str(junit), "--ctrf", str(ctrf)])
    text = capsys.readouterr().out
    assert code in (exits.OK, exits.FINDINGS)
    assert not text.lstrip().startswith(("<?xml", "{"))  # stdout keeps the text report
    assert main([command, BOREALIS, "--format", "junit"]) == code
    assert junit.read_text(encoding="utf-8") == capsys.readouterr().out
    assert ET.fromstring(junit.read_text(encoding="utf-8")).get("name") == f"cmax {command}"
    tests = json.loads(ctrf.read_text(encoding="utf-8"))["results"]["tests"]
    assert [t["name"] for t in tests] == [
        c.get("name") for c in ET.fromstring(junit.read_text(encoding="utf-8")).iter("testcase")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmax-ctrf.json", "cmax.xml"]


def test_json_on_stdout_beside_a_junit_file(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "score.xml"
    main(["score", BOREALIS, "--format", "json", "--junit-xml", str(junit)])
    assert json.loads(capsys.readouterr().out)["tier"]
    assert ET.fromstring(junit.read_text(encoding="utf-8")).tag == "testsuites"


def test_a_report_file_that_cannot_be_written_is_one_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", BOREALIS, "--junit-xml", str(tmp_path / "no" / "such" / "x.xml")])
    err = capsys.readouterr().err
    assert code == exits.BAD_INPUT
    assert "cannot write" in err and "Traceback" not in err and len(err.strip().splitlines()) <= 3
