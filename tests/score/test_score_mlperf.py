"""MLPerf results rated against NVIDIA's own submission (reference/mlperf_nvidia.csv)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.findings import Finding
from cmax.ingest.formats import mlperf
from cmax.reference.mlperf import load_mlperf_reference
from cmax.score import load_rubric
from cmax.score.mlperf import mlperf_results
from cmax.scorecard import MlperfResult
from tests.fakes import FakeReference
from tests.paths import DATA, REFERENCE
from tests.score.score_fakes import evidence

RUBRIC = load_rubric(None)
SETS = DATA / "mlperf"
REF = FakeReference(mlperf_table=load_mlperf_reference(REFERENCE))


def rate(folder: str, *, findings: tuple[Finding, ...] = (),
         reference: FakeReference = REF) -> MlperfResult:
    org = SETS.joinpath(*folder.split("/")[:2])
    ev = evidence()
    ev.mlperf_sets = mlperf.read_tree(SETS / folder, root=org)
    [result] = mlperf_results(ev, reference, RUBRIC, findings)
    return result


def test_nvidia_own_result_rates_one_and_passes() -> None:
    r = rate("v5.0/NVIDIA/results/eos-dfw_n64_ngc25.01_nemo/llama31_405b")
    assert r.ratio == 1.0 and r.verdict == "pass"
    assert r.score_min == pytest.approx(269.1216, abs=1e-4)
    assert r.reference_min == 269.12157222222226  # the official score, unrounded
    assert r.ci_low is not None and r.ci_high is not None
    assert RUBRIC.mlperf.bar < r.ci_low <= 1.0 <= r.ci_high
    assert r.reference_source is not None and "@0fdc28f0" in r.reference_source


def test_provider_against_nvidia_same_round_accelerator_and_scale() -> None:
    # Oracle BM.GPU.H100.8 v4.0 vs NVIDIA Eos (8 x H100) v4.0: 28.16 ÷ 29.70
    r = rate("v4.0/Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora")
    assert r.ratio == pytest.approx(28.1627830667789 / 29.69983464387464, abs=1e-6)
    assert r.reference_min == 28.1627830667789 and r.num_gpus == 8
    assert any("same round, accelerator and scale" in n for n in r.notes)
    # Lambda 1-Click B200 x8 v5.0 vs NVIDIA Nyx (DGX B200) v5.0: within 0.3 %
    lam = rate("v5.0/Lambda/results/1cc_b200_n1_ngc25.04_nemo/llama2_70b_lora")
    assert lam.ratio == pytest.approx(11.274901907968573 / 11.30944172364672, abs=1e-6)
    assert lam.verdict == "pass"
    # IBM+CoreWeave GB200 at 512 GPUs vs NVIDIA Tyche GB200 at 512, both v5.0
    cw = rate("v5.0/IBM+CoreWeave+NVIDIA/results/carina_ngpu512_ngc25.04_nemo/llama31_405b")
    assert "Tyche" in (cw.notes[-2] + cw.notes[-3]) and cw.ratio is not None
    assert cw.ratio == pytest.approx(cw.reference_min / cw.score_min, abs=1e-6)  # type: ignore[operator]


def test_nothing_matches_names_what_is_missing() -> None:
    tpu = rate("v4.0/Google/results/cloud-tpu-v5p-3072-maxtext/gpt3")
    assert tpu.verdict == "no_reference" and tpu.ratio is None
    assert any("no nvidia gpt3 submission on tpu-v5p" in n.lower() for n in tpu.notes)
    azure = rate("v4.1/Azure/results/ND_H200_v5_n64_nemo/llama2_70b_lora")
    assert azure.verdict == "no_reference"
    assert any("within 4x of 512 GPUs" in n and "[8]" in n for n in azure.notes)


def test_other_scale_is_compared_per_gpu_minute() -> None:
    # NVIDIA's own 64-GPU v4.0 run rated while only 8- and 512-GPU references exist for it
    ev = evidence()
    folder = SETS / "v4.0" / "NVIDIA" / "results" / "eos_n8_ngc24.04_nemo" / "llama2_70b_lora"
    ev.mlperf_sets = mlperf.read_tree(folder, root=folder.parents[2])
    s = ev.mlperf_sets[0]
    table = load_mlperf_reference(REFERENCE)
    match = table.match(s.benchmark, s.accelerator, 16, "4.0")
    assert match.basis == "scale" and match.row is not None and match.row.num_gpus in (8, 64)
    assert "per GPU-minute" in match.note


def test_failed_result_and_validation_errors() -> None:
    folder = "v5.0/Lambda/results/1cc_b200_n1_ngc25.04_nemo/llama2_70b_lora"
    error = Finding(rule="mlperf.hyperparameter", severity="error", fix="y",
                    file=f"{folder.split('/', 2)[2]}/result_1.txt", line=3, message="x")
    held = rate(folder, findings=(error,))
    assert held.verdict == "inconclusive" and any("cannot pass" in n for n in held.notes)
    no_table = rate(folder, reference=FakeReference())
    assert no_table.verdict == "no_reference"


def test_no_valid_score_fails(tmp_path: Path) -> None:
    import shutil

    src = SETS / "v5.0" / "NVIDIA" / "results" / "eos-dfw_n64_ngc25.01_nemo" / "llama31_405b"
    dst = tmp_path / "llama31_405b"
    shutil.copytree(src, dst)
    for name in ("result_0.txt", "result_1.txt"):
        path = dst / name
        path.write_text(path.read_text().replace('"status": "success"', '"status": "aborted"'))
    ev = evidence()
    ev.mlperf_sets = mlperf.read_tree(dst)
    [r] = mlperf_results(ev, REF, RUBRIC)
    assert r.verdict == "fail" and r.score_min is None and r.ratio is None


EOS = "v5.0/NVIDIA/results/eos-dfw_n64_ngc25.01_nemo/llama31_405b"


def _finding(rule: str, file: str) -> Finding:
    return Finding(rule=rule, severity="error", message="m", fix="f", file=file)


def test_another_submitters_or_a_cited_result_is_shown_never_rated() -> None:
    """issue 26: NVIDIA's own Eos result submitted as a provider's evidence rated 1.000."""
    label = "results/eos-dfw_n64_ngc25.01_nemo/llama31_405b"  # the folder, as the set names it
    for rule, words in (("mlperf.foreign-submitter", "Another submitter's MLPerf result"),
                        ("mlperf.cited-context", "A cited MLPerf result")):
        r = rate(EOS, findings=(_finding(rule, label),))
        assert r.verdict == "not_comparable" and r.ratio is None and r.score_min is not None
        assert any(words in n and f"not rated ({rule})" in n for n in r.notes)


def test_a_cloned_run_leaves_no_valid_result() -> None:
    """Replacing the slowest run with an edited copy of the fastest passed at 1.033."""
    r = rate(EOS, findings=(_finding("mlperf.cloned-run",
                                     "results/eos-dfw_n64_ngc25.01_nemo/llama31_405b/"
                                     "result_2.txt"),))
    assert r.verdict == "fail" and r.ratio is None
    assert any("not independent (mlperf.cloned-run)" in n for n in r.notes)
