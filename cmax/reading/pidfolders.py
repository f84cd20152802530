"""Temporary folders named for the process that owns them, so a later run can remove the ones
a killed run (kill -9, the OOM killer) could not.

A folder is ``<prefix><pid>-<random>``: while that process lives the folder is its own; once
the process is gone, :func:`remove_stale` deletes it. Used for report staging folders
(cmax.render.publish) and the private folder of a local Ray (cmax.history.executors).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def owned_prefix(prefix: str) -> str:
    """``prefix`` + this process's id + ``-`` (``tempfile`` adds the random tail)."""
    return f"{prefix}{os.getpid()}-"


def alive(pid: int) -> bool:
    """Whether a process with this id exists (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale(parent: Path, prefix: str) -> None:
    """Remove the ``prefix`` folders in ``parent`` whose process no longer exists, or that
    name no process (never a link, never a live process's folder, never this process's)."""
    for folder in parent.glob(prefix + "*"):
        pid = folder.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and (int(pid) == os.getpid() or alive(int(pid))):
            continue
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
