"""Validate a submission against the reference: every way a bundle can mislead, as findings.

``validate(evidence, reference)`` runs the rule families (schema, completeness,
comparability, numeric sanity, internal consistency, MLPerf compliance, statistical red flags,
software floors, ClusterMAX audit) and returns sorted findings. ``RULES`` is the catalogue
(id -> Rule with severity, title, explanation, fix, source) that ``docs/rules.md`` and
``cmax validate --rules`` are generated from.
"""

from __future__ import annotations

from cmax.validate.engine import not_comparable_runs, runs_with_errors, validate
from cmax.validate.registry import FAMILIES, RULES, Rule, rules_markdown, sorted_rules

__all__ = [
    "FAMILIES",
    "RULES",
    "Rule",
    "not_comparable_runs",
    "rules_markdown",
    "runs_with_errors",
    "sorted_rules",
    "validate",
]

# `cmax.validate(...)` calls the stage function: see cmax/_stage.py
from cmax._stage import make_callable as _make_callable

_make_callable(__name__)
