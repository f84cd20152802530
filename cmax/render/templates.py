"""The Jinja2 environment for reports: autoescaped, strict about undefined names.

Autoescaping is on for every template whatever its extension, because all report text may come
from a bundle; StrictUndefined turns a template typo into an error in tests instead of an empty
cell in a customer's PDF. Every expression's value has its control and bidirectional-control
characters made visible (``finalize``). The number filters of :mod:`cmax.render.formatting`
are registered here so every report (scorecards, briefs, leaderboards, audit trends) formats
alike.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2
import markupsafe

from cmax.reading.safetext import escape
from cmax.render.formatting import FILTERS, GLOBALS
from cmax.resources import data_dir


def _display_safe(value: Any) -> Any:
    """Every expression's value with control and bidirectional-control characters made
    visible (:mod:`cmax.reading.safetext`): a right-to-left override in a provider name would
    otherwise reorder the text after it in the HTML and the PDF."""
    if isinstance(value, markupsafe.Markup):
        return markupsafe.Markup(escape(str(value)))
    return escape(value) if isinstance(value, str) else value


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_display_safe,
    )
    env.filters.update(FILTERS)
    env.globals.update(GLOBALS)
    return env


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
