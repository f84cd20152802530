"""Text from a bundle made safe to show: on a terminal and in a report.

A provider writes the names cmax prints (provider, cluster, region, file names, values
quoted in errors). Raw control characters in them act on the reader's terminal: ESC starts
sequences that clear the screen, set the window title or colour a forged line, CR returns to
the line's start so later text overwrites earlier ("Tier: Bronze" printed over with
"Platinum"), and the C1 range holds single-byte forms of the same (0x9B is CSI). Unicode's
bidirectional controls reorder what follows them on screen and in a PDF: "evil\\u202egnp.exe"
is displayed "evilexe.png".

:func:`escape` writes every such character as the six visible characters ``\\uXXXX``: the
text stays readable and shows that something was there, and inside a JSON string that
escape means the same character, so JSON output stays equivalent. Newline and tab are kept.
The CLI passes everything it prints through it (:class:`SafeStream`); the report templates'
every expression through it (``finalize`` in :mod:`cmax.render.templates`).
"""

from __future__ import annotations

from typing import Any, TextIO

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNSAFE = {cp for cp in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI)
           if cp not in (0x09, 0x0A)}
_TABLE = {cp: f"\\u{cp:04x}" for cp in _UNSAFE}


def escape(text: str) -> str:
    """``text`` with every control and bidirectional-control character written as
    ``\\uXXXX`` (newline and tab kept)."""
    return text.translate(_TABLE) if not text.isascii() or not text.isprintable() else text


class SafeStream:
    """A text stream that escapes what is written to it (:func:`escape`); every other
    attribute (``isatty``, ``flush``, ``buffer``, ``encoding``) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(escape(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def raw_stream(stream: Any) -> Any:
    """The stream under a :class:`SafeStream` (else ``stream`` itself), for a writer whose
    control characters are its own and whose text it escapes first: the progress bar's
    carriage returns and cursor codes, escaped, printed ``\u000d\u001b[?25l`` on a
    terminal."""
    return stream._stream if isinstance(stream, SafeStream) else stream
