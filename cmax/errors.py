"""The one exception type a user ever sees.

Every stage raises :class:`CmaxError` for bad input instead of letting a library traceback
escape: the CLI turns it into a single line and exit code 2. The message always says where
(file, line or field), what was found, what was expected and how to fix it, because the
person reading it is usually holding a provider's bundle they did not write.
"""

from __future__ import annotations

from pathlib import Path


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
