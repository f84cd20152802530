"""Benchmarks time cmax as pip installs it: with its bytecode compiled.

``pip install`` compiles every module to ``__pycache__`` at install time. A source checkout
run with ``PYTHONDONTWRITEBYTECODE=1`` (set on some CI and sandbox machines) instead compiles
each imported module again in every process, ~50 ms for ``cmax inspect``: a cost no user
pays. ``compile_cmax()`` writes the bytecode once, before any figure is taken; Python reads it
even where writing is turned off.
"""

from __future__ import annotations

import compileall
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cmax"


def compile_cmax() -> None:
    """Compile the checkout's cmax package to bytecode (quietly; already-fresh files are kept)."""
    compileall.compile_dir(PACKAGE, quiet=1)
