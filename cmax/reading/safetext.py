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

A field meant to be one line (a provider, cluster or region name, a chart label, a CSV cell)
must not break the line it is printed in either: a newline in a provider name printed a
forged line ("Tier: Platinum") under the real header. :func:`one_line` also escapes tab,
line feed and the Unicode line and paragraph separators. The other writers go through the
same table: :func:`json_text` for JSON files (lossless: the escapes are JSON's own),
:func:`csv_cell` for CSV, and every text of a chart before it is written as SVG
(:func:`cmax.render.charts.one_line_texts`: a raw ESC made the SVG ill-formed XML and
``cmax report`` exit 70).
"""

from __future__ import annotations

from typing import Any, TextIO

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNSAFE = {cp for cp in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI)
           if cp not in (0x09, 0x0A)}
_TABLE = {cp: f"\\u{cp:04x}" for cp in _UNSAFE}
_LINE_TABLE = {**_TABLE, **{cp: f"\\u{cp:04x}" for cp in (0x09, 0x0A, 0x2028, 0x2029)}}
# a spreadsheet runs a cell starting with these as a formula (CWE-1236)
_CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape(text: str) -> str:
    """``text`` with every control and bidirectional-control character written as
    ``\\uXXXX`` (newline and tab kept)."""
    return text.translate(_TABLE) if not text.isascii() or not text.isprintable() else text


def one_line(text: str) -> str:
    """``text`` for a one-line field: :func:`escape`, and tab, newline and the Unicode line
    and paragraph separators written as ``\\uXXXX`` too."""
    return text.translate(_LINE_TABLE) if not text.isascii() or not text.isprintable() else text


def json_text(text: str) -> str:
    """Serialised JSON made safe to open in a viewer: ``json.dumps`` escapes C0 controls but
    leaves C1 and bidirectional controls raw; as ``\\uXXXX`` they mean the same inside a JSON
    string, and outside strings JSON holds none, so the document parses to the same value."""
    return escape(text)


def csv_cell(value: object) -> str:
    """A CSV cell from bundle text: one line (:func:`one_line`), and a leading ``=``, ``+``,
    ``-``, ``@`` quoted with ``'`` so a spreadsheet shows it rather than runs it."""
    text = "" if value is None else one_line(str(value))
    return "'" + text if text.startswith(_CSV_FORMULA_START) else text


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
