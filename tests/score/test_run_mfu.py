"""A run's MFU is taken against the peak of what its log states it ran, from files: an fp8 log
declared bf16 reads against the fp8 peak (the bf16 peak, half as high, doubled its MFU), and a
log that contradicts the declaration without stating one precision has no MFU."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from cmax.pipeline import assess
from cmax.render.reports import runs_csv
from cmax.scorecard import Scorecard, WorkloadResult
from tests.paths import SAMPLES
from tests.sample_bundles import AURORA_BF16_LOG, fp8_run_declared_bf16

FP8_LOG = "training/llama3.1-405b_fp8_512.log"
#: h100-sxm dense peaks in the shipped reference (reference/gpus.toml)
BF16_PEAK, FP8_PEAK = 989.0, 1979.0


def _run(card: Scorecard, log: str) -> WorkloadResult:
    [run] = [w for w in card.workloads if w.log == log]
    return run


def test_an_fp8_log_declared_bf16_reads_against_the_fp8_peak(tmp_path: Path) -> None:
    card = assess(fp8_run_declared_bf16(tmp_path))
    fp8 = _run(card, FP8_LOG)
    assert fp8.precision == "bf16" and fp8.log_states == {"precision": "fp8"}
    assert fp8.model_tflops_per_gpu is not None
    assert fp8.mfu_pct == pytest.approx(100 * fp8.model_tflops_per_gpu / FP8_PEAK, abs=1e-3)
    assert fp8.mfu_pct == pytest.approx(42.3, abs=0.1)  # was 84.6 against the bf16 peak
    assert any("dense fp8 peak" in n and "fp8 (declared bf16)" in n for n in fp8.notes)
    # the same log declared honestly reads the same MFU
    honest = _run(assess(SAMPLES / "aurora-compute"), FP8_LOG)
    assert honest.mfu_pct == pytest.approx(fp8.mfu_pct, abs=1e-3)
    # the bf16 run beside it is untouched: its own bf16 peak
    bf16 = _run(card, AURORA_BF16_LOG)
    assert bf16.model_tflops_per_gpu is not None
    assert bf16.mfu_pct == pytest.approx(100 * bf16.model_tflops_per_gpu / BF16_PEAK, abs=1e-3)
    [row] = [r for r in csv.DictReader(io.StringIO(runs_csv(card))) if r["log"] == FP8_LOG]
    assert float(row["mfu_pct"]) == pytest.approx(fp8.mfu_pct, abs=1e-3)


def test_a_log_stating_no_one_precision_instead_has_no_mfu(tmp_path: Path) -> None:
    """The fp8 log declared bf16 also printing a 16-bit trainer precision: it contradicts the
    declaration without saying which precision ran, so no peak can be chosen."""
    bundle = fp8_run_declared_bf16(tmp_path)
    log = bundle / FP8_LOG
    first, rest = log.read_text(encoding="utf-8").split("\n", 1)
    log.write_text(f"{first}\nprecision: 16-mixed\n{rest}", encoding="utf-8")
    card = assess(bundle)
    fp8 = _run(card, FP8_LOG)
    assert fp8.log_states == {"precision": None}
    assert fp8.model_tflops_per_gpu is not None and fp8.mfu_pct is None
    assert any(n.startswith("MFU withheld: the log contradicts cmax.toml's precision")
               for n in fp8.notes)
    [row] = [r for r in csv.DictReader(io.StringIO(runs_csv(card))) if r["log"] == FP8_LOG]
    assert row["mfu_pct"] == ""
