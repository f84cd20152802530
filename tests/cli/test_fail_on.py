"""``--fail-on`` (cmax/cli/policies.py) sets the exit code; ``--format junit|ctrf``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from cmax.cli import exits, main
from tests.paths import SAMPLES

BOREALIS = str(SAMPLES / "borealis-cloud")  # Bronze, Exemplar not met, no error finding
AURORA = str(SAMPLES / "aurora-compute")  # Gold, Exemplar met, no error finding
CINDER = str(SAMPLES / "cinder-gpu")  # error findings


@pytest.mark.parametrize(("bundle", "policies", "code"), [
    (BOREALIS, [], exits.OK),  # default: error findings only, as before
    (BOREALIS, ["--fail-on", "exemplar"], exits.FINDINGS),
    (AURORA, ["--fail-on", "exemplar"], exits.OK),
    (BOREALIS, ["--fail-on", "tier-below:gold"], exits.FINDINGS),
    (AURORA, ["--fail-on", "tier-below:gold"], exits.OK),
    (AURORA, ["--fail-on", "tier-below:platinum"], exits.FINDINGS),
    (BOREALIS, ["--fail-on", "gate"], exits.FINDINGS),
    (AURORA, ["--fail-on", "gate"], exits.OK),
    (AURORA, ["--fail-on", "warning"], exits.FINDINGS),
    (CINDER, [], exits.FINDINGS),
    (CINDER, ["--fail-on", "none"], exits.OK),
    (AURORA, ["--fail-on", "exemplar,tier-below:Platinum"], exits.FINDINGS),
])
def test_score_fail_on(bundle: str, policies: list[str], code: int,
                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", bundle, "--format", "json", *policies]) == code
    err = capsys.readouterr().err
    assert ("--fail-on" in err) == (code == exits.FINDINGS)


def test_fail_on_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CMAX_FAIL_ON", "tier-below:gold")
    assert main(["score", BOREALIS, "--format", "json"]) == exits.FINDINGS
    assert "tier Bronze is below Gold" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["tier-below:diamond", "exemplar-ish", "drift"])
def test_unknown_policy_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", AURORA, "--fail-on", bad]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and bad in err


def test_validate_fail_on(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", AURORA]) == exits.OK
    assert main(["validate", AURORA, "--fail-on", "warning"]) == exits.FINDINGS
    assert main(["validate", CINDER, "--fail-on", "none"]) == exits.OK
    assert main(["validate", AURORA, "--fail-on", "exemplar"]) == exits.BAD_INPUT


def test_score_junit_on_stdout_with_the_policy_case(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", BOREALIS, "--format", "junit", "--fail-on", "exemplar"])
    assert code == exits.FINDINGS
    root = ET.fromstring(capsys.readouterr().out)
    names = [c.get("name") for c in root.iter("testcase")]
    assert "cmax.fail-on.exemplar" in names and "cmax.score.exemplar-suite" in names


def test_validate_ctrf(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", CINDER, "--format", "ctrf"]) == exits.FINDINGS
    doc = json.loads(capsys.readouterr().out)
    assert doc["reportFormat"] == "CTRF"
    assert doc["results"]["summary"]["failed"] >= 8
