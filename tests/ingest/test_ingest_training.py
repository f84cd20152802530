"""Training-log parsers on real-format samples (tests/data/ingest), messy variants included.

Expected numbers are worked out by hand from how the sample files were written:
NeMo 2 clean sample: step 0 = 30.0 s, 1-34 = 12.5 s, 35-44 alternate 10.0/10.2 s, 45-49 = 10.1 s.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import threading
from pathlib import Path

import polars as pl
import pytest

from cmax.errors import CmaxError
from cmax.ingest import detect_format, inspect_file
from cmax.ingest.formats import Probe, by_id
from cmax.ingest.textlines import TrainingLog, settle_steps
from cmax.ingest.training import pick_log
from tests.paths import DATA

DATA = DATA / "ingest"


def parse_training(path: Path, fmt: str) -> TrainingLog:
    """The training log ``path`` read by the parser of format ``fmt``."""
    parsed: TrainingLog = by_id(fmt).parse(Probe(path))
    return parsed


def _parse(name: str):  # type: ignore[no-untyped-def]
    path = DATA / name
    return parse_training(path, detect_format(path))


def test_nemo2_clean_log() -> None:
    log = _parse("nemo2_llama3.1-8b_fp8.log")
    assert log.format == "nemo2" and log.status() == "success"
    steps = log.steps
    assert steps["iteration"].to_list() == list(range(50))
    assert log.max_iteration == 49 and log.restarts == 0 and log.config == {"gbs": 128}
    window = steps.filter(pl.col("iteration").is_between(35, 44))
    assert window["step_time_s"].mean() == pytest.approx(10.1)
    assert window["tflops_per_gpu"].mean() == pytest.approx(730.0)  # 7.4e+02 / 7.2e+02
    assert steps["step_time_s"].mean() == pytest.approx(606.5 / 50)
    first = steps.row(0, named=True)
    assert first["line"] == 4 and first["step_time_s"] == 30.0 and first["tflops_per_gpu"] == 250.0
    assert first["loss"] == pytest.approx(12.0)
    # the iteration-9 line is followed by a noise line, so iteration 10 sits on line 15
    assert steps.filter(pl.col("iteration") == 10)["line"].item() == 15


def test_nemo2_messy_log_every_rule() -> None:
    """CRLF, ANSI, rank prefixes, duplicates, a restart, NaN, bad UTF-8, cut-off last line."""
    log = _parse("nemo2_messy.log")
    steps = log.steps
    assert log.restarts == 1
    # the cut-off iteration 49 is not used, so the run is incomplete
    assert steps["iteration"].to_list() == list(range(49))
    assert log.status() == "incomplete" and log.max_iteration == 49
    assert any("cut off" in note for note in log.notes)
    # the later attempt wins: attempt 1 printed 50.0 s for iterations 0-20
    assert steps.filter(pl.col("iteration") == 5)["step_time_s"].item() == 12.5
    # NaN kept as NaN (validation flags it), never dropped
    nan_row = steps.filter(pl.col("iteration") == 3)
    assert nan_row.height == 1 and math.isnan(nan_row["step_time_s"].item())
    # rank 8 re-printed iteration 36 with 99.0 after rank 0's 10.0: first occurrence wins
    it36 = steps.filter(pl.col("iteration") == 36).row(0, named=True)
    assert it36["step_time_s"] == 10.0 and it36["tflops_per_gpu"] == 740.0  # "7.4E+02"
    # line numbers count \n only (CRLF file); attempt 2 starts on line 25
    assert steps.filter(pl.col("iteration") == 0)["line"].item() == 25
    window = steps.filter(pl.col("iteration").is_between(35, 44))
    assert window["step_time_s"].mean() == pytest.approx(10.1)


def test_nemo1_progress_bar_redraws() -> None:
    log = _parse("nemo1_gpt3-175b.log")
    assert log.format == "nemo1" and log.status() == "success"
    steps = log.steps
    assert steps["iteration"].to_list() == list(range(50))  # global_step, zero-based
    assert log.max_iteration == 49  # bar shows n/50
    assert steps["step_time_s"][0] == 30.0
    window = steps.filter(pl.col("iteration").is_between(35, 44))
    assert window["step_time_s"].mean() == pytest.approx(14.6)
    # 50 steps + 7 redraws in segments of 12 per physical line, after 2 header lines
    assert steps["line"].to_list()[:12] == [3] * 11 + [4]
    assert steps["tflops_per_gpu"].null_count() == 50


def test_megatron_bridge_positional_tflops_and_args() -> None:
    log = _parse("megatron_bridge_llama3.1-70b.log")
    assert (log.format, log.framework) == ("megatron", "megatron-bridge")
    steps = log.steps
    assert steps["iteration"].to_list() == list(range(1, 51))  # one-indexed
    assert log.max_iteration == 50 and log.status() == "success"
    assert log.config == {"seq_len": 8192, "gbs": 128, "mbs": 1, "tp": 4, "pp": 8, "cp": 1,
                          "vp": 5}
    window = steps.filter(pl.col("iteration").is_between(35, 44))
    assert window["step_time_s"].mean() == pytest.approx(10.2)  # (10100 + 10300) / 2 ms
    assert window["tflops_per_gpu"].mean() == pytest.approx((731.5 + 716.9) / 2)
    assert steps["tflops_per_gpu"][0] == 250.0 and steps["step_time_s"][0] == 30.0
    assert steps["loss"][0] == pytest.approx(9.0)  # "lm loss: 9.000000E+00"


def test_megatron_bridge_model_tflops_lines_win_over_inline_throughput(tmp_path: Path) -> None:
    """With ``log_throughput`` on, Megatron-Bridge's iteration lines also print Megatron's
    ``throughput per GPU (TFLOP/s/GPU): x``; llmb-run reads only the MODEL_TFLOP/s/GPU lines
    (pretrain_log_parser.py@e249aa3 ``_MBRIDGE_TFLOPS_RE`` needs the number before the unit):
    on this log with 999.0 inline on every iteration line its parser still gives 738.5
    (benchmarks/compare_llmb_parser.py), and so must cmax."""
    text = (DATA / "megatron_bridge_tflops_by_position.log").read_text()
    log_path = tmp_path / "inline.log"
    log_path.write_text(re.sub(r"(elapsed time per iteration \(ms\): [0-9.]+ \|)",
                               r"\1 throughput per GPU (TFLOP/s/GPU): 999.0 |", text))
    log = parse_training(log_path, detect_format(log_path))
    window = log.steps.filter(pl.col("iteration").is_between(35, 44))
    assert window["tflops_per_gpu"].mean() == pytest.approx(738.5)


def test_a_log_without_a_step_in_the_window_names_why() -> None:
    """llmb-run's order: steps before the window but none in it comes before incomplete (its
    ``_build_result`` tests the window's samples first and reports no_data on this 3-step log);
    cmax names why, no_window, since the steps were read."""
    log = _parse("nemo2_identity_preamble.log")
    assert log.steps.height == 3 and log.status() == "no_window"


def test_megatron_bridge_tflops_paired_by_position_where_pairings_differ() -> None:
    """A log built so the pairings disagree (tests/data/ingest/SOURCES.md): rank 0's TFLOP/s
    lines arrive in bursts after the iteration lines, and step 2's is printed twice, so the
    k-th TFLOP/s line belongs to step k-1 from then on. llmb-run pairs the k-th timing sample
    with the k-th TFLOP/s line (pretrain_log_parser.py@e249aa3 ``_parse_megatron_bridge_log``):
    738.5 over iterations 35-44, which benchmarks/compare_llmb_parser.py reproduced by running
    that parser on this file. Each step's own value would give 739.5, and the old AWK's "most
    recent TFLOP/s line" 736.8; cmax must give llmb-run's figure and say why."""
    log = _parse("megatron_bridge_tflops_by_position.log")
    window = log.steps.filter(pl.col("iteration").is_between(35, 44))
    assert window["tflops_per_gpu"].mean() == pytest.approx(738.5)
    assert window["tflops_per_gpu"].to_list() == [700.0 + k for k in range(34, 44)]
    assert window["step_time_s"].mean() == pytest.approx(10.395)
    assert log.status() == "success"
    assert "51 TFLOP/s lines for 50 iteration lines; paired by position as llmb-run does" \
        in log.notes


