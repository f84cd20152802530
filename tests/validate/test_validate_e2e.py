"""`cmax validate` end to end: real ingest of real-format bundles, the real reference.

The shipped sample bundles hold NeMo 2 logs in the DGXC v25.05 format, nccl-tests stdout,
ClusterMAX audit.values.json and incident CSVs; each doctored copy changes the log text the way
a misleading submission would.
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from cmax.cli import main
from tests.paths import DATA, SAMPLES

SAMPLES = SAMPLES
FP8_LOG = "training/llama3.1-405b_fp8_512.log"
_TIMING = re.compile(r"train_step_timing in s: ([0-9.]+) \| TFLOPS_per_GPU: ([0-9.e+]+)")
_ITER = re.compile(r"iteration (\d+)/49")


def _copy(tmp_path: Path, name: str = "aurora-compute") -> Path:
    bundle = tmp_path / name
    shutil.copytree(SAMPLES / name, bundle)
    return bundle


def _edit_log(bundle: Path, fn: object) -> None:
    path = bundle / FP8_LOG
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out = []
    for line in lines:
        match = _ITER.search(line)
        new = fn(int(match.group(1)), line) if match else line  # type: ignore[operator]
        if new is not None:
            out.append(new)
    path.write_text("".join(out), encoding="utf-8")


def _faster(it: int, line: str) -> str:
    """The samples' baselines are DGXC v25.05 numbers, whose parser averages iterations 11-44."""
    if not 11 <= it <= 44:
        return line
    def scale(m: re.Match[str]) -> str:
        step, tflops = float(m.group(1)), float(m.group(2))
        return (f"train_step_timing in s: {step * 0.9:.2f} | TFLOPS_per_GPU: "
                f"{tflops / 0.9:.3e}")
    return _TIMING.sub(scale, line)


