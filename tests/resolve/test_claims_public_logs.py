"""Which public-format logs in tests/data earn corroboration of the claims a pass needs
(model, scale, precision), each declared honestly in a one-run bundle (docs/scoring.md), and
which errors each gets: exactly the faults the fixture was written to carry, none else (the
public-log half of docs/rules.md "False alarms")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.pipeline import load
from cmax.resolve.claims import EARNS_PASS
from tests.fakes import manifest_text, run_toml
from tests.paths import DATA

# log, declared workload, precision, GPUs, the claims its own lines corroborate
LOGS: list[tuple[str, str, str, int, set[str]]] = [
    ("nemo2_identity_preamble.log", "llama3.1-70b", "fp8", 16,
     {"model", "gpu_count", "precision"}),
    ("megatron_lm_nan_grad.log", "llama3.1-70b", "bf16", 64, {"gpu_count"}),
    ("nemo2_llama3.1-8b_fp8.log", "llama3.1-8b", "fp8", 8, {"model"}),
    ("nemo1_gpt3-175b.log", "gpt3-175b", "bf16", 128, {"model"}),
    ("torchtitan_deepseek-v3.log", "deepseek-v3", "bf16", 256, {"model"}),
    # its step times and TFLOP/s are the fp8 recipe's on H100 (identity.arithmetic)
    ("megatron_bridge_llama3.1-70b.log", "llama3.1-70b", "fp8", 64, set()),
    ("nemo2_messy.log", "llama3.1-8b", "fp8", 8, set()),
    ("maxtext_llama2-70b.log", "llama2-70b", "bf16", 64, set()),
    ("paxml_gpt3-5b.log", "gpt3-5b", "bf16", 16, set()),
]


#: The errors a fixture is written to carry (anything else it gets is a false alarm)
EXPECTED: dict[str, tuple[set[str], str]] = {
    "nemo2_identity_preamble.log": (
        {"completeness.window-missing", "comparability.scale-mismatch"},
        "a preamble sample: 3 steps, on 16 GPUs where no Llama 3.1 70B reference exists"),
    "megatron_lm_nan_grad.log": ({"sanity.nan-grad-norm"}, "grad norm: nan at iteration 12"),
    "nemo2_llama3.1-8b_fp8.log": (
        {"statistics.cherry-picked-window", "statistics.speed-change"},
        "written for window comparisons: 12.5 s steps, then 10.1 s from iteration 35, the "
        "window's first"),
    "torchtitan_deepseek-v3.log": (
        {"comparability.scale-mismatch"}, "256 GPUs: no DeepSeek-V3 H100 reference at 256"),
    "nemo2_messy.log": (
        {"completeness.run-unfinished", "sanity.non-finite", "statistics.cherry-picked-window",
         "statistics.speed-change"},
        "hostile-input sample: nan steps, a cut tail, slow and fast stretches"),
}


def expected_errors(log: str) -> set[str]:
    return EXPECTED.get(log, (set(), ""))[0]


def _bundle(root: Path, log: str, workload: str, precision: str, gpus: int) -> Path:
    (root / "training").mkdir(parents=True)
    shutil.copy(DATA / "ingest" / log, root / "training" / log)
    (root / "cmax.toml").write_text(manifest_text(
        run_toml(workload, precision, gpus, f"training/{log}"), nodes=max(gpus // 8, 1),
        interconnect=None, date="2026-05-01"), encoding="utf-8")
    return root


@pytest.mark.parametrize(("log", "workload", "precision", "gpus", "earned"), LOGS,
                         ids=[row[0] for row in LOGS])
def test_public_log_corroboration(tmp_path: Path, log: str, workload: str, precision: str,
                                  gpus: int, earned: set[str]) -> None:
    with load(_bundle(tmp_path, log, workload, precision, gpus)) as loaded:
        claims = {c.kind: c for c in loaded.case.claims}
        errors = [f for f in loaded.findings if f.severity == "error"
                  and f.rule.startswith(("identity.", "consistency.", "sanity."))]
    corroborated = {k for k in EARNS_PASS if claims[k].status == "corroborated"}
    assert corroborated == earned
    # declared honestly, none of the three is contradicted
    assert not any(claims[k].status == "contradicted" for k in EARNS_PASS)
    assert all(claims[k].support[0].line is not None for k in corroborated)
    assert not [f for f in errors if f.rule.startswith("identity.")], errors


@pytest.mark.parametrize(("log", "workload", "precision", "gpus"),
                         [row[:4] for row in LOGS], ids=[row[0] for row in LOGS])
def test_public_log_errors_are_the_faults_it_carries(tmp_path: Path, log: str, workload: str,
                                                     precision: str, gpus: int) -> None:
    with load(_bundle(tmp_path, log, workload, precision, gpus)) as loaded:
        errors = {f.rule for f in loaded.findings if f.severity == "error"}
    assert errors == expected_errors(log)
