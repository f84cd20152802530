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
