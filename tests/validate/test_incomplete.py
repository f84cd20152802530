"""A run that never reached the recipe's averaging window is an error, whatever window the
matched baseline's recipe release measured (llmb-run >= 1.14 marks it INCOMPLETE)."""

from __future__ import annotations

from pathlib import Path

from cmax.validate import validate
from tests.fakes import BASELINES, FakeReference
from tests.validate.test_validate_rules import _truncate, edit
from tests.validate.validate_fakes import HonestBundle

# the same rows, but measured at the last step (DGXC <= v25.04 READMEs)
OLD_RELEASE = [{**row, "recipe_release": "v25.02"} for row in BASELINES]


def _rules(last: int, declared: int, tmp_path: Path) -> dict[str, str]:
    evidence = edit(_truncate(last, declared))(HonestBundle(), tmp_path)
    found = validate(evidence, FakeReference(OLD_RELEASE))
    return {f.rule: f.severity for f in found if f.run_id == "runs[0]"}


def test_stopping_before_the_window_is_an_error_even_for_a_last_step_baseline(
        tmp_path: Path) -> None:
    rules = _rules(30, 30, tmp_path)
    assert rules.get("completeness.window-missing") == "error"
    assert "completeness.short-run" not in rules


def test_covering_the_window_is_only_short(tmp_path: Path) -> None:
    rules = _rules(45, 45, tmp_path)
    assert "completeness.window-missing" not in rules
    assert rules.get("completeness.short-run") == "warning"


def test_window_fix_names_no_step_count() -> None:
    """The fix printed under a window message about a 1,000-step run said "complete 50 steps":
    it now asks for the run's own final iteration, whatever its length."""
    from cmax.validate import RULES

    fix = RULES["completeness.window-missing"].fix
    assert "final iteration" in fix and "50" not in fix
