"""``cmax audit RUNS_ROOT``: periodic audits across a fleet — history, drift, trend reports.

Exit codes: 0 nothing to review; 1 a regression, tier drop, new audit FAIL, SLA breach,
expiring, expired or lapsed Exemplar validation, a cluster whose audits stopped arriving, a
workload run whose ratio does not count (withheld or unverified: not compared), or evidence
changed after it was recorded; 2 the root, the history or at least one run is
unusable or filed under the wrong cluster (the others are still recorded and judged).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import click

from cmax.cli.common import (
    ProgressCallback,
    emit_checks,
    emit_json,
    paper_option,
    progress,
    result_format_option,
    wants_checks,
)
from cmax.cli.policies import fail_on_option, policy_checks


def _cell(value: object, width: int) -> str:
    """A value in a column of ``width``: a figure, or a verdict cut before its reasons
    ('withheld (identity.precision, ...)' reads 'withheld'; the item's line below the table
    names them), never cut mid-word."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"
    text = str(value)
    if len(text) <= width:
        return text
    head = text.split(" (", 1)[0]
    return head if len(head) <= width else text[:width - 1] + "…"


def _policy(policy_file: Path | None, expiry_warning_days: int | None,
            stale_after_days: int | None) -> Any:
    from cmax.history import DriftPolicy

    policy = DriftPolicy.load(policy_file)
    changes = {k: v for k, v in (("expiry_warning_days", expiry_warning_days),
                                 ("stale_after_days", stale_after_days)) if v is not None}
    return policy.with_(**changes) if changes else policy


def _history_when(value: dt.datetime | None) -> dt.datetime | None:
    """A date alone means the end of that day (UTC): what the record said on that day."""
    if value is None:
        return None
    if value.time() == dt.time(0) and value.tzinfo is None:
        value = value + dt.timedelta(days=1, microseconds=-1)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value


@click.command("audit", help="Score every run under RUNS_ROOT (laid out as "
               "<root>/<cluster>/<timestamp>/, each a bundle) that is not yet in the history, "
               "record it, and report drift: regressions beyond noise, tier changes, new "
               "audit FAILs, Exemplar expiry, SLA breaches, clusters whose audits stopped "
               "arriving and workload runs whose ratio does not count (withheld or "
               "unverified). Exit 1 when any is found, 2 when the root, the history or a run is "
               "unusable or filed under the wrong cluster (the other runs are still recorded).")
@click.argument("runs_root", type=click.Path(path_type=Path))
@click.option("--history", "history", metavar="FOLDER|URI", default=None,
              envvar="CMAX_HISTORY", show_envvar=True,
              help="The history's Delta Lake table: a folder, or object storage such as "
              "s3://bucket/cmax-history (AWS credentials, region and endpoint from the "
              "standard AWS environment).  [default: RUNS_ROOT/.cmax-history]")
@click.option("--history-version", type=click.IntRange(min=0), default=None,
              help="Report what the history said at this table version (read-only: nothing "
              "is scored or recorded).")
@click.option("--history-as-of", type=click.DateTime(
              formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"]), default=None,
              help="Report what the history said at this UTC time (a date alone: the end of "
              "that day); read-only.")
@click.option("-o", "--out", "report_dir", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="Write the fleet and per-cluster trend reports (HTML + PDF) here.")
@click.option("--as-of", "as_of", type=click.DateTime(formats=["%Y-%m-%d"]), default=None,
              help="The day Exemplar expiry and stale clusters are judged on; runs after it "
              "are ignored.  [default: the day of the newest run]")
@click.option("--drift-policy", "policy_file", type=click.Path(path_type=Path, dir_okay=False),
              default=None, envvar="CMAX_DRIFT_POLICY", show_envvar=True,
              help="Drift thresholds (TOML, the keys of the shipped "
              "reference/drift.toml).  [default: the shipped policy]")
@click.option("--expiry-warning-days", type=click.IntRange(min=0), default=None,
              help="Flag an Exemplar validation this many days before it lapses.  "
              "[default: the drift policy's]")
@click.option("--stale-after-days", type=click.IntRange(min=0), default=None,
              help="Flag a cluster with no run for more than this many days.  "
              "[default: the drift policy's]")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="Score on this machine's cores, or as Ray tasks "
              "(pip install 'cmax-rating[ray]').")
@click.option("-j", "--workers", "--jobs", "workers", type=click.IntRange(min=1), default=None,
              help="Scoring worker processes (or Ray CPUs), also used for the trend "
              "reports.  [default: the CPUs this process may use for a backlog of 24 runs "
              "or more, else 1; with Ray, the cluster's]")
@click.option("--ray-address", default=None, metavar="ADDRESS",
              help="Ray cluster to connect to.  [default: RAY_ADDRESS, else start a local Ray]")
