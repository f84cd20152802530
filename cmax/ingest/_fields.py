"""Step lines read as ``|``-separated fields: the fast reader for large NeMo 2 logs.

NeMo 2 prints a step as one line of fields joined by `` | ``:
``Training epoch 0, iteration 40/49 | lr: 6.1e-06 | ... | train_step_timing in s: 10.08 | ...``.
The regex reader (:mod:`cmax.ingest.formats.nemo`) pulls each number out with a capture group, about
400 ns a field: on a long quiet run (two million step lines in a GiB) that is most of the
time. Here Polars' CSV reader splits the lines at ``|`` (native, both cores, a bounded chunk at
a time) and each number is cut out of a known field with a few string kernels instead.

What a field holds is learned once, from the first step line (:func:`learn`), with the
regexes of the line's declaration (:class:`cmax.ingest.linespec.StepLine`): the text of field 0
before and after the iteration number (with, when the line has one, a wall-clock stamp at a
fixed place in it), the key part of every other field (through its colon and the spaces after
it) and which field holds which value. A line is read here only when it has exactly that
layout: field 0 is that text around a plain decimal iteration (and a stamp of the same shape
that is a real instant), every key part is the same, no field is missing or extra, and every
value wanted is a plain finite number. For such a line the regex reader would pick the very
same fields (its labels are anchored at a field start,
:func:`cmax.ingest.textlines.value_after`), so the row is the same as the regex reader's;
``tests/ingest`` compares both readers on hostile lines.

Every other line that could hold the keyword (another layout, ``nan``, ANSI colour, another
rank's prefix, a line with a ``|`` or the keyword anywhere) comes back by line number
(``others``): the caller reads those lines' text and runs its regexes on them. The fast path
therefore never drops or alters a step; it only declines lines it cannot prove it reads the
same way.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from cmax.ingest import _greplines as greplines
from cmax.ingest import textlines
from cmax.ingest.linespec import (
    PLAIN_STAMP_WIDTH,
    STAMP,
    WALL_TIME,
    StepLine,
    stamp_seconds,
    whole_seconds,
)

if TYPE_CHECKING:
    from polars._typing import CsvEncoding

# Polars' streaming CSV source reads 16 MiB chunks and keeps several in flight by default; the
# transient memory follows the bytes in flight, so smaller chunks with one prefetched keep a
# dense log's peak down for the same CPU time (figures: benchmarks/bench_ingest.py). Set only
# for the scan (:func:`_csv_settings`); a user's own setting wins.
_CSV_ENV = {"POLARS_CSV_CHUNK_SIZE": str(768 << 10), "POLARS_CSV_CHUNK_PREFETCH_LIMIT": "1"}
# rows the streaming scan hands over at a time (about 8 MB of steps)
_BATCH_ROWS = 1 << 17
# the row index Polars gives a line is 32-bit: a file this large could overflow it
_MAX_BYTES = 1 << 32
# a line read as fields has its iteration (in four bytes: an iteration past UInt32 is left to
# the regex reader); any other line's is null
_FAST = pl.col("iteration").is_not_null()


@dataclass(frozen=True)
class Layout:
    """The fields of one step line, learned from a real one (:func:`learn`)."""

    #: field 0 up to the iteration number, and after it (``/MAX`` and what follows); with a
    #: stamp, ``lead`` is the text before it and ``head`` the text after it
    head: str
    tail: str
    max_iteration: int
    #: every other field's text up to its value: the key, its colon, the spaces after it
    keys: tuple[str, ...]
    #: output column -> index of the field holding its number (1 = first field after field 0);
    #: None: the line has no such field (the column is null, as the regex reader makes it)
    values: Mapping[str, int | None]
    lead: str = ""
    #: the stamp's width and whether it is plain (``YYYY-MM-DD HH:MM:SS``); None: no stamp
    stamp: tuple[int, bool] | None = None
    #: value columns kept in another type than Float64 (the spec's ``dtypes``)
    dtypes: Mapping[str, pl.DataType] = field(default_factory=dict)


_STAMP = re.compile(STAMP)
# what the regex reader takes for a stamp, checked on the fast reader's fixed-width slice
_STAMP_SHAPE = r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?$"


def learn(line: str, labels: Mapping[str, re.Pattern[str]], iteration: re.Pattern[str],
          dtypes: Mapping[str, pl.DataType] | None = None) -> Layout | None:
    """The layout of ``line`` (one step line), or None when it cannot be read as fields.

    ``labels`` map output columns to the regexes the regex reader uses (group 1: the number,
    anchored at a field start); ``iteration`` is its iteration regex (groups 1 and 2: iteration
    and max iteration); ``dtypes`` the columns kept in another type than Float64
    (:attr:`StepLine.dtypes`). A label the line does not hold gives a null column, as it
    would there.
    """
    if "\r" in line or "\x00" in line:
        return None
    fields = line.split("|")
    it = iteration.search(line)
    if it is None or it.end(2) > len(fields[0]):
        return None
    head, number, tail = fields[0][: it.start(1)], it.group(1), fields[0][it.end(1):]
    lead, stamp = "", None
    if (found_stamp := _STAMP.search(fields[0])) is not None:
        if found_stamp.end() > it.start(1):
            return None  # a stamp after the counter: not a layout this reader knows
        lead, text = head[: found_stamp.start(1)], found_stamp.group(1)
        stamp = (len(text), len(text) == PLAIN_STAMP_WIDTH and text[10] == " ")
        head = head[found_stamp.end():]
    max_text = it.group(2)
    if not (number.isascii() and number.isdigit() and max_text.isascii() and max_text.isdigit()):
        return None
    keys: list[str] = []
    for part in fields[1:]:
        colon = part.find(":")
        if colon < 0:
            return None
        rest = part[colon + 1:]
        keys.append(part[: colon + 1] + rest[: len(rest) - len(rest.lstrip())])
    starts = [len(fields[0]) + 1]
    for part in fields[1:-1]:
        starts.append(starts[-1] + len(part) + 1)
    values: dict[str, int | None] = {}
    for column, rx in labels.items():
        found = rx.search(line)
        if found is None:
            values[column] = None
            continue
        index = max((i for i, s in enumerate(starts) if s <= found.start(1)), default=None)
        if index is None or found.start(1) != starts[index] + len(keys[index]):
            return None  # the number is not where the field's value starts
        value = fields[index + 1][len(keys[index]):].rstrip()
        if found.group(1) != value or not _finite(value):
            return None
        values[column] = index + 1
    if all(index is None for index in values.values()):
        return None  # nothing to read as fields
    return Layout(head=head, tail=tail, max_iteration=int(max_text), keys=tuple(keys),
                  values=values, lead=lead, stamp=stamp, dtypes=dict(dtypes or {}))


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _names(layout: Layout) -> list[str]:
    """Column names for a line's fields: one more than the layout (a line with more)."""
    return [f"f{i}" for i in range(len(layout.keys) + 2)]


