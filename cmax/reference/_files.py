"""Reading a shipped reference data file: every failure is a :class:`ReferenceDataError`.

The TOML reader (:mod:`cmax.reading.tomlfile`) is shared with the manifest, the rubric and the drift
policy and raises the class of the input at fault; a reference file that is missing or does
not parse is the reference data's fault, not the user's bundle, and a missing one is mended by
reinstalling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError
from cmax.reading.tomlfile import REINSTALL, read_toml

__all__ = ["REINSTALL", "read_reference_toml"]


def read_reference_toml(path: Path, *, what: str) -> dict[str, Any]:
    """Parse a reference TOML file; a missing file says to reinstall or restore the data."""
    return read_toml(path, what=what, missing_fix=REINSTALL, error=ReferenceDataError)
