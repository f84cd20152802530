"""``cmax docs``: the docs pages an error message names, printed from the installed package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cmax.cli import exits, main

DOCS = Path(__file__).parents[2] / "docs"


def test_lists_every_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs"]) == exits.OK
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines()}
    assert listed == {p.stem for p in DOCS.glob("*.md")}


@pytest.mark.parametrize("topic", ["manifest", "docs/manifest.md", "MANIFEST"])
def test_prints_the_page_as_named_in_error_messages(topic: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", topic]) == exits.OK
    assert capsys.readouterr().out == (DOCS / "manifest.md").read_text(encoding="utf-8")


def test_unknown_page_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "nope"]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cmax docs" in err and "manifest" in err


def test_every_page_a_message_names_exists() -> None:
    package = Path(__file__).parents[2] / "cmax"
    named = {m for path in package.rglob("*.py")
             for m in re.findall(r"`cmax docs (\w+)`", path.read_text(encoding="utf-8"))}
    assert {"formats", "fleet", "rules", "reference", "manifest"} <= named
    assert named <= {p.stem for p in DOCS.glob("*.md")}


def test_unrecognised_evidence_points_to_a_page_that_prints(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing to see\n")
    assert main(["inspect", str(junk)]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    topic = re.search(r"`cmax docs (\w+)`", err)
    assert topic is not None and "docs/formats.md" not in err
    assert main(["docs", topic[1]]) == exits.OK
    assert capsys.readouterr().out == (DOCS / "formats.md").read_text(encoding="utf-8")
