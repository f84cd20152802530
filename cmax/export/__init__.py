"""Results as CI test reports: JUnit XML and CTRF JSON (``--format junit|ctrf``).

A CI system understands test cases; cmax's results are findings, gates, workload and network
verdicts and audit drift. :mod:`cmax.export.checks` turns each into one :class:`Check` with a
stable id (the same bundle gives the same ids run after run, so a CI can track a case across
runs); :mod:`cmax.export.junit` and :mod:`cmax.export.ctrf` write the two formats.
"""

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
