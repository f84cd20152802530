"""Exit codes (cmax/cli/exits.py): an internal error is one line, a saved traceback and its own
code; the programs leave through their exit handlers without calling private atexit API."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from cmax.cli import exits, main
from tests.paths import SAMPLES


def _boom(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("a bug deep inside")


def test_internal_error_is_one_line_with_a_saved_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr("cmax.pipeline.assess", _boom)
    code = main(["score", str(SAMPLES / "aurora-compute")])
    assert code == exits.INTERNAL and code not in (exits.FINDINGS, exits.BAD_INPUT)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("cmax: internal error: ZeroDivisionError: a bug deep inside")
    saved = Path(re.search(r"traceback saved to (\S+?);", err).group(1))  # type: ignore[union-attr]
    assert saved.parent == tmp_path
    text = saved.read_text()
    assert "Traceback (most recent call last)" in text and "_boom" in text
    assert "argv:" in text


def test_verbose_prints_the_traceback_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr("cmax.pipeline.assess", _boom)
    assert main(["-v", "score", str(SAMPLES / "aurora-compute")]) == exits.INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.rstrip().splitlines()[-1].startswith("cmax: internal error:")


def test_user_error_keeps_exit_2_not_internal(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(tmp_path / "missing")]) == exits.BAD_INPUT
    assert "internal error" not in capsys.readouterr().err


def test_quiet_silences_progress_lines(capsys: pytest.CaptureFixture[str]) -> None:
    bundle = str(SAMPLES / "aurora-compute")
    tmp = tempfile.mkdtemp()
    assert main(["report", bundle, "-o", tmp, "--no-pdf"]) == 0
    assert "rating" in capsys.readouterr().err
    assert main(["-q", "report", bundle, "-o", tmp, "--no-pdf"]) == 0
    # progress goes; a warning about the evidence (validation errors) stays, as in cmax price
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if not line.startswith("cmax: warning:")] == []


def test_program_runs_exit_handlers_then_exits_with_the_command_code(tmp_path: Path) -> None:
    """run(): a handler a command registers still runs (a temporary folder's cleanup, Ray,
    logging), the exit code is the command's, and cmax/cli uses no private atexit API."""
    script = textwrap.dedent("""
        import atexit, sys, types
        import click
        module = types.ModuleType("fake_cmd")

        @click.command("fake")
        def command() -> int:
            atexit.register(lambda: print("handler ran", flush=True))
            return 1

        module.command = command
        sys.modules["fake_cmd"] = module
        from cmax import cli
        cli.COMMANDS["fake"] = ("fake_cmd", "a test command")
        sys.argv = ["cmax", "fake"]
        cli.run()
        print("not reached")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, cwd=Path(__file__).parents[2])
    assert proc.returncode == exits.FINDINGS, proc.stderr
    assert proc.stdout == "handler ran\n"
    source = "".join(p.read_text() for p in (Path(__file__).parents[2] / "cmax/cli").glob("*.py"))
    assert "_run_exitfuncs" not in source
