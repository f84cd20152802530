"""Step times a log does not print (TorchTitan's tps), derived when the case is resolved
(cmax/resolve/step_time.py): the steps table keeps what the log prints, the resolved run
carries the derived step time and what each input of it rests on."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cmax.ingest.evidence import Evidence
from cmax.resolve.case import resolve
from cmax.score import load_rubric, score
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle


def _torchtitan(tmp_path: Path, **spec: object) -> tuple[HonestBundle, Evidence]:
    """The honest bundle with run 0 as TorchTitan prints it: tokens/s per step, no
    "Training starts ... global batch size ..." line, so GBS and sequence length are
    cmax.toml's; ``spec`` changes its [[runs]] entry."""
    bundle = HonestBundle()
    bundle.runs[0].log_format = "torchtitan"
    bundle.runs[0].spec.update(spec)
    return bundle, bundle.ingest(tmp_path)


def test_a_step_time_resting_on_declared_values_is_derived_and_labelled(
        tmp_path: Path) -> None:
    bundle, evidence = _torchtitan(tmp_path)
    fx = bundle.runs[0]
    steps = evidence.steps.filter(pl.col("run_id") == fx.run_id)
    # the table holds what the log prints: a rate, no step time
    assert steps.height and steps["step_time_s"].null_count() == steps.height
    case = resolve(evidence, FakeReference())
    run = case.run(fx.run_id)
    assert run is not None and run.step_time_derived is not None
    derived = run.step_time_derived
    assert [(s.value, s.status) for s in (derived.gbs, derived.seq_len)] == [
        (fx.gbs, "declared"), (fx.seq_len, "declared")]
    assert derived.declared()[:2] == ["GBS", "sequence length"]
    # GBS x seq / (GPUs x the printed tps, rounded to whole tokens) gives back the run's times
    assert run.clean_steps["step_time_s"].to_list() == pytest.approx(fx.times, rel=1e-2)
    card = score(case, [], FakeReference(), load_rubric(None))
    [result] = [w for w in card.workloads if w.run_id == fx.run_id]
    note = next(n for n in result.notes if n.startswith("step time derived"))
    assert f"GBS {fx.gbs} (declared)" in note and "rest on cmax.toml's GBS, sequence length" in note
    window = run.window_steps["step_time_s"].to_list()
    assert result.mean_step_time_s == pytest.approx(sum(window) / len(window))


def test_without_the_run_shape_no_step_time_is_made(tmp_path: Path) -> None:
    """No GBS in the log or cmax.toml: the steps keep no step time (schema.missing-value
    reports it), never a guess."""
    bundle, evidence = _torchtitan(tmp_path, gbs=None)
    run = resolve(evidence, FakeReference()).run(bundle.runs[0].run_id)
    assert run is not None and run.step_time_derived is None
    assert run.steps["step_time_s"].null_count() == run.steps.height
