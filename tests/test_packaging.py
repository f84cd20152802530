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


def _classifier_pythons() -> list[str]:
    prefix = "Programming Language :: Python :: 3."
    return [c.rsplit(" :: ", 1)[1] for c in PROJECT["classifiers"] if c.startswith(prefix)]


def test_every_listed_python_has_one_floor_per_dependency() -> None:
    """A floor that differs by Python carries a marker; for each Python the classifiers list,
    the markers leave exactly one floor per dependency (tools/lowest-versions.sh installs it)."""
    from packaging.requirements import Requirement

    names = {Requirement(spec).name for spec in PROJECT["dependencies"]}
    for version in _classifier_pythons():
        env = {"python_version": version, "python_full_version": f"{version}.0"}
        applying = [Requirement(spec) for spec in PROJECT["dependencies"]]
        applying = [r for r in applying if r.marker is None or r.marker.evaluate(env)]
        assert sorted(r.name for r in applying) == sorted(names), version
        assert all(str(r.specifier).startswith(">=") for r in applying)


def test_ci_runs_the_lowest_versions_on_every_listed_python() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "tools/lowest-versions.sh --python" in ci
    assert "Programming Language :: Python :: 3." in ci  # the list is read from the classifiers


def test_the_sdist_holds_what_its_own_scripts_need(tmp_path: Path) -> None:
    """tools/lowest-versions.sh checks uv.lock (`uv lock --check`): the sdist carries it, with
    the tests, tools and data its suite reads."""
    import tarfile

    import pytest

    sdist = pytest.importorskip("hatchling.builders.sdist")
    (built,) = (Path(p) for p in sdist.SdistBuilder(str(ROOT)).build(directory=str(tmp_path)))
    with tarfile.open(built) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"uv.lock", "pyproject.toml", "README.md", "LICENSE", "tools/lowest-versions.sh",
            "cmax/__init__.py", "tests/conftest.py", "tests/durations.json",
            "reference/release.toml", "tests/data/export/junit-10.xsd"} <= names
    assert not any(n.startswith((".venv", ".git/")) for n in names)
