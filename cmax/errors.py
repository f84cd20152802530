"""The exceptions a user ever sees: one tree under :class:`CmaxError`.

Every stage raises a :class:`CmaxError` subclass for bad input instead of letting a library
traceback escape: the CLI turns any of them into a single line and exit code 2. The message
always says where (file, line or field), what was found, what was expected and how to fix it,
because the person reading it is usually holding a provider's bundle they did not write.

The subclasses say *which input* is at fault, so a program driving cmax can tell "the provider
sent a bad bundle" from "our rubric is broken" without parsing the message::

    CmaxError                   any user-facing error (a bad option, a missing file)
    ├── UsageError              a bad command-line value that click cannot check (calc inputs)
    ├── BundleError             the bundle itself: not found, unsafe archive, path escapes it
    ├── ManifestError           cmax.toml: TOML syntax, unknown key, value out of bounds
    ├── EvidenceError           an evidence file that cannot be read or does not parse, or
    │                           Evidence built in Python that is not what ingest builds
    │   └── EvidenceFormatError     its content is no known format, or not the one its
    │                               manifest key needs (see docs/formats.md)
    ├── ReferenceDataError      the shipped or a pinned reference release: checksum, row, id
    │   └── NotInCatalogue          a GPU, model, precision or FLOPs convention the release
    │                               does not know (the one miss cmax.reference.view absorbs)
    ├── RubricError             a rubric file (weights, thresholds, gates)
    ├── MonitoringError         the buyer's monitoring: Prometheus unreachable or refusing a
    │                           query, a saved answer or node event file that is not one
    └── HistoryError            periodic audits: the runs root, a run folder, the history
                                table, the drift policy

Every class keeps the same structured fields (``file``, ``line``, ``field``, ``expected``,
``fix``). Code that adds context to an error it caught (ingest names the manifest key,
``cmax inspect`` names the file) uses :meth:`CmaxError.with_context`, which keeps the class,
``fix`` and ``line`` of the original: re-raising must never lose how to fix the input.

This module imports nothing beyond the standard library so that ``import cmax.errors`` is
instant (the CLI imports it before parsing arguments).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Self

__all__ = [
    "BundleError",
    "CmaxError",
    "EvidenceError",
    "EvidenceFormatError",
    "HistoryError",
    "ManifestError",
    "MonitoringError",
    "NotInCatalogue",
    "ReferenceDataError",
    "RubricError",
    "UsageError",
]

_UNSET: Any = object()


class CmaxError(Exception):
    """A user-facing error: unusable input, bad option, missing file."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        expected: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field
        self.expected = expected
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """``file:line: field: message (expected ...); fix: ...`` on one line."""
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        field = f"{self.field}: " if self.field else ""
        text = f"{where}{field}{self.message}"
        if self.expected:
            text += f" (expected {self.expected})"
        if self.fix:
            text += f"; fix: {self.fix}"
        return text.replace("\n", " ")

    def with_context(
        self,
        *,
        message: str = _UNSET,
        file: str | Path | None = _UNSET,
        line: int | None = _UNSET,
        field: str | None = _UNSET,
        expected: str | None = _UNSET,
        fix: str | None = _UNSET,
    ) -> Self:
        """A copy of this error (same class) with the given fields replaced.

        Fields not passed keep their value, so the original ``fix`` and ``line`` survive a
        re-raise that only adds the manifest key or the file. Raise the copy ``from None``:
        the user needs one line, not the chain.
        """
        new = copy.copy(self)
        if message is not _UNSET:
            new.message = message
        if file is not _UNSET:
            new.file = str(file) if file is not None else None
        if line is not _UNSET:
            new.line = line
        if field is not _UNSET:
            new.field = field
        if expected is not _UNSET:
            new.expected = expected
        if fix is not _UNSET:
            new.fix = fix
        new.args = (new.one_line(),)
        return new


class UsageError(CmaxError):
    """A command-line value click cannot check by type (a calc input out of range)."""


class BundleError(CmaxError):
    """The bundle: missing, not a directory/.tar.gz/.zip, unsafe member, path outside it."""


class ManifestError(CmaxError):
    """``cmax.toml``: syntax, unknown or missing key, value out of bounds."""


class EvidenceError(CmaxError):
    """An evidence file cannot be read or does not parse as the format it was detected as."""


class EvidenceFormatError(EvidenceError):
    """An evidence file's content is no known format, or not the one its key needs."""


class ReferenceDataError(CmaxError):
    """Reference data (shipped or pinned release): checksum mismatch, bad row, unknown id."""


class NotInCatalogue(ReferenceDataError):
    """The reference release does not know this GPU, model, precision or FLOPs convention.

    Its own class because it is an *answer* (the submission is outside the catalogue: a
    finding, a dropped MFU), while every other exception from a look-up is a bug that must
    propagate (:mod:`cmax.reference.view` absorbs this one only).
    """


class RubricError(CmaxError):
    """A rubric file: weights, thresholds, gates or tiers that do not make sense."""


class MonitoringError(CmaxError):
    """The buyer's monitoring ([monitoring]): a Prometheus server that cannot be reached or
    refuses a query, a saved answer or node event file that is not one. Never a reason to
    fall back silently to the provider's incident log."""


class HistoryError(CmaxError):
    """Periodic audits: the runs root or a run folder, the history table (layout, versions,
    damaged files), the drift policy."""
