"""Slurm's printed times, shared by the sacct reader and llmb-run's job database (which stores
sacct's own strings): ``Elapsed`` as ``[D-]HH:MM:SS`` (SchedMD/slurm src/common/parse_time.c
``secs2time_str`` @ 284c3b95) and dates as ``%FT%T`` (``_make_time_str_internal``)."""

from __future__ import annotations

import datetime as dt
import re

_ELAPSED = re.compile(r"^(?:(\d+)-)?(\d+):(\d\d):(\d\d)$")


def elapsed_seconds(text: str) -> float | None:
    """``[D-]HH:MM:SS`` (sacct's Elapsed) in seconds; None for ``Unknown``/``INVALID``."""
    match = _ELAPSED.match(text.strip())
    if not match:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def stamp(text: str) -> float | None:
    """A sacct date (``%FT%T``; llmb-run's ISO stamps may carry a zone) as UTC epoch seconds;
    None for Unknown/None."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
        return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()
    except ValueError:
        return None
