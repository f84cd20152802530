"""Test selection: which tests are ``slow`` (by measured cost) and which need the network.

``pytest -m "not slow"`` runs the core (ingest, the case, validate, score, price, reference,
the manifest, errors) in under a minute here; the full suite (CI, the README) runs everything.
A test is slow when it lives in a family that renders PDFs, drives the CLI end to end, writes
Delta Lake histories or runs the fuzz and hostile-input campaigns (``SLOW``), or when its
measured cost is at least ``SLOW_SECONDS`` of CPU (``tests/durations.json``, written by
``python -m pytest -n auto --write-durations tests/durations.json``; a test not yet measured
goes by its family). Cost is CPU time (the test process and the children it waited for, over
setup, call and teardown), not wall time, so a busy machine measures the same tests slow as a
quiet one. A single test can also opt in with ``@pytest.mark.slow``.

Tests marked ``network`` download from the package index: they run only when the marker
expression names them (``pytest -m network``), so ``-m "not slow"`` never selects them.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
#: test folders and files (relative to tests/) whose every test is slow
SLOW = ("render", "cli", "history", "test_fuzz.py", "test_hostile_inputs.py")
#: a test measured at this many CPU seconds or more (setup, call and teardown) is slow
SLOW_SECONDS = 1.0
DURATIONS = _TESTS / "durations.json"


def _measured() -> dict[str, float]:
    try:
        return dict(json.loads(DURATIONS.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--write-durations", metavar="FILE", default=None,
                     help="write each test's measured cost (setup + call + teardown, seconds) "
                          "as JSON: the source of the 'slow' marker (tests/durations.json)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    measured = _measured()
    for item in items:
        parts = Path(item.path).resolve().relative_to(_TESTS).parts
        if (parts and parts[0] in SLOW) or measured.get(item.nodeid, 0.0) >= SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)
    if "network" in (config.option.markexpr or ""):
        return
    offline = [item for item in items if item.get_closest_marker("network") is None]
    if len(offline) < len(items):
        config.hook.pytest_deselected(
            items=[item for item in items if item.get_closest_marker("network") is not None])
        items[:] = offline


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_since = [0.0]
_costs: dict[str, float] = {}


def pytest_runtest_logstart() -> None:
    _since[0] = _cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport():  # type: ignore[no-untyped-def]
    outcome = yield
    now = _cpu_seconds()
    outcome.get_result().user_properties.append(("cpu_s", now - _since[0]))
    _since[0] = now


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    cpu = sum(float(v) for k, v in report.user_properties
              if k == "cpu_s" and isinstance(v, int | float | str))
    _costs[report.nodeid] = _costs.get(report.nodeid, 0.0) + cpu


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = session.config.getoption("--write-durations")
    if target and not hasattr(session.config, "workerinput"):  # the controller writes it
        kept = {node: round(cost, 2) for node, cost in sorted(_costs.items()) if cost >= 0.05}
        Path(target).write_text(json.dumps(kept, indent=0) + "\n", encoding="utf-8")
