"""Checks as JUnit XML: the report format CI systems (GitLab, Jenkins, GitHub actions that
publish test results) read, and the one NVIDIA's AI-cloud validation suite uploads per
requirement (``isvreporter --junit-xml``; ``NVIDIA/ai-cloud-validation:docs/packages/
isvreporter.md``).

The document keeps to the strict JUnit schema (Surefire's ``junit-10.xsd``, the one pytest's
own tests validate against: ``pytest-dev/pytest:testing/example_scripts/junit-10.xsd``
@ 81ae293), which many readers enforce:

- ``testsuites`` carries only ``name``, ``tests``, ``failures``, ``errors`` and ``time``;
- one ``testsuite`` per check suite, with ``tests``, ``failures``, ``errors``, ``skipped``,
  and its cases' properties (a ``testcase`` may hold none): each named ``<case id>:<key>``
  (``title``, ``requirement`` for each NVIDIA requirement id, then the check's own details);
- one ``testcase`` per check: ``classname`` is ``cmax.<suite>``, ``name`` the check's stable
  id. A failed check has a ``failure``; a check that could not run (``error``) a ``failure``
  of ``type="error"`` (the schema names no ``error`` element), counted under ``errors``; a
  skipped one ``skipped``; a warning or info (``other``) is ``skipped`` with the message, so
  a warning is never counted as a passed test.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from cmax.export.checks import Check


def _case(parent: ET.Element, check: Check) -> None:
    case = ET.SubElement(parent, "testcase", classname=f"cmax.{check.suite}", name=check.id,
                         time="0")
    if check.status in ("failed", "error"):
        ET.SubElement(case, "failure", message=check.message,
                      type=check.status).text = check.message
    elif check.status == "skipped":
        ET.SubElement(case, "skipped", message=check.message)
    elif check.status == "other":
        ET.SubElement(case, "skipped", type="warning", message=check.message)


def _properties(parent: ET.Element, members: Sequence[Check]) -> None:
    rows = [(f"{c.id}:{key}", value) for c in members for key, value in (
        ("title", c.name), *(("requirement", r) for r in c.requirements), *c.properties)]
    if rows:
        props = ET.SubElement(parent, "properties")
        for name, value in rows:
            ET.SubElement(props, "property", name=name, value=value)


def to_junit(checks: Sequence[Check], *, name: str) -> str:
    """The JUnit XML document (a ``testsuites`` root named ``name``) as text."""
    root = ET.Element("testsuites", name=name)
    suites: dict[str, list[Check]] = {}
    for c in checks:
        suites.setdefault(c.suite, []).append(c)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite, members in suites.items():
        counts = {"tests": len(members),
                  "failures": sum(c.status == "failed" for c in members),
                  "errors": sum(c.status == "error" for c in members),
                  "skipped": sum(c.status in ("skipped", "other") for c in members)}
        element = ET.SubElement(root, "testsuite", attrib={
            "name": f"cmax.{suite}", **{k: str(v) for k, v in counts.items()}, "time": "0"})
        _properties(element, members)
        for c in members:
            _case(element, c)
        for key in totals:
            totals[key] += counts[key]
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
