"""Beside SemiAnalysis' ClusterMAX: notice when both share one Python environment.

The ``clustermax`` distribution (PyPI) installs a top-level ``cmax`` import package and a
``cmax`` command, as cmax-rating does. Installed into one environment the two packages merge
into one ``cmax/`` folder: whichever came second owns ``cmax/__init__.py`` and the ``cmax``
script, and ClusterMAX's entry point ``cmax.cli:main`` resolves to this package's ``cmax/cli/``
(a package beats the ``cli.py`` module beside it). Neither tool then works as documented and
``pip check`` says nothing, so both commands (they both land here) stop with one line that
says how to install them side by side.

Detection reads only the file system next to this package: a ``clustermax-*.dist-info``
folder in the same ``site-packages``, or a ClusterMAX module inside our ``cmax/`` folder. It
imports nothing and costs one directory listing.
"""

from __future__ import annotations

from pathlib import Path

# modules ClusterMAX 0.2.1 puts into the shared cmax/ folder and cmax-rating never ships
# (clustermax-0.2.1-py3-none-any.whl, its RECORD)
FOREIGN_MODULES = ("cli.py", "_version.py", "audit_runner.py")

HOW_TO_FIX = ("install each tool in its own environment: `uv tool install cmax-rating` and "
              "`uv tool install clustermax` (or pipx install ...); then run this tool as "
              "`cmax-rating` and ClusterMAX as `cmax` (README: Beside ClusterMAX)")


def shared_with_clustermax(package_dir: Path | None = None) -> str | None:
    """One line saying where ClusterMAX shares this environment, or None when it does not."""
    pkg = package_dir or Path(__file__).resolve().parent.parent
    try:
        dist = sorted(p.name for p in pkg.parent.glob("clustermax-*.dist-info"))
    except OSError:
        dist = []
    foreign = [name for name in FOREIGN_MODULES if (pkg / name).is_file()]
    if not dist and not foreign:
        return None
    what = (f"clustermax {dist[0].removeprefix('clustermax-').removesuffix('.dist-info')}"
            if dist else "clustermax")
    return (f"SemiAnalysis' ClusterMAX ({what}) is installed in the same Python environment "
            f"as cmax-rating ({pkg.parent}); both ship a top-level `cmax` package, so neither "
            f"works here; fix: {HOW_TO_FIX}")
