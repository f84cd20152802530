"""``cmax report BUNDLE... -o DIR``: scorecards, negotiation briefs and a leaderboard.

Every bundle is checked to exist before any is assessed, so a typo in the last of ten bundles
fails in a second rather than after minutes of scoring. Exit codes: 0 reports written; 2 a
bundle, the rubric or the output folder is unusable (nothing half-written is left behind:
every report file is written atomically).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cmax.cli.common import emit_json, format_option, progress
from cmax.errors import CmaxError

if TYPE_CHECKING:  # pydantic models: not imported for `--help`
    from cmax.scorecard import Scorecard


def _assess(bundle: str, rubric: str | None) -> Scorecard:
    from cmax.pipeline import assess

    return assess(bundle, rubric_path=rubric)


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
              help="Rating rubric TOML.  [default: the rubric shipped with the reference data]")
@format_option
def command(bundles: tuple[str, ...], out_dir: Path, rubric: str | None, fmt: str) -> None:
    from cmax.render import render_reports

    _check_inputs(bundles, rubric, out_dir)
    cards = []
    for i, bundle in enumerate(bundles, start=1):
        progress(f"[{i}/{len(bundles)}] rating {bundle}")
        cards.append(_assess(bundle, rubric))
    progress(f"writing reports to {out_dir}")
    paths = render_reports(cards, out_dir)
    if fmt == "json":
        emit_json({"files": [str(p) for p in paths]})
    else:
        for path in paths:
            click.echo(str(path))
