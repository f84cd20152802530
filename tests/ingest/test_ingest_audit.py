"""ClusterMAX audit.values.json grading against the two derived oracles, plus the edge rules:
an absent key is not graded, an unknown value never passes, harness gates, guards."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from cmax.errors import CmaxError
from cmax.ingest import inspect_file
from cmax.ingest.formats.clustermax_audit import CHECKS, CRITERION_CATEGORY, grade_audit
from tests.paths import DATA

DATA = DATA / "ingest"


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


@pytest.mark.parametrize("base", ["example_audit", "example_audit_weak"])
def test_matches_expected_report_oracle(base: str) -> None:
    values = _load(f"{base}.values.json")
    oracle = _load(f"{base}.expected_report.json")
    report = grade_audit(values)
    assert report.harness == oracle["harness"]
    got = {c.key: c for c in report.checks}
    want = {c["key"]: c for c in oracle["checks"]}
    assert set(got) == set(want)
    for key, row in want.items():
        check = got[key]
        assert check.status == row["status"].upper(), key
        assert check.group == row["category"], key
        if row["criterion"] is not None:
            assert check.criterion == row["criterion"], key
        else:
            assert check.criterion.startswith("cli:"), key
    counts = {k.lower(): v for k, v in report.counts().items()}
    assert counts == {"pass": oracle["counts"]["pass"], "warning": oracle["counts"]["warning"],
                      "fail": oracle["counts"]["fail"], "skipped": oracle["counts"]["skipped"]}


def test_inspect_audit_summary() -> None:
    summary = inspect_file(DATA / "example_audit_weak.values.json")
    assert summary["format"] == "clustermax-audit" and summary["cluster"] == "example-h100-b"
    assert summary["counts"] == {"PASS": 4, "WARNING": 16, "FAIL": 10, "SKIPPED": 25}


def test_catalogue_categories_and_observed_values() -> None:
    report = grade_audit(_load("example_audit_weak.values.json"))
    by_key = {c.key: c for c in report.checks}
    driver = by_key["securityVersions.nvidiaDriver.status"]
    assert (driver.category, driver.status, driver.minimum) == ("security", "FAIL", "570.211.01")
    assert driver.observed == "fail (version 570.148.08)"
    assert by_key["gpus.gdrcopy.installed"].category == "gpu-stack"
    assert by_key["nccl_ib_qps.status"].category == "networking"
    assert by_key["software.perf.installed"].category == "profiling"
    assert by_key["containers.workerCheckOk"].category == "containers"
    for check in CHECKS:
        if check.criterion is not None:
            assert check.criterion in CRITERION_CATEGORY


def test_absent_key_is_not_graded() -> None:
    values = _load("example_audit.values.json")
    del values["audit_data"]["containers"]["singularity"]
    del values["audit_data"]["security"]["bmcIpmi"]
    values["audit_data"]["healthChecks"]["nhcInstalled"] = None
    keys = {c.key for c in grade_audit(values).checks}
    assert "containers.singularity" not in keys and "bmc-ipmi" not in keys
    assert "healthChecks.nhcInstalled" not in keys
    assert len(keys) == 56


@pytest.mark.parametrize("value", ["untested", "unavailable", "", "maybe", 7])
def test_unknown_value_never_passes(value: object) -> None:
    values = _load("example_audit.values.json")
    values["audit_data"]["access"]["slurmCommandsOk"] = value
    values["audit_data"]["securityVersions"]["runc"]["status"] = value
    by_key = {c.key: c for c in grade_audit(values).checks}
    assert by_key["access.slurmCommandsOk"].status == "WARNING"
    assert by_key["securityVersions.runc.status"].status == "WARNING"


def test_bool_strings_and_sentinels() -> None:
    values = _load("example_audit.values.json")
    ad = values["audit_data"]
    ad["containers"]["singularity"] = "true"
    ad["access"]["sudoAvailable"] = "yes"
    ad["networking"]["ncclAutoConfig"] = "N/A"
    ad["software"]["perf"]["perfEventParanoid"] = "1"
    by_key = {c.key: c for c in grade_audit(values).checks}
    assert by_key["containers.singularity"].status == "PASS"
    assert by_key["access.sudoAvailable"].status == "PASS"
    assert by_key["networking.ncclAutoConfig"].status == "SKIPPED"
    assert by_key["software.perf.perfEventParanoid"].status == "PASS"


def test_guards_and_extensions() -> None:
    values = _load("example_audit.values.json")
    ad = values["audit_data"]
    ad["containers"]["workerCheckOk"] = False  # container facts are defaults, not evidence
    ad["security"]["bmcIpmi"]["exposed"] = True
    ad["security"]["ufmSecuredBareMetalCloud"]["status"] = "fail"
    ad["gpus"]["pcieAcs"].update(enabled="true", scoped=False)
    by_key = {c.key: c for c in grade_audit(values).checks}
    assert by_key["containers.singularity"].status == "SKIPPED"
    assert "unverified" in by_key["containers.singularity"].basis
    assert by_key["containers.workerCheckOk"].status == "WARNING"
    assert by_key["bmc-ipmi"].status == "FAIL"
    assert by_key["ufm-profile"].status == "FAIL"
    assert by_key["gpus.pcieAcs.enabled"].status == "SKIPPED"

    vm = copy.deepcopy(values)
    vm["cluster"]["environment"] = "vm"
    assert {c.key: c for c in grade_audit(vm).checks}["pcie-passthrough"].status == "SKIPPED"


def test_amd_guard_and_standalone_harness() -> None:
    values = _load("example_audit.values.json")
    values["audit_data"]["gpus"]["amd"]["present"] = True
    values["audit_data"]["gpus"]["gdrcopy"]["installed"] = False
    values["audit_data"]["securityVersions"]["nvidiaDriver"]["status"] = "fail"
    by_key = {c.key: c for c in grade_audit(values).checks}
    assert by_key["gpus.gdrcopy.installed"].status == "SKIPPED"
    assert by_key["securityVersions.nvidiaDriver.status"].status == "SKIPPED"

    standalone = _load("example_audit.values.json")
    standalone["cluster"]["orchestrator"] = "standalone"
    by_key = {c.key: c for c in grade_audit(standalone).checks}
    assert by_key["ufm-profile"].basis == "n/a for standalone machines"
    assert by_key["access.slurmCommandsOk"].status == "SKIPPED"


def test_raw_collector_json_and_unknown_harness() -> None:
    values = _load("example_audit.values.json")
    raw = values["audit_data"]  # no envelope: harness from audit.type
    report = grade_audit(raw)
    assert report.harness == "slurm" and report.counts()["FAIL"] == 2
    del raw["audit"]["type"]
    with pytest.raises(CmaxError, match="harness"):
        grade_audit(raw)
