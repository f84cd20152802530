"""Reading a rating rubric file: its TOML, the file it came from and the digest of its bytes.

The rubric is an input next to the reference data (the shipped one is
``reference/rubric.toml``; ``--rubric FILE`` names another), so it is read here, where the
reference files are read; the scorer (:mod:`cmax.score.rubric`) only validates what this module
hands it and never opens a file. The digest is of the exact bytes read, so a scorecard names the
rubric it was scored under. Every failure is a :class:`RubricError` with the reader's message,
file, line and fix.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.errors import RubricError
from cmax.reading.tomlfile import decode_toml, read_toml_bytes

RUBRIC_NAME = "rubric.toml"


@dataclass(frozen=True)
class RubricFile:
    """A rubric file as read: its parsed TOML, its path and the sha256 of its bytes."""

    data: dict[str, Any]
    file: Path
    digest: str


def default_rubric_path() -> Path:
    """The rubric shipped with the reference data."""
    from cmax.resources import data_dir

    return data_dir("reference") / RUBRIC_NAME


def read_rubric_file(path: str | Path | None = None) -> RubricFile:
    """Read a rubric file; None means the shipped one."""
    file = Path(path) if path is not None else default_rubric_path()
    raw = read_toml_bytes(
        file, what="rubric file", error=RubricError,
        missing_fix="pass an existing file to --rubric, or omit it for the default")
    data = decode_toml(raw, file=file, what="rubric file", error=RubricError)
    return RubricFile(data=data, file=file, digest=hashlib.sha256(raw).hexdigest())
