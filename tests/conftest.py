"""Test selection: the slow families are marked ``slow`` by where they live.

``pytest -m "not slow"`` runs the core (ingest, the case, validate, score, price, reference,
the manifest, errors) in well under a minute; the full suite (CI, the README) runs everything.
Rendering PDFs, driving the CLI end to end, Delta Lake histories and the fuzz and hostile-input
campaigns are what take the time, so those are the slow ones. A single test elsewhere can opt
in with ``@pytest.mark.slow``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
#: test folders and files (relative to tests/) whose every test is slow
SLOW = ("render", "cli", "history", "test_fuzz.py", "test_hostile_inputs.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(item.path).resolve().relative_to(_TESTS).parts
        if parts and parts[0] in SLOW:
            item.add_marker(pytest.mark.slow)
