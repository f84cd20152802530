"""JUnit XML and CTRF output (cmax/export/): stable unique ids, statuses from the evidence,
NVIDIA requirement ids, documents the formats' readers accept."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from cmax.export import Check, finding_checks, scorecard_checks, to_ctrf, to_junit
from cmax.findings import Finding, Severity
from cmax.scorecard import Scorecard
from tests.paths import DATA, SAMPLES


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
    def finding(severity: Severity) -> Finding:
        return Finding(rule="x.rule", severity=severity, file="a/b.log", line=3, message="m",
                       fix="f")

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
    skipped = sum(int(s.get("skipped", "0")) for s in root.iter("testsuite"))
    assert skipped == sum(c.status in ("skipped", "other") for c in checks)
    assert [c.get("name") for c in cases] == [c.id for c in checks]
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["cmax.score.exemplar-suite:requirement"] == "BM01"
    assert props["cmax.score.exemplar-suite:title"]


JUNIT_SCHEMA = DATA / "export" / "junit-10.xsd"
CTRF_SCHEMA = DATA / "export" / "ctrf.schema.json"


@cache
def _junit_schema() -> Any:
    import xmlschema

    return xmlschema.XMLSchema(str(JUNIT_SCHEMA))


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir()
                                          if (p / "cmax.toml").is_file()))
def test_every_samples_junit_and_ctrf_validate_against_the_strict_schemas(sample: str) -> None:
    import json

    import jsonschema

    from cmax.pipeline import load

    card = _card(sample)
    with load(SAMPLES / sample) as loaded:
        findings = loaded.findings
    for checks, command in ((scorecard_checks(card), "score"),
                            (finding_checks(findings, rules_run=3), "validate")):
        _junit_schema().validate(to_junit(checks, name=f"cmax {command}"))
        jsonschema.Draft7Validator(json.loads(CTRF_SCHEMA.read_text(encoding="utf-8"))).validate(
            to_ctrf(checks, version="0.1.0", command=command))


def test_a_warning_is_not_counted_as_a_passed_test() -> None:
    warning = Check(id="cmax.w", suite="s", name="w", status="other", message="look at this")
    root = ET.fromstring(to_junit([warning], name="n"))
    skipped = root.find("./testsuite/testcase/skipped")
    assert skipped is not None and skipped.get("message") == "look at this"
    assert root.find("./testsuite").get("skipped") == "1"  # type: ignore[union-attr]
    _junit_schema().validate(to_junit([warning], name="n"))


# the fields the CTRF schema allows (ctrf-io/ctrf:schema/ctrf.schema.json @ 84ddec5)
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
    document = to_junit([check], name="n")
    _junit_schema().validate(document)
    case = ET.fromstring(document).find("./testsuite/testcase")
    assert case is not None
    child = {"failed": "failure", "error": "failure", "skipped": "skipped", "other": "skipped",
             "passed": None}[status]
    assert [c.tag for c in case] == ([child] if child else [])
    if status == "error":
        assert case.find("failure").get("type") == "error"  # type: ignore[union-attr]
    ctrf = to_ctrf([check], version="0", command="c")["results"]["tests"][0]
    assert ctrf["status"] == ("failed" if status == "error" else status)


def test_a_run_case_names_what_its_log_states_and_its_withheld_pass(tmp_path: Path) -> None:
    """Aurora's fp8 log declared bf16: its case was titled 'llama3.1-405b bf16 on 512 GPUs'
    with the message 'inconclusive: ...', while its judgement withholds the pass."""
    from cmax.pipeline import assess
    from tests.sample_bundles import fp8_run_declared_bf16

    card = assess(fp8_run_declared_bf16(tmp_path))
    runs = [c for c in scorecard_checks(card) if c.suite == "workloads"]
    held = next(c for c in runs if ("log", "training/llama3.1-405b_fp8_512.log") in c.properties)
    assert held.name == "llama3.1-405b fp8 (declared bf16) on 512 GPUs"
    assert held.message.startswith("withheld (identity.arithmetic, identity.precision, ")
    assert [c.name for c in runs if c is not held] == [
        "llama3.1-405b bf16 on 512 GPUs", "grok1-314b fp8 on 512 GPUs"]


def test_a_withheld_run_is_an_error_never_a_skip_or_a_pass(tmp_path: Path) -> None:
    """A run whose pass errors in its evidence withhold was a skipped case, which CI readers
    count beside tests that never ran; its judgement says it could not be judged."""
    from cmax.pipeline import assess
    from tests.sample_bundles import fp8_run_declared_bf16, one_of_two_runs_contested

    for bundle in (fp8_run_declared_bf16(tmp_path / "a"),
                   one_of_two_runs_contested(tmp_path / "b")):
        card = assess(bundle)
        runs = {c.id: c for c in scorecard_checks(card) if c.suite == "workloads"}
        for w in card.workloads:
            judged = card.judgement("training_run", w.run_id or "")
            assert judged is not None
            [case] = [c for c in runs.values() if ("log", w.log) in c.properties]
            want = {"pass": "passed", "fail": "failed", "withheld": "error"}.get(
                str(judged.verdict), "skipped")
            assert case.status == want
        assert sum(c.status == "error" for c in runs.values()) == 1
        suite = ET.fromstring(to_junit(list(runs.values()), name="t")).find("testsuite")
        assert suite is not None and suite.get("errors") == "1" and suite.get("skipped") == "0"


def test_each_serving_result_is_a_case_with_its_judgements_status(tmp_path: Path) -> None:
    """A serving-only cloud's JUnit had no case for any serving result: only the gates."""
    checks = {c.id: c for c in scorecard_checks(_card("halcyon-serve")) if c.suite == "serving"}
    assert {k: c.status for k, c in checks.items()} == {
        "cmax.score.serving.gpt-oss-120b.fp8.1024-1024.1": "passed",
        "cmax.score.serving.llama3.3-70b.fp8.1024-1024.2": "passed",
        "cmax.score.serving.deepseek-r1-0528.fp8.1024-1024.8": "skipped"}
    dsr1 = checks["cmax.score.serving.deepseek-r1-0528.fp8.1024-1024.8"]
    assert dsr1.message.startswith("inconclusive: ratio 0.955 (compared: curve)")
    # declared as another model than its file states: compared with nothing, withheld
    bundle = tmp_path / "halcyon"
    shutil.copytree(SAMPLES / "halcyon-serve", bundle)
    toml = bundle / "cmax.toml"
    toml.write_text(toml.read_text().replace('model = "llama3.3-70b"', 'model = "gpt-oss-120b"'))
    from cmax.pipeline import assess

    [held] = [c for c in scorecard_checks(assess(bundle))
              if c.suite == "serving" and "trtllm_llama3.3-70b" in c.message]
    assert held.status == "error"
    assert held.message.startswith("withheld (") and "inference.model-contradicted" in held.message
