"""``cmax audit RUNS_ROOT``: periodic audits across a fleet — history, drift, trend reports.

Exit codes: 0 nothing to review; 1 a regression, tier drop, new audit FAIL, SLA breach,
expiring or expired Exemplar validation, or evidence changed after it was recorded; 2 the
root, the history or at least one run is unusable (the others are still recorded and judged).
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cmax.cli.common import emit_json, format_option, progress

if TYPE_CHECKING:  # cmax.history loads Polars: not imported for `--help`
    from cmax.history.discover import RunRef


class _ProgressBar:
    """A progress bar on stderr, opened when the number of runs to score is known."""

    def __init__(self) -> None:
        self._bar: Any = None

    def __call__(self, done: int, total: int, run: RunRef) -> None:
        if self._bar is None:
            self._bar = click.progressbar(
                length=total, label=f"scoring {total} new runs",
                file=sys.stderr, show_pos=True, show_eta=True)
            self._bar.__enter__()
        self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


@click.command("audit", help="Score every run under RUNS_ROOT (laid out as "
               "<root>/<cluster>/<timestamp>/, each a bundle) that is not yet in the history, "
               "record it, and report drift: regressions beyond noise, tier changes, new "
               "audit FAILs, Exemplar expiry and SLA breaches. Exit 1 when any is found, 2 when "
               "the root, the history or a run is unusable (the other runs are still recorded).")
@click.argument("runs_root", type=click.Path(path_type=Path))
@click.option("--history", "history_dir", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="History folder (Parquet, partitioned by cluster).  "
              "[default: RUNS_ROOT/.cmax-history]")
@click.option("-o", "--out", "report_dir", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="Write the fleet and per-cluster trend reports (HTML + PDF) here.")
@click.option("--as-of", "as_of", type=click.DateTime(formats=["%Y-%m-%d"]), default=None,
              help="The day Exemplar expiry is judged on; runs after it are ignored.  "
              "[default: the day of the newest run]")
@click.option("--expiry-warning-days", type=click.IntRange(min=0), default=60, show_default=True,
              help="Flag an Exemplar validation this many days before it lapses.")
@click.option("--no-pdf", is_flag=True, help="Write the trend reports as HTML only.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Score new runs and render trend reports in this many worker processes.")
@format_option
@click.pass_context
def command(ctx: click.Context, runs_root: Path, history_dir: Path | None,
            report_dir: Path | None, as_of: dt.datetime | None, expiry_warning_days: int,
            no_pdf: bool, jobs: int, fmt: str) -> None:
    from cmax.history import DriftPolicy, run_audit

    bar = _ProgressBar()
    try:
        result = run_audit(
            runs_root, history_dir, as_of=as_of.date() if as_of else None,
            policy=DriftPolicy(expiry_warning_days=expiry_warning_days), progress=bar,
            jobs=jobs,
        )
    finally:
        bar.close()
    files: list[Path] = []
    if report_dir is not None:
        from cmax.history.trend import render_trend_reports

        progress(f"writing trend reports into {report_dir} ...")
        files = render_trend_reports(result, report_dir, pdf=not no_pdf, jobs=jobs)
    if fmt == "json":
        emit_json({**result.to_json(), "reports": [str(f) for f in files]})
        ctx.exit(result.exit_code)
    summary = result.to_json()["runs"]
    click.echo(
        f"{summary['found']} runs under {runs_root}: {summary['scored']} newly scored, "
        f"{summary['already_recorded']} already recorded, {summary['unusable']} unusable; "
        f"history holds {summary['in_history']} runs of {summary['clusters_in_history']} "
        f"cluster(s) ({result.history_path})")
    if result.as_of is not None:
        click.echo(f"as of {result.as_of.isoformat()}")
    if result.items:
        click.echo("")
        click.echo(f"{'cluster':<22} {'kind':<23} {'workload / check':<34} {'before':>10} "
                   f"{'after':>10} {'change':>8}")
        for item in result.items:
            change = f"{item.change_pct:+.1f}%" if item.change_pct is not None else "-"
            click.echo(f"{item.cluster[:22]:<22} {item.kind:<23} {(item.workload or '-')[:34]:<34} "
                       f"{_cell(item.before)[:10]:>10} {_cell(item.after)[:10]:>10} {change:>8}")
        click.echo("")
        for item in result.items:
            click.echo(f"  {item.cluster}: {item.message}")
    else:
        click.echo("no drift: no regressions, tier drops, new audit FAILs, SLA breaches or "
                   "expiring Exemplar validations")
    for status in result.exemplar:
        if status.status == "never":
            continue
        click.echo(f"exemplar {status.cluster}: {status.status}, passed {status.passed_on}, "
                   f"valid until {status.expires_on}")
    for bad in result.unusable:
        label = "unusable" if bad.fatal else "note"
        click.echo(f"{label}: {bad.path}: {bad.error}", err=True)
    if files:
        click.echo("\ntrend reports:")
        for f in files:
            click.echo(f"  {f}")
    ctx.exit(result.exit_code)