@click.option("--no-pdf", is_flag=True, help="Write the trend reports as HTML only.")
@paper_option
@fail_on_option("audit")
@result_format_option
@click.pass_context
def command(ctx: click.Context, runs_root: Path, history: str | None,
            history_version: int | None, history_as_of: dt.datetime | None,
            report_dir: Path | None, as_of: dt.datetime | None, policy_file: Path | None,
            expiry_warning_days: int | None, stale_after_days: int | None, executor: str,
            workers: int | None, ray_address: str | None, no_pdf: bool, paper: str,
            fail_on: tuple[str, ...], fmt: str, junit_xml: str | None,
            ctrf_file: str | None) -> None:
    from cmax.history import run_audit

    if history_version is not None and history_as_of is not None:
        raise click.UsageError("give --history-version or --history-as-of, not both")
    with ProgressCallback("scoring {total} new runs") as bar:
        result = run_audit(
            runs_root, history, as_of=as_of.date() if as_of else None,
            policy=_policy(policy_file, expiry_warning_days, stale_after_days), progress=bar,
            executor="ray" if executor == "ray" else "local", workers=workers,
            ray_address=ray_address, history_version=history_version,
            history_as_of=_history_when(history_as_of),
        )
    for note in result.notes:
        progress(note)
    files: list[Path] = []
    if report_dir is not None:
        from cmax.history.trend import render_trend_reports

        progress(f"writing trend reports into {report_dir} ...")
        # a report takes well under a second: a pool pays only when asked for
        with ProgressCallback("writing {total} trend reports") as report_written:
            files = render_trend_reports(result, report_dir, pdf=not no_pdf, jobs=workers or 1,
                                         paper=paper, progress=report_written)
    code = result.exit_code
    if code == 1 and "drift" not in fail_on:  # --fail-on none: drift is reported, not fatal
        code = 0
    if wants_checks(fmt, junit_xml, ctrf_file):
        from cmax.export import audit_checks

        drift = "; ".join(f"{i.cluster}: {i.kind}" for i in result.problems) or None
        emit_checks(fmt, [*audit_checks(result), *policy_checks(
            {p: drift for p in fail_on})], "audit", junit_xml=junit_xml, ctrf_file=ctrf_file)
    if fmt == "json":
        emit_json({**result.to_json(), "reports": [str(f) for f in files]})
        ctx.exit(code)
    if fmt in ("junit", "ctrf"):
        ctx.exit(code)
    summary = result.to_json()["runs"]
    if result.time_travel:
        click.echo(f"history {result.history_path} at version {result.history_version} "
                   f"(read-only): {summary['in_history']} runs of "
                   f"{summary['clusters_in_history']} cluster(s)")
    else:
        click.echo(
            f"{summary['found']} runs under {runs_root}: {summary['scored']} newly scored, "
            f"{summary['already_recorded']} already recorded, {summary['unusable']} unusable; "
            f"history holds {summary['in_history']} runs of {summary['clusters_in_history']} "
            f"cluster(s) ({result.history_path}, version {result.history_version})")
        if not result.scored and not result.unusable:
            click.echo("nothing new since the last audit: the standing below is the one it "
                       "reported")
    if result.as_of is not None:
        click.echo(f"as of {result.as_of.isoformat()}")
    if result.items:
        changes = [i for i in result.items if i.kind != "sla_breach"]
        breaches = [i for i in result.items if i.kind == "sla_breach"]
        if changes:
            click.echo("")
            click.echo(f"{'cluster':<22} {'kind':<23} {'workload / check':<34} {'before':>12} "
                       f"{'after':>12} {'change':>8}")
        for item in changes:
            change = f"{item.change_pct:+.1f}%" if item.change_pct is not None else "-"
            click.echo(f"{item.cluster[:22]:<22} {item.kind:<23} {(item.workload or '-')[:34]:<34} "
                       f"{_cell(item.before, 12):>12} {_cell(item.after, 12):>12} {change:>8}")
        if breaches:  # a contracted and a measured uptime are not a before and an after
            click.echo("")
            click.echo(f"{'cluster':<22} {'SLA breach, period':<23} {'contracted':>10} "
                       f"{'measured':>10} {'credit owed':>11}")
        for item in breaches:
            credit = "-" if item.credit_pct is None else f"{item.credit_pct:g}%"
            click.echo(f"{item.cluster[:22]:<22} {(item.period or '-')[:23]:<23} "
                       f"{_cell(item.before, 9):>9}% {_cell(item.after, 9):>9}% {credit:>11}")
        click.echo("")
        for item in result.items:
            click.echo(f"  {item.cluster}: {item.message}")
    else:
        click.echo("no drift: no regressions, tier drops, new audit FAILs, SLA breaches, "
                   "expiring Exemplar validations or runs whose ratio does not count")
    for status in result.exemplar:
        if status.status == "never":
            continue
        click.echo(f"exemplar {status.cluster}: {status.status}, passed {status.passed_on}, "
                   f"{status.until}")
    for bad in result.unusable:
        label = "unusable" if bad.fatal else "note"
        click.echo(f"{label}: {bad.path}: {bad.error}", err=True)
    if files:
        click.echo("\ntrend reports:")
        for f in files:
            click.echo(f"  {f}")
    ctx.exit(code)
