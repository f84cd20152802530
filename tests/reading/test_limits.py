"""cmax.reading.limits: each bound refuses with one EvidenceError naming the limit, and lets genuine
input through unchanged."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from cmax.errors import EvidenceError
from cmax.reading.limits import (
    MAX_JSON_DEPTH,
    MAX_LINE_CHARS,
    bounded_lines,
    csv_guarded,
    is_file_named,
    json_depth,
    json_safe,
    load_json,
    read_bounded,
    read_bounded_lines,
    read_bounded_text,
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


def test_bounded_lines_refuses_a_long_line_while_reading() -> None:
    ok = b"x" * MAX_LINE_CHARS
    assert list(bounded_lines(io.BytesIO(ok + b"\r\n" + ok), file="n.txt")) == [
        ok + b"\r\n", ok]

    class Counting(io.BytesIO):
        """Records the longest read: the refusal must come before the line is whole."""
        most = 0

        def readline(self, size: int | None = -1) -> bytes:
            data = super().readline(size)
            Counting.most = max(Counting.most, len(data))
            return data

    stream = Counting(b"ok\n" + b"x" * (8 * MAX_LINE_CHARS))
    with pytest.raises(EvidenceError, match=r"n\.txt:2: a line of more than 1,048,576 "
                       r"characters exceeds cmax's limit of 1,048,576 characters"):
        list(bounded_lines(stream, file="n.txt"))
    assert Counting.most <= MAX_LINE_CHARS + 2


def test_read_bounded_refuses_a_large_file_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "i.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b\n")
    assert read_bounded_text(path, limit=7) == "a,b\n" and read_bounded(path, limit=7)
    with path.open("r+b") as fh:  # 3 GiB that take no disk: only the size is read
        fh.truncate(3 * 1024**3)
    with pytest.raises(EvidenceError, match=r"i\.csv: a file of 3,221,225,472 bytes exceeds "
                       r"cmax's limit of 67,108,864 bytes \(64 MiB\)"):
        read_bounded(path)
    with pytest.raises(EvidenceError, match="of 3,221,225,472 bytes"):
        read_bounded_lines(path)
    path.write_bytes(b"a\n" + b"b" * (MAX_LINE_CHARS + 1))
    with pytest.raises(EvidenceError, match=r"i\.csv:2: a line of more than"):
        read_bounded_lines(path)


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


def test_digest_lines_checks_every_line_on_the_digest_pass(tmp_path: Path) -> None:
    import hashlib

    from cmax.reading.limits import digest_lines
    path = tmp_path / "log"
    # lines up to the limit, across block boundaries, pass and give the plain SHA-256
    data = b"a\n" + (b"x" * MAX_LINE_CHARS + b"\n") * 3 + b"tail"
    path.write_bytes(data)
    assert digest_lines(path) == hashlib.sha256(data).hexdigest()
    for long in (b"y" * (MAX_LINE_CHARS + 1) + b"\n",  # inside two blocks
                 b"y" * (5 * MAX_LINE_CHARS)):  # never ends
        path.write_bytes(b"a\nb\n" + long + b"c\n")
        with pytest.raises(EvidenceError, match=r"log:3: a line of more than 1,048,576"):
            digest_lines(path)
    path.write_bytes(b"\0" * (3 * MAX_LINE_CHARS))  # binary (SQLite): no lines to bound
    assert digest_lines(path, lines=False) == hashlib.sha256(path.read_bytes()).hexdigest()
