"""Pin the public API: renaming or dropping any of these breaks users' scripts.

For ``cmax`` and each public sub-package, ``__all__`` must equal the pinned set *and* every
public (non-underscore) name the module defines or imports must be in it, so a helper that
leaks into a package namespace is caught as well as a name that disappears.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

import cmax

PUBLIC = {
    "cmax": {
        "CmaxError", "Evidence", "Finding", "PriceAdvice", "Scorecard", "__version__",
        "assess", "ingest", "load_reference", "open_bundle", "price", "render_reports",
        "sample_bundles", "score", "validate",
        # the path forms each callable stage runs on `cmax.<stage>("bundle/")`
        "ingest_bundle", "price_bundle", "score_bundle", "validate_bundle",
    },
    "cmax.frames": {
        "FINDING_SCHEMA", "GATE_SCHEMA", "JUDGEMENT_SCHEMA", "NETWORK_SCHEMA",
        "SCORECARD_SCHEMA", "WORKLOAD_SCHEMA", "findings", "gates", "history", "judgements",
        "network", "scorecards", "workloads",
    },
    "cmax.errors": {
        "BundleError", "CmaxError", "EvidenceError", "EvidenceFormatError", "HistoryError",
        "ManifestError", "MonitoringError", "NotInCatalogue", "ReferenceDataError", "RubricError",
        "UsageError",
    },
    "cmax.ingest": {"FORMATS", "Format", "Probe", "detect_format", "ingest", "inspect_file"},
    "cmax.validate": {
        "FAMILIES", "RULES", "Rule", "not_comparable_runs", "rules_markdown",
        "runs_with_errors", "sorted_rules", "validate",
    },
    "cmax.score": {"Rubric", "load_rubric", "score"},
    "cmax.price": {"HOURS_PER_MONTH", "price"},
    "cmax.render": {
        "PdfAttachment", "render_reports", "render_template", "write_pdf", "write_text_atomic",
    },
    "cmax.reference": {
        "Architecture", "CmaxError", "GpuSpec", "Reference", "canonical_precision",
        "clear_cache", "known_releases", "load_reference", "normalize_precision",
    },
}

#: names a module may hold that are not API: the ``annotations`` future flag (names imported
#: from outside cmax, such as ``Path`` or ``Any``, are skipped by their ``__module__``)
_NOT_API = {"annotations"}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_all_is_pinned(name: str) -> None:
    module = importlib.import_module(name)
    assert set(module.__all__) == PUBLIC[name]
    for attr in module.__all__:
        assert getattr(module, attr) is not None, attr


@pytest.mark.parametrize("name", sorted(set(PUBLIC) - {"cmax"}))
def test_no_public_name_outside_all(name: str) -> None:
    module = importlib.import_module(name)
    leaked = {attr for attr, value in vars(module).items()
              if not attr.startswith("_") and attr not in _NOT_API
              and not isinstance(value, types.ModuleType)
              and str(getattr(value, "__module__", "cmax")).startswith("cmax")
              } - set(module.__all__)
    assert not leaked, f"{name} exposes {sorted(leaked)}: add to __all__ or make private"


def test_stage_functions_are_callables() -> None:
    for name in ("assess", "ingest", "validate", "score", "price", "render_reports",
                 "load_reference", "open_bundle"):
        assert callable(getattr(cmax, name)), name


def test_stage_subpackages_are_the_modules_and_call_the_stage() -> None:
    import cmax.score as s
    from cmax.score.core import score

    assert cmax.score is s and s.Rubric is not None
    assert isinstance(cmax.ingest, types.ModuleType)
    calls: list[tuple[object, ...]] = []

    def fake(*args: object, **kwargs: object) -> str:
        calls.append(args)
        return "scored"

    original = s.score
    s.score = fake  # type: ignore[assignment]  # a stand-in of another signature, on purpose
    try:
        # the callable sub-package is what is tested: mypy sees only a module (cmax/_stage.py)
        assert cmax.score(1, 2) == "scored" and calls == [(1, 2)]  # type: ignore[operator]
    finally:
        s.score = original
    assert s.score is score


def test_import_cmax_loads_no_dataframe_library() -> None:
    probe = ("import sys, cmax, cmax.errors; "
             "print(','.join(m for m in ('polars', 'numpy', 'pydantic') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == ""
