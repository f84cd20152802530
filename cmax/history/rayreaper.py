"""The reaper of a local Ray, run as its own small process (standard library only).

cmax starts it beside a local Ray (cmax.history.executors) with a pipe on its stdin and keeps
the other end. When the pipe closes (cmax finished, or died by any means, kill -9 included), it
stops every process still holding a file in the Ray's private folder, SIGTERM then SIGKILL
after a grace period, and removes the folder. Ray's processes share the driver's fate only in
part: its dashboard and runtime-env agents outlived a killed driver by over a minute.

Usage: ``python -I rayreaper.py FOLDER GRACE_S DRIVER_PID`` (the driver itself is never
stopped: it closes the pipe when it is done with Ray, and goes on).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from pathlib import Path


def holders(folder: str, spare: int) -> list[int]:
    """Processes (not this one, not ``spare``) with an open file, or their working folder,
    under ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in (os.getpid(), spare):
            continue
        try:
            links = [os.readlink(entry / "cwd")]
            links += [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except OSError:  # gone, or not ours to see
            continue
        if any(link == folder or link.startswith(folder + os.sep) for link in links):
            found.append(int(entry.name))
    return found


def reap(folder: str, grace_s: float, spare: int) -> None:
    """SIGTERM every holder, SIGKILL those left after ``grace_s``, remove ``folder``."""
    deadline = time.monotonic() + grace_s
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = holders(folder, spare)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        while pids and time.monotonic() < deadline:
            time.sleep(0.1)
            pids = holders(folder, spare)
        if not pids:
            break
    shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> None:
    folder, grace_s, driver = os.path.realpath(argv[0]), float(argv[1]), int(argv[2])
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # a Ctrl-C meant for cmax must not stop the reaper
    while sys.stdin.buffer.read(4096):
        pass
    reap(folder, grace_s, driver)


if __name__ == "__main__":
    main(sys.argv[1:])
