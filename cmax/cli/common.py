"""Options and output helpers shared by the commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

format_option = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text for people; json (on stdout) for programs.",
)

bundle_argument = click.argument("bundle", type=click.Path(path_type=str))


def emit_json(data: Any) -> None:
    """Write JSON to stdout; pydantic models are dumped in JSON mode. Non-finite floats
    become null (``allow_nan=False`` then guarantees no bare NaN/Infinity, which is not JSON)."""
    from cmax.limits import json_safe

    if hasattr(data, "model_dump"):  # a pydantic model; pydantic itself is not imported
        data = data.model_dump(mode="json")
    click.echo(json.dumps(json_safe(data), indent=2, sort_keys=False, ensure_ascii=False,
                          allow_nan=False))


def progress(message: str) -> None:
    """Progress and logs go to stderr so stdout stays clean for --format json."""
    click.echo(message, err=True)
