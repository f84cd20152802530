"""``cmax validate BUNDLE``: every way the submission could mislead, as findings.

Exit codes: 0 when no finding is an error, 1 when at least one is, 2 when the bundle cannot be
read at all (a CmaxError, printed as one line by ``cmax.cli.main``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from cmax.cli.common import (
    emit_checks,
    emit_json,
    result_format_option,
    start_up,
    wants_checks,
)
from cmax.cli.package_options import package_options
from cmax.cli.policies import fail_on_option, finding_trips, policy_checks, verdict
from cmax.reading.safetext import one_line

if TYPE_CHECKING:  # pydantic models: not imported for `--help`
    from cmax.findings import Finding
    from cmax.resolve.claims import Ledger
    from cmax.submission.intake.draft import Commercial

HEADINGS = {"error": "Errors", "warning": "Warnings", "info": "Info"}


def _count(findings: Sequence[Finding]) -> dict[str, int]:
    from cmax.findings import count_findings

    return count_findings(findings)


FINDING_KEYS = ("rule", "severity", "file", "line", "message", "fix")
"""The fields of a finding in ``validate --format json`` (its JSON Schema reads them too)."""


def findings_json(findings: Sequence[Finding], claims: Ledger | None = None) -> dict[str, Any]:
    """The documented JSON shape: findings (rule, severity, file, line, message, fix), counts,
    and the claims ledger (one entry per claim: subject, kind, value, status, source, the
    statements that support and contradict it)."""
    return {
        "findings": [f.model_dump(include=set(FINDING_KEYS)) for f in findings],
        "counts": _count(findings),
        "claims": claims.as_json() if claims is not None else [],
    }


def findings_text(findings: Sequence[Finding], *, label: str = "",
                  claims: Ledger | None = None) -> str:
    """The claims ledger, then findings grouped by severity, each with where, what and how to
    fix; then the counts."""
    lines: list[str] = []
    if claims is not None and len(claims):
        lines += ["Claims (what each rests on: corroborated, declared, assumed, contradicted)",
                  claims.text(), ""]
    for severity, heading in HEADINGS.items():
        group = [f for f in findings if f.severity == severity]
        if not group:
            continue
        lines.append(f"{heading} ({len(group)})")
        for f in group:  # each field one line: a value quoted from a bundle forges none
            where = one_line(f.file or "-")
            if f.line is not None:
                where += f":{f.line}"
            lines.append(f"  {f.rule}  {where}")
            lines.append(f"      {one_line(f.message)}")
            lines.append(f"      fix: {one_line(f.fix)}")
        lines.append("")
    counts = _count(findings)
    summary = (f"{counts['error']} error(s), {counts['warning']} warning(s), "
               f"{counts['info']} info")
    lines.append(summary + (f" — {label}" if label else ""))
    return "\n".join(lines)


def rules_listing(fmt: str) -> None:
    from cmax.validate import sorted_rules

    rules = sorted_rules()
    if fmt == "json":
        emit_json({"rules": [
            {"id": r.id, "severity": r.severity, "title": r.title,
             "explanation": r.explanation, "fix": r.fix, "source": r.source or None,
             "subject": r.subject, "effect": r.effect}
            for r in rules]})
        return
    width = max(len(r.id) for r in rules)
    effect = max(len(r.effect) for r in rules)
    for r in rules:
        click.echo(f"{r.id:<{width}}  {r.severity:<7}  {r.effect.replace('_', ' '):<{effect}}  "
                   f"{r.title}")
    click.echo(f"\n{len(rules)} rules; details with `cmax docs rules` or --rules --format json")


@click.command("validate", help="Check a bundle's evidence against the reference and list the "
               "findings (errors, warnings, info), each with the rule, where, and how to fix "
               "it. Exit 0 without errors, 1 with errors (or as --fail-on says), 2 if the "
               "bundle cannot be read.")
@click.argument("bundle", required=False, type=click.Path(path_type=str))
@click.option("--rules", "list_rules", is_flag=True,
              help="List the validation rules instead of validating a bundle.")
@fail_on_option("validate")
@result_format_option
@package_options
@click.pass_context
def command(ctx: click.Context, bundle: str | None, list_rules: bool, fail_on: tuple[str, ...],
            fmt: str, junit_xml: str | None, ctrf_file: str | None,
            commercial: Commercial | None = None) -> int:
    if list_rules:
        rules_listing("json" if fmt == "json" else "text")
        return 0
    if not bundle:
        raise click.UsageError("missing BUNDLE (a directory, .tar.gz or .zip with cmax.toml)",
                               ctx=ctx)
    with start_up():
        from cmax.pipeline import load

    with load(bundle, commercial=commercial) as loaded:
        findings = loaded.findings
        claims = loaded.case.claims
    trips = {policy: finding_trips(findings, policy) for policy in fail_on}
    if wants_checks(fmt, junit_xml, ctrf_file):
        from cmax.export import finding_checks
        from cmax.validate import sorted_rules

        emit_checks(fmt, [*finding_checks(findings, rules_run=len(sorted_rules())),
                          *policy_checks(trips)], "validate",
                    junit_xml=junit_xml, ctrf_file=ctrf_file)
    if fmt == "json":
        emit_json(findings_json(findings, claims))
    elif fmt == "text":
        click.echo(findings_text(findings, label=str(bundle), claims=claims))
    return verdict(trips)
