"""``cmax schema``: JSON Schemas of the public result models."""

from __future__ import annotations

import click

from cmax.cli.common import emit_json


@click.command("schema", help="Print the JSON Schemas of the Scorecard and PriceAdvice models.")
@click.option("--model", type=click.Choice(["all", "scorecard", "price"]), default="all",
              show_default=True)
def command(model: str) -> None:
    from cmax.scorecard import PriceAdvice, Scorecard

    schemas = {
        "scorecard": Scorecard.model_json_schema(mode="serialization"),
        "price": PriceAdvice.model_json_schema(mode="serialization"),
    }
    emit_json(schemas if model == "all" else schemas[model])
