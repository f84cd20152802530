"""cmax.cli.common.start_up: the collector paused over a command's imports in the program only."""

from __future__ import annotations

import gc

import pytest

from cmax.cli import common


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records gc.freeze() calls instead of freezing the test process's objects for good."""
    calls: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(True))
    return calls


def test_program_pauses_the_collector_over_imports_then_freezes_them(
        monkeypatch: pytest.MonkeyPatch, frozen: list[bool]) -> None:
    monkeypatch.setattr(common, "_PROGRAM", [True])
    assert gc.isenabled()
    with common.start_up():
        assert not gc.isenabled()
        assert frozen == []
    assert gc.isenabled()
    assert frozen == [True]


def test_program_resumes_the_collector_when_an_import_fails(
        monkeypatch: pytest.MonkeyPatch, frozen: list[bool]) -> None:
    monkeypatch.setattr(common, "_PROGRAM", [True])
    with pytest.raises(ImportError), common.start_up():
        raise ImportError("no such module")
    assert gc.isenabled()


def test_a_process_calling_main_keeps_its_collector(monkeypatch: pytest.MonkeyPatch,
                                                   frozen: list[bool]) -> None:
    monkeypatch.setattr(common, "_PROGRAM", [False])
    with common.start_up():
        assert gc.isenabled()
    assert frozen == []


def test_a_collector_turned_off_stays_off(monkeypatch: pytest.MonkeyPatch,
                                          frozen: list[bool]) -> None:
    monkeypatch.setattr(common, "_PROGRAM", [True])
    gc.disable()
    try:
        with common.start_up():
            assert not gc.isenabled()
        assert not gc.isenabled()
        assert frozen == []
    finally:
        gc.enable()
