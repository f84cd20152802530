"""Reading TOML files (manifest, rubric, reference catalogues) into one kind of error.

Every TOML file cmax reads can be missing, a directory, a named pipe (reading one blocks
forever), not UTF-8, or invalid TOML; each case is one error naming the file and,
for syntax errors, the line. Python 3.11's ``TOMLDecodeError`` has no ``lineno`` attribute
(3.14 adds it), so the line is taken from its message.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from cmax.errors import CmaxError
from cmax.reading.limits import MAX_TOML_BYTES, read_bounded

REINSTALL = "reinstall cmax-rating or restore the reference/ folder"

_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def read_toml_bytes(path: Path, *, what: str, missing_fix: str | None = None,
                    error: type[CmaxError] = CmaxError) -> bytes:
    """The raw bytes of a TOML file (callers that digest the file need them); failures are
    ``error``, the class of the input at fault (a manifest, the reference, a rubric)."""
    if path.exists() and not (path.is_file() or path.is_dir()):
        raise error(f"{what} is not a regular file (a named pipe, socket or device)",
                        file=path, expected="a TOML file")
    try:
        return read_bounded(path, limit=MAX_TOML_BYTES, what=what)
    except FileNotFoundError:
        raise error(f"{what} not found", file=path, fix=missing_fix) from None
    except IsADirectoryError:
        raise error(f"{what} path is a directory", file=path,
                        expected="a TOML file") from None
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror}", file=path) from None


def decode_toml(raw: bytes, *, file: Path | str, what: str,
                error: type[CmaxError] = CmaxError) -> dict[str, Any]:
    """Parse TOML bytes; bad encoding or syntax is an ``error`` with the line."""
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (Notepad writes one) is no TOML
    except UnicodeDecodeError:
        raise error(f"{what} is not UTF-8 text", file=file) from None
    try:
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses per nested array/inline table
        raise error(f"{what} nests arrays or tables too deeply to read", file=file,
                        expected="a few levels of nesting",
                        fix="correct the TOML structure") from None
    except tomllib.TOMLDecodeError as exc:
        found = _AT_LINE.search(str(exc))
        line = getattr(exc, "lineno", None) or (int(found.group(1)) if found else None)
        msg = str(exc).split(" (at ")[0]
        raise error(f"invalid TOML: {msg}", file=file, line=line,
                        fix="correct the TOML syntax") from None
    except ValueError:  # int() of a literal beyond Python's 4,300-digit limit
        raise error(f"{what} holds an integer beyond Python's conversion limit "
                        f"({sys.get_int_max_str_digits():,} digits)",
                        file=file, expected="numbers of a sensible size") from None


def read_toml(path: Path, *, what: str, missing_fix: str | None = None,
              error: type[CmaxError] = CmaxError) -> dict[str, Any]:
    """Read and parse a TOML file; every failure is one ``error``."""
    return decode_toml(read_toml_bytes(path, what=what, missing_fix=missing_fix, error=error),
                       file=path, what=what, error=error)
