"""The CLI contract (docs/architecture.md): help everywhere, exit codes, one-line user errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cmax.cli import COMMANDS, main
from tests.paths import SAMPLES


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0
    assert "Usage:" in capsys.readouterr().out


def test_unknown_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert "No such command" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["validate", "score", "price"])
def test_missing_bundle_is_one_line_exit_2(name: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope"
    assert main([name, str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(missing) in err and "bundle not found" in err


def test_bad_toml_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cmax.toml").write_text("[provider\nname = 1\n")
    assert main(["score", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "cmax.toml:1" in err and "invalid TOML" in err


def test_unknown_workload_is_one_line_exit_2(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    sample = SAMPLES / "aurora-compute"
    text = (sample / "cmax.toml").read_text().replace('"grok1-314b"', '"gpt-9-100t"', 1)
    import shutil

    bundle = tmp_path / "b"
    shutil.copytree(sample, bundle)
    (bundle / "cmax.toml").write_text(text)
    assert main(["score", str(bundle), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "gpt-9-100t" in err and "cmax.toml" in err and "workload" in err


def test_python_dash_m_works() -> None:
    proc = subprocess.run([sys.executable, "-m", "cmax", "schema", "--model", "price"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert "parity_usd_per_gpu_hour" in schema["properties"]


def test_every_missing_declared_file_is_named_at_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    sample = SAMPLES / "borealis-cloud"
    bundle = tmp_path / "b"
    shutil.copytree(sample, bundle)
    (bundle / "incidents.csv").unlink()
    shutil.rmtree(bundle / "nccl")
    assert main(["validate", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "2 declared files" in err
    assert "nccl[0].path" in err and "reliability.incidents" in err


def test_price_warns_when_its_evidence_failed_validation(
        capsys: pytest.CaptureFixture[str]) -> None:
    samples = SAMPLES
    assert main(["price", str(samples / "cinder-gpu"), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["quoted_usd_per_gpu_hour"] == 1.95
    assert "9 validation error(s)" in captured.err  # 8 + audit.partial (4 of 64 nodes)
    assert main(["price", str(samples / "aurora-compute"), "--format", "json"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("argv", [["score"], ["score", "--format", "xml", "b"],
                                  ["validate", "--no-such-flag", "b"]])
def test_usage_errors_are_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cmax: error: ")
    assert "--help" in err


_HELP_PROBE = """
import contextlib, io, sys
from cmax.cli import COMMANDS, main
for argv in ([], *([name] for name in COMMANDS)):
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv, "--help"]) == 0, argv
heavy = sorted(m for m in ("polars", "numpy", "pydantic", "matplotlib", "weasyprint")
               if m in sys.modules)
print(",".join(heavy))
"""


def test_help_imports_no_heavy_library() -> None:
    """`cmax --help` and every `cmax CMD --help` stay at click's start-up cost (issue 17)."""
    done = subprocess.run([sys.executable, "-c", _HELP_PROBE], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "", f"--help imported {done.stdout.strip()}"



def test_price_workload_option_is_the_buyers_basket(capsys: pytest.CaptureFixture[str]) -> None:
    """issue 33: --workload picks the buyer's workload. Aurora's 3:1 basket of its measured
    Llama 3.1 405B BF16 ($3.2913/M tokens) and an estimated Llama 3.1 70B FP8 it never ran
    (ratio 1.0015 x the reference 1,627.0 tokens/s/GPU at $2.45 / goodput 1.001891 = $0.4169):
    0.75 x 3.2913 + 0.25 x 0.4169 = $2.5727."""
    from tests.paths import SAMPLES

    aurora = str(SAMPLES / "aurora-compute")
    assert main(["price", aurora, "--workload", "llama3.1-405b:bf16=3,llama3.1-70b:fp8=1",
                 "--format", "json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert advice["token_basket"] == {"llama3.1-405b:bf16": 0.75, "llama3.1-70b:fp8": 0.25}
    assert advice["usd_per_million_tokens"] == pytest.approx(0.75 * 3.2913 + 0.25 * 0.4169,
                                                             abs=1e-4)
    [estimate] = [c for c in advice["token_costs"] if c["basis"] == "estimate"]
    assert estimate["workload"] == "llama3.1-70b" and "1,627.0 tokens/s/GPU" in estimate[
        "basis_detail"]
    assert main(["price", aurora, "--workload", "llama3.1-405b:bf16"]) == 0
    assert "buyer's workload (llama3.1-405b:bf16 100%" in capsys.readouterr().out
    assert main(["price", aurora, "--workload", "llama3.1-70b"]) == 2
    assert "--workload: cannot read workload 'llama3.1-70b'" in capsys.readouterr().err
