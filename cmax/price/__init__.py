"""Price advice for negotiation: Scorecard + quote -> PriceAdvice (see cmax.price.advice)."""

from __future__ import annotations

from cmax.price.advice import HOURS_PER_MONTH, price

__all__ = ["HOURS_PER_MONTH", "price"]

# `cmax.price(...)` calls the stage function: see cmax/_stage.py
from cmax._stage import make_callable as _make_callable

_make_callable(__name__)
