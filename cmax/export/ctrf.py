"""Checks as a CTRF report (Common Test Report Format, ``specVersion`` 0.0.0, the version of
the current specification, a working draft: ``ctrf-io/ctrf:spec/ctrf.md`` and
``schema/ctrf.schema.json`` @ 84ddec5; the tests validate against that schema).

CTRF admits no field outside its schema except under ``extra``; its test ``id`` must be a
UUID, so each check's stable id becomes a UUID-5 (the same check, the same UUID, run after
run, as the spec recommends) and is also kept readable as the test ``name``. NVIDIA
requirement ids are ``tags``; the title, suite and details are ``labels``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from cmax.export.checks import Check

SPEC_VERSION = "0.0.0"
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://pypi.org/project/cmax-rating/")
# CTRF has no "error": a check that could not run is "failed" with rawStatus "error"
_STATUS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "other": "other",
           "error": "failed"}


def _test(check: Check) -> dict[str, Any]:
    test: dict[str, Any] = {
        "id": str(uuid.uuid5(_NAMESPACE, check.id)),
        "name": check.id,
        "status": _STATUS[check.status],
        "duration": 0,
        "suite": ["cmax", check.suite],
        "labels": {"title": check.name, **dict(check.properties)},
    }
    if check.status == "error":
        test["rawStatus"] = "error"
    if check.message:
        test["message"] = check.message
    if check.requirements:
        test["tags"] = list(check.requirements)
    return test


def to_ctrf(checks: Sequence[Check], *, version: str, command: str) -> dict[str, Any]:
    """The CTRF document for ``checks`` (a JSON-ready dict)."""
    now = int(time.time() * 1000)
    tests = [_test(c) for c in checks]
    summary = {key: sum(t["status"] == key for t in tests)
               for key in ("passed", "failed", "skipped", "pending", "other")}
    return {
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "generatedBy": f"cmax-rating {version}",
        "results": {
            "tool": {"name": "cmax", "version": version, "extra": {"command": command}},
            "summary": {"tests": len(tests), **summary, "suites": len({c.suite for c in checks}),
                        "start": now, "stop": now, "duration": 0},
            "tests": tests,
        },
    }
