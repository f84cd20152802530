"""The one TOML reader behind the manifest, the rubric and the reference catalogues."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cmax.errors import CmaxError
from cmax.reading.tomlfile import read_toml


def test_reads_a_good_file(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_text('[x]\ny = 1\n')
    assert read_toml(path, what="thing") == {"x": {"y": 1}}


@pytest.mark.parametrize(("setup", "expected"), [
    (lambda p: None, "thing not found"),
    (lambda p: p.mkdir(), "thing path is a directory"),
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: p.write_bytes(b"a = '\xff'\n"), "thing is not UTF-8 text"),
])
def test_every_failure_is_one_error(tmp_path: Path, setup: object, expected: str) -> None:
    path = tmp_path / "a.toml"
    setup(path)  # type: ignore[operator]
    with pytest.raises(CmaxError, match=expected) as info:
        read_toml(path, what="thing", missing_fix="make it")
    assert str(path) in info.value.one_line()


def test_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_text('a = 1\nb = = 2\n')
    with pytest.raises(CmaxError, match="invalid TOML") as info:
        read_toml(path, what="thing")
    assert info.value.line == 2
