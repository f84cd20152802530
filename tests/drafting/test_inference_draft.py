"""`cmax init` drafts `[[inference]]` entries from serving result files: what the file states,
each with its source, and a commented-out TODO entry where it states no GPU count."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.pipeline import load
from tests.paths import DATA, SAMPLES


def _draft(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    bundle = shutil.copytree(folder, tmp_path / "b")
    (bundle / "cmax.toml").unlink(missing_ok=True)
    assert main(["init", str(bundle), "-o", str(bundle / "cmax.toml")]) == 0
    capsys.readouterr()
    return bundle, (bundle / "cmax.toml").read_text()


def state(bundle: Path, **values: str) -> None:
    """What a person fills in: each commented-out required ``# key = ...`` TODO of the draft."""
    path = bundle / "cmax.toml"
    lines = path.read_text().splitlines()
    for key, value in values.items():
        [at] = [i for i, line in enumerate(lines) if line.startswith(f"# {key} = ...")]
        lines[at] = f"{key} = {value}"
    path.write_text("\n".join(lines) + "\n")


def test_the_serving_sample_drafts_its_stated_entries(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bundle, text = _draft(SAMPLES / "halcyon-serve", tmp_path, capsys)
    assert 'model = "gpt-oss-120b"                       # line 1 openai/gpt-oss-120b' in text
    assert "gpus = 2                                     # stated by the file" in text
    assert "input_len = 1024" in text and "output_len = 1024" in text
    # InferenceX's rows state the model, precision, GPUs and lengths of the sweep
    assert 'model = "deepseek-r1-0528"                   # line 1 deepseek-ai/DeepSeek-R1-0528' \
        in text
    assert "# a sweep: 6 result(s) at concurrency 4, 8, 16, 32, 64, 128" in text
    # no file states the GPUs per node, the nodes or (InferenceX rows carry none) the date
    state(bundle, gpus_per_node="8", nodes="2", date="2026-09-15")
    with load(bundle) as loaded:  # the draft loads with them stated
        specs = loaded.bundle.manifest.inference
        assert [(s.model, s.precision, s.gpus) for s in specs] == [
            ("deepseek-r1-0528", "fp8", 8), ("gpt-oss-120b", "fp8", 1),
            ("llama3.3-70b", "fp8", 2)]


def test_a_single_capped_result_drafts_its_concurrency(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(DATA / "inference" / "vllm_bench_serve_llama3.3-70b.json", folder)
    _, text = _draft(folder, tmp_path, capsys)
    assert "# result = \"vllm_bench_serve_llama3.3-70b.json\"" in text
    assert 'precision = "fp8"' in text  # --metadata precision=fp8
    assert "# gpus = 0" in text


def test_a_disaggregated_row_drafts_its_split_lengths_and_system(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """InferenceX's GB200 row states 8 prefill + 16 decode GPUs and its 8k/1k lengths: the draft
    carries them as stated, sizes the system to hold the 24 GPUs, and validates clean."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(DATA / "inference" / "inferencex_agg_gb200_disagg.json", folder)
    bundle, text = _draft(folder, tmp_path, capsys)
    assert "prefill_gpus = 8                             # stated by the file" in text
    assert "decode_gpus = 16                             # stated by the file" in text
    assert "input_len = 8192                             # stated by the file" in text
    assert "nodes = 6                                    # the largest run, 24 GPUs / 4" in text
    state(bundle, cluster='"gb200-serve"', date="2026-09-01")  # no file states them
    assert main(["validate", str(bundle)]) == 0
    with load(bundle) as loaded:
        [spec] = loaded.bundle.manifest.inference
        assert (spec.gpus, spec.prefill_gpus, spec.decode_gpus) == (24, 8, 16)
