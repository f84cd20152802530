"""JUnit XML and CTRF output (cmax/export/): stable unique ids, statuses from the evidence,
NVIDIA requirement ids, documents the formats' readers accept."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import cache

import pytest

from cmax.export import Check, finding_checks, scorecard_checks, to_ctrf, to_junit
from cmax.findings import Finding
from cmax.scorecard import Scorecard
from tests.paths import SAMPLES


@cache
def _card(name: str) -> Scorecard:
    from cmax.pipeline import assess

    return assess(SAMPLES / name)


def test_ids_are_unique_and_stable_across_runs() -> None:
    from cmax.pipeline import assess

    first = [c.id for c in scorecard_checks(_card("cinder-gpu"))]
    again = [c.id for c in scorecard_checks(assess(SAMPLES / "cinder-gpu"))]
    assert first == again
    assert len(set(first)) == len(first)


def test_one_case_per_gate_workload_network_row_and_finding() -> None:
    card = _card("borealis-cloud")
    checks = scorecard_checks(card)
    by_suite: dict[str, list[Check]] = {}
    for c in checks:
        by_suite.setdefault(c.suite, []).append(c)
    assert len(by_suite["gates"]) == len(card.gates)
    assert len(by_suite["workloads"]) == len(card.workloads)
    assert len(by_suite["network"]) == len(card.network)
    assert len(by_suite["findings"]) == len(card.findings)
    assert {c.id for c in by_suite["gates"]} >= {"cmax.score.gate.exemplar_suite",
                                                  "cmax.score.gate.coverage"}


def test_statuses_follow_the_verdicts_and_carry_bm01() -> None:
    checks = {c.id: c for c in scorecard_checks(_card("borealis-cloud"))}
    suite = checks["cmax.score.exemplar-suite"]
    assert suite.status == "failed" and suite.requirements == ("BM01",)
    workload = checks["cmax.score.workload.llama3.1-405b.bf16.512"]
    assert workload.status == "failed" and "BM01" in workload.requirements
    assert "0.899" in workload.message
    assert checks["cmax.score.network.all_reduce.64n"].requirements == ()
    passing = {c.id: c for c in scorecard_checks(_card("aurora-compute"))}
    assert passing["cmax.score.exemplar-suite"].status == "passed"


def test_a_gate_not_evaluated_is_skipped_never_passed() -> None:
    card = _card("cinder-gpu")
    unevaluated = [g for g in card.gates if g.status == "not_evaluated"]
    assert unevaluated
    checks = {c.id: c for c in scorecard_checks(card)}
    for g in unevaluated:
        assert checks[f"cmax.score.gate.{g.id}"].status == "skipped"


def test_findings_error_fails_warning_is_other_repeats_get_suffixes() -> None:
    def finding(severity: str) -> Finding:
        return Finding(rule="x.rule", severity=severity, file="a/b.log", line=3,  # type: ignore[arg-type]
                       message="m", fix="f")

    checks = finding_checks([finding("error"), finding("warning"), finding("error")])
    assert [c.status for c in checks] == ["failed", "other", "failed"]
    assert [c.id for c in checks] == ["cmax.finding.x.rule@a/b.log:3",
                                      "cmax.finding.x.rule@a/b.log:3#2",
                                      "cmax.finding.x.rule@a/b.log:3#3"]
    clean = finding_checks([], rules_run=12)
    assert [(c.status, c.message) for c in clean] == [("passed", "no findings from 12 rules")]


def test_junit_counts_and_cases() -> None:
    checks = scorecard_checks(_card("cinder-gpu"))
    root = ET.fromstring(to_junit(checks, name="cmax score"))
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(checks) == int(root.get("tests", "0"))
    assert int(root.get("failures", "0")) == sum(c.status == "failed" for c in checks)
    assert int(root.get("skipped", "0")) == sum(c.status == "skipped" for c in checks)
    assert [c.get("name") for c in cases] == [c.id for c in checks]
    suite_case = next(c for c in cases if c.get("name") == "cmax.score.exemplar-suite")
    props = {p.get("name"): p.get("value") for p in suite_case.iter("property")}
    assert props["requirement"] == "BM01"


# the fields the CTRF schema allows (ctrf-io/ctrf:schema/ctrf.schema.json @ 08703df)
CTRF_ROOT = {"reportFormat", "specVersion", "reportId", "timestamp", "generatedBy", "extra",
             "results", "insights", "baseline"}
CTRF_RESULTS = {"tool", "summary", "tests", "environment", "extra"}
CTRF_SUMMARY_REQUIRED = {"tests", "passed", "failed", "skipped", "pending", "other", "start",
                         "stop"}
CTRF_SUMMARY = CTRF_SUMMARY_REQUIRED | {"flaky", "suites", "duration", "extra"}
CTRF_TEST = {"id", "name", "status", "duration", "start", "stop", "suite", "message", "trace",
             "snippet", "ai", "line", "rawStatus", "tags", "labels", "type", "filePath",
             "retries", "retryAttempts", "flaky", "stdout", "stderr", "threadId", "browser",
             "device", "screenshot", "attachments", "parameters", "steps", "insights", "extra"}


def test_ctrf_document_uses_only_schema_fields() -> None:
    import uuid

    checks = scorecard_checks(_card("cinder-gpu"))
    doc = to_ctrf(checks, version="0.1.0", command="score")
    assert doc["reportFormat"] == "CTRF" and set(doc) <= CTRF_ROOT
    results = doc["results"]
    assert set(results) <= CTRF_RESULTS
    assert CTRF_SUMMARY_REQUIRED <= set(results["summary"]) <= CTRF_SUMMARY
    assert results["summary"]["tests"] == len(checks)
    for test in results["tests"]:
        assert set(test) <= CTRF_TEST and {"name", "status", "duration"} <= set(test)
        assert test["status"] in {"passed", "failed", "skipped", "pending", "other"}
        uuid.UUID(test["id"])
        assert all(isinstance(v, str | int | float | bool) for v in test["labels"].values())
    again = to_ctrf(scorecard_checks(_card("cinder-gpu")), version="0.1.0", command="score")
    assert [t["id"] for t in again["results"]["tests"]] == [
        t["id"] for t in results["tests"]]


@pytest.mark.parametrize("status", ["passed", "failed", "skipped", "other", "error"])
def test_every_status_is_written(status: str) -> None:
    check = Check(id="cmax.t", suite="s", name="t", status=status,  # type: ignore[arg-type]
                  message="why")
    case = ET.fromstring(to_junit([check], name="n")).find("./testsuite/testcase")
    assert case is not None
    child = {"failed": "failure", "error": "error", "skipped": "skipped", "other": "system-out",
             "passed": "system-out"}[status]
    assert case.find(child) is not None
    ctrf = to_ctrf([check], version="0", command="c")["results"]["tests"][0]
    assert ctrf["status"] == ("failed" if status == "error" else status)
