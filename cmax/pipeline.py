"""The whole chain for one bundle: ingest -> resolve -> validate -> score -> price.

Ingest reads the files; :func:`cmax.resolve.case.resolve` turns them into the case while the bundle
is still open; every later stage reads only the case (docs/architecture.md).

Commands that need only part of the chain (``cmax validate``) use :func:`load` so that every
command reports the same user errors the same way (unknown GPU or workload: exit 2).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cmax.errors import BundleError, CmaxError, ManifestError
from cmax.findings import Finding
from cmax.ingest import ingest
from cmax.ingest.evidence import declared_files
from cmax.price.units import check_quote_unit
from cmax.reading.suggest import did_you_mean
from cmax.reference import Reference, load_reference
from cmax.resolve.case import Case, resolve
from cmax.submission.bundle import Bundle, open_bundle
from cmax.submission.manifest import MANIFEST_NAME
from cmax.validate import validate

if TYPE_CHECKING:
    from cmax.score import Rubric
    from cmax.scorecard import Scorecard
    from cmax.submission.intake.draft import Commercial


@dataclass(frozen=True)
class Loaded:
    """A bundle read and checked: its case, the reference it is judged against, findings."""

    bundle: Bundle
    evidence: Case
    reference: Reference
    findings: list[Finding]

    @property
    def case(self) -> Case:
        return self.evidence


def manifest_label(bundle: Bundle) -> str:
    """How to name the manifest in messages: inside an archive, say which archive."""
    if bundle.source.is_dir():
        return str(bundle.root / MANIFEST_NAME)
    return f"{bundle.source}:{MANIFEST_NAME}"


def check_known_ids(bundle: Bundle, reference: Reference) -> None:
    """Unknown GPU, interconnect or workload ids and a quote in another unit are user errors
    (exit 2), not findings: nothing can be rated against them."""
    label = manifest_label(bundle)
    gpu = bundle.manifest.system.gpu
    try:
        reference.gpu(gpu)
    except CmaxError as exc:
        hint = did_you_mean(gpu, [name for spec in reference.gpus.values()
                                  for name in (spec.id, *spec.aliases)])
        raise ManifestError(
            f"unknown GPU {gpu!r}" + (f"; {hint}" if hint else ""), file=label,
            field="system.gpu",
            expected=exc.expected or "a GPU id from `cmax reference list`",
            fix="use a GPU id from the reference catalogue, e.g. h100-sxm",
        ) from None
    interconnect = bundle.manifest.system.interconnect
    if interconnect is not None:
        try:
            reference.interconnect(interconnect)
        except CmaxError as exc:
            raise ManifestError(
                f"unknown interconnect {interconnect!r}", file=label,
                field="system.interconnect", expected=exc.expected, fix=exc.fix) from None
    check_quote_unit(bundle.manifest, reference.economics, reference.gpu(gpu).id, source=label)
    known = sorted({str(w) for w in reference.baselines["workload"].unique().to_list()})
    for i, run in enumerate(bundle.manifest.runs):
        if not reference.has_model(run.workload):
            hint = did_you_mean(run.workload, [name for arch in reference.models.values()
                                               for name in (arch.id, *arch.aliases)])
            raise ManifestError(
                f"unknown workload {run.workload!r}" + (f"; {hint}" if hint else ""),
                file=label, field=f"runs[{i}].workload",
                expected="one of " + ", ".join(known),
                fix="use a model id from `cmax reference list`",
            )


def check_declared_files(bundle: Bundle) -> None:
    """Name every missing or escaping file at once, so one fix-and-rerun round suffices."""
    problems: list[tuple[str, str, CmaxError]] = []
    for key, rel in declared_files(bundle.manifest):
        try:
            bundle.resolve(rel, field=key)
        except CmaxError as exc:
            problems.append((key, rel, exc))
    if len(problems) == 1:
        raise problems[0][2]
    if problems:
        listed = "; ".join(f"{key} = {rel!r}" for key, rel, _ in problems)
        raise BundleError(
            f"{len(problems)} declared files are missing or leave the bundle: {listed}",
            file=manifest_label(bundle),
            fix="add the files to the bundle or correct the paths in cmax.toml",
        )


@contextmanager
def load(bundle_path: str | Path, *, commercial: Commercial | None = None) -> Iterator[Loaded]:
    """Open, ingest and validate a bundle for the duration of a ``with`` block."""
    with open_bundle(bundle_path, commercial=commercial) as bundle:
        reference = load_reference(bundle.manifest.benchmark.reference)
        check_known_ids(bundle, reference)
        check_declared_files(bundle)
        case = resolve(ingest(bundle), reference)
        findings = validate(case, reference)
        yield Loaded(bundle, case, reference, findings)


def assess(
    bundle_path: str | Path,
    *,
    rubric: Rubric | None = None,
    rubric_path: str | Path | None = None,
    commercial: Commercial | None = None,
) -> Scorecard:
    """Rate one bundle; the Scorecard carries its PriceAdvice in ``.price`` (None: no quote).

    The rating and pricing stages are imported here: :func:`load` serves ``cmax validate``,
    which reads none of them and so never builds the scorecard's pydantic models.
    """
    from cmax.price import price
    from cmax.score import load_rubric, score

    rub = rubric or load_rubric(rubric_path)
    with load(bundle_path, commercial=commercial) as loaded:
        card = score(loaded.case, loaded.findings, loaded.reference, rub)
        if loaded.bundle.manifest.pricing is None:
            return card
        advice = price(loaded.case, card, loaded.reference)
    return card.model_copy(update={"price": advice})
