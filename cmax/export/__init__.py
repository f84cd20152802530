"""Results as CI test reports: JUnit XML and CTRF JSON (``--format junit|ctrf``).

A CI system understands test cases; cmax's results are findings, gates, workload and network
verdicts and audit drift. :mod:`cmax.export.checks` turns each into one :class:`Check` with a
stable id (the same bundle gives the same ids run after run, so a CI can track a case across
runs); :mod:`cmax.export.junit` and :mod:`cmax.export.ctrf` write the two formats.
"""

from __future__ import annotations

import typing

if typing.TYPE_CHECKING:
    from cmax.export.checks import (
        Check,
        acceptance_checks,
        audit_checks,
        finding_checks,
        scorecard_checks,
    )
    from cmax.export.ctrf import to_ctrf
    from cmax.export.junit import to_junit

__all__ = ["Check", "acceptance_checks", "audit_checks", "finding_checks", "scorecard_checks",
           "to_ctrf", "to_junit"]

from cmax._stage import lazy_names as _lazy_names

# each writer loads on first use: the commands' --fail-on option reads cmax.export.checks at
# start-up, and only --format junit|ctrf needs the XML and JSON writers
__getattr__ = _lazy_names(__name__, {
    "Check": "checks", "acceptance_checks": "checks", "audit_checks": "checks",
    "finding_checks": "checks", "scorecard_checks": "checks", "to_ctrf": "ctrf",
    "to_junit": "junit"})
