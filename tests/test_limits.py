"""cmax.limits: each bound refuses with one EvidenceError naming the limit, and lets genuine
input through unchanged."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from cmax.errors import EvidenceError
from cmax.limits import (
    MAX_JSON_DEPTH,
    MAX_LINE_CHARS,
    check_lines,
    csv_guarded,
    is_file_named,
    json_depth,
    json_safe,
    load_json,
    read_csv_header,
    whole,
)


def test_load_json_bounds_depth_and_digits() -> None:
    assert load_json('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_depth(load_json(ok)) == MAX_JSON_DEPTH
    for deep in ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
                 "[" * 100_000 + "]" * 100_000):  # the second raised RecursionError
        with pytest.raises(EvidenceError, match="JSON nesting exceeds cmax's limit of 100"):
            load_json(deep, file="x.json")
    with pytest.raises(EvidenceError, match=r"integer of 5000 digits exceeds .* 40 digits"):
        load_json('{"n": ' + "9" * 5000 + "}")
    with pytest.raises(ValueError, match="Expecting"):  # the caller words bad syntax
        load_json("{nope")


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_whole_refuses_non_finite(value: float) -> None:
    with pytest.raises(EvidenceError, match=r"max_iteration: .* is not a finite number"):
        whole(value, file="s.csv", line=3, field="max_iteration")


def test_whole_truncates_finite() -> None:
    assert whole(49.0) == 49 and whole(-2.7) == -2


def test_csv_guarded_names_the_failing_line_and_limit() -> None:
    text = "a,b\n1,2\n3,\"" + "x" * (csv.field_size_limit() + 1) + "\"\n"
    reader = csv.DictReader(io.StringIO(text, newline=""))
    read_csv_header(reader, file="i.csv")
    rows = csv_guarded(reader, file="i.csv")
    assert next(rows) == {"a": "1", "b": "2"}
    with pytest.raises(EvidenceError, match=r"i\.csv:3: a CSV field exceeds cmax's limit of "
                                            r"131,072 characters"):
        next(rows)
    header = io.StringIO('"' + "h" * 200_000 + '"\n', newline="")
    with pytest.raises(EvidenceError, match=r"i\.csv:1: a CSV field"):
        read_csv_header(csv.DictReader(header), file="i.csv")


def test_check_lines() -> None:
    check_lines([b"x" * MAX_LINE_CHARS, b""], file="n.txt")
    with pytest.raises(EvidenceError, match=r"n\.txt:2: a line of 1,048,577 characters"):
        check_lines([b"ok", b"x" * (MAX_LINE_CHARS + 1)], file="n.txt")


def test_json_safe_makes_strict_json() -> None:
    data = {"a": float("inf"), "b": [1.5, float("nan"), (2, -float("inf"))], "c": "inf"}
    safe = json_safe(data)
    assert safe == {"a": None, "b": [1.5, None, [2, None]], "c": "inf"}
    json.dumps(safe, allow_nan=False)


def test_is_file_named(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("{}")
    assert is_file_named(tmp_path / "s.json")
    assert not is_file_named(tmp_path / ("h" * 300 + ".json"))  # ENAMETOOLONG: False
    assert not is_file_named(tmp_path)
