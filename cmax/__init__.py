"""cmax: rate GPU clouds against published reference results.

The pipeline (DESIGN.md): bundle -ingest-> Evidence -validate-> Findings -score-> Scorecard
-price-> PriceAdvice -render-> HTML / PDF / JSON. Each stage is a plain function importable
from here; the public names are pinned by ``tests/test_public_api.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "CmaxError",
    "Evidence",
    "Finding",
    "PriceAdvice",
    "Scorecard",
    "__version__",
    "assess",
    "ingest",
    "load_reference",
    "open_bundle",
    "price",
    "render_reports",
    "score",
    "validate",
]

# Stages whose sub-package has the same name as the function (cmax.ingest, ...) are imported
# eagerly: importing a sub-package binds its module to the parent's attribute, which would
# otherwise shadow the function. They only need Polars and pydantic. Rendering (WeasyPrint,
# matplotlib) stays lazy.
from cmax.ingest import ingest
from cmax.price import price
from cmax.score import score
from cmax.validate import validate

_LAZY = {
    "CmaxError": "cmax.errors",
    "Evidence": "cmax.evidence",
    "Finding": "cmax.findings",
    "PriceAdvice": "cmax.scorecard",
    "Scorecard": "cmax.scorecard",
    "assess": "cmax.pipeline",
    "load_reference": "cmax.reference",
    "open_bundle": "cmax.bundle",
    "render_reports": "cmax.render",
}

if TYPE_CHECKING:
    from cmax.bundle import open_bundle
    from cmax.errors import CmaxError
    from cmax.evidence import Evidence
    from cmax.findings import Finding
    from cmax.pipeline import assess
    from cmax.reference import load_reference
    from cmax.render import render_reports
    from cmax.scorecard import PriceAdvice, Scorecard


def __getattr__(name: str) -> Any:
    """Import stages on first use: ``import cmax`` must not pull in WeasyPrint."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'cmax' has no attribute {name!r}")