def test_megatron_lm_inline_throughput_and_nan_grad_norm() -> None:
    log = _parse("megatron_lm_nan_grad.log")
    assert log.framework == "megatron-lm"
    assert log.status() == "invalid_grad_norm"
    assert log.steps["tflops_per_gpu"].head(3).to_list() == [237.4, 501.7, 500.3]
    assert math.isnan(log.steps.filter(pl.col("iteration") == 12)["grad_norm"].item())


def test_maxtext_and_paxml() -> None:
    maxtext = _parse("maxtext_llama2-70b.log")
    assert maxtext.format == "maxtext" and maxtext.status() == "success"
    assert maxtext.steps["iteration"].to_list() == list(range(50))
    assert maxtext.steps["step_time_s"][0] == 60.0
    assert maxtext.steps["tokens_per_s_per_gpu"][1] == pytest.approx(1170.286)
    paxml = _parse("paxml_gpt3-5b.log")
    assert paxml.format == "paxml"
    assert paxml.steps.height == 50  # the duplicated line counted once
    assert paxml.steps["step_time_s"][0] == 5.12 and paxml.steps["step_time_s"][49] == 0.64
    assert any("duplicate" in note for note in paxml.notes)


def test_torchtitan_ansi_and_derived_step_time() -> None:
    log = _parse("torchtitan_deepseek-v3.log")
    assert log.format == "torchtitan" and log.status() == "success"
    assert log.max_iteration == 60 and log.config == {"gbs": 2048, "seq_len": 4096}
    steps = log.steps
    assert steps["iteration"].to_list() == list(range(1, 61))
    assert steps["tokens_per_s_per_gpu"][0] == 1024.0  # "1,024"
    assert steps["tflops_per_gpu"][5] == 480.0 and steps["grad_norm"][5] == 1.5
    assert steps["step_time_s"].null_count() == 60  # TorchTitan prints no step time


