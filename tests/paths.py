"""Where the tests find the repository's data, wherever a test module sits."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
DATA = TESTS / "data"
SAMPLES = REPO / "samples"
REFERENCE = REPO / "reference"
DOCS = REPO / "docs"


def latest_release() -> str:
    """The reference release ``reference/release.toml`` names: what ``latest`` loads.

    Tests that check a figure carries the release id read it here, so releasing new data
    changes one file (and ``tests/reference/test_release_pins.py``'s pin), not every test.
    """
    with (REFERENCE / "release.toml").open("rb") as handle:
        release = tomllib.load(handle)["release"]
    assert isinstance(release, str)
    return release
