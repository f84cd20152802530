"""Price advice for negotiation: Scorecard + quote -> PriceAdvice (see cmax.price.advice)."""

from __future__ import annotations

from cmax.price.advice import HOURS_PER_MONTH, price

__all__ = ["HOURS_PER_MONTH", "price"]
