"""The Jinja2 environment for reports: autoescaped, strict about undefined names."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from cmax.resources import data_dir


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