def test_restart_detection_rules() -> None:
    events = pl.DataFrame({
        "iteration": [0, 1, 2, 3, 2, 4, 5, 0, 1, 2, 3, 4, 5, 6],
        "step_time_s": [9.0, 9.0, 9.0, 9.0, 8.0, 9.0, 9.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        "line": list(range(1, 15)),
    })
    notes: list[str] = []
    steps, resumes = settle_steps(events, notes)
    # 3 -> 2 is a lagging rank (within the slack); 5 -> 0 is a restart, resumed at 0
    assert resumes == (0,)
    assert notes == ["1 restart(s) inside the log (resumed at iteration 0); the later "
                     "attempt's steps are used"]
    assert steps["iteration"].to_list() == list(range(7))
    assert steps["step_time_s"].to_list() == [1.0] * 7
    assert steps["line"].to_list() == list(range(8, 15))


def test_llmb_highest_retry_wins(tmp_path: Path) -> None:
    src = (DATA / "nemo2_llama3.1-8b_fp8.log").read_bytes()
    folder = tmp_path / "experiment"
    folder.mkdir()
    (folder / "log-pretrain_llama3.1_8b_4242_0.out").write_bytes(src[: len(src) // 3])
    (folder / "log-pretrain_llama3.1_8b_4242_2.out").write_bytes(src)
    (folder / "log-pretrain_llama3.1_8b_4242_1.out").write_bytes(src[: len(src) // 2])
    chosen, notes = pick_log(folder)
    assert chosen.name.endswith("_4242_2.out") and "highest retry" in notes[0]
    chosen, notes = pick_log(folder / "log-pretrain_llama3.1_8b_4242_0.out")
    assert chosen.name.endswith("_4242_2.out") and "superseded" in notes[0]
    (folder / "log-pretrain_llama3.1_8b_5151_0.out").write_bytes(src)
    with pytest.raises(CmaxError, match="logs of 2 jobs"):
        pick_log(folder)


def test_inspect_training_summary_keys() -> None:
    summary = inspect_file(DATA / "nemo2_llama3.1-8b_fp8.log")
    assert summary["format"] == "nemo2"
    assert summary["steps"] == 50
    assert (summary["first_iteration"], summary["last_iteration"]) == (0, 49)
    assert summary["mean_step_time_s"] == pytest.approx(12.13)
    assert summary["window_mean_step_time_s"] == pytest.approx(10.1)
    assert summary["mean_tflops_per_gpu"] == pytest.approx(632.0)
    messy = inspect_file(DATA / "nemo2_messy.log")
    assert messy["non_finite_step_times"] == 1 and messy["status"] == "incomplete"


def test_empty_step_log_is_no_data(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    # a step line whose value is missing stays a row (null), it is not dropped
    path.write_text("Training epoch 0, iteration 0/49 | train_step_timing in s: | x\n")
    log = parse_training(path, "nemo2")
    assert log.steps.height == 1 and log.steps["step_time_s"].null_count() == 1
    path.write_text("[NeMo I] nothing\n" * 3 + "train_step_timing in s: 1.0\n")
    log = parse_training(path, "nemo2")
    assert log.steps.height == 0 and log.status() == "no_data"


READERS = ["in-process", "grep", "polars", "no-grep-on-path"]


def _use_reader(reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Force one of the line readers (small files normally use the in-process one)."""
    from cmax.ingest import _greplines as greplines
    from cmax.ingest import textlines

    if reader == "in-process":
        return
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    if reader == "polars":
        monkeypatch.setattr(textlines, "USE_GREP", False)
    elif reader == "no-grep-on-path":
        monkeypatch.setattr(shutil, "which", lambda _: None)


@pytest.mark.parametrize("name", [
    "nemo1_gpt3-175b.log", "nemo2_llama3.1-8b_fp8.log", "nemo2_messy.log",
    "megatron_bridge_llama3.1-70b.log", "megatron_bridge_tflops_by_position.log",
    "megatron_lm_nan_grad.log", "maxtext_llama2-70b.log",
    "paxml_gpt3-5b.log", "torchtitan_deepseek-v3.log",
])
def test_line_readers_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The readers are accelerators only: grep, Polars' scanner and the in-process filter
    give the same rows, config, notes and facts."""
    expected = _parse(name)
    for reader in READERS[1:]:
        with monkeypatch.context() as patch:
            _use_reader(reader, patch)
            got = _parse(name)
        assert got.steps.equals(expected.steps, null_equal=True), reader
        assert (got.config, got.max_iteration, got.notes, got.facts) == (
            expected.config, expected.max_iteration, expected.notes, expected.facts), reader


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", ["Step Time", "elapsed time per iteration"])
def test_megatron_cut_off_last_line_of_either_kind(kind: str, reader: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The two kinds of Megatron-Bridge step line are read apart; a cut-off last line is
    dropped from its own kind, whichever it is: an iteration line loses its step, a TFLOP/s
    line its pairing (one TFLOP/s line fewer than iterations)."""
    _use_reader(reader, monkeypatch)
    lines = (DATA / "megatron_bridge_llama3.1-70b.log").read_text().splitlines()
    while kind not in lines[-1]:
        lines.pop()
    path = tmp_path / "cut.log"
    path.write_text("\n".join(lines))  # no newline: cut off before it was written
    log = parse_training(path, "megatron")
    whole = parse_training(DATA / "megatron_bridge_llama3.1-70b.log", "megatron")
    assert any("has no newline (cut off)" in note for note in log.notes)
    iterations = sum("elapsed time per iteration" in line for line in lines)
    timed = sum("Step Time" in line for line in lines)
    if kind == "Step Time":
        assert log.steps.height == iterations and timed - 1 < iterations
        assert log.steps["tflops_per_gpu"].null_count() == iterations - (timed - 1)
    else:
        assert log.steps.height == iterations - 1
    assert log.steps["step_time_s"].to_list() == whole.steps["step_time_s"].head(
        log.steps.height).to_list()


@pytest.mark.parametrize("reader", READERS)
def test_nul_byte_before_a_step_line_keeps_the_step(
        reader: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (issue 18): a NUL byte ended the line for the CSV parser behind grep, so the
    step after it vanished and a false "iteration 40 missing" flipped the verdict."""
    lines = (DATA / "nemo2_llama3.1-8b_fp8.log").read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b"iteration 40/49" in line)
    lines[at] = b"\x00" + lines[at]
    lines[at - 1] = b"\x00\x00 noise \xff\xfe\n" + lines[at - 1]  # NUL and bad UTF-8 nearby
    path = tmp_path / "nul.log"
    path.write_bytes(b"".join(lines))
    _use_reader(reader, monkeypatch)
    log = parse_training(path, "nemo2")
    assert log.steps["iteration"].to_list() == list(range(50))
    assert log.status() == "success"
    row = log.steps.filter(pl.col("iteration") == 40).row(0, named=True)
    assert row["line"] == at + 2 and row["step_time_s"] == 10.0


def test_identity_facts_from_the_log_top() -> None:
    """World size, GPU, hosts, precision, experiment, container and parallel sizes, each with
    its line, as pyxis, nvidia-smi -L, Lightning, NCCL and a Megatron-Bridge style config dump
    print them; the step line adds the framework and the global batch size."""
    log = _parse("nemo2_identity_preamble.log")
    facts = {(f.kind, f.value): f.line for f in log.facts}
    assert facts[("container", "nvcr.io#nvidia/nemo:25.04.01")] == 1
    assert facts[("gpu", "NVIDIA H100 80GB HBM3")] == 3
    assert facts[("node_count", "2")] == 5  # SLURM_JOB_NUM_NODES (num_nodes: 2 is the same)
    assert facts[("experiment", "pretrain_llama3.1_70b_fp8_gpus16")] == 6
    assert facts[("precision", "fp8")] == 6  # named in the experiment
    assert facts[("gpu_count", "16")] == 7
    assert (facts[("host", "node001")], facts[("host", "node002")]) == (12, 13)
    assert facts[("precision", "fp8=hybrid")] == 17
    assert facts[("precision", "fp8_recipe=delayed")] == 18
    assert facts[("parallel", "tp=4")] == 20 and facts[("parallel", "pp=4")] == 21
    assert facts[("framework", "nemo2")] == 26 and facts[("parallel", "gbs=64")] == 26
    # "log_world_size_to_tensorboard: false" (line 25) is not a world size
    assert [value for (kind, value) in facts if kind == "gpu_count"] == ["16"]
    assert [f.line for f in log.facts] == sorted(f.line or 0 for f in log.facts)
    assert len(facts) == len(log.facts)  # each (kind, value) once


def test_identity_facts_of_other_frameworks() -> None:
    megatron = {(f.kind, f.value) for f in _parse("megatron_lm_nan_grad.log").facts}
    assert {("gpu_count", "64"), ("parallel", "dp=2"), ("parallel", "tp=4"),
            ("parallel", "pp=8"), ("framework", "megatron-lm")} <= megatron
    bridge = {(f.kind, f.value) for f in _parse("megatron_bridge_llama3.1-70b.log").facts}
    assert {("parallel", "gbs=128"), ("parallel", "vp=5"),
            ("framework", "megatron-bridge")} <= bridge
    titan = {(f.kind, f.value) for f in _parse("torchtitan_deepseek-v3.log").facts}
    assert {("model", "DeepSeek-V3 671B training"), ("parallel", "gbs=2048"),
            ("parallel", "seq_len=4096")} <= titan
    assert ("framework", "jax 0.4.38") in {
        (f.kind, f.value) for f in _parse("maxtext_llama2-70b.log").facts}


def test_identity_facts_only_from_the_top(tmp_path: Path) -> None:
    """A gigabyte log is not read twice for facts: only its top ``head`` bytes are."""
    from cmax.ingest.textlines import head_facts

    path = tmp_path / "late.log"
    path.write_text("x\n" * 100 + "using world size: 8, data-parallel size: 8\n")
    assert head_facts(path, head=100) == []
    assert [(f.kind, f.value, f.line) for f in head_facts(path)] == [
        ("gpu_count", "8", 101), ("parallel", "dp=8", 101)]


def test_small_logs_start_no_process_or_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit path reads hundreds of kilobyte logs: a grep child and a reader thread per
    file cost more than the read, so small files are filtered in-process."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a small log started a process or thread")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(threading, "Thread", refuse)
    for name in ("nemo2_llama3.1-8b_fp8.log", "megatron_bridge_llama3.1-70b.log",
                 "torchtitan_deepseek-v3.log"):
        assert _parse(name).steps.height > 0


def test_nemo2_log_spanning_epochs_is_numbered_by_global_step() -> None:
    """NeMo's ProgressPrinter restarts 'iteration n-1/max_steps-1' at each epoch; 60 steps over
    2 epochs read as 30 steps and a restart until global_step numbered them. The printed
    denominator is the zero-based last iteration (59 for max_steps 60), so the finished run's
    last step equals it and completeness reads it as finished, not '59 of 60'."""
    from cmax.ingest.formats.nemo import parse_nemo2
    log = parse_nemo2(DATA / "nemo2_two_epochs.log")
    assert log.steps.height == 60 and log.restarts == 0
    assert log.steps["iteration"].to_list() == list(range(60))
    assert log.max_iteration == 59 == log.steps["iteration"].max()
    assert any("steps are numbered by global_step" in n for n in log.notes)


def test_megatron_bridge_log_with_only_step_time_lines() -> None:
    """Megatron-Bridge's 'Step Time : ...s ... MODEL_TFLOP/s/GPU' lines alone were refused."""
    path = DATA / "megatron_bridge_step_time_only.log"
    assert detect_format(path) == "megatron"
    summary = inspect_file(path)
    assert (summary["framework"], summary["steps"], summary["first_iteration"]) == (
        "megatron-bridge", 50, 1)
    assert summary["window_mean_step_time_s"] == pytest.approx(2.271)
    assert any("'Step Time' lines are the steps" in n for n in summary["notes"])


def test_megatron_log_energy_gives_measured_joules_per_token() -> None:
    """--log-energy fields were parsed and dropped; now the window's mean J/iter/GPU and W/GPU
    give J/token (GBS 512 x 8192 tokens / 64 GPUs per step), with the telemetry gap named."""
    summary = inspect_file(DATA / "megatron_lm_log_energy.log")
    energy = summary["window_measured_energy"]
    assert isinstance(energy, dict)
    assert energy["power_w_per_gpu"] == 700.0 and energy["steps_with_energy"] == 9
    assert energy["joules_per_token"] == pytest.approx(6362.3 / (512 * 8192 / 64), rel=1e-6)
    assert energy["telemetry_checks"] == ["1 of 10 steps carry no energy reading (gaps in the "
                                          "telemetry)"]
    assert "window_measured_energy" not in inspect_file(DATA / "megatron_lm_nan_grad.log")


def test_measured_energy_flags_power_that_is_not_the_printed_energy() -> None:
    from cmax.ingest.energy import measured_energy
    steps = pl.DataFrame({"step_time_s": [10.0, 10.0], "energy_j_per_gpu": [7000.0, 7000.0],
                          "power_w_per_gpu": [700.0, 500.0]})
    found = measured_energy(steps)
    assert found is not None and "joules_per_token" not in found  # no tokens per step known
    assert found["telemetry_checks"] == ["1 step(s) where power x step time is not the printed "
                                         "energy (beyond 2%)"]
    clean = measured_energy(steps.head(1))
    assert clean is not None and clean["telemetry_checks"][0].startswith("every step")  # type: ignore[index]


def test_megatron_skipped_iterations_and_resume_point(tmp_path: Path) -> None:
    # Megatron-LM training.py training_log's iteration line; the job resumes from a checkpoint
    # at iteration 3 after printing 6, and iteration 7 reports one skipped iteration
    def line(it: int, skipped: int) -> str:
        return (f" [2026-05-01 10:00:{it:02d}] iteration {it:8d}/      10 | consumed samples: "
                f"{128 * it:12d} | elapsed time per iteration (ms): 1000.0 | global batch size:"
                f"   128 | lm loss: 9.000000E+00 | loss scale: 1.0 | grad norm: 0.412 | number "
                f"of skipped iterations: {skipped:3d} | number of nan iterations:   0 |")
    path = tmp_path / "megatron.log"
    path.write_text("\n".join([*(line(i, 0) for i in range(1, 7)),
                               *(line(i, int(i == 7)) for i in range(3, 11))]) + "\n")
    log = parse_training(path, detect_format(path))
    assert log.resumed_at == (3,) and log.restarts == 1
    assert (log.skipped, log.skipped_at) == (1, (7,))
    assert log.run_columns() == {"restarts": 1, "resumed_at": "3", "skipped_iterations": 1,
                                 "skipped_at": "7"}


@pytest.mark.parametrize(("damage", "count"), [
    (("iteration        9/      10", "iteration        9x/      10"), "  1"),
    (("iteration        9/      10", "iteration         /      10"), "  1"),
    (("", ""), "inf"),
    (("", ""), "1e30"),
    (("", ""), "0.5"),
])
def test_megatron_skipped_count_on_a_damaged_line_is_a_note(
        tmp_path: Path, damage: tuple[str, str], count: str) -> None:
    """The fuzz crasher of issue 39: a skipped-iterations line whose iteration field is
    damaged (so its iteration is null) took int(None) to a TypeError; a count that is not a
    whole number was int(inf). Both are left out of the skipped total, with a note."""
    def line(it: int, skipped: str) -> str:
        return (f" [2026-05-01 10:00:{it:02d}] iteration {it:8d}/      10 | consumed samples: "
                f"{128 * it:12d} | elapsed time per iteration (ms): 1000.0 | global batch size:"
                f"   128 | lm loss: 9.000000E+00 | loss scale: 1.0 | grad norm: 0.412 | number "
                f"of skipped iterations: {skipped} | number of nan iterations:   0 |")
    lines = [line(i, "  1" if i == 4 else count if i == 9 else "  0") for i in range(1, 11)]
    lines[8] = lines[8].replace(*damage)
    path = tmp_path / "megatron.log"
    path.write_text("\n".join(lines) + "\n")
    log = parse_training(path, detect_format(path))
    assert (log.skipped, log.skipped_at) == (1, (4,))
    assert any("skipped iterations' value(s) not read" in n and "line 9" in n
               for n in log.notes), log.notes
