"""Which evidence format a file holds, decided by its content, never by its name.

Providers rename files freely (``run1.txt``, ``out.log``), so names prove nothing. The
decision is the registry's (:mod:`cmax.ingest.formats`): structural sniffers first (SQLite
magic, JSON shape, CSV header), then text markers scanned in growing chunks, the more specific
marker first. This module keeps the id-level API: :func:`detect_format` and :data:`FORMATS`.
"""

from __future__ import annotations

from pathlib import Path

from cmax.ingest.formats import all_formats, identify

#: every format id registered when cmax.ingest was imported, in detection order
FORMATS: tuple[str, ...] = tuple(f.id for f in all_formats())


def detect_format(path: Path) -> str:
    """The format id of one evidence file (see ``FORMATS``); unknown -> EvidenceFormatError."""
    return identify(Path(path))[0].id