def _read(frame: pl.LazyFrame, layout: Layout) -> pl.LazyFrame:
    """``line``, ``iteration`` (null: the line is not in the layout, :data:`_FAST`), the stamp
    and the value columns the layout holds, of ``frame``'s lines (``line``, fields ``f0``... as
    :func:`_names`). The iteration (UInt32) and a plain stamp (:func:`whole_seconds`) are
    kept in four bytes each while the streaming engine holds them; :func:`_widen` gives them
    the steps table's types.

    Each number is cut out once, into a column, and the tests read the columns: an expression
    used twice would be evaluated twice in the streaming engine."""
    f0 = pl.col("f0")
    rest = [pl.col(name) for name in _names(layout)[1:]]
    places = {column: i for column, i in layout.values.items() if i is not None}
    after = len(layout.lead)  # where field 0's text after the stamp starts
    stamped: list[pl.Expr] = []
    if layout.stamp is not None:
        width, plain = layout.stamp
        frame = frame.with_columns(f0.str.slice(len(layout.lead), width).alias("_stamp"))
        seconds = whole_seconds if plain else stamp_seconds
        stamped = [seconds(pl.col("_stamp")).alias(WALL_TIME)]
        after += width
    head = f0.str.slice(after) if after else f0
    frame = frame.with_columns(
        head.str.slice(len(layout.head), head.str.len_bytes() - len(layout.head)
                       - len(layout.tail)).alias("_number"),
        *stamped,
        *(rest[i - 1].str.slice(len(layout.keys[i - 1])).str.strip_chars_end()
          .cast(pl.Float64, strict=False).alias(column) for column, i in places.items()),
    ).with_columns(pl.col("_number").cast(pl.UInt32, strict=False).alias("iteration"))
    number, iteration = pl.col("_number"), pl.col("iteration")
    # plain decimal as the regexes read it: what parses as an unsigned integer, without the
    # sign or leading zero they do not take
    decimal = ~(number.str.starts_with("+")
              | (number.str.starts_with("0") & (number.str.len_bytes() > 1)))
    checks = [f0.str.starts_with(layout.lead + ("" if stamped else layout.head)),
              f0.str.ends_with(layout.tail), iteration.is_not_null(), decimal,
              rest[len(layout.keys)].is_null()]
    if stamped:
        checks += [head.str.starts_with(layout.head), pl.col(WALL_TIME).is_not_null(),
                   pl.col("_stamp").str.contains(_STAMP_SHAPE)]
    checks += [part.str.starts_with(key)
               for part, key in zip(rest[:-1], layout.keys, strict=True)]
    checks += [pl.col(column).is_finite() for column in places]
    return frame.select(
        pl.col("line"),
        pl.when(pl.all_horizontal(checks)).then(iteration).alias("iteration"),
        *([pl.col(WALL_TIME)] if stamped else []),
        *(pl.col(column).cast(layout.dtypes[column], strict=False) if column in layout.dtypes
          else pl.col(column) for column in places),
    )


