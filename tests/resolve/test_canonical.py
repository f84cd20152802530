"""Evidence a script hands to the public API (``cmax.validate(evidence, reference)``,
``cmax.score``) that no file can produce is refused with one clear error before it is rated:
a table missing a column or of another type, a run id twice, steps of no run. These were the
rules schema.table-columns, schema.duplicate-run and schema.orphan-steps, which only Evidence
built in Python could trip and after which scoring could still fail with a traceback; and a
case edited with ``dataclasses.replace`` is resolved again, not rated on its old tables."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import polars as pl
import pytest

import cmax
from cmax.errors import EvidenceError
from cmax.ingest.evidence import Evidence
from cmax.resolve.case import Case
from cmax.score import load_rubric, score
from cmax.validate import validate
from tests.paths import SAMPLES


@functools.cache
def _aurora() -> Case:
    case = cmax.ingest_bundle(SAMPLES / "aurora-compute")  # what cmax.ingest(path) returns
    assert isinstance(case, Case)
    return case


def _plain(case: Case) -> Evidence:
    """The evidence as a script assembling its own would hold it: a plain cmax.Evidence."""
    return cmax.Evidence(**{f.name: getattr(case, f.name)
                            for f in dataclasses.fields(cmax.Evidence)})


def _two_bundles(ev: Evidence) -> Evidence:
    """Two bundles' runs and steps concatenated: both name their first run runs[0]."""
    return dataclasses.replace(ev, runs=pl.concat([ev.runs, ev.runs.head(1)]),
                               steps=pl.concat([ev.steps, ev.steps]))


BROKEN: dict[str, tuple[Callable[[Evidence], Evidence], str]] = {
    "a column missing": (lambda ev: dataclasses.replace(ev, steps=ev.steps.drop("loss")),
                         "steps.loss"),
    "a column of another type": (lambda ev: dataclasses.replace(ev, steps=ev.steps.with_columns(
        pl.col("iteration").cast(pl.String))), "steps.iteration"),
    "a table that is no DataFrame": (lambda ev: dataclasses.replace(
        ev, nccl=ev.nccl.to_dicts()), "nccl"),  # type: ignore[arg-type]  # an untyped script
    "two bundles' runs in one": (_two_bundles, "runs.run_id"),
    "a run left out, its steps kept": (lambda ev: dataclasses.replace(
        ev, runs=ev.runs.head(2)), "steps.run_id"),
}


@pytest.mark.parametrize("what", sorted(BROKEN))
@pytest.mark.parametrize("start", ["plain", "case"])
def test_evidence_no_file_can_produce_is_one_clear_error(what: str, start: str) -> None:
    change, field = BROKEN[what]
    case = _aurora()
    evidence = change(_plain(case) if start == "plain" else case)
    reference = cmax.load_reference()
    with pytest.raises(EvidenceError) as raised:
        validate(evidence, reference)
    assert raised.value.field == field and raised.value.fix
    with pytest.raises(EvidenceError):
        score(evidence, [], reference, load_rubric())


def test_what_ingest_builds_is_canonical() -> None:
    findings = validate(_plain(_aurora()), cmax.load_reference())
    assert not [f for f in findings if f.severity == "error"]


def test_a_case_edited_with_replace_is_rated_on_what_it_now_holds() -> None:
    """Dropping a run (and its steps) from what cmax.ingest returned: the scorecard was of
    all three runs before, from the case's tables as resolved."""
    case = _aurora()
    assert case.current()
    two = dataclasses.replace(case, runs=case.runs.head(2),
                              steps=case.steps.filter(pl.col("run_id") != "runs[2]"))
    assert not two.current()
    reference = cmax.load_reference()
    card = score(two, validate(two, reference), reference, load_rubric())
    assert [w.run_id for w in card.workloads] == ["runs[0]", "runs[1]"]
