"""`cmax init` drafts a manifest that loads as it is: for the samples, the public example files
in tests/data and an llmb-run Exemplar archive; each value says where it was read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.pipeline import load
from tests.intake.llmb_fakes import LOGIN, Job, archive
from tests.paths import DATA, SAMPLES

FOLDERS = [SAMPLES / "aurora-compute", SAMPLES / "borealis-cloud", SAMPLES / "cinder-gpu",
           DATA / "ingest", DATA / "nccl", DATA / "validate", DATA / "mlperf"]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_draft_loads_as_it_is(folder: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    bundle = shutil.copytree(folder, tmp_path / "b")
    (bundle / "cmax.toml").unlink(missing_ok=True)
    assert main(["init", str(bundle), "-o", str(bundle / "cmax.toml")]) == 0
    text = (bundle / "cmax.toml").read_text()
    assert "# TODO: the quoted price per GPU-hour" in text
    with load(bundle) as loaded:  # no CmaxError: the draft is a valid manifest as written
        assert loaded.bundle.manifest.pricing is None
    capsys.readouterr()


def test_sample_values_carry_their_source(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(SAMPLES / "aurora-compute")]) == 0
    text = capsys.readouterr().out
    assert 'nodes = 64                                   # nccl/all_reduce_perf_64n.txt:3' in text
    run = 'workload = "llama3.1-405b"                   # training/llama3.1-405b_bf16_512.log:'
    assert run in text  # the log's own statement, with its line
    out = tmp_path / "cmax.toml"
    out.write_text("x")
    assert main(["init", str(SAMPLES / "aurora-compute"), "-o", str(out)]) == 2
    assert "will not overwrite" in capsys.readouterr().err and out.read_text() == "x"


def test_llmb_archive_draft(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = archive(tmp_path / "llmb-archive_26.08.00_20261101T120000Z.tar.zst", [Job()],
                   staging=tmp_path / "stage")
    assert main(["init", str(path)]) == 0
    text = capsys.readouterr().out
    assert 'gpu = "h100-sxm"' in text and "llmb-config_3913022.yaml:18 gpu_type h100" in text
    assert 'workload = "llama3.1-70b"' in text and "(the highest retry wins)" in text
    assert LOGIN not in text
