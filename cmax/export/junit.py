"""Checks as JUnit XML: the report format CI systems (GitLab, Jenkins, GitHub actions that
publish test results) read, and the one NVIDIA's AI-cloud validation suite emits per
requirement (``NVIDIA/ai-cloud-validation:docs/packages/isvreporter.md``).

One ``testsuite`` per check suite, one ``testcase`` per check: ``classname`` is
``cmax.<suite>``, ``name`` the check's stable id. A failed check has a ``failure``, an
``error`` check an ``error``, a skipped one ``skipped``; an ``other`` check (a warning) passes
with its message in ``system-out``. Each case carries ``properties``: the human title, the
NVIDIA requirement ids (``requirement``) and the check's own details.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from cmax.export.checks import Check


def _case(parent: ET.Element, check: Check) -> None:
    case = ET.SubElement(parent, "testcase", classname=f"cmax.{check.suite}", name=check.id,
                         time="0")
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name="title", value=check.name)
    for req in check.requirements:
        ET.SubElement(props, "property", name="requirement", value=req)
    for key, value in check.properties:
        ET.SubElement(props, "property", name=key, value=value)
    if check.status == "failed":
        ET.SubElement(case, "failure", message=check.message, type="failed").text = check.message
    elif check.status == "error":
        ET.SubElement(case, "error", message=check.message, type="error").text = check.message
    elif check.status == "skipped":
        ET.SubElement(case, "skipped", message=check.message)
    elif check.message:
        ET.SubElement(case, "system-out").text = check.message


def to_junit(checks: Sequence[Check], *, name: str) -> str:
    """The JUnit XML document (a ``testsuites`` root named ``name``) as text."""
    root = ET.Element("testsuites", name=name)
    suites: dict[str, list[Check]] = {}
    for c in checks:
        suites.setdefault(c.suite, []).append(c)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite, members in suites.items():
        counts = {"tests": len(members),
                  "failures": sum(c.status == "failed" for c in members),
                  "errors": sum(c.status == "error" for c in members),
                  "skipped": sum(c.status == "skipped" for c in members)}
        element = ET.SubElement(root, "testsuite", attrib={
            "name": f"cmax.{suite}", **{k: str(v) for k, v in counts.items()}, "time": "0"})
        for c in members:
            _case(element, c)
        for key, value in counts.items():
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
