"""The reference look-ups scoring and pricing read: re-exported from :mod:`cmax.reference.view`.

There is one reference adapter (:mod:`cmax.reference.view`, shared with validation); this
module keeps the import path the scoring modules and ``cmax.price`` use.
"""

from __future__ import annotations

from cmax.reference.view import (
    ReferenceData,
    RefView,
    canonical_gpu,
    market_price,
    num,
    optional_lookup,
    text,
)

__all__ = ["RefView", "ReferenceData", "canonical_gpu", "market_price", "num", "optional_lookup",
           "text"]
