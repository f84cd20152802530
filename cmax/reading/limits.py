"""Bounds on what cmax will read, so hostile input gets one clear error instead of a crash.

Evidence and bundles come from providers, i.e. from outside the trust boundary. Python's own
limits turn hostile input into tracebacks: JSON nested a few thousand levels deep raises
``RecursionError``, ``int()`` of a 5,000-digit string raises ``ValueError`` (the 4,300-digit
guard against quadratic conversion), ``int(float("inf"))`` raises ``OverflowError``, and the
``csv`` module raises ``csv.Error`` for a field over 128 KiB. Parsers call the helpers here
instead, and each refusal says which limit was hit and what the limit is (a CSV field keeps
the ``csv`` module's own 128 KiB limit: the refusal just names it). The limits sit far
beyond anything the real tools write (nccl-tests sizes fit in 20 digits; the deepest real
JSON, a ClusterMAX audit, nests under 10 levels), so they never reject genuine evidence.

Non-finite floats are the other hazard: Python's ``json`` writes ``NaN`` and ``Infinity``,
which are not JSON. :func:`json_safe` replaces them with ``null`` where JSON is written.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from cmax.errors import EvidenceError

MAX_JSON_DEPTH = 100
"""Nesting levels of arrays/objects in evidence JSON (real outputs use fewer than 10)."""

MAX_INT_DIGITS = 40
"""Digits in an integer cmax reads from evidence (2**64 has 20)."""

MAX_LINE_CHARS = 1 << 20
"""Characters (bytes, for a reader of raw lines) in one line of a line-oriented format."""

MAX_TEXT_BYTES = 64 * 1024**2
"""Bytes in an evidence file a reader holds whole: nccl-tests text, an MLPerf result file,
incidents, a job-summary CSV. Refused before a byte is read: the nccl-tests reader needs
about 80 bytes of memory per byte of data rows, so 64 MiB of them stays under 1 GiB; real
files are under a few MiB (a 512-rank nccl-tests log with NCCL_DEBUG=INFO: ~10 MiB).
Training logs are streamed, never held whole, and have no such limit."""

MAX_JSON_BYTES = 32 * 1024**2
"""Bytes in an evidence JSON document (parsed whole: a record-shaped document costs ten
times its size in Python objects). Real ones: a ClusterMAX audit 73 KB, nccl-tests JSON
under 1 MB."""

MAX_SQLITE_BYTES = 32 * 1024**2
"""Bytes in an llmb-run job-history database (SQLite, one row of about 1 KB per job: years
of daily sweeps stay under a few MiB). Its rows are read whole, at about 2 KB of Python
objects each, so this and :data:`MAX_HISTORY_JOBS` keep a hostile one far under 1 GiB."""

MAX_SQLITE_STEPS = 50_000_000
"""SQLite virtual-machine instructions one query of an evidence database may take: reading
100,000 llmb-run job rows of 35 columns takes about 4 million; a recursive view counting
to 10^12 is stopped after this many (about a second)."""

MAX_SQLITE_VALUE_BYTES = 1024**2
"""Bytes in one SQLite value (a string or blob): ``SQLITE_LIMIT_LENGTH`` of the connection,
so ``randomblob()`` or ``zeroblob()`` in a schema cannot build a large one (llmb-run's
largest value, a node list or an overrides JSON, is under a few KiB)."""

MAX_SQLITE_COLUMNS = 256
"""Columns of a table read from an evidence database (llmb-run's ``jobs``: about 30).
Each row is held as a dict, so columns times rows bounds the memory."""

MAX_HISTORY_JOBS = 100_000
"""Rows of the ``jobs`` table of a job-history database read (a full DGXC sweep is a few
hundred jobs)."""

MAX_TOML_BYTES = 4 * 1024**2
"""Bytes in ``cmax.toml`` or a rubric (500 runs of 15 keys each: ~250 KB; the largest
shipped reference TOML: 15 KB)."""

MAX_RUNS = 500
"""``[[runs]]`` entries in one manifest: a provider's full DGXC recipe sweep is about a
hundred; each run costs tens of milliseconds to rate, and 5,000 took 85 s."""

MAX_NCCL_ROWS = 20_000
"""Data rows (message sizes) in one nccl-tests file: a full 8 B-16 GiB sweep is 32 per
collective, a per-iteration dump of every collective a few thousand."""

MAX_PATH_CHARS = 1024
"""Characters in a bundle member path or a path the manifest declares."""

MAX_PATH_DEPTH = 32
"""Folder levels in a bundle member path (real bundles use fewer than 6)."""

MAX_ARCHIVE_LINKS = 1_000
"""Link members in one archive (``llmb-run archive`` stores each symlinked folder of an
experiments tree as one link; a real package holds a handful)."""

MAX_PACKAGE_ARCHIVES = 256
"""``llmb-run archive`` files side by side in one bundle folder, one per scalable unit (a
100,000-GPU system is about 200 units of 512)."""

MAX_BUNDLE_FILES = 10_000
"""Files and folders in one bundle, archive members or a folder's entries (real bundles
hold tens to a few hundred)."""

MAX_BUNDLE_BYTES = 8 * 1024**3
"""Bytes in one bundle: an archive's unpacked total, a folder's file sizes added up."""

ARCHIVE_FREE_BYTES = 64 * 1024**2
"""Unpacked bytes any archive may write whatever its size (a small bundle of small files)."""

MAX_ARCHIVE_RATIO = 100
"""Beyond :data:`ARCHIVE_FREE_BYTES`, unpacked bytes per archive byte. Real evidence
compresses 5-20 times (the sample bundles' logs: under 10 with gzip); zeros compress over
1,000 times with gzip, so a bomb is refused after writing at most 64 MiB + 100 times its
own size instead of filling the temporary folder."""

MAX_HEADER_BYTES = 64 * 1024
"""Bytes in one tar extended header (a GNU long name or a PAX record set): ``tarfile``
reads such a header whole into memory before returning the member, and a real one holds a
path of at most :data:`MAX_PATH_CHARS` characters and a few timestamps."""

MAX_YAML_DEPTH = 32
"""Nesting levels of sequences/mappings in a YAML file cmax reads (an llmb-config nests 3:
``job_config.env_overrides.NAME``). Checked from the event stream before anything is
built, so 50,000 nested brackets are one error, not a ``RecursionError``."""

MAX_YAML_ALIASES = 64
"""Alias references (``*name``) in one YAML file. llmb-run writes none; a file with a few
hand-written anchors stays far under this."""

MAX_YAML_NODES = 100_000
"""Nodes of a YAML file counted with every alias expanded (what a reader walking the loaded
value visits). An alias bomb ("billion laughs": nine levels of ten aliases, 2 KB) reaches
this within a few hundred events; a real llmb-config has about 60 nodes."""

Where = str | Path | None
T = TypeVar("T")


def limit_error(what: str, limit: str, *, file: Where = None, line: int | None = None,
                field: str | None = None) -> EvidenceError:
    """The one error for input beyond a bound: names the bound so the user knows it was not
    a parse mistake but a deliberate refusal."""
    return EvidenceError(f"{what} exceeds cmax's limit of {limit}", file=file, line=line,
                         field=field, fix="check that the file is the unmodified tool output")


def json_depth(data: Any) -> int:
    """Nesting depth of parsed JSON, iteratively (recursion is what we are guarding against)."""
    depth = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            depth = max(depth, level)
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            depth = max(depth, level)
            stack.extend((v, level + 1) for v in node)
    return depth


def load_json(text: str | bytes, *, file: Where = None) -> Any:
    """``json.loads`` with bounded nesting and digit count: a ``RecursionError`` or a
    4,300-digit ``ValueError`` becomes a CmaxError naming the limit. Other decode errors
    propagate as ``ValueError`` so callers keep their own "invalid JSON" wording."""
    try:
        data = json.loads(text, parse_int=_json_int)
    except RecursionError:
        raise limit_error("JSON nesting", f"{MAX_JSON_DEPTH} levels", file=file) from None
    except _DigitsError as exc:
        raise limit_error(f"JSON integer of {exc.digits} digits",
                          f"{MAX_INT_DIGITS} digits", file=file) from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise limit_error("JSON nesting", f"{MAX_JSON_DEPTH} levels", file=file)
    return data


class _DigitsError(Exception):
    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _DigitsError(digits)
    return int(text)


def whole(value: float, *, file: Where = None, line: int | None = None,
          field: str | None = None) -> int:
    """``int(value)`` for a float read from evidence: ``inf`` and ``NaN`` (which ``int()``
    refuses with OverflowError/ValueError) are a CmaxError naming the field."""
    if not math.isfinite(value):
        raise EvidenceError(f"{value} is not a finite number", file=file, line=line, field=field,
                            expected="a finite integer",
                            fix="check that the file is the unmodified tool output")
    return int(value)


def csv_guarded(rows: Iterable[T], *, file: Where = None,
                line: int | None = None) -> Iterator[T]:
    """Rows of a ``csv.reader``/``DictReader``, with ``csv.Error`` (a field past the csv
    module's 128 KiB limit, a stray quote in strict mode) turned into one EvidenceError at
    the reader's current line (or ``line``, for a reader over a single line)."""
    iterator = iter(rows)
    while True:
        try:
            row = next(iterator)
        except StopIteration:
            return
        except csv.Error as exc:
            # the csv module counts a line only once it parsed: the failing one is the next
            done = getattr(rows, "line_num", None)
            where = line or (done + 1 if isinstance(done, int) else None)
            raise _csv_error(exc, file=file, line=where) from None
        yield row


def read_csv_header(reader: csv.DictReader[str], *, file: Where = None) -> None:
    """Read a ``DictReader``'s header row now (it caches it), under the same guard."""
    try:
        reader.fieldnames  # noqa: B018 - the property reads the header row
    except csv.Error as exc:
        raise _csv_error(exc, file=file, line=reader.line_num + 1) from None


def _csv_error(exc: csv.Error, *, file: Where, line: int | None) -> EvidenceError:
    if "field larger than field limit" in str(exc):
        return limit_error("a CSV field", f"{csv.field_size_limit():,} characters",
                           file=file, line=line)
    return EvidenceError(f"unreadable CSV row: {exc}", file=file, line=line,
                         fix="check that the file is the unmodified tool output")


def size_error(path: Path, size: int, limit: int, *, what: str = "file") -> EvidenceError:
    return limit_error(f"a {what} of {size:,} bytes", f"{limit:,} bytes ({limit >> 20} MiB)",
                       file=path)


def _check_size(stream: IO[bytes], path: Path, limit: int, what: str) -> None:
    size = os.fstat(stream.fileno()).st_size
    if size > limit:
        raise size_error(path, size, limit, what=what)


def read_bounded(path: Path, *, limit: int = MAX_TEXT_BYTES, what: str = "file") -> bytes:
    """The bytes of a file read whole, refused before reading when it holds more than
    ``limit`` (a 3 GiB incidents file in a 3 MB archive was a MemoryError). The size is
    taken from the open file and the read stops at ``limit`` + 1 bytes, so a file that
    grows, or lies about its size, is refused too. ``OSError`` propagates."""
    with path.open("rb") as fh:
        _check_size(fh, path, limit, what)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise size_error(path, len(data), limit, what=what)
    return data


def read_bounded_lines(path: Path, *, limit: int = MAX_TEXT_BYTES) -> list[bytes]:
    """The lines of a file read whole (newlines kept), under both bounds: the file's size
    before reading, each line's length while reading (:func:`bounded_lines`)."""
    with path.open("rb") as fh:
        _check_size(fh, path, limit, "file")
        return list(bounded_lines(fh, file=path))


def read_bounded_text(path: Path, *, limit: int = MAX_TEXT_BYTES, what: str = "file") -> str:
    """:func:`read_bounded` decoded as UTF-8, a byte-order mark dropped (Notepad writes
    one). ``UnicodeDecodeError`` propagates for callers that word it themselves."""
    return read_bounded(path, limit=limit, what=what).decode("utf-8-sig")


def bounded_lines(stream: IO[bytes], *, file: Where = None,
                  max_line: int = MAX_LINE_CHARS) -> Iterator[bytes]:
    """The lines of a binary stream (split on ``\\n``, newline kept), each refused as soon as
    it passes ``max_line`` bytes: ``readline`` is given a bound, so a 1 GiB "line" costs
    1 MiB of memory before the refusal, not 1 GiB."""
    number = 0
    while line := stream.readline(max_line + 2):
        number += 1
        body = len(line) - line.endswith(b"\n") - line.endswith(b"\r\n")
        if body > max_line:
            raise limit_error(f"a line of more than {max_line:,} characters",
                              f"{max_line:,} characters", file=file, line=number)
        yield line


def digest_lines(path: Path, *, lines: bool = True, max_line: int = MAX_LINE_CHARS) -> str:
    """SHA-256 of a file, every line's length checked on the same pass (``lines``; off for
    binary formats such as SQLite). Ingest digests each evidence file anyway; doing it
    before the parser runs makes the line bound hold for every reader of a large log (grep,
    the field reader, Polars), none of which could otherwise refuse a 1 GiB "line" before
    holding it whole. One ``find``/``rfind`` per MiB block: no per-line Python work."""
    digest = hashlib.sha256()
    run = 0  # bytes since the last newline
    number = 1  # line number of the current run
    with path.open("rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
            if not lines:
                continue
            first = block.find(b"\n")
            if first < 0:
                run += len(block)
            else:
                if run + first > max_line:
                    break
                number += block.count(b"\n")
                run = len(block) - block.rfind(b"\n") - 1
            if run > max_line:
                break
        else:
            return digest.hexdigest()
    raise limit_error(f"a line of more than {max_line:,} characters",
                      f"{max_line:,} characters", file=path, line=number)


_BLOCK = 1 << 20  # at most MAX_LINE_CHARS: a line inside one block is never over the limit


def json_safe(data: Any) -> Any:
    """A copy of JSON-bound data with every non-finite float replaced by ``None``: ``NaN``
    and ``Infinity`` are not JSON, and a consumer's parser would reject the whole output."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: json_safe(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [json_safe(value) for value in data]
    return data


def is_file_named(path: Path) -> bool:
    """``Path.is_file()`` that answers False instead of raising for a name the file system
    cannot hold (``ENAMETOOLONG``): callers that build a path from evidence content (an
    MLPerf ``submission_platform`` naming ``systems/<platform>.json``) get any length."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
