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
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

from cmax.scorecard import Scorecard
from cmax.submission.bundle import open_bundle
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


def _archive(path: Path) -> None:
    """An archive bundle holding a manifest."""
    manifest = manifest_text("", nodes=2, interconnect=None).encode()
    path.parent.mkdir(parents=True)
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("cmax.toml")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))


def _runs(root: Path) -> None:
    for cluster in ("east", "west"):
        _archive(root / cluster / "2026-01-01.tar.gz")


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


# --- Ray (local): the same promises, and what was scored before the stop is recorded ---------

RAY_DRIVER = """
import os, sys, threading, time
from cmax.history import run_audit
from tests.history.test_history_shutdown import ray_assess

def blocked_in_result():
    # print once the audit waits on the blocked run: both earlier runs are in its batch then
    main = threading.main_thread().ident
    while True:
        frame = sys._current_frames().get(main)
        while frame is not None:
            if frame.f_code.co_name == "result" and "executors" in frame.f_code.co_filename:
                os.write(1, b"waiting\\n")
                return
            frame = frame.f_back
        time.sleep(0.02)

def progress(index, total, run):
    if index == 2:
        threading.Thread(target=blocked_in_result, daemon=True).start()

try:
    run_audit(sys.argv[1], sys.argv[2], assess=ray_assess, executor="ray", workers=2,
              progress=progress)
except SystemExit as stop:
    os.write(2, ("; ".join(getattr(stop, "__notes__", [])) + "\\n").encode())
    raise
"""


def ray_assess(path: Path) -> Scorecard:
    """The east runs score at once (the fake scorer); the west archive is opened (its temporary
    folder exists) and then blocks until the task is cancelled."""
    if not path.name.endswith(".tar.gz"):
        from tests.history.history_fakes import fake_assess

        return fake_assess(path)
    with open_bundle(path):
        (path.parent / f"ready-{os.getpid()}").write_text("")
        while True:
            time.sleep(0.05)


def _ours(marker: bytes) -> list[int]:
    """Live processes whose environment names ``marker`` (the test's TMPDIR): the driver, and
    every Ray process it started (Ray's workers leave the driver's process group)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] != "Z" and marker in environ:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize(("sig", "whom", "code"), [
    (signal.SIGTERM, "driver", 143),
    (signal.SIGINT, "group", 130),
    (signal.SIGKILL, "driver", -9),  # nothing can be committed; Ray's agents must still go
])
def test_a_stopped_ray_audit_records_what_it_scored_and_leaves_nothing(
        tmp_path: Path, sig: signal.Signals, whom: str, code: int) -> None:
    pytest.importorskip("ray")
    from tests.history.history_fakes import write_run

    root = tmp_path / "runs"
    for day in ("2026-01-01", "2026-02-01"):
        write_run(root, "east", day, workloads=[["llama3.1-70b", "fp8", 512, 1.0, 0.99, 1.01]])
    _archive(root / "west" / "2026-03-01.tar.gz")
    # Ray's socket paths must stay under the kernel's 107 bytes: a short TMPDIR of our own
    tmp = Path(tempfile.mkdtemp(prefix="cmax-t-", dir="/tmp"))
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.Popen([sys.executable, "-c", RAY_DRIVER, str(root), str(tmp_path / "h")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"waiting\n", proc.communicate(timeout=60)
        deadline = time.monotonic() + 120
        while not list((root / "west").glob("ready-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp.rglob("cmax-bundle-*")), "the blocked run holds a temporary folder"
        if whom == "group":
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
        text = err.decode()
        assert proc.returncode == code, text[-2000:]
        assert "Traceback" not in text and "SIGTERM received" not in text, text[-2000:]
        if sig != signal.SIGKILL:
            assert "2 of 3 new runs were scored and recorded" in text
        deadline = time.monotonic() + 30
        while _ours(str(tmp).encode()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _ours(str(tmp).encode()) == []
        assert list(tmp.iterdir()) == []  # Ray's session files and the run's folder: gone
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    from cmax.history import HistoryStore

    store = HistoryStore(tmp_path / "h")
    if sig == signal.SIGKILL:
        assert not store.exists()  # the batch was never committed: the next audit scores all
        return
    recorded = store.read()
    assert sorted(set(zip(recorded["cluster"], recorded["run_dir"], strict=True))) == [
        ("east", "2026-01-01"), ("east", "2026-02-01")]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_finished_ray_audit_leaves_no_process_or_folder(tmp_path: Path) -> None:
    """The ordinary end of an audit on a Ray cmax started: every run recorded, Ray's processes
    and its private folder gone (the reaper, told cmax is done, stops nothing)."""
    pytest.importorskip("ray")
    from tests.history.history_fakes import write_run

    root = tmp_path / "runs"
    for cluster in ("east", "west"):
        write_run(root, cluster, "2026-01-01",
                  workloads=[["llama3.1-70b", "fp8", 512, 1.0, 0.99, 1.01]])
    tmp = Path(tempfile.mkdtemp(prefix="cmax-t-", dir="/tmp"))
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    env.pop("RAY_ADDRESS", None)
    driver = ("import sys\nfrom cmax.history import run_audit\n"
              "from tests.history.history_fakes import fake_assess\n"
              "r = run_audit(sys.argv[1], sys.argv[2], assess=fake_assess, executor='ray', "
              "workers=2)\nprint(len(r.scored))\n")
    try:
        done = subprocess.run([sys.executable, "-c", driver, str(root), str(tmp_path / "h")],
                              env=env, capture_output=True, timeout=300, check=False)
        assert done.returncode == 0 and done.stdout == b"2\n", done.stderr.decode()[-2000:]
        deadline = time.monotonic() + 30  # an exiting process is visible for a moment
        while _ours(str(tmp).encode()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _ours(str(tmp).encode()) == []
        assert list(tmp.iterdir()) == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- a stop while the pool's workers are still starting (issue 39) --------------------------

def _workers_started(pgid: int, driver: int) -> bool:
    """A process of the group other than the driver runs multiprocessing's spawn entry."""
    for pid in _group(pgid):
        if pid == driver:
            continue
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False



