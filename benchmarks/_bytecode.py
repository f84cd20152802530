"""Benchmarks time cmax as pip installs it: with its bytecode compiled.

``pip install`` compiles every module to ``__pycache__`` at install time, cmax's and its
dependencies'. A source checkout run with ``PYTHONDONTWRITEBYTECODE=1`` (set on some CI and
sandbox machines) instead compiles each imported module again in every process: ~50 ms for
``cmax inspect`` of cmax's own modules, and for a venv made by ``uv pip install`` (which
compiles nothing unless asked) ~0.2 s of ``import polars`` and ~0.4 s of ``cmax score``
for Polars, NumPy, pydantic and click: a cost no user pays. ``compile_cmax()`` and
``compile_dependencies()`` write the bytecode once, before any figure is taken; Python reads
it even where writing is turned off.
"""

from __future__ import annotations

import compileall
import sysconfig
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cmax"


def compile_cmax(package: Path = PACKAGE) -> None:
    """Compile a checkout's cmax package to bytecode (quietly; already-fresh files are kept)."""
    compileall.compile_dir(package, quiet=1)


def compile_dependencies() -> None:
    """Compile the running interpreter's site-packages (cmax's dependencies) to bytecode, as
    pip does at install time. The first call takes ~20 s; later ones only check the files."""
    compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=2)
