"""What a training run's judgement and every surface say of it, from files: a run held by a
warning keeps its log's provenance, and a run whose pass an error withholds reads withheld in
the Exemplar JSON and the score's tables, as its judgement does."""

from __future__ import annotations

from pathlib import Path

from cmax.cli.score_cmd import scorecard_text
from cmax.pipeline import assess
from cmax.states import State
from tests.paths import SAMPLES
from tests.sample_bundles import AURORA_BF16_LOG, fp8_run_declared_bf16, one_of_two_runs_fails

FP8_LOG = "training/llama3.1-405b_fp8_512.log"


def test_a_run_held_by_a_warning_keeps_its_logs_provenance(tmp_path: Path) -> None:
    """Aurora's bf16 run beside a second, slower one (crossfile.runs-disagree holds it): the
    log states what it ran, so the figure is provider-attested and the state not verified,
    never 'declared' (which is for what only cmax.toml states)."""
    card = assess(one_of_two_runs_fails(tmp_path))
    [first] = [w for w in card.workloads if w.log == AURORA_BF16_LOG]
    judged = card.judgement("training_run", first.run_id or "")
    assert judged is not None and judged.verdict == "unverified"
    assert judged.state is State.NOT_VERIFIED and judged.provenance == "provider-attested"
    assert any(b.effect == "unverified" for b in judged.findings)
    row = next(line for line in scorecard_text(card) if " 0.998 " in line and "0.994" in line)
    assert "not verified" in row and "provider-attested" in row and "declared" not in row


def test_an_honest_run_stays_earned(tmp_path: Path) -> None:
    card = assess(SAMPLES / "aurora-compute")
    assert {card.judgement("training_run", w.run_id or "").state  # type: ignore[union-attr]
            for w in card.workloads} == {State.EARNED}
    assert all(r.verdict == "pass" and not r.withheld_by
               for w in card.exemplar.workloads for r in w.runs)


def test_a_withheld_run_reads_withheld_everywhere(tmp_path: Path) -> None:
    """Aurora's fp8 run declared bf16: its judgement's verdict is withheld, and so are the
    Exemplar JSON's run and both of cmax score's tables (they said inconclusive), each with
    the errors that withhold it."""
    card = assess(fp8_run_declared_bf16(tmp_path))
    [fp8] = [w for w in card.workloads if w.log == FP8_LOG]
    judged = card.judgement("training_run", fp8.run_id or "")
    assert judged is not None and judged.verdict == "withheld"
    assert "identity.precision" in fp8.validation_errors
    [suite_run] = [r for w in card.exemplar.workloads for r in w.runs if r.log == FP8_LOG]
    assert suite_run.verdict == "withheld"
    assert "identity.precision" in suite_run.withheld_by
    text = scorecard_text(card)
    table = next(line for line in text if "1.527" in line and "1.520" in line)
    suite = next(line for line in text if " run(s): " in line and "1.527" in line)
    for line in (table, suite):
        assert "withheld (" in line and "identity.precision" in line
        assert "inconclusive" not in line
    assert card.exemplar_state is State.NOT_MET


def test_a_contradicted_run_is_labelled_by_what_its_log_states(tmp_path: Path) -> None:
    """Aurora's fp8 run declared bf16: its judgement (score JSON, frames) and the Exemplar
    reason name it as its log states it, the contradicted declaration named, as every report
    table does (they named it by the declaration alone: 'llama3.1-405b bf16 512 GPUs')."""
    import cmax.frames as cf
    from cmax.render.formatting import run_label

    card = assess(fp8_run_declared_bf16(tmp_path))
    [fp8] = [w for w in card.workloads if w.log == FP8_LOG]
    judged = card.judgement("training_run", fp8.run_id or "")
    named = "llama3.1-405b fp8 (declared bf16) 512 GPUs"
    assert judged is not None and judged.label == f"{named} ({FP8_LOG})"
    assert run_label(fp8) == "llama3.1-405b FP8 (declared BF16) · 512 GPUs"
    frame = cf.judgements(card)
    assert f"{named} ({FP8_LOG})" in frame["label"].to_list()
    assert f"{FP8_LOG} [{named}] 1.527 withheld by" in card.exemplar.reason
    # the honest bf16 run of the same workload keeps its declared label
    [bf16] = [w for w in card.workloads if w.log == AURORA_BF16_LOG]
    honest = card.judgement("training_run", bf16.run_id or "")
    assert honest is not None and honest.label == f"llama3.1-405b bf16 512 GPUs ({AURORA_BF16_LOG})"
