"""``cmax init PATH [-o cmax.toml]``: draft a commented manifest from a folder or archive of
evidence: an llmb-run package (the Exemplar archive, an install folder, experiments) through
:mod:`cmax.submission.intake.package`, any other folder through :mod:`cmax.drafting.folder_draft`.
Every
value is shown with the file and line it came from; what only a person knows is a TODO."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("init", help="Draft a commented cmax.toml from a folder or archive of evidence "
               "(an llmb-run Exemplar archive or install folder, or any evidence files): each "
               "value with the file and line it came from, TODOs for price, term and SLA.")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("-o", "--out", "out", type=click.Path(path_type=Path), default=None,
              metavar="FILE", help="Write the draft here (default: print it).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
def command(path: Path, out: Path | None, force: bool) -> None:
    from cmax.drafting.folder_draft import draft_folder
    from cmax.errors import CmaxError
    from cmax.reference import load_reference
    from cmax.submission.bundle import evidence_folder
    from cmax.submission.intake.package import draft_for

    if out is not None and out.exists() and not force:
        raise CmaxError("will not overwrite an existing file", file=out,
                        fix="pass --force, or choose another -o FILE")
    missing: list[str] = []
    skipped: list[tuple[str, str]] = []
    with evidence_folder(path) as folder:
        draft = draft_for(folder, label=str(path))
        if draft is not None:
            text = draft.text
        else:
            drafted = draft_folder(folder, load_reference("latest"), source=str(path))
            text, missing, skipped = drafted.text, drafted.missing, drafted.skipped
    for rel, why in skipped:
        click.echo(f"cmax init: left out {rel}: {why}", err=True)
    if missing:
        click.echo(f"cmax init: no file states {', '.join(missing)}: the draft does not load "
                   "until you fill in these TODOs", err=True)
    if out is None:
        click.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    click.echo(f"wrote {out}", err=True)
