"""grep children (cmax/ingest/_greplines.py): started early, handed over once, always stopped.

``cmax inspect`` starts grep on a large sparse NeMo 2 log before Polars is imported; the
parser must then take that very child over (no second grep) and read exactly the steps it
reads without the head start. A child nobody takes over, or a query left before its output
was read, must not outlive the command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cmax.cli import cli
from cmax.ingest import _fields as fields
from cmax.ingest import _greplines as greplines
from cmax.ingest import textlines
from cmax.ingest.formats import nemo
from cmax.ingest.formats.nemo import parse_nemo2

NOISE = "node001:1234:5678 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0"


def _step(i: int) -> str:
    return (f"Training epoch 0, iteration {i}/999 | lr: 6.1e-06 | global_batch_size: 256 | "
            f"reduced_train_loss: 11.{i % 10} | train_step_timing in s: 10.{i % 7} | "
            f"TFLOPS_per_GPU: 7.3e+02 | consumed_samples: {256 * (i + 1)}")


def _log(path: Path, every: int = 40, steps: int = 200) -> Path:
    """A NeMo 2 log with a step line in ``every`` (40: multi-node chatter, sparse)."""
    lines = [NOISE if k % every else _step(k // every) for k in range(steps * every)]
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    yield
    greplines._PRESTARTED_TOPS.clear()  # a top nobody took waits for stop_prestarted
    assert not greplines._PRESTARTED, "a prestarted grep was left running"


def test_prestarted_grep_is_taken_over_and_reads_the_same_steps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path / "chatter.log")
    expected = parse_nemo2(path).steps  # a small file: the in-process reader
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    greplines.prestart(path)
    (child,) = greplines._PRESTARTED.values()

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a second grep was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    assert child.chunks.maxsize == greplines.PRESTART_HOLD // greplines.GREP_CHUNK
    got = parse_nemo2(path).steps
    assert got.equals(expected, null_equal=True) and got.height == 200
    assert child.proc.returncode == 0  # ran to the end and was reaped by the parser
    # read by the parser, it held no more than a child the parser starts itself
    assert child.chunks.maxsize == (greplines.GREP_BATCH + 2 * greplines.GREP_CHUNK
                                    ) // greplines.GREP_CHUNK


@pytest.mark.parametrize("case", ["dense", "other format", "small", "missing"])
def test_prestart_starts_nothing_the_parser_would_not(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a large log whose top holds sparse NeMo 2 step lines: a dense one is split into
    fields without grep, another format has another key, a small one is read in-process."""
    path = tmp_path / "x.log"
    if case == "dense":
        _log(path, every=3)
    elif case == "other format":
        path.write_text(NOISE + "\n" + " iteration 1/10 | elapsed time per iteration (ms): 9\n")
    elif case == "small":
        _log(path)
    if case != "small":
        monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    greplines.prestart(path)
    assert not greplines._PRESTARTED


@pytest.mark.parametrize(("every", "small", "grep"), [(40, False, True), (3, False, False),
                                                   (40, True, False)])
