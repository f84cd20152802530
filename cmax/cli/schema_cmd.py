"""``cmax schema``: JSON Schemas of what cmax reads and prints (cmax/cli/schemas.py)."""

from __future__ import annotations

import click

from cmax.cli.common import emit_json

MODELS = ("all", "scorecard", "price", "manifest", "validate", "audit")


@click.command("schema", help="Print JSON Schemas: the Scorecard (cmax score --format json) "
               "and PriceAdvice, the cmax.toml manifest, and the --format json documents of "
               "cmax validate and cmax audit.")
@click.option("--model", type=click.Choice(MODELS), default="all", show_default=True,
              help="Which schema; all prints them keyed by name.")
@click.option("--format", "fmt", type=click.Choice(["json"]), default="json",
              show_default=True, help="Schemas are JSON.")
def command(model: str, fmt: str) -> None:
    from cmax.cli.schemas import schemas

    found = schemas()
    emit_json(found if model == "all" else found[model])
