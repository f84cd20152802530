"""Reports: scorecards, negotiation briefs and leaderboards as HTML and PDF.

``render_reports`` is the entry point; ``write_pdf``, ``write_text_atomic`` and
``render_template`` are shared with other report writers (the periodic audit's trend reports)
so every cmax PDF gets the same locked-down fetcher, pinned dates and atomic writes.

The names are imported on first use, so ``cmax report`` can start its document worker
(:mod:`cmax.render.worker`) before the report modules (pydantic, Jinja2) are loaded.
"""

from __future__ import annotations

import importlib
import typing
from typing import Any

__all__ = ["PdfAttachment", "render_reports", "render_template", "write_pdf", "write_text_atomic"]

_LAZY = {
    "PdfAttachment": "cmax.render.pdf",
    "render_reports": "cmax.render.reports",
    "render_template": "cmax.render.templates",
    "write_pdf": "cmax.render.pdf",
    "write_text_atomic": "cmax.render.pdf",
}

if typing.TYPE_CHECKING:  # a bare TYPE_CHECKING would be a public name here
    from cmax.render.pdf import PdfAttachment, write_pdf, write_text_atomic
    from cmax.render.reports import render_reports
    from cmax.render.templates import render_template


def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'cmax.render' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
