"""Lenient number coercion for values read from evidence and reference rows.

Parsed files and reference rows carry numbers as ints, floats, strings or nulls; every stage
needs the same answer to "is this a usable number?". A bool is never a number here (``True``
would otherwise count as 1 GPU), and an unparseable value is None, never a guess.
"""

from __future__ import annotations

from typing import Any


def as_int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


def as_float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
