"""Clean shutdown of a fleet audit's process pool, with real signals (cmax.history.executors).

A driver runs ``run_audit`` with two pool workers, each blocked inside an opened archive
bundle (so each holds a temporary folder). The test signals the driver the way a user, a
``timeout`` or a CI cancel does, then reads the driver's stdout and stderr to the end: that
only returns once every process holding them (driver, workers, resource tracker) is gone,
the hang the issue saw. Afterwards no process of the driver's group is left and no
temporary folder remains.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from cmax.bundle import open_bundle
from cmax.scorecard import Scorecard
from tests.fakes import manifest_text
from tests.paths import REPO

DRIVER = """
import sys
from cmax.history import run_audit
from tests.history.test_history_shutdown import blocking_assess
run_audit(sys.argv[1], assess=blocking_assess, workers=2)
"""


def blocking_assess(path: Path) -> Scorecard:
    """Open the bundle (an archive: a temporary folder exists), say so, and wait forever."""
    with open_bundle(path):
        os.write(1, f"ready {os.getpid()}\n".encode())  # one write: lines never interleave
        while True:  # not signal.pause(): a signal may land on one of Polars' threads
            time.sleep(0.05)


def _runs(root: Path) -> None:
    manifest = manifest_text("", nodes=2, interconnect=None).encode()
    for cluster in ("east", "west"):
        (root / cluster).mkdir(parents=True)
        with tarfile.open(root / cluster / "2026-01-01.tar.gz", "w:gz") as tar:
            info = tarfile.TarInfo("cmax.toml")
            info.size = len(manifest)
            tar.addfile(info, io.BytesIO(manifest))


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize(("sig", "whom", "code"), [
    (signal.SIGTERM, "driver", 143),  # timeout(1), a CI cancel
    (signal.SIGINT, "group", 130),  # Ctrl-C in a terminal reaches the whole group
    (signal.SIGKILL, "driver", -9),  # the OOM killer: workers must notice on their own
])
def test_no_worker_tracker_or_temp_folder_outlives_a_stopped_audit(
        tmp_path: Path, sig: signal.Signals, whom: str, code: int) -> None:
    root, tmp = tmp_path / "runs", tmp_path / "tmp"
    _runs(root)
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(root)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        ready = [proc.stdout.readline(), proc.stdout.readline()]  # both workers inside
        assert all(line.startswith(b"ready ") for line in ready), ready
        assert len(list(tmp.glob("cmax-bundle-*"))) == 2
        if whom == "group":
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, err.decode()[-2000:]
    assert b"Traceback" not in err, err.decode()[-2000:]
    # a process closes its files a moment before it becomes a zombie: wait for that moment
    deadline = time.monotonic() + 30
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group(proc.pid) == []
    assert list(tmp.glob("cmax-bundle-*")) == []