def test_the_step_reader_greps_exactly_where_prestart_would(
        every: int, small: bool, grep: bool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One decision (greplines.top): the step reader starts grep on the logs prestart picks
    (large and sparse), splits a dense one into fields, reads a small one in-process."""
    path = _log(tmp_path / "x.log", every=every)
    if not small:
        monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    assert greplines.top(path, greplines.NEMO2_KEY).grep is grep
    greplines.prestart(path)
    assert bool(greplines._PRESTARTED) is grep
    greplines.stop_prestarted()
    with fields.StepQuery(path, nemo.NEMO2) as query:
        assert query.dense is (not small and not grep)
        started = query._lines is not None and query._lines._greps is not None
        assert started is grep


@pytest.mark.parametrize("every", [3, 40])
def test_the_step_reader_takes_over_the_top_prestart_read(
        every: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The head prestart read (dense or sparse) is the step reader's: not read twice; a file
    changed since is read again, and stop_prestarted drops a top nobody took."""
    path = _log(tmp_path / "x.log", every=every)
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    greplines.prestart(path)
    (read,) = greplines._PRESTARTED_TOPS.values()
    read_head = greplines.read_head

    def refuse(*_: object, **__: object) -> bytes:
        raise AssertionError("the top was read again")

    monkeypatch.setattr(greplines, "read_head", refuse)
    assert greplines.top(path, greplines.NEMO2_KEY) is read
    assert not greplines._PRESTARTED_TOPS  # handed over once
    monkeypatch.setattr(greplines, "read_head", read_head)
    greplines.stop_prestarted()
    greplines.prestart(path)
    path.write_text(path.read_text() + _step(200) + "\n")  # changed: not the same file now
    again = greplines.top(path, greplines.NEMO2_KEY)
    assert again is not read and again.found[-1][1].decode() == _step(200)
    greplines.stop_prestarted()
    assert not greplines._PRESTARTED_TOPS


def test_a_grep_nobody_takes_over_is_stopped(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path / "chatter.log", steps=2000)
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    greplines.prestart(path)
    (child,) = greplines._PRESTARTED.values()
    path.write_text(path.read_text() + _step(2000) + "\n")  # changed: not the same file now
    assert parse_nemo2(path).steps.height == 2001  # read by a grep of its own
    assert greplines._PRESTARTED  # the stale child was not taken
    greplines.stop_prestarted()
    assert child.proc.returncode is not None


def test_a_query_left_unread_stops_its_grep(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path / "chatter.log", steps=2000)
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    with textlines.LineQuery(path, [greplines.NEMO2_KEY]) as query:
        assert query._greps is not None
        (child,) = query._greps
    assert child.proc.returncode is not None


def test_inspect_reads_the_same_with_and_without_the_head_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path / "chatter.log")
    runner = CliRunner()
    small = runner.invoke(cli, ["inspect", str(path), "--format", "json"])
    monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    started: list[Path] = []
    real = greplines.prestart

    def prestart(p: Path) -> None:
        started.append(p)
        real(p)

    monkeypatch.setattr(greplines, "prestart", prestart)
    large = runner.invoke(cli, ["inspect", str(path), "--format", "json"])
    assert small.exit_code == large.exit_code == 0, large.output
    assert started == [path]
    assert json.loads(large.output) == json.loads(small.output)


def test_idle_work_runs_while_grep_waits(tmp_path: Path) -> None:
    """The reader runs the idle work the first time grep's output is dry: here grep waits on
    a FIFO that only the idle work fills, so the steps can only come after it ran."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    child = greplines.GrepChild(shutil.which("grep") or "grep", fifo, greplines.NEMO2_KEY)
    ran: list[str] = []

    def feed() -> None:
        fifo.write_text("".join(line + "\n" for line in [NOISE, _step(0), NOISE, _step(1)]))

    def idle() -> None:
        ran.append("idle")
        feed()

    # should the reader never run the idle work, feed grep after 10 s: fail, do not hang
    rescue = threading.Timer(10, lambda: None if ran else feed())
    rescue.start()
    try:
        got = child.frames(lambda data: data.decode(), 1 << 20, idle)
    finally:
        rescue.cancel()
        child.stop()
    assert ran == ["idle"]
    assert "".join(got).splitlines() == [f"2:{_step(0)}", f"4:{_step(1)}"]


@pytest.mark.parametrize("reader", ["in-process", "grep", "polars", "grep, fields"])
def test_meanwhile_runs_once_whatever_the_reader(
        reader: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path / "chatter.log")
    if reader != "in-process":
        monkeypatch.setattr(greplines, "SMALL_FILE", 0)
    if reader == "polars":
        monkeypatch.setattr(textlines, "USE_GREP", False)
    calls: list[int] = []
    if reader == "grep, fields":
        with fields.StepQuery(path, nemo.NEMO2) as steps:
            assert steps.layout is not None
            got = steps.collect(meanwhile=lambda: calls.append(1))
    else:
        got = textlines.LineQuery(path, [greplines.NEMO2_KEY]).collect(
            nemo.NEMO2.build, meanwhile=lambda: calls.append(1))
    assert calls == [1] and got.height == 200
