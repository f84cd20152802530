"""Beside ClusterMAX (cmax/cli/beside.py): one clear line when both share an environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.cli import exits, main
from cmax.cli.beside import shared_with_clustermax


def _site(tmp_path: Path) -> Path:
    pkg = tmp_path / "site-packages" / "cmax"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    return pkg


def test_alone_says_nothing(tmp_path: Path) -> None:
    assert shared_with_clustermax(_site(tmp_path)) is None


def test_clustermax_dist_info_beside_us_is_named_with_its_version(tmp_path: Path) -> None:
    pkg = _site(tmp_path)
    (pkg.parent / "clustermax-0.2.1.dist-info").mkdir()
    line = shared_with_clustermax(pkg)
    assert line is not None and "\n" not in line
    assert "clustermax 0.2.1" in line and "uv tool install cmax-rating" not in line
    assert "uv tool install PATH-TO-THE-cmax-rating-CHECKOUT-OR-WHEEL" in line


def test_clustermax_module_inside_our_folder_is_enough(tmp_path: Path) -> None:
    pkg = _site(tmp_path)
    (pkg / "cli.py").write_text("")  # ClusterMAX's entry module, shadowed by our cli/
    assert shared_with_clustermax(pkg) is not None


def test_main_stops_with_the_conflict_code(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("cmax.cli.shared_with_clustermax", lambda: "ClusterMAX is here")
    assert main(["--version"]) == exits.CONFLICT
    err = capsys.readouterr().err
    assert err == "cmax: error: ClusterMAX is here\n"


def _installed(tmp_path: Path, *, origin: str | None = "file:///src/cmax-rating") -> Path:
    """A site-packages as pip leaves a cmax-rating wheel: the package, its RECORD (paths,
    hashes, sizes) and, from a local source, its direct_url.json (PEP 610)."""
    pkg = _site(tmp_path)
    (pkg / "cli" / "__init__.py").write_text("")
    (pkg / "_about.py").write_text("")
    info = pkg.parent / "cmax_rating-0.9.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text(
        "cmax/__init__.py,sha256=x,0\ncmax/_about.py,sha256=x,0\n"
        "cmax/cli/__init__.py,sha256=x,0\ncmax/__pycache__/_about.cpython-311.pyc,,\n"
        "../../../bin/cmax,sha256=x,0\ncmax_rating-0.9.0.dist-info/RECORD,,\n")
    if origin is not None:
        (info / "direct_url.json").write_text(f'{{"url": "{origin}", "dir_info": {{}}}}')
    (pkg / "__pycache__").mkdir()
    return pkg


def test_a_whole_install_says_nothing(tmp_path: Path) -> None:
    assert shared_with_clustermax(_installed(tmp_path)) is None


def test_another_distributions_files_in_our_package_are_named_with_their_owner(
        tmp_path: Path) -> None:
    """CMax (a circuit simulator on the package index) ships cmax/CMaxMain.py, canvas.py ...
    and a `cmax` command of its own."""
    pkg = _installed(tmp_path)
    (pkg / "CMaxMain.py").write_text("")
    (pkg / "canvas.py").write_text("")
    theirs = pkg.parent / "cmax-5.14.dist-info"  # as pip names CMax 5.14's
    theirs.mkdir()
    (theirs / "RECORD").write_text("cmax/CMaxMain.py,sha256=y,1\ncmax/canvas.py,sha256=y,1\n"
                                   "cmax/__init__.py,sha256=y,1\n")
    line = shared_with_clustermax(pkg)
    assert line is not None and "\n" not in line
    assert line.startswith("cmax 5.14 installed its own `cmax` package")
    assert "CMaxMain.py" in line and "uv tool install /src/cmax-rating" in line


def test_a_half_installed_package_says_how_to_recover(tmp_path: Path) -> None:
    """`pip uninstall clustermax` after both shared the folder removes cmax/__init__.py,
    which both RECORDs listed: cmax-rating is left half-installed."""
    pkg = _installed(tmp_path)
    (pkg / "__init__.py").unlink()
    (pkg / "scripts" / "__pycache__").mkdir(parents=True)  # what the uninstall left behind
    line = shared_with_clustermax(pkg)
    assert line is not None and "\n" not in line
    assert "cmax-rating is half-installed" in line and "__init__.py is gone" in line
    assert "pip install --force-reinstall --no-deps /src/cmax-rating" in line


def test_an_install_from_the_index_or_unknown_source_names_no_index_package(
        tmp_path: Path) -> None:
    pkg = _installed(tmp_path, origin=None)
    (pkg / "__init__.py").unlink()
    line = shared_with_clustermax(pkg)
    assert line is not None and "PATH-TO-THE-cmax-rating-CHECKOUT-OR-WHEEL" in line
