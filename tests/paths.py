"""Where the tests find the repository's data, wherever a test module sits."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
DATA = TESTS / "data"
SAMPLES = REPO / "samples"
REFERENCE = REPO / "reference"
DOCS = REPO / "docs"
