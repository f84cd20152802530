"""Price advice for negotiation: Scorecard + quote -> PriceAdvice (see cmax.price.advice).

``price`` loads on first use, so report code that reads finished scorecards can import
:mod:`cmax.price.drivers` without the rating stack.
"""

from __future__ import annotations

import typing

if typing.TYPE_CHECKING:
    from cmax.price.advice import price
    from cmax.price.drivers import HOURS_PER_MONTH

__all__ = ["HOURS_PER_MONTH", "price"]

from cmax._stage import lazy_names as _lazy_names

__getattr__ = _lazy_names(__name__, {"price": "advice", "HOURS_PER_MONTH": "drivers"})

# `cmax.price(...)` calls the stage function: see cmax/_stage.py
from cmax._stage import make_callable as _make_callable

_make_callable(__name__)
