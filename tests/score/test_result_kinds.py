"""Gates keyed by result kind, from files: a bundle whose only performance evidence is MLPerf
Training results of its own is judged by the MLPerf gates and by no training gate it cannot
meet; an MLPerf result it only cites (``cited = true``) is context and keys no gate."""

from __future__ import annotations

from pathlib import Path

from cmax.pipeline import assess
from cmax.scorecard import Scorecard
from tests.validate.validate_fakes import HonestBundle, mlperf_result

TRAINING = {"exemplar_suite", "performance_floor"}
MLPERF = {"mlperf_bar", "mlperf_floor"}


def _card(tmp_path: Path, bundle: HonestBundle) -> Scorecard:
    return assess(bundle.write_bundle(tmp_path / "bundle"))


def test_an_mlperf_only_bundle_is_judged_by_its_mlperf_results(tmp_path: Path) -> None:
    """Before the MLPerf gates this bundle (three converged llama31_405b runs, passing
    NVIDIA's bar) was capped at Silver by performance_floor and at Gold by exemplar_suite,
    both not evaluated: no training run."""
    card = _card(tmp_path, HonestBundle(runs=[]))
    assert [m.verdict for m in card.mlperf] == ["pass"]
    gates = {g.id: g for g in card.gates}
    assert not TRAINING & set(gates)
    assert gates["mlperf_bar"].status == gates["mlperf_floor"].status == "passed"
    assert "1 of 1 MLPerf Training results pass the [mlperf] bar" in gates["mlperf_bar"].reason
    judged = card.judgement("mlperf_result", "mlperf[0]")
    assert judged is not None and judged.verdict == "pass"
    assert set(judged.gates) == MLPERF


def test_a_cited_mlperf_result_keys_no_gate(tmp_path: Path) -> None:
    """Another submitter's published result, cited as context, is shown and never rated: a
    bundle holding only that is judged as a training bundle ([scoring] results_when_none)."""
    bundle = HonestBundle(runs=[])
    bundle.manifest_extra["mlperf"] = [{"path": bundle.mlperf_path, "cited": True}]
    card = _card(tmp_path, bundle)
    assert [m.verdict for m in card.mlperf] == ["not_comparable"]
    ids = {g.id for g in card.gates}
    assert ids >= TRAINING and not MLPERF & ids
    judged = card.judgement("mlperf_result", "mlperf[0]")
    assert judged is not None and judged.gates == []


def test_a_training_bundle_with_its_own_mlperf_result_is_judged_by_both(
        tmp_path: Path) -> None:
    ids = {g.id for g in _card(tmp_path, HonestBundle()).gates}
    assert ids >= (TRAINING | MLPERF)


def test_an_mlperf_result_an_error_names_passes_no_mlperf_gate(tmp_path: Path) -> None:
    """A run whose initialisation took 45 minutes (mlperf.init-budget, an error on the
    result): its pass is withheld, so mlperf_bar (every own result must pass) counts it as
    not passing and fails, naming the result and the error; the floor is rescued by no
    contested result, so mlperf_floor is not evaluated and caps at Silver, as failing it
    would; it never passes mlperf_floor on it."""
    bundle = HonestBundle(runs=[])
    bundle.mlperf_files = {**bundle.results(),
                           "result_0.txt": mlperf_result(100, init_minutes=45)}
    card = _card(tmp_path, bundle)
    assert [m.verdict for m in card.mlperf] == ["inconclusive"]
    judged = card.judgement("mlperf_result", "mlperf[0]")
    assert judged is not None and judged.verdict == "withheld"
    gates = {g.id: g for g in card.gates}
    assert gates["mlperf_bar"].status == "failed"
    assert "withheld by mlperf.init-budget" in gates["mlperf_bar"].reason
    assert gates["mlperf_floor"].status == "not_evaluated"
    assert gates["mlperf_floor"].binding_cap == "Silver"