def parse_grep(data: bytes, layout: Layout,
               build: Callable[[pl.LazyFrame], pl.LazyFrame]) -> pl.DataFrame:
    """``build`` applied to ``grep -n`` output (whole ``N:text`` lines), as
    :func:`textlines.query_lines` calls it: the lines in ``layout`` read as fields, the others
    by ``build``'s regexes; in line order, ``build``'s columns."""
    frame = pl.read_csv(
        data, separator="|", has_header=False, quote_char=None, truncate_ragged_lines=True,
        schema={name: pl.String() for name in _names(layout)}, missing_columns="insert",
        encoding="utf8-lossy")
    numbered = pl.col("f0").str.splitn(":", 2)
    got = _read(frame.lazy().with_columns(numbered.struct.field("field_0").cast(pl.Int64)
                                          .alias("line"),
                                          numbered.struct.field("field_1").alias("f0")),
                layout).collect()
    got = _widen(got, layout)
    if got.get_column("iteration").null_count() == 0:
        return _merge(_complete(got, layout), textlines.empty_result(build))
    regexed = build(textlines.grep_lines(data).lazy().filter(
        pl.col("line").is_in(got.filter(~_FAST).get_column("line").implode())))
    return _merge(_complete(got.filter(_FAST), layout), regexed.collect())


def _complete(fast: pl.DataFrame, layout: Layout) -> pl.DataFrame:
    """The layout's rows with the constant columns (scalar columns: the millions of rows of a
    dense log carry only what varies)."""
    absent = [column for column, i in layout.values.items() if i is None]
    if layout.stamp is None:
        absent.append(WALL_TIME)
    return fast.with_columns(
        pl.lit(layout.max_iteration, pl.Int64).alias("max_iteration"),
        *(pl.lit(None, layout.dtypes.get(column, pl.Float64())).alias(column)
          for column in absent))


def _widen(frame: pl.DataFrame, layout: Layout) -> pl.DataFrame:
    """:func:`_read`'s rows with the steps table's types: the iteration as Int64, a plain stamp
    (read as whole seconds) as Float64 seconds, the same value."""
    plain = layout.stamp is not None and layout.stamp[1]
    return frame.with_columns(pl.col("iteration").cast(pl.Int64),
                              *([pl.col(WALL_TIME).cast(pl.Float64)] if plain else []))


def _merge(fast: pl.DataFrame, regexed: pl.DataFrame) -> pl.DataFrame:
    """The rows of both readers in line order, with the regex reader's columns."""
    fast = fast.select(regexed.columns)
    if not regexed.height:
        return fast
    return pl.concat([fast, regexed.cast(fast.schema)]).sort("line", maintain_order=True)


def _scan(path: Path, layout: Layout, key: str, encoding: CsvEncoding) -> pl.DataFrame:
    names = _names(layout)
    lines = pl.scan_csv(
        path, separator="|", has_header=False, quote_char=None, truncate_ragged_lines=True,
        schema={name: pl.String() for name in names}, missing_columns="insert",
        row_index_name="line", row_index_offset=1, encoding=encoding)
    # a step line has a '|' or, alone in its field, the key: every other line is dropped by
    # these two cheap tests before the field tests run (on a noisy log they are 39 lines in 40)
    maybe = pl.col("f1").is_not_null() | pl.col("f0").str.contains(key, literal=True)
    query = _read(lines.filter(maybe), layout)
    # each batch is made one buffer per column, in the table's types, as it comes: the table
    # is a few dozen arrays, not thousands of morsels (less allocator slack at the peak, and
    # every later pass over it runs over a few arrays)
    parts = [_widen(batch.rechunk(), layout)
             for batch in query.collect_batches(chunk_size=_BATCH_ROWS, engine="streaming")]
    if not parts:
        return _widen(pl.DataFrame(schema=query.collect_schema()), layout)
    return pl.concat(parts, rechunk=False)


