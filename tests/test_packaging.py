"""The package metadata a package index shows: an SPDX licence with its file, classifiers,
authors, and project links that are true (cmax has no public home, so none claims one)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

# well-known labels (PyPA "Well-known Project URLs in Metadata"): each would claim a home cmax
# does not have
HOME_LABELS = {"homepage", "source", "sourcecode", "repository", "issues", "bugtracker",
               "documentation", "docs", "download", "changelog"}


def test_licence_is_an_spdx_expression_with_its_file() -> None:
    assert PROJECT["license"] == "Apache-2.0"
    assert all((ROOT / name).is_file() for name in PROJECT["license-files"])
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_classifiers_authors_and_keywords() -> None:
    assert "Typing :: Typed" in PROJECT["classifiers"]
    assert any(c.startswith("Programming Language :: Python :: 3.") for c in PROJECT["classifiers"])
    assert PROJECT["authors"] and PROJECT["keywords"]


def test_project_links_are_public_and_claim_no_home() -> None:
    urls = PROJECT["urls"]
    assert urls
    for label, url in urls.items():
        assert url.startswith("https://"), url
        assert len(label) <= 32, f"core metadata limits a Project-URL label to 32: {label}"
        normalised = "".join(ch for ch in label.lower() if ch.isalnum())
        assert normalised not in HOME_LABELS, label