def _catches(pid: int, sig: signal.Signals) -> bool:
    """The process has a handler for ``sig`` (``SigCgt`` of /proc/PID/status): Python sets
    none for SIGTERM, so cmax's own code has started. A signal sent before that moment meets
    the interpreter's defaults, which no program can change (docs/limits.md)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((line.split()[1] for line in status.splitlines()
                   if line.startswith("SigCgt:")), "0")
    return bool(int(caught, 16) >> (sig - 1) & 1)

@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize(("sig", "after", "code"), [
    (signal.SIGINT, None, 130),  # while cmax itself imports, before any command runs
    (signal.SIGTERM, None, 143),
    (signal.SIGINT, 0.0, 130),  # the moment the first worker process exists
    (signal.SIGINT, 0.4, 130),  # the workers importing the pipeline in their initializer
    (signal.SIGTERM, 0.2, 143),
])
def test_a_stop_while_workers_start_prints_one_line_and_no_traceback(
        tmp_path: Path, sig: signal.Signals, after: float | None, code: int) -> None:
    """Ctrl-C reaches every process of the terminal's group: a worker still starting printed a
    KeyboardInterrupt traceback (83 stderr lines in the review), and SIGTERM before cmax set
    its handlers ended it without a word. Now: one line, the stop's exit code, no process or
    temporary folder left."""
    from tests.paths import SAMPLES

    root, tmp = tmp_path / "runs", tmp_path / "tmp"
    for n in range(4):
        shutil.copytree(SAMPLES / "aurora-compute", root / "aurora-h100-east" / f"2026-01-0{n + 1}")
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "cmax", "audit", str(root), "-j", "2"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        if after is None:  # cmax's own start-up: its handlers are set, its imports run
            deadline = time.monotonic() + 60
            while not _catches(proc.pid, signal.SIGTERM) and time.monotonic() < deadline:
                time.sleep(0.005)
        else:
            deadline = time.monotonic() + 60
            while not _workers_started(proc.pid, proc.pid) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert proc.poll() is None, "the audit ended before its workers started"
            time.sleep(after)
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = err.decode()
    assert proc.returncode == code, text[-2000:]
    assert text.count("\n") == 1 and text.startswith("cmax: "), text[-2000:]
    assert "Traceback" not in text
    deadline = time.monotonic() + 30
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group(proc.pid) == []
    assert list(tmp.glob("cmax-*")) == []
