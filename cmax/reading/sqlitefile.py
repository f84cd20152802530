"""Reading an SQLite database from evidence (llmb-run's job history) inside stated bounds,
and without writing anything beside it.

An SQLite file is a program as much as data: its schema may hold views (a recursive view
counting to 10^12 hangs a ``SELECT``; one yielding 10 MB strings per row exhausts memory),
virtual tables (modules cmax never loads), generated columns computed at each read, column
defaults a gigabyte long in total across rows, and triggers. So a database is read only
through :func:`open_sqlite` and :func:`read_table`:

- opened ``mode=ro&immutable=1``: SQLite takes no locks and never looks for, creates or
  writes a ``-wal`` or ``-shm`` file (``mode=ro`` alone still creates ``-shm`` beside a WAL
  database); nothing is ever written, so no trigger can fire. A non-empty ``-wal`` beside
  the database holds changes an immutable reader would not see: refused, never half read.
- ``trusted_schema=OFF``: functions with side effects are not run from the schema;
- the file at most :data:`~cmax.reading.limits.MAX_SQLITE_BYTES`, each value at most
  :data:`~cmax.reading.limits.MAX_SQLITE_VALUE_BYTES` (``SQLITE_LIMIT_LENGTH``), every query at most
  :data:`~cmax.reading.limits.MAX_SQLITE_STEPS` virtual-machine instructions (a progress handler);
- only an ordinary table is read (no view, virtual table or virtual generated column), of at
  most :data:`~cmax.reading.limits.MAX_SQLITE_COLUMNS` columns, and the bytes of the values read are
  added up against the file's own bound, which a real table can never exceed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from cmax.errors import EvidenceError
from cmax.reading.limits import (
    MAX_SQLITE_BYTES,
    MAX_SQLITE_COLUMNS,
    MAX_SQLITE_STEPS,
    MAX_SQLITE_VALUE_BYTES,
    limit_error,
    size_error,
)

_TICK = 10_000  # instructions between two calls of the progress handler
_FIX = "check that the file is the unmodified tool output"

if TYPE_CHECKING:  # the module itself is imported by the functions that open a database
    import sqlite3


class _Budget:
    """The progress handler: counts instructions, and stops a query past the budget."""

    def __init__(self) -> None:
        self.ticks = 0
        self.spent = False

    def __call__(self) -> int:
        self.ticks += 1
        self.spent = self.ticks * _TICK > MAX_SQLITE_STEPS
        return int(self.spent)


@contextmanager
def open_sqlite(path: Path, *, what: str = "SQLite database") -> Iterator[sqlite3.Connection]:
    """A read-only, immutable, bounded connection to ``path`` for a ``with`` block."""
    import sqlite3

    size = path.stat().st_size
    if size > MAX_SQLITE_BYTES:
        raise size_error(path, size, MAX_SQLITE_BYTES, what=what)
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise EvidenceError(f"the {what} has changes not yet written into it, in {wal.name}",
                            file=path, expected="a database file complete on its own",
                            fix=f"on a copy, run `sqlite3 {path.name} 'PRAGMA "
                            "wal_checkpoint(TRUNCATE)'` and bundle the database alone")
    try:
        con = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1",
                              uri=True)
    except sqlite3.Error as exc:
        raise EvidenceError(f"cannot open the {what}: {exc}", file=path) from None
    budget = _Budget()
    try:
        con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_SQLITE_VALUE_BYTES)
        con.set_progress_handler(budget, _TICK)
        con.execute("PRAGMA trusted_schema = OFF")
        yield con
    except UnicodeDecodeError as exc:  # a text value that is not UTF-8
        raise EvidenceError(f"the {what} holds text that is not UTF-8 (at byte {exc.start:,} "
                            "of a value)", file=path, fix=_FIX) from None
    except sqlite3.Error as exc:
        if budget.spent:
            raise limit_error(f"a query of the {what}",
                              f"{MAX_SQLITE_STEPS:,} SQLite instructions", file=path) from None
        if "too big" in str(exc):
            raise limit_error(f"a value in the {what}", f"{MAX_SQLITE_VALUE_BYTES:,} bytes",
                              file=path) from None
        raise
    finally:
        con.close()


def table_columns(con: sqlite3.Connection, table: str, *, file: Path) -> list[str] | None:
    """The columns of ``table`` when it is an ordinary table (None when there is no such
    table); a view, a virtual table, a virtual generated column or more than
    :data:`~cmax.reading.limits.MAX_SQLITE_COLUMNS` columns is one error."""
    found = con.execute("SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE",
                        (table,)).fetchall()
    if not found:
        return None
    kind, sql = found[0]
    if kind != "table" or str(sql or "").lstrip().upper().startswith("CREATE VIRTUAL"):
        raise EvidenceError(f"`{table}` is {'a view' if kind == 'view' else 'a virtual table'}"
                            ", not a table of rows", file=file,
                            expected=f"an ordinary `{table}` table", fix=_FIX)
    columns = con.execute(f"PRAGMA table_xinfo({quote_name(table)})").fetchall()
    # table_xinfo's hidden: 2 a virtual generated column (computed at each read)
    if any(hidden == 2 for *_, hidden in columns):
        raise EvidenceError(f"`{table}` has a generated column computed at each read",
                            file=file, expected="a table of stored values", fix=_FIX)
    if len(columns) > MAX_SQLITE_COLUMNS:
        raise limit_error(f"a `{table}` table of {len(columns)} columns",
                          f"{MAX_SQLITE_COLUMNS} columns", file=file)
    return [str(c[1]) for c in columns]


def quote_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def read_rows(cursor: sqlite3.Cursor, *, file: Path) -> Iterator[Any]:
    """The rows of an executed query, the bytes of their values added up against
    :data:`~cmax.reading.limits.MAX_SQLITE_BYTES`: a table's stored values can never exceed its
    file, but a column default added by ``ALTER TABLE`` is repeated in every older row."""
    total = 0
    for row in cursor:
        total += sum(len(v) for v in row if isinstance(v, (str, bytes)))
        if total > MAX_SQLITE_BYTES:
            raise limit_error("the values read from the database",
                              f"{MAX_SQLITE_BYTES:,} bytes (the file's own bound)", file=file)
        yield row
