"""Moving a finished report set into the output folder: all of it, or none of it.

Reports are rendered into a staging folder inside the output folder (same file system, so
each move is an atomic ``os.replace``), and only then moved into place. A set of moves is not
atomic, so :func:`publish` first refuses a target it could never replace (a folder of that
name), then moves each previous report aside into the staging folder before putting the new
one in its place; if any move fails, or cmax is stopped (SIGTERM/SIGINT arrive as
SystemExit), every new file is taken out again and every previous one put back. A run killed
outright (kill -9) cannot undo anything: its staging folder, named with its process id, is
removed by the next report into the same folder once that process is gone
(:func:`clean_stale`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from cmax.errors import CmaxError
from cmax.reading.pidfolders import owned_prefix, remove_stale

STAGING_PREFIX = ".cmax-report-"


def staging_prefix() -> str:
    """The prefix of this process's staging folder (``tempfile`` adds a random tail)."""
    return owned_prefix(STAGING_PREFIX)


def clean_stale(out_dir: Path) -> None:
    """Remove staging folders left in ``out_dir`` by a report run that no longer exists."""
    remove_stale(out_dir, STAGING_PREFIX)


def publish(staged: list[Path], staging: Path, out_dir: Path) -> list[Path]:
    """Move ``staged`` (files under ``staging``) to the same relative paths under
    ``out_dir``: every one, or, on any failure, none (the previous files restored)."""
    targets = [out_dir / path.relative_to(staging) for path in staged]
    for target in targets:
        if target.exists() and not target.is_file() and not target.is_symlink():
            raise CmaxError("a report would replace a folder of the same name", file=target,
                            field="-o", expected="a file or nothing at that path",
                            fix="move that folder away or write to another -o folder")
    aside = staging / ".previous"
    aside.mkdir()
    placed: list[Path] = []
    moved: list[tuple[Path, Path]] = []
    try:
        for index, (source, target) in enumerate(zip(staged, targets, strict=True)):
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() or target.is_symlink():
                kept = aside / str(index)
                os.replace(target, kept)
                moved.append((target, kept))
            os.replace(source, target)
            placed.append(target)
    except BaseException as exc:
        for target in reversed(placed):
            with contextlib.suppress(OSError):
                target.unlink()
        for target, kept in reversed(moved):
            with contextlib.suppress(OSError):
                os.replace(kept, target)
        if isinstance(exc, OSError):
            raise CmaxError(f"cannot move the reports into place: {exc.strerror}",
                            file=exc.filename or out_dir, field="-o",
                            fix="check the output folder's permissions and free space; "
                            "the previous reports were left as they were") from None
        raise
    return targets
