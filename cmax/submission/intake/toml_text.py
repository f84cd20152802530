"""Writing the few TOML values a drafted manifest holds (the standard library reads TOML but
does not write it): strings, numbers, booleans, dates and arrays of them, each line with an
optional comment saying where its value came from."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any


def value(item: Any) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int | float):
        return repr(item)
    if isinstance(item, dt.date):
        return item.isoformat()
    if isinstance(item, list | tuple):
        return "[" + ", ".join(value(v) for v in item) + "]"
    # JSON's string escapes are valid TOML basic-string escapes
    return json.dumps(str(item), ensure_ascii=False)


def line(key: str, item: Any, comment: str | None = None) -> str:
    text = f"{key} = {value(item)}"
    if comment:
        text = f"{text:<44} # {comment}"
    return text


def table(header: str, items: dict[str, Any]) -> list[str]:
    """A table of plain keys (values only, no comments): what a small manifest gave."""
    return [header, *(line(k, v) for k, v in items.items() if not isinstance(v, dict))]
