"""Which cmax.toml ``[[runs]]`` entry a run came from is the ``entry`` ingest writes on its row,
carried to the resolved run: never read back from the run's id or its log's path."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl

from cmax.ingest.evidence import Evidence
from cmax.resolve.case import resolve
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle, default_runs


def _relabelled(evidence: Evidence, ids: dict[str, str], *, moved: bool = False) -> Evidence:
    """The same rows under other run ids (and, with ``moved``, under log paths no entry names)."""
    def relabel(frame: pl.DataFrame) -> pl.DataFrame:
        out = frame.with_columns(pl.col("run_id").replace(ids))
        return out.with_columns(("copies/" + pl.col("source_file")).alias("source_file")) \
            if moved else out

    return dataclasses.replace(evidence, runs=relabel(evidence.runs),
                               steps=relabel(evidence.steps))


def test_ingest_writes_the_entry_each_run_was_read_for(tmp_path: Path) -> None:
    bundle = HonestBundle(runs=default_runs()[:2])
    evidence = bundle.ingest(tmp_path)
    assert evidence.runs["entry"].to_list() == [0, 1]
    case = resolve(evidence, FakeReference())
    assert [(r.spec_index, r.spec) for r in case.resolved] == list(
        enumerate(evidence.manifest.runs))


def test_a_run_whose_id_and_path_name_no_entry_still_resolves_to_its_own(tmp_path: Path) -> None:
    """Ids that do not follow ``runs[i]`` (or name the other entry) and logs read under paths
    no entry declares: each run keeps the entry ingest read it for."""
    evidence = HonestBundle(runs=default_runs()[:2]).ingest(tmp_path)
    specs = evidence.manifest.runs
    crossed = _relabelled(evidence, {"runs[0]": "runs[1]", "runs[1]": "runs[0]"}, moved=True)
    by_id = {r.run_id: r for r in resolve(crossed, FakeReference()).resolved}
    assert (by_id["runs[1]"].spec_index, by_id["runs[0]"].spec_index) == (0, 1)
    assert by_id["runs[1]"].spec == specs[0] and by_id["runs[0]"].spec == specs[1]
    named = _relabelled(evidence, {"runs[0]": "nemo-405b-job-3913022",
                                   "runs[1]": "llama-70b-try-2"}, moved=True)
    resolved = resolve(named, FakeReference()).resolved
    assert [(r.run_id, r.spec_index) for r in resolved] == [
        ("nemo-405b-job-3913022", 0), ("llama-70b-try-2", 1)]
    assert all(not r.steps.is_empty() for r in resolved)  # its steps followed the new id


def test_a_row_without_an_entry_answers_to_no_declaration(tmp_path: Path) -> None:
    """An id spelled ``runs[0]`` is no evidence of the entry: without the ingest's ``entry``
    the run has no declaration, and the declared entry stays unmatched."""
    evidence = HonestBundle(runs=default_runs()[:1]).ingest(tmp_path)
    anonymous = dataclasses.replace(evidence, runs=evidence.runs.with_columns(
        pl.lit(None, dtype=pl.Int64).alias("entry"),
        ("copies/" + pl.col("source_file")).alias("source_file")))
    run = resolve(anonymous, FakeReference()).resolved[0]
    assert run.run_id == "runs[0]" and run.spec is None and run.spec_index is None
