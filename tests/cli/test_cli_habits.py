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


def _complete(words: str, tmp_path: Path) -> list[str]:
    """What bash completion offers for the last of ``words`` (click's bash_complete)."""
    import os
    import subprocess
    import sys

    script = "import sys; sys.argv[0] = 'cmax'; from cmax.cli import run; run()"
    env = {**os.environ, "_CMAX_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - 1),
           "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return [line.split(",", 1)[1] for line in proc.stdout.splitlines() if "," in line]


def test_completion_offers_policies_tiers_and_docs_topics(tmp_path: Path) -> None:
    assert _complete("cmax score b --fail-on tier", tmp_path) == [
        "tier-below:platinum", "tier-below:gold", "tier-below:silver", "tier-below:bronze"]
    assert _complete("cmax score b --fail-on exemplar,ga", tmp_path) == [
        "exemplar,gate", "exemplar,gate-unevaluated"]
    assert "drift" in _complete("cmax audit runs --fail-on d", tmp_path)
    assert "drift" not in _complete("cmax score b --fail-on d", tmp_path)
    assert _complete("cmax docs man", tmp_path) == ["manifest"]
    assert {"rules", "reference"} <= set(_complete("cmax docs r", tmp_path))


@pytest.mark.parametrize(("argv", "hint"), [
    (["valdiate", "b"], "No such command 'valdiate'. Did you mean 'validate'"),
    (["scroe", "b"], "No such command 'scroe'. Did you mean 'score'?"),
    (["reference", "shw"], "No such command 'shw'. Did you mean 'show'?"),
    (["price", "--wrkload", "x", "b"], "Did you mean '--workload'?"),
])
def test_a_misspelt_command_or_option_gets_a_suggestion(
        argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == exits.BAD_INPUT
    err = capsys.readouterr().err
    # click 8.1 (the floor) quotes no option name in its suggestion; later clicks do
    assert (hint in err or hint.replace("'--", "--").replace("'?", "?") in err)
    assert err.count("\n") == 1


def test_an_unknown_word_gets_no_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["xyz"]) == exits.BAD_INPUT
    assert capsys.readouterr().err == "cmax: error: No such command 'xyz'. (see `cmax --help`)\n"


@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_global_flags_are_accepted_after_the_command(
        flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`cmax score --quiet` was refused with "did you mean --quote"; `-q` after the command
    was refused outright."""
    from tests.paths import SAMPLES

    bundle = str(SAMPLES / "aurora-compute")
    assert main(["report", bundle, "-o", str(tmp_path / "a"), "--no-pdf", flag]) == exits.OK
    quiet = capsys.readouterr()
    assert quiet.err == "" and "scorecard.html" in quiet.out
    assert main(["report", bundle, "-o", str(tmp_path / "b"), "--no-pdf"]) == exits.OK
    assert "writing" in capsys.readouterr().err  # the control: progress without the flag


def test_nothing_after_a_double_dash_moves() -> None:
    from cmax.cli import hoist_global_flags

    assert hoist_global_flags(["score", "b", "-vv", "--", "-q"]) == \
        ["-vv", "score", "b", "--", "-q"]
    assert hoist_global_flags(["-q", "score", "b"]) == ["-q", "score", "b"]
