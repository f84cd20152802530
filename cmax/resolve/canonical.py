"""Evidence built in Python must be what ingest builds: canonical tables, one row per run id,
every step of a run in the runs table.

Ingest conforms every table to its schema (``cmax.ingest.evidence.conform``), names each run
after its manifest entry (``runs[i]``) and gives its steps that name, so no file can break
these. Evidence handed to ``cmax.validate(evidence, reference)`` (or ``cmax.score``,
``cmax.price``) from a script can: a table of the caller's own parser missing a column or of
another type, two bundles' runs tables concatenated (both hold ``runs[0]``), steps relabelled
or filtered apart from their runs. Those are not facts about a provider's cluster to report
as findings; they are a programming error at the API boundary, and rating such Evidence would
read a missing column as empty or mix two runs' steps. So :func:`require_canonical` refuses
it with one :class:`cmax.errors.EvidenceError` that names the table and column or run id, what
was expected and how to fix it, before anything is resolved.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.evidence import Evidence

_CONFORM = ("build each table with cmax.ingest.evidence.conform(frame, schema) (the schemas "
            "are cmax.ingest.evidence.TABLES), or read the bundle with cmax.ingest(path)")


def _tables(evidence: Evidence, schemas: Mapping[str, Mapping[str, pl.DataType]]) -> None:
    for name, schema in schemas.items():
        frame = getattr(evidence, name, None)
        if not isinstance(frame, pl.DataFrame):
            raise EvidenceError(
                f"Evidence.{name} is a {type(frame).__name__}, not a Polars DataFrame",
                field=name, expected="a polars.DataFrame with the canonical columns",
                fix=_CONFORM)
        missing = [col for col in schema if col not in frame.columns]
        if missing:
            raise EvidenceError(
                f"Evidence.{name} has no column {', '.join(map(repr, missing))}",
                field=f"{name}.{missing[0]}",
                expected=f"the canonical columns of {name}: {', '.join(schema)}", fix=_CONFORM)
        if frame.height:
            wrong = [(col, frame.schema[col], dtype) for col, dtype in schema.items()
                     if frame.schema[col] != dtype]
            if wrong:
                col, got, dtype = wrong[0]
                raise EvidenceError(
                    f"Evidence.{name}.{col} is {got}"
                    + (f" (and {len(wrong) - 1} more column(s) of another type)"
                       if len(wrong) > 1 else ""),
                    field=f"{name}.{col}", expected=str(dtype), fix=_CONFORM)


def _runs(evidence: Evidence) -> None:
    ids = evidence.runs["run_id"].drop_nulls()
    twice = sorted({str(i) for i in ids.filter(ids.is_duplicated())})
    if twice:
        raise EvidenceError(
            f"run id {twice[0]!r} appears more than once in Evidence.runs"
            + (f" ({len(twice)} run ids do)" if len(twice) > 1 else ""),
            field="runs.run_id", expected="one row per run id (the steps are keyed by it)",
            fix="give each run a unique id, and its steps that id (ingest names each run after "
            "its manifest entry, runs[i]); to rate two bundles, rate each on its own")
    known = {str(i) for i in ids}
    orphans = sorted({str(i) for i in evidence.steps["run_id"].drop_nulls().unique()} - known)
    if orphans:
        raise EvidenceError(
            f"steps carry run id {orphans[0]!r}, which is not in Evidence.runs"
            + (f" ({len(orphans)} run ids are not)" if len(orphans) > 1 else ""),
            field="steps.run_id", expected="the id of a row of Evidence.runs",
            fix="add the run to Evidence.runs, or drop its steps")


def require_canonical(evidence: Evidence,
                      schemas: Mapping[str, Mapping[str, pl.DataType]]) -> None:
    """Raise one :class:`EvidenceError` unless ``evidence`` is what ingest builds: every table
    a DataFrame with its canonical columns and types, run ids unique, every step's run in the
    runs table."""
    _tables(evidence, schemas)
    _runs(evidence)
