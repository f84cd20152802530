"""``cmax inspect FILE``: detect one evidence file's format and summarise it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cmax.cli.common import emit_json, format_option


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return "-" if value is None else str(value)


def _render(summary: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    width = max(len(k) for k in summary)
    for key, value in summary.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"{key}:")
            lines.extend("  " + ", ".join(f"{k}={_text(v)}" for k, v in item.items())
                         for item in value)
        elif isinstance(value, list) and value and key == "notes":
            lines.append(f"{key}:")
            lines.extend(f"  - {note}" for note in value)
        else:
            lines.append(f"{key.ljust(width)}  {_text(value)}")
    return lines


@click.command("inspect", help="Detect the format of one evidence file and summarise it.")
@click.argument("file", type=click.Path(path_type=Path))
@format_option
def command(file: Path, fmt: str) -> None:
    from cmax.ingest._greplines import prestart, return_freed_buffers, stop_prestarted

    return_freed_buffers()
    prestart(file)  # a large NeMo 2 log: grep reads it while Polars is imported
    try:
        from cmax.ingest import inspect_file

        summary = inspect_file(file)
    finally:
        stop_prestarted()
    if fmt == "json":
        emit_json(summary)
    else:
        click.echo("\n".join(_render(summary)))
