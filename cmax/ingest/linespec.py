"""One declaration per step-line format, read by every reader.

A step line is found by a keyword, carries an iteration counter and a set of ``label: value``
numbers, and may be prefixed by what launchers and loggers put in front of it: ``srun
--label``'s ``0: ``, torchrun's ``[default0]:``, ``kubectl logs --timestamps``'
``2025-02-18T09:31:02.123456789Z ``, Megatron's `` [2025-02-18 09:31:02]``, NeMo's
``[NeMo I 2025-02-18 09:31:02 nemo_logging:393]``. A :class:`StepLine` declares all of that
once; the regex reader (:meth:`StepLine.build`) and the fast field reader
(:mod:`cmax.ingest._fields`, which learns a log's layout from the spec's own regexes) both read
it, so a field added here reaches both, with the same values.

The wall-clock stamp is the first ``date[ T]time`` printed before the line's first ``|``
(``STAMP``), read as UTC seconds since the epoch (``WALL_TIME``; a stamp without a zone is
taken as UTC: only differences between a log's own stamps are ever used). A line without one
has a null stamp.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from cmax.ingest.textlines import to_float, value_pattern

#: the step column holding a line's wall-clock stamp (UTC epoch seconds)
WALL_TIME = "wall_time_s"
# the first date and time in the line's first field; ``,`` is Python logging's decimal comma
STAMP = r"^[^|]*?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?)"
#: the shape of a stamp with no fraction and a space: read with one exact format, the fast case
PLAIN_STAMP_WIDTH = len("2025-02-18 09:31:02")


def stamp_seconds(stamp: pl.Expr, *, plain: bool = False) -> pl.Expr:
    """A printed stamp (``2025-02-18 09:31:02``, ``2025-02-18T09:31:02.5``,
    ``2025-02-18 09:31:02,250``) as UTC epoch seconds; null when it is not a real instant.

    ``plain``: every stamp is ``YYYY-MM-DD HH:MM:SS`` (no fraction, a space), read with that
    exact format, which Polars parses several times faster; the instant, and so the value, is
    the one the general reading gives. Both readers convert with this one function.
    """
    if plain:
        instant = stamp.str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False, time_unit="us")
    else:
        text = stamp.str.replace("T", " ", literal=True).str.replace(",", ".", literal=True)
        instant = text.str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us")
    return instant.dt.epoch("us").cast(pl.Float64) / 1e6


def whole_seconds(stamp: pl.Expr) -> pl.Expr:
    """A plain stamp (``YYYY-MM-DD HH:MM:SS``) as UTC epoch seconds in four bytes (UInt32: 1970
    to 2106), null when it is not a real instant in that span. Widened to Float64 it is the
    value :func:`stamp_seconds` gives (a whole number of seconds, exact in both types): a
    reader holding millions of steps keeps this until its table is built."""
    instant = stamp.str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False, time_unit="us")
    return instant.dt.epoch("s").cast(pl.UInt32, strict=False)


def wall_time(text: pl.Expr) -> pl.Expr:
    """The line's stamp (:data:`STAMP`) in seconds, or null."""
    return stamp_seconds(text.str.extract(STAMP, 1))


@dataclass(frozen=True)
class StepLine:
    """A step-line format: what finds it, what it carries, how each number is labelled.

    ``values`` maps a step column to its label (a regex); ``sep`` is what separates a label
    from its number; ``field_start`` anchors each label at the start of a ``|``-separated
    field (NeMo 2's ``key: value`` fields), which is what lets the fast field reader read the
    line as fields with the very same result. ``iteration`` has named groups ``iteration`` and
    ``max_iteration``. ``dtypes`` names the value columns both readers keep in another type
    than ``Float64`` (the printed number read as a float, then cast as Polars casts, null
    where it does not fit): a parser's own column, such as a counter it reads only to renumber
    steps, kept in four bytes a step instead of eight.
    """

    key: str
    iteration: str
    values: Mapping[str, str]
    sep: str = r"\s*:"
    field_start: bool = False
    dtypes: Mapping[str, pl.DataType] = field(default_factory=dict)
    #: columns always carried besides the values: the line, the counter, the stamp
    fixed: tuple[str, ...] = field(default=("line", "iteration", "max_iteration", WALL_TIME))

    @property
    def patterns(self) -> dict[str, str]:
        """Step column -> the regex whose group 1 is its number (read by both readers)."""
        return {column: value_pattern(label, sep=self.sep, field_start=self.field_start)
                for column, label in self.values.items()}

    def number(self, column: str, text: pl.Expr) -> pl.Expr:
        """``text`` (a printed number) as column ``column`` holds it (``to_float``, then
        :attr:`dtypes`'s cast); both readers convert with this."""
        value = to_float(text)
        dtype = self.dtypes.get(column)
        return value if dtype is None else value.cast(dtype, strict=False)

    @property
    def columns(self) -> list[str]:
        """The columns either reader gives, in this order."""
        return [*self.fixed, *self.values]

    def build(self, lines: pl.LazyFrame) -> pl.LazyFrame:
        """The regex reader: ``lines`` (``line``, ``text``) -> one row per line, :attr:`columns`."""
        text = pl.col("text")
        return (
            lines
            .select(
                pl.col("line"),
                text.str.extract_groups(self.iteration).alias("_iter"),
                wall_time(text).alias(WALL_TIME),
                *(self.number(column, text.str.extract(pattern, 1)).alias(column)
                  for column, pattern in self.patterns.items()),
            )
            .unnest("_iter")
            .with_columns(pl.col("iteration", "max_iteration").cast(pl.Int64, strict=False))
            .select(self.columns)
        )
