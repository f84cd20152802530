"""cmax-rating and SemiAnalysis' ClusterMAX installed into one throwaway environment, from the
package index, in both orders: every command each tool installs stops with one clear line and
exit code 3 instead of running the other tool's code (cmax/cli/beside.py).

Marked ``network`` (deselected by default; CI runs ``pytest -m network``): it downloads
ClusterMAX. Skipped when the package index cannot be reached. Dependencies are left out
(``--no-deps`` plus click, the only import before the check), so the test needs no WeasyPrint
or Polars download.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cmax.cli import exits

pytestmark = pytest.mark.network

ROOT = Path(__file__).parents[2]
CLUSTERMAX = "clustermax==0.2.1"


def _index_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


def _pip(venv: Path, *args: str) -> None:
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", *args],
                          capture_output=True, text=True, check=False, timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"pip install {' '.join(args)} failed: {proc.stderr.strip()[-300:]}")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not _index_reachable():
        pytest.skip("the package index (pypi.org) is unreachable")
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                           str(out), str(ROOT)], capture_output=True, text=True, check=False,
                          timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"cannot build the cmax-rating wheel: {proc.stderr.strip()[-300:]}")
    return next(out.glob("cmax_rating-*.whl"))


@pytest.mark.parametrize("order", ["cmax-rating first", "clustermax first"])
def test_both_in_one_environment_say_so_in_one_line(wheel: Path, tmp_path: Path,
                                                    order: str) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    ours, theirs = [str(wheel), "click"], [CLUSTERMAX]
    for spec in ([ours, theirs] if order == "cmax-rating first" else [theirs, ours]):
        _pip(venv, "--no-deps", *spec)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for program in (["cmax", "--version"], ["cmax-rating", "--version"],
                    ["cmax", "audit", "--help"], ["python", "-m", "cmax", "demo"]):
        proc = subprocess.run([str(venv / "bin" / program[0]), *program[1:]],
                              capture_output=True, text=True, check=False, env=env,
                              cwd=tmp_path, timeout=120)
        assert proc.returncode == exits.CONFLICT, (program, proc.stdout, proc.stderr)
        assert proc.stdout == ""
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert "ClusterMAX (clustermax 0.2.1)" in proc.stderr
        assert f"uv tool install {wheel}" in proc.stderr  # where cmax-rating came from


def _run(venv: Path, cwd: Path, *program: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(venv / "bin" / program[0]), *program[1:]], capture_output=True,
                          text=True, check=False, env=env, cwd=cwd, timeout=120)


def test_the_circuit_simulator_named_cmax_is_caught_too(wheel: Path, tmp_path: Path) -> None:
    """CMax (PyPI, a circuit simulator) installs a cmax package and a cmax command too."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    _pip(venv, "--no-deps", str(wheel), "click")
    _pip(venv, "--no-deps", "CMax==5.14")
    proc = _run(venv, tmp_path, "cmax-rating", "--version")
    assert proc.returncode == exits.CONFLICT and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("cmax: error: cmax 5.14 installed its own `cmax` package")


def test_uninstalling_clustermax_leaves_a_fix_that_works(wheel: Path, tmp_path: Path) -> None:
    """pip uninstall clustermax removes the files both tools listed (cmax/__init__.py): the
    line names the damage and the command that repairs it, and that command does."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    _pip(venv, "--no-deps", str(wheel), "click")
    _pip(venv, "--no-deps", CLUSTERMAX)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-y", "-q",
                    "clustermax"], check=True, capture_output=True)
    proc = _run(venv, tmp_path, "cmax-rating", "--version")
    assert proc.returncode == exits.CONFLICT and "half-installed" in proc.stderr, proc.stderr
    fix = f"pip install --force-reinstall --no-deps {wheel}"
    assert fix in proc.stderr
    _pip(venv, "--force-reinstall", "--no-deps", str(wheel))
    again = _run(venv, tmp_path, "cmax-rating", "--version")
    assert again.returncode == 0 and "cmax-rating" in again.stdout, again.stderr
