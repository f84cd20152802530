"""Reading a rubric file (cmax/reference/rubric_file.py): digest of the bytes read, one error."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cmax.errors import RubricError
from cmax.reference.rubric_file import default_rubric_path, read_rubric_file


def test_shipped_rubric_digest_is_of_its_bytes() -> None:
    read = read_rubric_file(None)
    assert read.file == default_rubric_path()
    assert read.digest == hashlib.sha256(read.file.read_bytes()).hexdigest()
    assert read.data["id"] == "cmax-clustermax2" and isinstance(read.data["tiers"], dict)


def test_malformed_rubric_is_one_rubric_error_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "rubric.toml"
    bad.write_text('id = "x"\n[scoring\nweight = 1\n')
    with pytest.raises(RubricError) as caught:
        read_rubric_file(bad)
    assert caught.value.file == str(bad) and caught.value.line == 2
    assert "\n" not in caught.value.message


def test_missing_rubric_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(RubricError) as caught:
        read_rubric_file(tmp_path / "none.toml")
    assert caught.value.fix and "--rubric" in caught.value.fix
