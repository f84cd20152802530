"""Which evidence format a file holds, decided by its content, never by its name.

Providers rename files freely (``run1.txt``, ``out.log``), so names prove nothing. The
decision is the registry's (:mod:`cmax.ingest.formats`): structural sniffers first (SQLite
magic, JSON shape, CSV header), then text markers scanned in growing chunks, the more specific
marker first. This module keeps the id-level API: :func:`detect_format` and :data:`FORMATS`.
"""

from __future__ import annotations

from pathlib import Path

from cmax.ingest.formats import declarations, identify

#: every declared format id, in detection order (no format module is imported for it)
FORMATS: tuple[str, ...] = tuple(d.id for d in declarations())


def detect_format(path: Path) -> str:
    """The format id of one evidence file (see ``FORMATS``); unknown -> EvidenceFormatError."""
    return identify(Path(path))[0].id
