"""Reports: scorecards, negotiation briefs and leaderboards as HTML and PDF.

``render_reports`` is the entry point; ``write_pdf``, ``write_text_atomic`` and
``render_template`` are shared with other report writers (the periodic audit's trend reports)
so every cmax PDF gets the same locked-down fetcher, pinned dates and atomic writes.
"""

from __future__ import annotations

from cmax.render.pdf import PdfAttachment, write_pdf, write_text_atomic
from cmax.render.reports import render_reports
from cmax.render.templates import render_template

__all__ = ["PdfAttachment", "render_reports", "render_template", "write_pdf", "write_text_atomic"]
