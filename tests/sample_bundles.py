"""Copies of the shipped samples with evidence added, shared by tests of several stages."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.paths import DATA, SAMPLES

AURORA_JOBS = (("llama3.1-405b_bf16_512.log", "41001"), ("llama3.1-405b_fp8_512.log", "41002"),
               ("grok1-314b_fp8_512.log", "41003"))
"""Aurora's run logs and the Slurm job each ran as, in tests/data/ingest/slurm/sacct_parsable.txt"""


def aurora_with_slurm_jobs(tmp_path: Path) -> Path:
    """Aurora with each run's ``job_id`` and the jobs' ``sacct -P`` output as
    ``[[accounting]]``: a bundle whose runs the scheduler's accounting witnesses."""
    bundle = tmp_path / "aurora"
    shutil.copytree(SAMPLES / "aurora-compute", bundle)
    toml = bundle / "cmax.toml"
    text = toml.read_text(encoding="utf-8")
    for log, job in AURORA_JOBS:
        line = f'log = "training/{log}"\n'
        text = text.replace(line, f'{line}job_id = "{job}"\n')
    toml.write_text(text + '\n[[accounting]]\npath = "slurm/sacct_parsable.txt"\n',
                    encoding="utf-8")
    (bundle / "slurm").mkdir()
    shutil.copy(DATA / "ingest" / "slurm" / "sacct_parsable.txt", bundle / "slurm")
    return bundle


def straighten_fp8_loss(bundle: Path) -> None:
    """Replace the loss of Aurora's fp8 run (``runs[1]``) with a straight line, keeping its
    speed: the run stays fast enough to pass while its loss betrays a formula
    (``fabrication.formula-loss``)."""
    log = bundle / "training/llama3.1-405b_fp8_512.log"
    step = iter(range(1000))
    log.write_text(re.sub(r"reduced_train_loss: [0-9.]+",
                          lambda _: f"reduced_train_loss: {12.0 - 0.1 * next(step):.3f}",
                          log.read_text(encoding="utf-8")), encoding="utf-8")


AURORA_BF16_LOG = "training/llama3.1-405b_bf16_512.log"
"""Aurora's bf16 run log, the run the Exemplar variants below change"""


def _runs(manifest: str) -> tuple[str, list[str], str]:
    """cmax.toml split into what comes before the runs, each [[runs]] block, and the rest."""
    head, _, rest = manifest.partition("[[runs]]")
    blocks = ["[[runs]]" + b for b in rest.split("[[runs]]")]
    last, _, tail = blocks[-1].partition("\n[[nccl]]")
    blocks[-1] = last
    return head, blocks, "\n[[nccl]]" + tail


def _slowed(log: str, factor: float) -> str:
    """The same NeMo 2 log run ``factor`` times slower: each step time divided by it and the
    printed TFLOP/s multiplied, so the log's own arithmetic still agrees."""
    log = re.sub(r"train_step_timing in s: ([0-9.]+)",
                 lambda m: f"train_step_timing in s: {float(m[1]) / factor:.2f}", log)
    return re.sub(r"TFLOPS_per_GPU: ([0-9.e+]+)",
                  lambda m: f"TFLOPS_per_GPU: {float(m[1]) * factor:.3e}", log)


def one_of_two_runs_fails(tmp: Path) -> Path:
    """Aurora with a second bf16 run of the same workload at ~0.85 of reference."""
    root = tmp / "two-runs"
    shutil.copytree(SAMPLES / "aurora-compute", root)
    slow = "training/llama3.1-405b_bf16_512_second.log"
    (root / slow).write_text(_slowed((root / AURORA_BF16_LOG).read_text(), 0.85))
    head, blocks, tail = _runs((root / "cmax.toml").read_text())
    second = blocks[0].replace(AURORA_BF16_LOG, slow)
    (root / "cmax.toml").write_text(head + "".join([*blocks, second.rstrip() + "\n"]) + tail)
    return root


def only_run_unverified(tmp: Path) -> Path:
    """Aurora's bf16 run alone, its log without the configuration header (what it ran rests
    on cmax.toml alone)."""
    root = tmp / "unverified"
    shutil.copytree(SAMPLES / "aurora-compute", root)
    log = (root / AURORA_BF16_LOG).read_text()
    (root / AURORA_BF16_LOG).write_text(log[log.index("Training epoch"):])
    head, blocks, tail = _runs((root / "cmax.toml").read_text())
    (root / "cmax.toml").write_text(head + blocks[0] + tail)
    return root


def one_of_two_runs_contested(tmp: Path) -> Path:
    """Aurora with a second bf16 run of the same workload whose log prints TFLOP/s 1.5 times
    what its step times give (``consistency.tflops-vs-step-time``, an error on the run): its
    speed is not below the bar, but the error withholds its pass."""
    root = tmp / "contested"
    shutil.copytree(SAMPLES / "aurora-compute", root)
    second = "training/llama3.1-405b_bf16_512_second.log"
    log = re.sub(r"TFLOPS_per_GPU: ([0-9.e+]+)",
                 lambda m: f"TFLOPS_per_GPU: {float(m[1]) * 1.5:.3e}",
                 (root / AURORA_BF16_LOG).read_text())
    (root / second).write_text(log)
    head, blocks, tail = _runs((root / "cmax.toml").read_text())
    copy = blocks[0].replace(AURORA_BF16_LOG, second)
    (root / "cmax.toml").write_text(head + "".join([*blocks, copy.rstrip() + "\n"]) + tail)
    return root


def fp8_run_declared_bf16(tmp: Path) -> Path:
    """Aurora with its fp8 run's [[runs]] precision declared bf16: the log (its experiment
    name and TFLOP/s) states fp8, so the declared precision is contradicted and errors bear on
    the run, withholding its pass."""
    root = tmp / "fp8-as-bf16"
    shutil.copytree(SAMPLES / "aurora-compute", root)
    head, blocks, tail = _runs((root / "cmax.toml").read_text())
    blocks[1] = blocks[1].replace('precision = "fp8"', 'precision = "bf16"', 1)
    (root / "cmax.toml").write_text(head + "".join(blocks) + tail)
    return root
