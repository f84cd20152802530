"""cmax: rate GPU clouds against published reference results.

The pipeline (docs/architecture.md): bundle -ingest-> Evidence -validate-> Findings -score->
Scorecard -price-> PriceAdvice -render-> HTML / PDF / JSON. Each stage is reachable from here
under its public name; the names are pinned by ``tests/test_public_api.py``.

``cmax.ingest``, ``cmax.validate``, ``cmax.score`` and ``cmax.price`` are the sub-packages
(``import cmax.score as s; s.Rubric`` works) and are callable as the stage of the same name
(``cmax.score(evidence, findings, reference)``): see :mod:`cmax._stage` for why.

Everything is imported on first use: ``import cmax`` (and ``import cmax.errors``) loads
neither Polars nor numpy nor pydantic, so ``cmax --help`` starts as fast as click allows and a
script that only wants :class:`CmaxError` pays nothing for the rest.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from cmax._about import __version__
from cmax._stage import give_path_forms as _give_path_forms

__all__ = [
    "CmaxError",
    "Evidence",
    "Finding",
    "PriceAdvice",
    "Scorecard",
    "__version__",
    "assess",
    "ingest",
    "ingest_bundle",
    "load_reference",
    "open_bundle",
    "price",
    "price_bundle",
    "render_reports",
    "sample_bundles",
    "score",
    "score_bundle",
    "validate",
    "validate_bundle",
]

# name -> module holding it; a name equal to its module's last part is the (callable)
# sub-package itself
_LAZY = {
    "CmaxError": "cmax.errors",
    "Evidence": "cmax.ingest.evidence",
    "Finding": "cmax.findings",
    "PriceAdvice": "cmax.scorecard",
    "Scorecard": "cmax.scorecard",
    "assess": "cmax.pipeline",
    "ingest": "cmax.ingest",
    "load_reference": "cmax.reference",
    "open_bundle": "cmax.submission.bundle",
    "price": "cmax.price",
    "render_reports": "cmax.render",
    "sample_bundles": "cmax.submission.samples",
    "score": "cmax.score",
    "validate": "cmax.validate",
}

if TYPE_CHECKING:
    from cmax import ingest, price, score, validate
    from cmax.errors import CmaxError
    from cmax.findings import Finding
    from cmax.ingest.evidence import Evidence
    from cmax.pipeline import assess
    from cmax.reference import load_reference
    from cmax.render import render_reports
    from cmax.scorecard import PriceAdvice, Scorecard
    from cmax.submission.bundle import open_bundle
    from cmax.submission.samples import sample_bundles


def ingest_bundle(bundle: str | os.PathLike[str]) -> Evidence:
    """``cmax.ingest("bundle/")``: the bundle's evidence tables, read and resolved (a folder
    or an archive; the tables are read before the archive's temporary folder goes)."""
    pipeline = importlib.import_module("cmax.pipeline")
    with pipeline.load(bundle) as loaded:
        case: Evidence = loaded.case
    return case


def validate_bundle(bundle: str | os.PathLike[str]) -> list[Finding]:
    """``cmax.validate("bundle/")``: the bundle's findings, errors first (what
    ``cmax validate`` prints)."""
    pipeline = importlib.import_module("cmax.pipeline")
    with pipeline.load(bundle) as loaded:
        findings: list[Finding] = list(loaded.findings)
    return findings


def score_bundle(bundle: str | os.PathLike[str], *, rubric: str | os.PathLike[str] | None = None,
                 ) -> Scorecard:
    """``cmax.score("bundle/")``: the bundle's scorecard (with its price advice in ``.price``
    when the bundle holds a quote); ``rubric``: a rubric TOML (default: the shipped one)."""
    pipeline = importlib.import_module("cmax.pipeline")
    card: Scorecard = pipeline.assess(bundle, rubric_path=rubric)
    return card


def price_bundle(bundle: str | os.PathLike[str], *, rubric: str | os.PathLike[str] | None = None,
                 ) -> PriceAdvice:
    """``cmax.price("bundle/")``: the bundle's price advice (quoted, parity and ask $/GPU-hour
    with the arithmetic). A bundle without a quote ([pricing]) raises :class:`CmaxError`."""
    card = score_bundle(bundle, rubric=rubric)
    if card.price is None:
        errors = importlib.import_module("cmax.errors")
        raise errors.CmaxError("the manifest has no [pricing] table, so there is no quote to "
                               "advise on", file=os.fspath(bundle), field="pricing",
                               fix="add a [pricing] table with the quoted usd_per_gpu_hour")
    return card.price


# `cmax.price("bundle/")` calls price_bundle: the stage sub-packages sit below the pipeline
# these functions run, so this package hands them down (see cmax/_stage.py)
_give_path_forms(ingest=ingest_bundle, validate=validate_bundle, score=score_bundle,
                 price=price_bundle)


def __getattr__(name: str) -> Any:
    """Import a public name on first use (see the module docstring)."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'cmax' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    if module_name == f"cmax.{name}":
        return module  # the callable stage sub-package (importing it bound it here too)
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