def _validate(bundle: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(["validate", str(bundle), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def _rules(data: dict[str, object]) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for f in data["findings"]:  # type: ignore[attr-defined]
        out.setdefault(f["rule"], []).append(f)
    return out


def test_sample_at_reference_has_no_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _validate(SAMPLES / "aurora-compute", capsys)
    assert code == 0 and data["counts"]["error"] == 0  # type: ignore[index]
    assert set(data) == {"findings", "counts", "claims"}


def test_sample_with_failing_security_audit_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _validate(SAMPLES / "cinder-gpu", capsys)
    assert code == 1
    rules = _rules(data)
    assert "audit.security-fail" in rules
    assert any("security-nvidia-driver" in str(f["message"]) for f in rules["audit.security-fail"])


def test_truncated_window_is_an_error(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _copy(tmp_path)
    _edit_log(bundle, lambda it, line: None if 40 <= it <= 44 else line)
    code, data = _validate(bundle, capsys)
    assert code == 1
    hits = _rules(data)["completeness.window-missing"]
    assert hits[0]["file"] == FP8_LOG and "40-44" in str(hits[0]["message"])


def test_doctored_window_is_cherry_picked(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _copy(tmp_path)
    _edit_log(bundle, _faster)
    code, data = _validate(bundle, capsys)
    assert code == 1
    hit = _rules(data)["statistics.cherry-picked-window"][0]
    assert hit["file"] == FP8_LOG and "window 11-44" in str(hit["message"])


def _nan_loss(it: int, line: str) -> str:
    return re.sub(r"reduced_train_loss: [0-9.]+", "reduced_train_loss: nan", line) if it == 41 \
        else line


def test_nan_loss_is_an_error_with_its_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _copy(tmp_path)
    _edit_log(bundle, _nan_loss)
    code, data = _validate(bundle, capsys)
    hits = _rules(data).get("sanity.nan-loss", [])
    assert code == 1 and len(hits) == 1 and hits[0]["line"] == 44  # iteration 41, file line 44


def test_text_output_and_archive_bundle(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "aurora.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(SAMPLES / "aurora-compute", arcname="aurora-compute")
    assert main(["validate", str(archive)]) == 0
    out = capsys.readouterr().out
    assert "0 error(s)" in out and str(archive) in out


def test_log_gbs_contradicting_the_manifest_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmax.toml declares the reference GBS 256; the log shows the run used 512."""
    bundle = _copy(tmp_path)
    _edit_log(bundle, lambda it, line: line.replace("global_batch_size: 256",
                                                    "global_batch_size: 512"))
    code, data = _validate(bundle, capsys)
    hit = _rules(data)["consistency.manifest-vs-log"][0]
    assert code == 1 and hit["file"] == FP8_LOG and hit["line"] == 14  # iteration 11
    assert "global batch size 512" in str(hit["message"])


# --- a Megatron-Bridge bundle (one-indexed iterations, separate TFLOP/s lines) ------------------

MBRIDGE = DATA / "validate" / "mbridge-405b-fp8"
MB_LOG = "training/log-llama3.1-405b_fp8_1024_4242_0.out"
_MB_ITER = re.compile(r"iteration\s+(\d+)/\s*50 \|")


def _edit_mb(tmp_path: Path, fn: object) -> Path:
    """Copy the bundle; ``fn(iteration, iteration_line, step_time_line)`` returns new lines."""
    bundle = tmp_path / "mb"
    shutil.copytree(MBRIDGE, bundle)
    path = bundle / MB_LOG
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out = [lines[0]]
    for i in range(1, len(lines), 2):
        it = int(_MB_ITER.search(lines[i]).group(1))  # type: ignore[union-attr]
        out.extend(fn(it, lines[i], lines[i + 1]))  # type: ignore[operator]
    path.write_text("".join(out), encoding="utf-8")
    return bundle


def test_megatron_bridge_bundle_at_reference_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _validate(MBRIDGE, capsys)
    assert code == 0 and data["counts"] == {"error": 0, "warning": 0, "info": 0}


def test_megatron_bridge_nan_grad_norm(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _edit_mb(tmp_path, lambda it, a, b: [re.sub(r"grad norm: [0-9.]+", "grad norm: nan", a)
                                                  if it == 40 else a, b])
    code, data = _validate(bundle, capsys)
    assert code == 1 and "sanity.nan-grad-norm" in _rules(data)


def test_megatron_bridge_window_is_one_indexed(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Iterations 35-44 as printed: dropping printed iteration 35 breaks the window."""
    bundle = _edit_mb(tmp_path, lambda it, a, b: [] if it == 35 else [a, b])
    code, data = _validate(bundle, capsys)
    hit = _rules(data)["completeness.window-missing"][0]
    assert code == 1 and "iterations 35 of the steady-state window 35-44" in str(hit["message"])


def test_megatron_bridge_stopped_after_the_window(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _edit_mb(tmp_path, lambda it, a, b: [a, b] if it <= 46 else [])
    code, data = _validate(bundle, capsys)
    rules = _rules(data)
    assert code == 1 and "completeness.run-unfinished" in rules
    assert "completeness.window-missing" not in rules


def test_megatron_bridge_inflated_tflops(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    def inflate(it: int, a: str, b: str) -> list[str]:
        value = float(re.search(r"utilization: ([0-9.]+)MODEL", b).group(1))  # type: ignore[union-attr]
        return [a, re.sub(r"utilization: [0-9.]+MODEL", f"utilization: {value * 1.25:.1f}MODEL", b)]
    code, data = _validate(_edit_mb(tmp_path, inflate), capsys)
    hit = _rules(data)["consistency.tflops-vs-step-time"][0]
    # 25 % above Megatron-Bridge's own count, 19 % above the closest convention (NVIDIA's
    # non-causal Llama formula, 5 % higher): still far outside the 10 % tolerance.
    assert code == 1 and "19% above" in str(hit["message"]) and "nvidia-llama" in str(
        hit["message"])


def test_nccl_folder_is_evidence_not_empty(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """An [[nccl]] path may name a folder of runs: its files are read, so it is not empty."""
    bundle = _copy(tmp_path)
    manifest = bundle / "cmax.toml"
    text = manifest.read_text(encoding="utf-8")
    assert 'path = "nccl/all_reduce_perf_64n.txt"' in text
    manifest.write_text(text.replace('path = "nccl/all_reduce_perf_64n.txt"', 'path = "nccl"'),
                        encoding="utf-8")
    _, data = _validate(bundle, capsys)
    assert "completeness.empty-evidence" not in _rules(data)
    (bundle / "nccl" / "all_reduce_perf_64n.txt").write_text("not nccl-tests output\n",
                                                             encoding="utf-8")
    (bundle / "nccl" / "README.txt").write_text("notes\n", encoding="utf-8")
    code = main(["validate", str(bundle)])
    assert code == 2  # a folder with no nccl-tests output at all is refused at ingest


def test_nccl_tests_library_version_feeds_the_software_floors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The NCCL version an nccl-tests output prints was unused. The samples' 'nccl-library=22707'
    is NCCL 2.27.7 (above the recipe floor 2.19.4: no floor finding); an NCCL 2.18.5 library
    is below the floor, cited at the line that prints it."""
    code, data = _validate(SAMPLES / "aurora-compute", capsys)
    assert not {"software.below-recipe-floor", "software.below-recommended"} & set(_rules(data))
    bundle = _copy(tmp_path)
    nccl = bundle / "nccl" / "all_reduce_perf_64n.txt"
    lines = nccl.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = "# nccl-tests version 2.17.6 nccl-headers=21805 nccl-library=21805\n"
    nccl.write_text("".join(lines), encoding="utf-8")
    code, data = _validate(bundle, capsys)
    [hit] = _rules(data)["software.below-recipe-floor"]
    assert code == 1 and "NCCL 2.18.5 is below the recipe minimum 2.19.4" in str(hit["message"])
    assert (hit["file"], hit["line"]) == ("nccl/all_reduce_perf_64n.txt", 1)