@contextmanager
def _csv_settings() -> Iterator[None]:
    """:data:`_CSV_ENV` in the environment for the block only (unset names are removed again),
    so reading a log changes nothing else in the process."""
    added = [name for name in _CSV_ENV if name not in os.environ]
    for name in added:
        os.environ[name] = _CSV_ENV[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def scan(path: Path, layout: Layout, key: str) -> tuple[pl.DataFrame, list[int]] | None:
    """The steps of every line of ``path`` in ``layout`` (``line``, ``iteration``,
    ``max_iteration`` and every value column, in file order), and the numbers of the other lines
    that may hold ``key`` (the caller reads those with its regexes). None: not for this file.

    The file is read as strict UTF-8 first (~8% faster); one that is not is read again with
    bad bytes replaced, as every other reader does.
    """
    size = path.stat().st_size
    if size >= _MAX_BYTES:
        return None
    with _csv_settings():
        try:
            frame = _scan(path, layout, key, "utf8")
        except pl.exceptions.ComputeError:
            frame = _scan(path, layout, key, "utf8-lossy")
    others = (frame.filter(~_FAST).get_column("line").to_list()
              if frame.get_column("iteration").null_count() else [])
    return _complete(frame.filter(_FAST) if others else frame, layout), others


# more other lines than this and the regex reader reads the whole file instead: fetching
# lines by number costs more than grep then
OTHERS_MAX = 100_000
# step lines of the file's top tried for a layout (the first may be an odd one)
_SAMPLES = 8


class StepQuery:
    """The step rows of a log in two steps, like :class:`textlines.LineQuery`.

    ``spec`` declares the line: its regex reader is ``spec.build`` and the layout is checked
    against the same regexes (``spec.patterns``, ``spec.iteration``). Small files, files
    without a readable layout and files with many lines in other layouts go to the regex
    reader whole. On a large log with sparse step lines grep starts
    before the layout is learned from the top, and :meth:`collect`'s ``meanwhile`` (the head's
    facts) runs while grep reads: both overlap grep's pass over the file.
    """

    def __init__(self, path: Path, spec: StepLine) -> None:
        key = spec.key
        self.path, self.build, self.key = path, spec.build, key
        self.layout: Layout | None = None
        self._lines: textlines.LineQuery | None = None
        try:
            log = greplines.top(path, key)
        except OSError as exc:
            raise textlines.reader_error(exc, path) from None
        self.dense = log.dense
        if not self.dense:  # grep first: it works while the layout is learned
            self._lines = textlines.LineQuery(path, [key])
        try:
            if log.large:
                self.layout = _layout(log.found, {c: re.compile(p)
                                                  for c, p in spec.patterns.items()},
                                      re.compile(spec.iteration), spec.dtypes)
        except BaseException:
            self.__exit__()  # not yet in a with block: stop grep here
            raise

    def __enter__(self) -> StepQuery:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lines is not None:
            self._lines.close()

    def collect(self, meanwhile: Callable[[], None] | None = None) -> pl.DataFrame:
        """The step rows ``build`` gives for every line holding the key, in file order;
        ``meanwhile`` runs once, while grep reads (``textlines.LineQuery.collect``) or, on a
        dense log, in a thread beside the scan (:func:`_beside`)."""
        path, build, key, layout = self.path, self.build, self.key, self.layout
        if layout is None or not self.dense:
            lines = self._lines or textlines.LineQuery(path, [key])
            self._lines = None
            with lines:
                if layout is None:
                    return lines.collect(build, meanwhile=meanwhile)
                return lines.collect(build, lambda data: parse_grep(data, layout, build),
                                     meanwhile)
        with _beside(meanwhile):
            try:
                got = scan(path, layout, key)
                if got is None or len(got[1]) > OTHERS_MAX:
                    return textlines.query_lines(
                        path, build, keys=[key],
                        parse=lambda data: parse_grep(data, layout, build))
                steps, others = got
                return _merge(steps,
                              build(textlines.lines_at(path, others, key).lazy()).collect())
            except (pl.exceptions.PolarsError, OSError) as exc:
                raise textlines.reader_error(exc, path) from None


@contextmanager
def _beside(work: Callable[[], None] | None) -> Iterator[None]:
    """Run ``work`` (the head's facts: Python, about 0.1 s) in a thread while the block runs.

    The scan spends its time in Polars, which releases the GIL, and its table peaks at the
    end, long after the head's buffers are gone; done first, the work would delay the scan by
    as much on two cores. ``work``'s own error, if any, is raised after the block, before one
    of the block's (the order they had when the work ran first).
    """
    if work is None:
        yield
        return
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the caller's thread below
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()
        if failed:
            raise failed[0]


def _layout(found: Sequence[tuple[int, bytes]], labels: Mapping[str, re.Pattern[str]],
            iteration: re.Pattern[str], dtypes: Mapping[str, pl.DataType]) -> Layout | None:
    """The layout of the first of the top step lines (``found``) that has one, else None."""
    for _, raw in found[:_SAMPLES]:
        text = raw.decode("utf-8", errors="replace")
        if text.endswith("\r"):
            text = text[:-1]
        if (layout := learn(text, labels, iteration, dtypes)) is not None:
            return layout
    return None
