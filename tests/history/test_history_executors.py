"""Executors: local processes and Ray record the same history; a missing Ray is one line."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.errors import CmaxError
from cmax.history import HistoryStore, run_audit
from cmax.history.executors import machine_workers
from tests.history.history_fakes import fake_assess, write_run


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    for cluster, ratios in (("east", (1.0, 0.9, 1.0)), ("west", (1.0, 1.0, 1.0))):
        for month, ratio in enumerate(ratios, start=1):
            write_run(root, cluster, f"2026-{month:02d}-01",
                      workloads=[["llama3.1-70b", "fp8", 512, ratio, ratio - 0.01,
                                  ratio + 0.01]])
    write_run(root, "west", "2026-04-01", error="manifest invalid: system.gpu")
    return root


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One small local Ray for the module (2 CPUs, no dashboard): start-up stays bounded."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_local_and_ray_record_identical_history(local_ray: None, tmp_path: Path) -> None:
    root = _root(tmp_path)
    local = run_audit(root, tmp_path / "local", assess=fake_assess, workers=1)
    ray = run_audit(root, tmp_path / "ray", assess=fake_assess, executor="ray", workers=2)
    assert HistoryStore(tmp_path / "local").read().equals(HistoryStore(tmp_path / "ray").read())
    assert ray.items == local.items and [i.kind for i in ray.items] == [
        "regression_vs_previous"]
    assert [u.error for u in ray.unusable] == [u.error for u in local.unusable]
    assert len(ray.scored) == 6 and ray.exit_code == 2


def test_a_missing_ray_is_one_clear_error(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_ray(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(CmaxError) as info:
        run_audit(_root(tmp_path), assess=fake_assess, executor="ray")
    assert info.value.one_line() == (
        "--executor ray needs Ray, which is not installed; "
        "fix: pip install 'cmax-rating[ray]' (or use --executor local)")
    assert not (tmp_path / "runs" / ".cmax-history").exists()  # refused before any work


def test_the_local_pool_is_sized_to_the_machine() -> None:
    import os

    assert machine_workers() == len(os.sched_getaffinity(0))


def test_a_small_pass_scores_in_process_a_backlog_in_a_pool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cmax.history import executors

    sizes: list[int] = []
    real = executors.score_local

    def spy(pending: list[Any], assess: Any, workers: int) -> Any:
        sizes.append(workers)
        return real(pending, assess, 1)

    monkeypatch.setattr(executors, "score_local", spy)
    monkeypatch.setattr(executors, "machine_workers", lambda: 8)
    run_audit(_root(tmp_path), assess=fake_assess)
    big = tmp_path / "big"
    for day in range(1, executors.MIN_RUNS_FOR_POOL + 1):
        write_run(big, "c", f"2026-01-{day:02d}", workloads=[])
    run_audit(big, assess=fake_assess)
    assert sizes == [1, 8]
    runs = HistoryStore(big / ".cmax-history").read().filter(pl.col("row_kind") == "run")
    assert runs.height == executors.MIN_RUNS_FOR_POOL


class _Stopped(Exception):
    pass


def test_a_stop_while_workers_start_is_held_until_they_have_started() -> None:
    """A SIGTERM or SIGINT that arrives while processes are being started unwinds cmax only
    once they have started: unwinding mid-launch cut a new worker's start-up pipe, and that
    worker printed a traceback beside cmax's one line."""
    import signal

    from cmax.history.executors import children_spared_sigint

    def stop(signum: int, _frame: object) -> None:
        raise _Stopped(signum)

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        reached_end = False
        with pytest.raises(_Stopped) as stopped, children_spared_sigint():
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGINT)
            reached_end = True  # neither stop unwound the launch
        assert reached_end and stopped.value.args == (signal.SIGTERM,)
        assert signal.getsignal(signal.SIGTERM) is stop and signal.getsignal(signal.SIGINT) is stop
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
