"""The whole chain for one bundle: ingest -> validate -> score -> price."""

from __future__ import annotations

from pathlib import Path

from cmax.bundle import open_bundle
from cmax.ingest import ingest
from cmax.price import price
from cmax.reference import load_reference
from cmax.score import Rubric, load_rubric, score
from cmax.scorecard import Scorecard
from cmax.validate import validate


def assess(
    bundle_path: str | Path,
    *,
    rubric: Rubric | None = None,
    rubric_path: str | Path | None = None,
) -> Scorecard:
    """Rate one bundle; the returned Scorecard carries its PriceAdvice in ``.price``."""
    with open_bundle(bundle_path) as bundle:
        evidence = ingest(bundle)
        reference = load_reference(bundle.manifest.benchmark.reference)
        findings = validate(evidence, reference)
        rub = rubric or load_rubric(rubric_path)
        card = score(evidence, findings, reference, rub)
        advice = price(evidence, card, reference)
    return card.model_copy(update={"price": advice})
