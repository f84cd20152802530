"""Ingest: every evidence format the field produces, read into the canonical tables.

``ingest(bundle)`` reads what a bundle's manifest declares; ``detect_format(path)`` tells one
file's format from its content; ``inspect_file(path)`` summarises one file for ``cmax inspect``.
Formats are plugins (:mod:`cmax.ingest.formats`: one :class:`Format` per format, found in a
registry, recognised through a :class:`Probe`); docs/formats.md lists them. Each format's module
there holds its parser and plugin, named by the format id; ``textlines`` holds the streaming
reader shared by training logs, ``linespec`` the step-line specs both its readers read, and the
private engines ``_greplines`` (the grep child) and ``_fields`` (the fast field reader) serve
only them.

Every name is loaded on first use: ``ingest`` needs the bundle and manifest models (pydantic),
which ``cmax inspect`` of one file never touches (about a tenth of a second of its start-up),
and the format registry needs Polars, which a command may want to start grep before
importing (:func:`cmax.ingest._greplines.prestart`).

The package is callable: ``cmax.ingest(bundle)`` runs :func:`ingest` (see cmax/_stage.py).
"""

from __future__ import annotations

import typing

if typing.TYPE_CHECKING:
    from cmax.ingest.assemble import ingest
    from cmax.ingest.detect import FORMATS, detect_format
    from cmax.ingest.formats import Format, Probe
    from cmax.ingest.summary import inspect_file

__all__ = ["FORMATS", "Format", "Probe", "detect_format", "ingest", "inspect_file"]

from cmax._stage import lazy_names as _lazy_names

# public name -> the module that defines it
__getattr__ = _lazy_names(__name__, {
    "FORMATS": "detect", "detect_format": "detect", "Format": "formats", "Probe": "formats",
    "inspect_file": "summary", "ingest": "assemble"})


# `cmax.ingest(bundle)` calls the stage function: see cmax/_stage.py
from cmax._stage import make_callable as _make_callable

_make_callable(__name__)
