"""Beside other tools named cmax: notice when another distribution shares this ``cmax`` package.

Two distributions on the package index install a top-level ``cmax`` import package and a
``cmax`` command as cmax-rating does: SemiAnalysis' ClusterMAX CLI (``clustermax``) and a
circuit simulator (``CMax``, whose ``cmax`` command is ``cmax.__main__:main``). Installed into
one environment their files merge into one ``cmax/`` folder: whichever came second owns the
files both ship (``cmax/__init__.py``, ``cmax/__main__.py``, the ``cmax`` script), ``pip
check`` says nothing, and neither tool works as documented. Uninstalling the other one later
removes the shared files it listed, so cmax-rating is left half-installed.

What is checked, reading only the file system next to this package (one directory listing per
folder of the package and cmax-rating's own ``RECORD``; nothing is imported):

- a ``clustermax-*.dist-info`` beside this package, or a ClusterMAX module inside it (the
  check that works for an editable install too, which has no file list to compare with);
- a file in ``cmax/`` that cmax-rating's own ``RECORD`` does not list: another distribution's,
  named by the ``RECORD`` that lists it;
- a file cmax-rating's ``RECORD`` lists that is gone: the package is half-installed.

Each is one line with the fix: install each tool in its own environment from where
cmax-rating was installed (its ``direct_url.json``: a checkout or a wheel, since the package
index serves no cmax-rating), or reinstall cmax-rating over the damage.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# modules ClusterMAX 0.2.1 puts into the shared cmax/ folder and cmax-rating never ships
# (clustermax-0.2.1-py3-none-any.whl, its RECORD)
FOREIGN_MODULES = ("cli.py", "_version.py", "audit_runner.py")
_OURS = "cmax_rating-*.dist-info"
_IGNORED = {"__pycache__"}


def _dist_info(pkg: Path) -> Path | None:
    try:
        found = sorted(pkg.parent.glob(_OURS))
    except OSError:
        return None
    return found[-1] if found else None


def _record(dist_info: Path) -> set[str]:
    """The paths cmax-rating's RECORD lists inside the package (``cmax/...``), else empty."""
    try:
        text = (dist_info / "RECORD").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {line.split(",", 1)[0] for line in text.splitlines()
            if line.startswith("cmax/") and not line.split(",", 1)[0].endswith(".pyc")}


def source(dist_info: Path | None) -> str:
    """Where cmax-rating was installed from (PEP 610 ``direct_url.json``), for the fix."""
    if dist_info is not None:
        try:
            url = json.loads((dist_info / "direct_url.json").read_text(encoding="utf-8"))["url"]
        except (OSError, ValueError, KeyError, TypeError):
            url = None
        if isinstance(url, str) and url:
            return url.removeprefix("file://")
    return "PATH-TO-THE-cmax-rating-CHECKOUT-OR-WHEEL"


def _owners(site: Path, names: list[str]) -> list[str]:
    """The distributions whose RECORD lists one of ``names`` (``cmax/<name>``)."""
    wanted = {f"cmax/{n}" for n in names}
    owners = []
    try:
        infos = sorted(site.glob("*.dist-info"))
    except OSError:
        return []
    for info in infos:
        if info.name.startswith("cmax_rating-"):
            continue
        try:
            text = (info / "RECORD").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(line.split(",", 1)[0] in wanted for line in text.splitlines()):
            owners.append(info.name.removesuffix(".dist-info").replace("-", " ", 1))
    return owners


def _empty_folder(entry: Path) -> bool:
    """A folder holding no file but bytecode: what uninstalling another tool leaves behind."""
    try:
        return entry.is_dir() and not any(
            p.is_file() and p.suffix != ".pyc" for p in entry.rglob("*"))
    except OSError:
        return False


def _compare(pkg: Path, listed: set[str]) -> tuple[list[str], list[str]]:
    """Files in the package no RECORD of ours lists, and listed files that are gone."""
    files: dict[str, set[str]] = {}  # folder -> the names listed in it (files, sub-folders)
    for path in listed:
        folder, _, name = path.rpartition("/")
        files.setdefault(folder, set()).add(name)
        while "/" in folder:  # every folder above it lists the sub-folder
            folder, _, name = folder.rpartition("/")
            files.setdefault(folder, set()).add(name)
    foreign: list[str] = []
    missing: list[str] = []
    # the code's folders only: the shipped data (cmax/_data) is no place another tool writes
    for folder in sorted(f for f in files if not f.startswith("cmax/_data")):
        where = pkg.parent / folder
        try:
            present = {name for name in os.listdir(where) if name not in _IGNORED}
        except OSError:
            present = set()
        inside = folder.removeprefix("cmax").lstrip("/")
        foreign += [f"{inside}/{n}".lstrip("/") for n in sorted(present - files[folder])
                    if not n.endswith(".pyc") and not _empty_folder(where / n)]
        missing += [f"{inside}/{n}".lstrip("/") for n in sorted(files[folder] - present)]
    return foreign, missing


def shared_with_clustermax(package_dir: Path | None = None) -> str | None:
    """One line saying which other tool shares this environment's ``cmax`` package (or that
    cmax-rating is half-installed), with the fix; None when all is well."""
    pkg = package_dir or Path(__file__).resolve().parent.parent
    info = _dist_info(pkg)
    origin = source(info)
    fix = (f"install each tool in its own environment: `uv tool install {origin}` (or "
           f"`pipx install {origin}`) and the other tool with `uv tool install --force ...`; "
           "then run this tool as `cmax-rating` (README: Beside ClusterMAX)")
    try:
        dist = sorted(p.name for p in pkg.parent.glob("clustermax-*.dist-info"))
    except OSError:
        dist = []
    clustermax = [name for name in FOREIGN_MODULES if (pkg / name).is_file()]
    if dist or clustermax:
        what = (f"clustermax {dist[0].removeprefix('clustermax-').removesuffix('.dist-info')}"
                if dist else "clustermax")
        return (f"SemiAnalysis' ClusterMAX ({what}) is installed in the same Python environment "
                f"as cmax-rating ({pkg.parent}); both ship a top-level `cmax` package, so "
                f"neither works here; fix: {fix}")
    listed = _record(info) if info is not None else set()
    if not listed:
        return None  # an editable install or a checkout: no file list to compare with
    foreign, missing = _compare(pkg, listed)
    if foreign:
        owners = _owners(pkg.parent, foreign) or ["another distribution"]
        return (f"{', '.join(owners)} installed its own `cmax` package into the same Python "
                f"environment as cmax-rating ({pkg.parent}: {', '.join(foreign[:3])}"
                f"{' ...' if len(foreign) > 3 else ''}), so neither works here; fix: {fix}")
    if missing:
        return (f"cmax-rating is half-installed in {pkg.parent}: {', '.join(missing[:3])}"
                f"{' ...' if len(missing) > 3 else ''} "
                f"{'is' if len(missing) == 1 else 'are'} gone (uninstalling another tool that "
                "shared the `cmax` package removes the files both listed); fix: `pip install "
                f"--force-reinstall --no-deps {origin}`, or better, {fix}")
    return None
