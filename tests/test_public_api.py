"""Pin the public API: renaming or dropping any of these breaks users' scripts."""

from __future__ import annotations

import cmax

PUBLIC = {
    "CmaxError", "Evidence", "Finding", "PriceAdvice", "Scorecard", "__version__", "assess",
    "ingest", "load_reference", "open_bundle", "price", "render_reports", "score", "validate",
}


def test_public_names_are_pinned() -> None:
    assert set(cmax.__all__) == PUBLIC


def test_every_public_name_resolves() -> None:
    for name in cmax.__all__:
        assert getattr(cmax, name) is not None, name


def test_stage_functions_are_callables() -> None:
    for name in ("assess", "ingest", "validate", "score", "price", "render_reports",
                 "load_reference", "open_bundle"):
        assert callable(getattr(cmax, name)), name
