"""``cmax report BUNDLE... -o DIR``: scorecards, negotiation briefs and a leaderboard.

Every bundle is checked to exist before any is assessed, so a typo in the last of ten bundles
fails in a second rather than after minutes of scoring. A bundle that exists but cannot be
rated (one error line) does not stop the others: they are rated and their reports and
leaderboard written, and the exit code is 2. Exit codes: 0 reports written; 2 a bundle, the
rubric or the output folder is unusable.

The set is written all or nothing: every report is rendered into a staging folder inside the
output folder and only moved into place once all rendered, so a failure in the fifth file (a
chart that cannot be drawn, a PDF engine error, Ctrl-C) leaves no mix of new and stale reports
for someone to send to a provider. Files are moved with ``os.replace`` (atomic per file, same
file system, since the staging folder is inside the output folder) by
:func:`cmax.render.publish.publish`, which puts every previous report back if any move
fails.

The scorecards' charts and HTML are drawn by a helper process (:mod:`cmax.render.worker`),
started before anything heavy is imported, while this one rates the bundles and imports
WeasyPrint; if the helper fails in any way they are drawn here, with the same bytes and errors.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cmax.cli import exits
from cmax.cli.common import (
    ProgressCallback,
    emit_json,
    format_option,
    no_pdf_option,
    paper_option,
    progress,
)
from cmax.cli.package_options import package_options
from cmax.errors import CmaxError

if TYPE_CHECKING:  # pydantic models: not imported for `--help`
    from cmax.scorecard import Scorecard
    from cmax.submission.intake.draft import Commercial


def _assess(bundle: str, rubric: str | None, commercial: Commercial | None = None) -> Scorecard:
    from cmax.pipeline import assess

    return assess(bundle, rubric_path=rubric, commercial=commercial)


def _write_all_or_nothing(cards: Sequence[Scorecard], out_dir: Path, *,
                          pdf: bool = True, paper: str = "a4") -> list[Path]:
    """Render into ``out_dir/.cmax-report-*/`` and move the finished set into ``out_dir``;
    on any failure the staging folder goes, and so does ``out_dir`` if this call created it."""
    from cmax.render import render_reports
    from cmax.render.publish import clean_stale, publish, staging_prefix
    from cmax.submission.bundle import cleanup_on_signals

    created = not out_dir.exists()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CmaxError(f"cannot create the output folder: {exc.strerror}", file=out_dir,
                        field="-o", fix="pass a folder you can write to") from None
    try:
        clean_stale(out_dir)
        with cleanup_on_signals(), tempfile.TemporaryDirectory(prefix=staging_prefix(),
                                                               dir=out_dir) as tmp:
            with ProgressCallback("writing {total} reports") as written:
                staged = render_reports(cards, Path(tmp), pdf=pdf, paper=paper,
                                        progress=written)
            final = publish(staged, Path(tmp), out_dir)
    except BaseException:
        if created:
            with contextlib.suppress(OSError):  # rmdir: only if empty, never others' files
                out_dir.rmdir()
        raise
    return final


def _check_inputs(bundles: tuple[str, ...], rubric: str | None, out_dir: Path) -> None:
    for bundle in bundles:
        if not Path(bundle).exists():
            raise CmaxError("bundle not found", file=bundle,
                            expected="a bundle directory, .tar.gz or .zip with a cmax.toml",
                            fix="check the path")
    if rubric is not None and not Path(rubric).is_file():
        raise CmaxError("rubric file not found", file=rubric, field="--rubric",
                        fix="pass a rubric TOML file, or leave --rubric out for the default")
    if out_dir.exists() and not out_dir.is_dir():
        raise CmaxError("the output path exists and is not a directory", file=out_dir,
                        field="-o", fix="pass a directory, e.g. -o reports/")


@click.command(
    "report",
    help="Rate each BUNDLE and write HTML and PDF reports into DIR: per provider a scorecard "
    "(<slug>.scorecard.html/.pdf/.json) and a negotiation brief (<slug>.brief.html/.pdf); "
    "with two or more bundles also leaderboard.html/.pdf. Prints the files written.",
)
@click.argument("bundles", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("-o", "--out", "out_dir", required=True, metavar="DIR",
              type=click.Path(path_type=Path), help="Folder for the reports (created if needed).")
@click.option("--rubric", type=click.Path(path_type=str), default=None, metavar="FILE",
              envvar="CMAX_RUBRIC", show_envvar=True,
              help="Rating rubric TOML.  [default: the rubric shipped with the reference data]")
@no_pdf_option
@paper_option
@format_option
@package_options
def command(bundles: tuple[str, ...], out_dir: Path, rubric: str | None, no_pdf: bool,
            paper: str, fmt: str, commercial: Commercial | None = None) -> int:
    _check_inputs(bundles, rubric, out_dir)
    from cmax.render.views import evidence_warning
    from cmax.render.worker import DocumentWorker

    # the worker imports matplotlib while the bundles are rated here, then draws the
    # scorecards' charts while this process imports WeasyPrint (cmax.render.worker)
    with DocumentWorker.start() as worker:
        cards = []
        unusable = 0
        for i, bundle in enumerate(bundles, start=1):
            progress(f"[{i}/{len(bundles)}] rating {bundle}")
            try:
                cards.append(_assess(bundle, rubric, commercial))
            except CmaxError as exc:
                if len(bundles) == 1:
                    raise
                # one unusable bundle is reported and the others still rated and written
                click.echo(f"cmax: error: {exc.one_line()}", err=True)
                unusable += 1
                continue
            warning = evidence_warning(cards[-1])
            if warning:
                click.echo(f"cmax: warning: {warning}", err=True)
        if not cards:
            raise CmaxError(f"none of the {len(bundles)} bundles could be rated (each error "
                            "above)", fix="correct the bundles and run the report again")
        worker.submit(cards)
        progress(f"writing reports to {out_dir}")
        from cmax.render.reports import documents_from

        with documents_from(worker):
            paths = _write_all_or_nothing(cards, out_dir, pdf=not no_pdf, paper=paper)
    if fmt == "json":
        emit_json({"files": [str(p) for p in paths]})
    else:
        for path in paths:
            click.echo(str(path))
    return exits.BAD_INPUT if unusable else exits.OK
