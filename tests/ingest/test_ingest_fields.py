"""The fields reader (cmax/ingest/_fields.py) gives exactly the regex reader's steps.

The fields reader only accelerates: a line it reads must give the numbers the regexes give,
and every line it declines must still reach the regexes. Hostile step lines (a label in an
unused field, signs, leading zeros, powers of ten, ANSI colour, NaN, a rank prefix, another
epoch, an extra or missing field, NUL, bad UTF-8, CRLF, units) sit among well-formed ones;
both readers must return identical step tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from cmax.errors import CmaxError
from cmax.ingest import _fields as fields
from cmax.ingest import _greplines as greplines
from cmax.ingest import textlines
from cmax.ingest.formats import nemo
from cmax.ingest.formats.nemo import parse_nemo2
from tests.paths import DATA

LABELS = {column: re.compile(p) for column, p in nemo.NEMO2.patterns.items()}
ITER = re.compile(nemo.NEMO2.iteration)


def _line(i: int, *, time: str = "10.5", head: str = "Training epoch 0, iteration ",
          number: str | None = None, lr: str = " lr: 6.1e-06 ", tail: str = "") -> str:
    return (f"{head}{number if number is not None else i}/999 |{lr}| global_batch_size: 256 | "
            f"reduced_train_loss: 11.{i % 10} | train_step_timing in s: {time} | "
            f"TFLOPS_per_GPU: 7.3e+02 | consumed_samples: {256 * (i + 1)}{tail}")


HOSTILE = [
    _line(0, lr=" train_step_timing in s: 1.0 "),  # a label in an unused field comes first
    _line(0, lr=" grad_norm: 9.5 "),  # a label the layout lacks
    _line(0, number="+7"),  # the regexes take no sign: no iteration
    _line(0, number="007"),  # leading zeros: iteration 7
    _line(0, number="٣"),  # a Unicode digit
    _line(0, time="\x1b[32m10.0\x1b[0m"),  # ANSI colour around the value
    _line(0, time="nan"),
    _line(0, time="inf"),
    _line(0, time="-1e400"),
    _line(0, time="10.5s"),  # a unit after the number: the regexes read 10.5
    _line(0, time=""),  # no value
    _line(0, time=" 10.5"),  # two spaces
    _line(0, head="[rank8]: Training epoch 0, iteration "),
    _line(0, head="Training epoch 1, iteration "),
    _line(0, head="reduced_train_loss: 3.0 iteration "),  # a label opening field 0
    _line(0, tail=" | extra: 1"),
    _line(0, tail=" |"),
    "Training epoch 0, iteration 5/999 | train_step_timing in s: 3.0",  # missing fields
    "iteration 6/999 train_step_timing in s: 4.0",  # no '|' at all
    _line(0, lr=" lr: 6.1e-06 \x00"),
    _line(0, lr=" lr: \udcff ".encode("utf-8", "surrogateescape").decode("latin-1")),
    _line(0, time="10.5\r"),  # a lone CR inside the line
]


def _write(path: Path, lines: list[str], *, crlf: bool = False) -> Path:
    end = "\r\n" if crlf else "\n"
    path.write_bytes("".join(line + end for line in lines).encode("utf-8", "surrogateescape"))
    return path


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(regex reader, fields reader) step tables of ``path``; the fields reader both ways: over
    the whole file (dense) and over grep's output (sparse), which must agree too."""
    regex = parse_nemo2(path)
    got = []
    for dense in (True, False):
        with monkeypatch.context() as patch:
            patch.setattr(greplines, "SMALL_FILE", 0)
            patch.setattr(greplines, "DENSE", 10**9 if dense else 0)  # whatever the share
            called: list[int] = []
            reader = "scan" if dense else "parse_grep"
            original = getattr(fields, reader)

            def counted(*args: object, called: list[int] = called,
                        original: Callable[..., object] = original,
                        **kwargs: object) -> object:
                called.append(1)
                return original(*args, **kwargs)

            patch.setattr(fields, reader, counted)
            fast = parse_nemo2(path)
            assert called, f"the fields reader ({reader}) was not used"
        assert (fast.max_iteration, fast.notes, fast.facts) == (
            regex.max_iteration, regex.notes, regex.facts)
        got.append(fast.steps)
    assert got[0].equals(got[1], null_equal=True)
    return regex.steps, got[0]


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("hostile", range(len(HOSTILE)))
def test_hostile_line_reads_as_the_regexes_read_it(
        hostile: int, crlf: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [_line(i) for i in range(1, 40)]
    lines.insert(20, HOSTILE[hostile].replace("iteration 0/", "iteration 20/", 1))
    regex, fast = _both(_write(tmp_path / "x.log", lines, crlf=crlf), monkeypatch)
    assert fast.equals(regex, null_equal=True)
    assert regex.height >= 38


def test_hostile_lines_all_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [_line(i) for i in range(200)]
    for k, bad in enumerate(HOSTILE):
        lines[5 + 8 * k] = bad.replace("iteration 0/", f"iteration {5 + 8 * k}/", 1)
    lines.append(_line(200)[:40])  # cut off mid-write: no newline, the step is not used
    path = tmp_path / "x.log"
    path.write_bytes(("\n".join(lines)).encode("utf-8", "surrogateescape"))
    regex, fast = _both(path, monkeypatch)
    assert fast.equals(regex, null_equal=True)
    # the fast rows are exact: iterations 1000-style powers of ten and every plain step
    assert regex.filter(pl.col("iteration") == 10)["step_time_s"].to_list() == [10.5]


def test_powers_of_ten_and_large_iterations(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    numbers = [0, 1, 9, 10, 99, 100, 999, 1000, 10**6, 10**6 + 1, 10**11, 10**12 + 5]
    lines = [_line(0, number=str(n)).replace("/999 ", "/9999999999999 ") for n in numbers]
    regex, fast = _both(_write(tmp_path / "x.log", lines), monkeypatch)
    assert fast.equals(regex, null_equal=True)
    assert fast["iteration"].to_list() == numbers


def test_real_samples_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("nemo2_llama3.1-8b_fp8.log", "nemo2_messy.log", "nemo2_identity_preamble.log",
                 "nemo2_two_epochs.log"):  # renumbered by global_step (a UInt32 column)
        regex, fast = _both(DATA / "ingest" / name, monkeypatch)
        assert fast.equals(regex, null_equal=True), name


def test_learn_reads_the_layout_of_a_step_line() -> None:
    layout = fields.learn(_line(40), LABELS, ITER)
    assert layout is not None
    assert (layout.head, layout.tail, layout.max_iteration) == (
        "Training epoch 0, iteration ", "/999 ", 999)
    assert layout.keys[0] == " lr: " and layout.keys[-1] == " consumed_samples: "
    assert dict(layout.values) == {"step_time_s": 4, "tflops_per_gpu": 5, "loss": 3,
                                   "grad_norm": None, "consumed_samples": 6,
                                   "global_step": None}


@pytest.mark.parametrize("line", [
    "no step here",
    "Training epoch 0, iteration 40/49",  # nothing after field 0
    _line(40, time="nan"),  # the sample's own value is not a plain number
    _line(40, time="10.5s"),
    _line(40, lr=" no colon "),
])
def test_learn_declines_lines_it_cannot_read_as_fields(line: str) -> None:
    assert fields.learn(line, LABELS, ITER) is None


def test_sparse_step_lines_go_to_grep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One step line in forty (multi-node chatter): grep skips the noise cheaper than
    splitting every line into fields, so only grep's output is split."""
    noise = "node001:1234:5678 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0"
    lines = [noise if k % 40 else _line(k // 40) for k in range(4000)]
    path = _write(tmp_path / "x.log", lines)
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)

    def query() -> fields.StepQuery:
        return fields.StepQuery(path, nemo.NEMO2)

    with query() as sparse:
        assert sparse.layout is not None and not sparse.dense
        assert sparse.collect().height == 100
    monkeypatch.setattr(greplines, "DENSE", 100)
    with query() as dense:
        assert dense.dense and dense.layout == sparse.layout


def test_lines_at_fetches_numbered_lines_holding_the_key(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.log", [f"line {n} key" if n % 3 else f"line {n}"
                                       for n in range(1, 5001)])
    got = textlines.lines_at(path, [1, 2, 3, 2500, 4999, 5000], "key")
    assert got["line"].to_list() == [1, 2, 2500, 4999, 5000]  # line 3 lacks the key
    assert got["text"].to_list() == ["line 1 key", "line 2 key", "line 2500 key",
                                     "line 4999 key", "line 5000 key"]
    assert textlines.lines_at(path, [], "key").height == 0
    # no line wanted: the file is not read at all
    assert textlines.lines_at(tmp_path / "absent.log", [], "key").height == 0


@pytest.mark.parametrize("fields_on", [True, False])
def test_grep_batches_cut_mid_line_read_every_step(
        fields_on: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """grep's output arrives in pipe reads that end mid-line and is handed on in batches of
    several reads: every step must come out once, in order, whichever parser reads the batch
    (the fields reader or the regexes)."""
    noise = "node001:1234:5678 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0"
    lines = [noise if k % 5 else _line(k // 5) for k in range(1500)]
    path = _write(tmp_path / "x.log", lines)
    expected = parse_nemo2(path).steps  # the in-process reader (a small file)
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    monkeypatch.setattr(greplines, "GREP_CHUNK", 97)  # reads end mid-line
    monkeypatch.setattr(greplines, "GREP_BATCH", 1000)  # a batch is ~10 reads
    monkeypatch.setattr(greplines, "DENSE", 0)  # sparse: grep, then fields or regexes
    if not fields_on:
        monkeypatch.setattr(fields, "learn", lambda *args: None)
    got = parse_nemo2(path).steps
    assert got.equals(expected, null_equal=True)
    assert got["iteration"].to_list() == list(range(300))


@pytest.mark.parametrize("failure", [pl.exceptions.ComputeError("bad chunk\ndetail"),
                                     OSError(5, "Input/output error")])
def test_a_failing_read_is_one_error_naming_the_file(
        failure: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the CSV scan raises becomes the reader's one-line error, never a traceback."""
    path = _write(tmp_path / "x.log", [_line(i) for i in range(50)])
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    monkeypatch.setattr(greplines, "DENSE", 10**9)

    def fail(*args: object) -> pl.DataFrame:
        raise failure

    monkeypatch.setattr(fields, "_scan", fail)
    with pytest.raises(CmaxError) as caught:
        parse_nemo2(path)
    assert caught.value.file == str(path)
    assert str(caught.value).count("\n") == 0
    assert ("cannot parse log: bad chunk" if isinstance(failure, pl.exceptions.PolarsError)
            else "cannot read log: Input/output error") in str(caught.value)


def test_head_facts_read_beside_the_scan_keep_their_error_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The head's facts run in a thread beside a dense log's scan; if both fail, the facts'
    error is the one raised, as when they ran before the scan."""
    path = _write(tmp_path / "x.log", [_line(i) for i in range(50)])
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    monkeypatch.setattr(greplines, "DENSE", 10**9)

    def head_fails() -> None:
        raise OSError(13, "Permission denied")

    def scan_fails(*args: object) -> pl.DataFrame:
        raise pl.exceptions.ComputeError("bad chunk")

    monkeypatch.setattr(fields, "_scan", scan_fails)
    with fields.StepQuery(path, nemo.NEMO2) as steps, pytest.raises(OSError) as caught:
        steps.collect(meanwhile=head_fails)
    assert caught.value.strerror == "Permission denied"
    ran: list[int] = []
    with fields.StepQuery(path, nemo.NEMO2) as steps, pytest.raises(CmaxError):
        steps.collect(meanwhile=lambda: ran.append(1))
    assert ran == [1]  # the facts ran although the scan failed
