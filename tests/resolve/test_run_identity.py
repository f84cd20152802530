"""A run's identity (workload, GPU, GPU count, precision, framework, container, job id) is the
claims ledger's, read from the resolved run; the runs table holds only what the log states."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cmax.resolve.case import resolve
from cmax.resolve.run_claims import IDENTITY_KINDS
from cmax.resolve.runs import IDENTITY, Stated
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle, default_runs


def test_the_runs_table_holds_only_what_the_log_states(tmp_path: Path) -> None:
    run = dataclasses.replace(default_runs()[0], spec={"job_id": "4242"})
    evidence = HonestBundle(runs=[run]).ingest(tmp_path)
    assert not {"workload", "model", "gpu", "num_gpus", "precision", "container"} & set(
        evidence.runs.columns)
    row = evidence.runs.row(0, named=True)
    # the GBS each step line prints; the TP cmax.toml declares (8) no line prints
    assert row["gbs"] == 256 and row["tp"] is None
    assert row["job_id"] is None  # neither the log's name nor its lines carry one
    resolved = resolve(evidence, FakeReference()).resolved[0]
    assert resolved.get("tp") == 8  # the declaration, where the log is silent
    assert resolved.stated("job_id") == Stated("4242", "declared", "cmax.toml runs[0].job_id")
    assert resolved.stated("container") == Stated(
        "nvcr.io/nvidia/nemo:25.04.01", "declared", "cmax.toml runs[0].container")
    assert resolved.stated("framework") == Stated("nemo2", "corroborated", run.log)


def test_identity_is_the_ledgers_value_and_status(tmp_path: Path) -> None:
    """A log stating its experiment and world size corroborates the declaration; a log silent
    on them leaves it declared; a log printing another world size contradicts it. The value
    is cmax.toml's in each case (the reference is looked up by it), the status the ledger's."""
    stated, silent, other = default_runs()
    runs = [stated, dataclasses.replace(silent, stated=False),
            dataclasses.replace(other, world=256)]
    case = resolve(HonestBundle(runs=runs).ingest(tmp_path), FakeReference())
    first, second, third = case.resolved
    assert first.stated("workload") == Stated("llama3.1-405b", "corroborated",
                                              "cmax.toml runs[0].workload")
    assert first.stated("num_gpus").value == 512 and first.stated("num_gpus").logged
    assert (second.get("precision"), second.stated("precision").status) == ("fp8", "declared")
    assert second.stated("workload").status == "declared"
    assert (third.get("num_gpus"), third.stated("num_gpus").status) == (512, "contradicted")
    # what the log states instead is kept beside the declaration, for the run's label
    assert third.stated("num_gpus").log_value == "256"
    assert first.stated("num_gpus").log_value is None
    for run in case.resolved:
        for name, kind in IDENTITY_KINDS.items():
            claim = case.claims.get(run.run_id, kind)
            assert claim is not None and run.stated(name).status == claim.status
            assert str(run.get(name)) == claim.value
        assert run.baseline is not None and run.baseline.num_gpus == run.get("num_gpus")
        assert set(run.identity) <= set(IDENTITY)


def test_a_contradicted_precision_keeps_what_the_log_states(tmp_path: Path) -> None:
    """Aurora's fp8 log declared bf16: the identity stays the declaration (the reference was
    looked up by it), contradicted, with the log's fp8 beside it; the other runs have none."""
    from cmax.pipeline import load
    from tests.sample_bundles import fp8_run_declared_bf16

    with load(str(fp8_run_declared_bf16(tmp_path))) as loaded:
        case = resolve(loaded.evidence, loaded.reference)
    bf16, fp8, grok = case.resolved
    assert fp8.stated("precision").value == "bf16"
    assert fp8.stated("precision").status == "contradicted"
    assert fp8.stated("precision").log_value == "fp8"
    assert fp8.stated("precision").known == "fp8"  # what ran, for a figure that depends on it
    assert fp8.stated("workload").log_value is None  # the model is corroborated
    assert bf16.stated("precision").log_value is None and grok.stated("precision").log_value is None
