"""CLI habits: an example in every command's help; environment defaults for repeated options."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.cli import COMMANDS, EXAMPLES, exits, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_help_has_an_example(name: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == exits.OK
    out = capsys.readouterr().out
    assert "Examples:" in out
    assert all(example in out for example in EXAMPLES[name])


def test_top_level_help_lists_exit_codes_and_quiet_verbose(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == exits.OK
    out = capsys.readouterr().out
    assert "-q, --quiet" in out and "-v, --verbose" in out
    assert "70 internal error" in out.replace("\n", " ").replace("  ", " ")


def test_rubric_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-rubric.toml"
    monkeypatch.setenv("CMAX_RUBRIC", str(missing))
    from tests.paths import SAMPLES

    assert main(["score", str(SAMPLES / "aurora-compute")]) == exits.BAD_INPUT
    assert str(missing) in capsys.readouterr().err


def test_reference_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CMAX_REFERENCE", "no-such-release-9")
    assert main(["reference", "list"]) == exits.BAD_INPUT
    assert "no-such-release-9" in capsys.readouterr().err


@pytest.mark.parametrize(("program", "variable"), [("cmax", "_CMAX_COMPLETE"),
                                                   ("cmax-rating", "_CMAX_RATING_COMPLETE")])
def test_completion_script_for_either_name(program: str, variable: str, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    script = f"import sys; sys.argv[0] = {program!r}; from cmax.cli import run; run()"
    env = {**os.environ, variable: "bash_source",
           "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"complete -o nosort -F _{program.replace('-', '_')}_completion {program}" in (
        proc.stdout)
