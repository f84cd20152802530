"""`cmax audit --fail-on` and `--format junit|ctrf` (the scorer replaced by the fake one)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cmax.cli import exits, main
from cmax.history import audit as audit_mod
from tests.history.history_fakes import drifting_runs, fake_assess


@pytest.fixture(autouse=True)
def fake_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit_mod, "_default_assess", fake_assess)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return drifting_runs(tmp_path / "runs")


def test_fail_on_none_reports_drift_and_exits_0(root: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(root), "--format", "json", "--fail-on", "none"]) == exits.OK
    assert json.loads(capsys.readouterr().out)["items"]


def test_junit_one_case_per_drift_item_and_cluster(root: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(root), "--format", "junit"]) == exits.FINDINGS
    document = capsys.readouterr().out
    cases = {c.get("name"): c for c in ET.fromstring(document).iter("testcase")}
    assert cases["cmax.audit.east.regression_vs_previous.llama3.1-70b-fp8-512-GPUs"].find(
        "failure") is not None
    assert cases["cmax.audit.west.drift"].find("failure") is None
    exemplar = cases["cmax.audit.east.exemplar"]
    assert exemplar.find("failure") is not None
    props = {p.get("name"): p.get("value")
             for p in ET.fromstring(document).iter("property")}
    assert props["cmax.audit.east.exemplar:requirement"] == "BM01"
    assert cases["cmax.fail-on.drift"].find("failure") is not None


def test_ctrf_unusable_run_is_a_failed_error(root: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (root / "east" / "20251201-000000").mkdir()  # a run folder with no cmax.toml
    assert main(["audit", str(root), "--format", "ctrf"]) == exits.BAD_INPUT
    tests = json.loads(capsys.readouterr().out)["results"]["tests"]
    unusable = [t for t in tests if t["suite"] == ["cmax", "unusable"]]
    assert unusable and all(t["status"] == "failed" and t["rawStatus"] == "error"
                            for t in unusable)


def test_a_newest_run_whose_ratio_does_not_count_fails_drift_everywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A provider whose newest evidence is withheld does not look as if nothing changed: one
    not_counted item, a failed JUnit/CTRF drift case, and --fail-on drift exits 1."""
    from tests.history.history_fakes import fp8_70b, write_run

    root = tmp_path / "runs"
    write_run(root, "east", "20251001-000000", workloads=fp8_70b(1.0))
    write_run(root, "east", "20251101-000000", workloads=fp8_70b(1.0), withheld={"0": {}})
    history = ["--history", str(tmp_path / "h")]
    assert main(["audit", str(root), *history, "--format", "junit"]) == exits.FINDINGS
    cases = {c.get("name"): c for c in ET.fromstring(capsys.readouterr().out).iter("testcase")}
    case = cases["cmax.audit.east.not_counted.llama3.1-70b-fp8-512-GPUs"]
    failure = case.find("failure")
    assert failure is not None
    assert ("run 20251101-000000 is withheld (identity.precision, "
            "sanity.too-good-to-be-true)") in (failure.get("message") or "")
    assert "cmax.audit.east.drift" not in cases  # no "no drift" beside it
    assert cases["cmax.fail-on.drift"].find("failure") is not None
    assert main(["audit", str(root), *history, "--format", "ctrf"]) == exits.FINDINGS
    tests = json.loads(capsys.readouterr().out)["results"]["tests"]
    assert [t["status"] for t in tests if "not_counted" in t["name"]] == ["failed"]
    assert main(["audit", str(root), *history]) == exits.FINDINGS
    out = capsys.readouterr().out
    assert "not_counted" in out and "the last run whose ratio counts is 20251001-000000" in out
    # the table's after column reads the verdict whole, never cut inside its reasons
    [row] = [line for line in out.splitlines() if line.startswith("east") and "not_counted" in line]
    assert row.split()[-2:] == ["withheld", "-"] and "withheld (" not in row
    assert main(["audit", str(root), *history, "--fail-on", "none"]) == exits.OK
