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
    assert "clustermax 0.2.1" in line and "uv tool install cmax-rating" in line


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
