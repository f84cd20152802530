"""Locate the data that ships with cmax (reference data, templates, sample bundles, the docs
pages ``cmax docs`` prints).

In a wheel these live inside the package under ``cmax/_data/``; in a source checkout or an
editable install they are the top-level ``reference/``, ``templates/`` and ``samples/``
folders. Looking in both keeps the repository layout (docs/architecture.md) while a non-editable
``pip install .`` still finds everything through the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from cmax.errors import CmaxError

DataKind = Literal["reference", "templates", "samples", "docs"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(kind: DataKind) -> Path:
    """The folder holding shipped data of ``kind``."""
    for candidate in (_PACKAGE_DIR / "_data" / kind, _PACKAGE_DIR.parent / kind):
        if candidate.is_dir():
            return candidate
    raise CmaxError(
        f"cmax's {kind} data is missing from the installation",
        file=str(_PACKAGE_DIR / "_data" / kind),
        fix="reinstall cmax-rating (pip install --force-reinstall cmax-rating)",
    )
