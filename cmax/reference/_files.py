"""Reading a shipped reference data file: every failure is a :class:`ReferenceDataError`.

The TOML reader (:mod:`cmax.tomlfile`) is shared with the manifest and raises a plain
``CmaxError``; a reference file that is missing or does not parse is the reference data's
fault, not the user's bundle, so each loader reads through :func:`read_reference_toml`, which
re-raises with the same message, file, line and fix under the reference class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cmax.errors import CmaxError, ReferenceDataError
from cmax.tomlfile import REINSTALL, read_toml

__all__ = ["REINSTALL", "as_reference_error", "read_reference_toml"]


def as_reference_error(exc: CmaxError) -> ReferenceDataError:
    """``exc`` as a :class:`ReferenceDataError`, keeping every structured field."""
    if isinstance(exc, ReferenceDataError):
        return exc
    return ReferenceDataError(exc.message, file=exc.file, line=exc.line, field=exc.field,
                              expected=exc.expected, fix=exc.fix)


def read_reference_toml(path: Path, *, what: str) -> dict[str, Any]:
    """Parse a reference TOML file; a missing file says to reinstall or restore the data."""
    try:
        return read_toml(path, what=what, missing_fix=REINSTALL)
    except CmaxError as exc:
        raise as_reference_error(exc) from None
