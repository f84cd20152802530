"""Findings reach score through the effect each rule declares (cmax/judgement/bearings.py),
never through a rule id or a family prefix."""

from __future__ import annotations

import ast
import re

from cmax.findings import Finding, Severity
from cmax.judgement.bearings import Bearings, rules_of
from cmax.validate.registry import FAMILIES, RULES
from tests.paths import REPO


def _finding(rule: str, *, file: str | None = "training/a.log", run_id: str | None = None,
             severity: Severity = "error") -> Finding:
    return Finding(rule=rule, severity=severity, file=file, run_id=run_id, message="m", fix="f")


def test_the_effect_is_the_rules_declaration() -> None:
    bearings = Bearings([_finding("comparability.config-mismatch", run_id="runs[0]"),
                         _finding("fabrication.low-jitter", run_id="runs[0]",
                                  severity="warning"),
                         _finding("crossfile.copied-sweep", file="nccl/b.txt"),
                         _finding("audit.partial", file="audit/audit.values.json")])
    run = bearings.on(run_id="runs[0]", files=["training/a.log"])
    assert [b.effect for b in run] == ["not_comparable", "unverified"]
    assert rules_of(run, "unverified") == ["fabrication.low-jitter"]
    assert bearings.files_with("not_counted") == {"nccl/b.txt"}
    assert [b.rule for b in bearings.with_effect("doubt")] == ["audit.partial"]


def test_a_family_prefix_decides_nothing() -> None:
    """An error of the comparability family that declares no effect (or an id the catalogue
    lacks) withholds a pass as any error does, and makes nothing not comparable."""
    bearings = Bearings([_finding("comparability.no-such-rule", run_id="runs[0]")])
    (b,) = bearings.on(run_id="runs[0]")
    assert b.effect == "none" and b.severity == "error"


def test_a_finding_with_a_run_id_bears_only_on_that_run() -> None:
    bearings = Bearings([_finding("fabrication.low-jitter", run_id="runs[1]",
                                  file="training/a.log", severity="warning")])
    assert bearings.on(run_id="runs[0]", files=["training/a.log"]) == []
    assert len(bearings.on(run_id="runs[1]")) == 1
    assert bearings.on(files=["a.log"]) == []


def test_a_file_named_under_its_folder_entry_is_the_same_file() -> None:
    bearings = Bearings([_finding("crossfile.copied-sweep", file="nccl/sweeps/b.txt")])
    assert len(bearings.on(files=["sweeps/b.txt"])) == 1


_FAMILY_ID = re.compile(r"^(" + "|".join(map(re.escape, FAMILIES)) + r")\.[a-z0-9-]*$")


def test_no_stage_after_validation_names_a_rule() -> None:
    """Score, price, the judgement layer and the reports read effects: no string literal in
    them is a rule id or a family prefix (a docstring may cite one)."""
    offenders = []
    for part in ("score", "price", "judgement", "render"):
        for path in sorted((REPO / "cmax" / part).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                          if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
                          and n.body and isinstance(n.body[0], ast.Expr)}
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and id(node) not in docstrings
                        and (node.value in RULES or _FAMILY_ID.match(node.value))):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value}")
    assert offenders == []


def test_a_finding_about_the_fleet_bears_on_the_fleets_claims() -> None:
    """statistics.too-few-incidents names the incident log's claim, not a file of it."""
    bearings = Bearings([_finding("statistics.too-few-incidents", file=None,
                                  severity="warning")])
    (b,) = bearings.on(subjects=["fleet"])
    assert b.subject == "fleet"
    assert bearings.on(files=["incidents.csv"]) == [] and bearings.on(subjects=["audit"]) == []


def test_every_rule_is_about_something() -> None:
    """A family states what its findings are about; a rule of it may say otherwise."""
    assert all(r.subject is not None for r in RULES.values())
    assert RULES["crossfile.runs-disagree"].subject == "run"
    assert RULES["crossfile.copied-sweep"].subject == "file"
    assert RULES["completeness.empty-incident-log"].subject == "fleet"
