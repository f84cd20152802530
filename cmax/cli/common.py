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

no_pdf_option = click.option(
    "--no-pdf", "no_pdf", is_flag=True,
    help="Write HTML (and JSON) only, no PDF: faster, and needs none of WeasyPrint's "
    "system libraries.")

result_format_option = click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "junit", "ctrf"]), default="text",
    show_default=True, help="text for people; json for programs; junit (JUnit XML) or ctrf "
    "(CTRF JSON) for CI test reports: one case per finding, gate, workload and network row, "
    "with stable ids (all on stdout).")

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
    """Progress and logs go to stderr so stdout stays clean for --format json; ``cmax -q``
    silences them."""
    if _VERBOSITY[0] >= 0:
        click.echo(message, err=True)


_VERBOSITY = [0]


def set_verbosity(level: int) -> None:
    """-1 quiet (no progress lines), 0 normal, 1+ verbose (set by ``cmax -q`` / ``-v``)."""
    _VERBOSITY[0] = level


def verbosity() -> int:
    return _VERBOSITY[0]


def emit_checks(fmt: str, checks: Any, command: str) -> None:
    """Write ``checks`` (:class:`cmax.export.Check`) as JUnit XML or CTRF JSON on stdout."""
    from cmax._about import __version__
    from cmax.export import to_ctrf, to_junit

    if fmt == "junit":
        click.echo(to_junit(checks, name=f"cmax {command}"))
    else:
        emit_json(to_ctrf(checks, version=__version__, command=command))
