"""Hostile bundles: peak memory, peak disk and seconds to the refusal, beside the stated bounds.

    python benchmarks/bench_hostile.py [--only NAME] [--keep DIR]

Builds each hostile bundle of the hostile-input review (small archives that unpack to
gigabytes, a gigabyte line, sparse files, an nccl-tests file of a million rows), runs
``cmax score BUNDLE --format json`` on it in a fresh child process with its own TMPDIR, and
prints for each: the exit code, the wall time, the child's peak resident memory (``wait4``),
the peak bytes on disk in its TMPDIR (polled every 20 ms) and the first words of its error.
The bounds it is held to (cmax.reading.limits, docs/limits.md): peak memory under
``MEMORY_CEILING`` (1 GiB), peak disk under the archive budget (64 MiB + 100 times the
archive's size, at most 8 GiB; nothing for a folder bundle), exit code 2 with one line.

Issue 39's cases (``ISSUE_39``) add a YAML alias bomb and 50,000 nested brackets in an
llmb-run archive, a valid .tar.zst followed by a 64 GiB zstd frame of zeros (2 MiB on disk), a
hard link leading out through links (a named pipe waits where it leads: opening it would
hang), a ``jobs`` view counting to 10^12, a valid WAL database with a trigger (a result, and
nothing written beside it), a device node and a named pipe in a folder of llmb-run packages,
and a leaderboard of provider names holding ESC, BEL, a right-to-left override and a line
break (``cmax report``: a result). Each is also held to ``TIMEOUT_S`` (30 s, the child killed
past it) and ``DISK_CEILING`` (200 MiB of TMPDIR).

The archives are built without writing their content: a gzip stream may be a series of
members, so a chunk is compressed once and its member written as many times as needed
(``tar_gz``), and the folder cases use sparse files. Building all cases writes about 150 MB.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cmax.reading.limits import (  # noqa: E402
    ARCHIVE_FREE_BYTES,
    MAX_ARCHIVE_RATIO,
    MAX_BUNDLE_BYTES,
)

SAMPLE = REPO / "samples" / "aurora-compute"
NCCL = "nccl/all_reduce_perf_64n.txt"
MEMORY_CEILING = 1 << 30
MiB = 1 << 20
GiB = 1 << 30

Piece = tuple[bytes, int]  # a chunk and how many times it repeats


def tar_gz(path: Path, members: list[tuple[str, list[Piece]]],
           pax: dict[str, dict[str, str]] | None = None) -> Path:
    """A .tar.gz whose members repeat compressed chunks (a multi-member gzip stream); a
    member named in ``pax`` gets those PAX records."""
    with path.open("wb") as out:
        for name, pieces in members:
            size = sum(len(chunk) * times for chunk, times in pieces)
            info = tarfile.TarInfo(name)
            info.size = size
            records = (pax or {}).get(name)
            if records:
                info.pax_headers = records
            out.write(gzip.compress(info.tobuf(tarfile.PAX_FORMAT if records
                                               else tarfile.GNU_FORMAT)))
            for chunk, times in pieces:
                member = gzip.compress(chunk, 6)
                for _ in range(times):
                    out.write(member)
            out.write(gzip.compress(b"\0" * ((-size) % 512)))
        out.write(gzip.compress(b"\0" * 1024))
    return path


def _sample_members(replace: dict[str, list[Piece]]) -> list[tuple[str, list[Piece]]]:
    members = []
    for path in sorted(SAMPLE.rglob("*")):
        if path.is_file():
            rel = path.relative_to(SAMPLE).as_posix()
            members.append((rel, replace.pop(rel, None) or [(path.read_bytes(), 1)]))
    return members + list(replace.items())


def _nccl_pieces(rows: int) -> list[Piece]:
    """The sample's nccl-tests file with its data rows replaced by ``rows`` copies of one."""
    lines = (SAMPLE / NCCL).read_bytes().splitlines(keepends=True)
    data = [i for i, line in enumerate(lines) if line.strip() and not line.startswith(b"#")]
    head, row, tail = lines[: data[0]], lines[data[0]], lines[data[-1] + 1:]
    block = 10_000
    return [(b"".join(head), 1), (row * block, rows // block), (b"".join(tail), 1)]


def _incident_pieces(total: int) -> list[Piece]:
    header, *rows = (SAMPLE / "incidents.csv").read_bytes().splitlines(keepends=True)
    body = b"".join(rows)
    chunk = body * (MiB // len(body) + 1)
    return [(header, 1), (chunk, total // len(chunk))]


def nccl_rows_tgz(work: Path) -> Path:
    return tar_gz(work / "nccl-3M-rows.tar.gz", _sample_members({NCCL: _nccl_pieces(3_000_000)}))


def incidents_tgz(work: Path) -> Path:
    return tar_gz(work / "incidents-3GiB.tar.gz",
                  _sample_members({"incidents.csv": _incident_pieces(3 * GiB)}))


def no_manifest_tgz(work: Path) -> Path:
    return tar_gz(work / "no-manifest-7.5GiB.tar.gz", [("data.bin", [(b"\0" * 8 * MiB, 960)])])


def many_members_tgz(work: Path) -> Path:
    """Each member within the budget, their sum far beyond it: refused as they are written."""
    zeros = [(b"\0" * 8 * MiB, 1)]
    return tar_gz(work / "members-800MiB.tar.gz", [(f"junk/{i}.bin", zeros) for i in range(100)])


def long_name_tgz(work: Path) -> Path:
    info = tarfile.TarInfo("././@LongLink")
    info.type = tarfile.GNUTYPE_LONGNAME
    info.size = 16 * GiB
    path = work / "long-name-16GiB.tar.gz"
    with gzip.open(path, "wb") as out:
        out.write(info.tobuf(tarfile.GNU_FORMAT))
        chunk = b"a" * (8 * MiB)
        for _ in range(2):  # 16 MiB of the "name": the archive is cut short, as in the review
            out.write(chunk)
    return path


def pax_sparse_tgz(work: Path) -> Path:
    """A member whose PAX records make it a sparse file (GNU format 1.0), its map of 200 M
    numbers in its data: read number by number before the member is returned."""
    records = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "s.bin",
               "GNU.sparse.realsize": "1"}
    numbers = [(b"%d\n" % 10**12, 1), (b"1\n" * (4 * MiB), 50)]
    return tar_gz(work / "pax-sparse-map.tar.gz", _sample_members({"s.bin": numbers}),
                  pax={"s.bin": records})


def zip_bomb(work: Path) -> Path:
    path = work / "deflate-1GiB.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cmax.toml", (SAMPLE / "cmax.toml").read_bytes())
        with zf.open("zeros.bin", "w", force_zip64=True) as out:
            chunk = b"\0" * (8 * MiB)
            for _ in range(128):
                out.write(chunk)
    return path


def _folder(work: Path, name: str) -> Path:
    dest = work / name
    shutil.copytree(SAMPLE, dest)
    return dest


def sparse_folder(work: Path) -> Path:
    dest = _folder(work, "sparse-20GiB")
    with (dest / "training" / "padding.bin").open("wb") as fh:
        fh.truncate(20 * GiB)
    return dest


def nccl_rows_folder(work: Path) -> Path:
    dest = _folder(work, "nccl-1M-rows")
    with (dest / NCCL).open("wb") as fh:
        for chunk, times in _nccl_pieces(1_000_000):
            for _ in range(times):
                fh.write(chunk)
    return dest


def long_line_folder(work: Path) -> Path:
    """A training log whose last line is 1 GiB long (sparse: zeros)."""
    dest = _folder(work, "line-1GiB")
    log = dest / "training" / "llama3.1-405b_fp8_512.log"
    with log.open("r+b") as fh:
        fh.truncate(log.stat().st_size + GiB)
    return dest


# --- issue 39: YAML and SQLite bombs, special files, compressed trailers, control characters --

def _llmb_archive(work: Path, name: str, config_extra: str = "") -> Path:
    """An llmb-run Exemplar archive (.tar.zst, tests/submission/intake/llmb_fakes.py) of one job
    whose llmb-config has ``config_extra`` put in before its job_config section."""
    from tests.submission.intake.llmb_fakes import Job, archive, config_text

    staging = work / f"stage-{name}"
    job = Job()
    path = archive(work / f"{name}.tar.zst", [job], staging=staging)
    if config_extra:
        config = next(staging.rglob("llmb-config_*.yaml"))
        config.write_text(config_text(job).replace("job_config:", config_extra + "job_config:"))
        path.unlink()
        path = archive(work / f"{name}.tar.zst", [], staging=staging)
    shutil.rmtree(staging)
    return path


def yaml_alias_bomb(work: Path) -> Path:
    """Nine levels of ten aliases (10^9 nodes expanded) in 1.3 KB of llmb-config."""
    levels = ["a0: &a0 [lol]\n"] + [
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)]
    return _llmb_archive(work, "yaml-alias-bomb", "".join(levels))


def yaml_nesting(work: Path) -> Path:
    return _llmb_archive(work, "yaml-50k-brackets", "x: " + "[" * 50_000 + "]" * 50_000 + "\n")


def zstd_trailer(work: Path) -> Path:
    """A valid .tar.zst followed by a 2 MiB zstd frame of 64 GiB of zeros."""
    from tests.submission.test_bundle_zstd import zero_frame

    path = _llmb_archive(work, "zstd-trailer-64GiB")
    with path.open("ab") as out:
        out.write(zero_frame(64))
    return path


def hard_link_out(work: Path) -> Path:
    """A hard link listed first, naming a path through links that leads two folders above the
    extraction folder (TMPDIR/cmax-bundle-*/../.. is this folder): a named pipe waits there,
    so opening it would hang cmax rather than pass unseen."""
    secret = work / "secret"
    if not secret.exists():
        os.mkfifo(secret)
    path = work / "hard-link-out.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, link in (("h", "=q/m/secret"), ("z/y.txt", None),
                           ("a/b/c/l", "../../../z"), ("q/m", "../a/b/c/l/../../..")):
            info = tarfile.TarInfo(name)
            if link is None:
                info.size = 2
                tar.addfile(info, io.BytesIO(b"y\n"))
                continue
            info.type = tarfile.LNKTYPE if link.startswith("=") else tarfile.SYMTYPE
            info.linkname = link.removeprefix("=")
            tar.addfile(info)
    return path


def _jobs_bundle(work: Path, name: str, *schema: str) -> Path:
    """The sample bundle whose fp8 run is read from an llmb-run jobs database."""
    import sqlite3

    dest = _folder(work, name)
    manifest = dest / "cmax.toml"
    manifest.write_text(manifest.read_text().replace(
        'log = "training/llama3.1-405b_fp8_512.log"', 'log = "jobs.sqlite3"'))
    con = sqlite3.connect(dest / "jobs.sqlite3")
    for statement in schema:
        con.execute(statement)
    con.commit()
    con.close()
    return dest


_JOB_COLUMNS = ("job_id TEXT, workload_key TEXT, model_size TEXT, dtype TEXT, scale INTEGER, "
                "train_step_time_seconds REAL, tflops_per_gpu REAL, perf_parse_status TEXT")


def sqlite_view(work: Path) -> Path:
    """``jobs`` a view counting to 10^12: a SELECT of it never ends."""
    return _jobs_bundle(work, "jobs-view-10^12", (
        "CREATE VIEW jobs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
        "LIMIT 1000000000000) SELECT x AS job_id, 'pretrain_llama3.1' AS workload_key, "
        "'405b' AS model_size, 'fp8' AS dtype, 512 AS scale, 12.9 AS "
        "train_step_time_seconds, 1.0 AS tflops_per_gpu, 'success' AS perf_parse_status "
        "FROM c"))


def sqlite_wal(work: Path) -> Path:
    """A valid WAL-mode database with a trigger: read, and nothing written beside it."""
    return _jobs_bundle(work, "jobs-wal", "PRAGMA journal_mode = WAL",
                        f"CREATE TABLE jobs ({_JOB_COLUMNS})", "CREATE TABLE log (x)",
                        "CREATE TRIGGER t AFTER INSERT ON jobs BEGIN INSERT INTO log "
                        "VALUES (1); END",
                        "INSERT INTO jobs VALUES ('77', 'pretrain_llama3.1', '405b', 'fp8', 512, "
                        "12.9, 700.0, 'success')")


def _package_folder(work: Path, name: str) -> Path:
    folder = work / name
    folder.mkdir()
    shutil.move(_llmb_archive(work, "llmb-archive_26.08.00_20261101T120000Z"), folder)
    (folder / "nccl").mkdir()
    return folder


def device_in_package(work: Path) -> Path:
    """A /dev/zero clone in a sub-folder of a folder of llmb-run packages (a named pipe where
    this process may not make device nodes)."""
    folder = _package_folder(work, "device-in-package")
    try:
        os.mknod(folder / "nccl" / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        os.mkfifo(folder / "nccl" / "zero")
    return folder


def fifo_in_package(work: Path) -> Path:
    folder = _package_folder(work, "fifo-in-package")
    os.mkfifo(folder / "nccl" / "pipe")
    return folder


def control_names(work: Path) -> Path:
    """Two bundles for one leaderboard, a provider name holding ESC, BEL, a right-to-left
    override and a line break: the reports are written (a valid input: exit 0)."""
    dest = _folder(work, "control-names")
    manifest = dest / "cmax.toml"
    manifest.write_text(manifest.read_text().replace(
        'name = "Aurora Compute"', 'name = "Aur\\u001b[31m\\u0007ora\\u202eevil\\nTier: Gold"'))
    shutil.copytree(REPO / "samples" / "borealis-cloud", work / "control-names-peer")
    return dest


CASES: dict[str, Callable[[Path], Path]] = {
    "nccl-3M-rows.tar.gz": nccl_rows_tgz,
    "incidents-3GiB.tar.gz": incidents_tgz,
    "no-manifest-7.5GiB.tar.gz": no_manifest_tgz,
    "members-800MiB.tar.gz": many_members_tgz,
    "long-name-16GiB.tar.gz": long_name_tgz,
    "pax-sparse-map.tar.gz": pax_sparse_tgz,
    "deflate-1GiB.zip": zip_bomb,
    "sparse-20GiB (folder)": sparse_folder,
    "nccl-1M-rows (folder)": nccl_rows_folder,
    "line-1GiB (folder)": long_line_folder,
}
# issue 39's cases, also held to DISK_CEILING and TIMEOUT_S
ISSUE_39: dict[str, Callable[[Path], Path]] = {
    "yaml-alias-bomb.tar.zst": yaml_alias_bomb,
    "yaml-50k-brackets.tar.zst": yaml_nesting,
    "zstd-trailer-64GiB.tar.zst": zstd_trailer,
    "hard-link-out.tar.gz": hard_link_out,
    "jobs-view-10^12 (folder)": sqlite_view,
    "jobs-wal (folder)": sqlite_wal,
    "device-in-package (folder)": device_in_package,
    "fifo-in-package (folder)": fifo_in_package,
    "control-names (report)": control_names,
}
CASES.update(ISSUE_39)
# the cases whose input is valid, with the exit codes of a correct result (0, or 1 with
# findings); every other case must be refused (exit 2)
RESULTS: dict[str, tuple[int, ...]] = {"jobs-wal (folder)": (0, 1),
                                       "control-names (report)": (0,)}
TIMEOUT_S = 30  # every case, refusal or result, within this
DISK_CEILING = 200 * MiB  # and at most this in TMPDIR, whatever the archive budget


def command(name: str, bundle: Path, out: Path) -> list[str]:
    """What a user runs on the case: ``cmax score``; a leaderboard for the report case."""
    if name.endswith("(report)"):
        return ["report", str(bundle), str(bundle.parent / f"{bundle.name}-peer"), "-o",
                str(out), "--no-pdf"]
    return ["score", str(bundle), "--format", "json"]


def _disk(folder: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def measure(bundle: Path, tmp: Path, argv: list[str] | None = None,
            timeout: float | None = None) -> tuple[int, float, int, int, str]:
    """Exit code, seconds, peak RSS bytes, peak TMPDIR bytes, last stderr line; ``argv`` the
    cmax command (``score BUNDLE --format json``); past ``timeout`` the child is killed
    (exit -9), so a hang is a failure, not a stuck run."""
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    peak = [0]
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _disk(tmp))
            done.wait(0.02)

    watcher = threading.Thread(target=poll, daemon=True)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "cmax",
                             *(argv or ["score", str(bundle), "--format", "json"])],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    watcher.start()
    killer = threading.Timer(timeout, proc.kill) if timeout else None
    if killer is not None:
        killer.start()
    assert proc.stderr is not None
    with proc.stderr:
        err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    if killer is not None:
        killer.cancel()
    seconds = time.perf_counter() - start
    done.set()
    watcher.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    lines = err.strip().splitlines()
    return proc.returncode, seconds, usage.ru_maxrss * 1024, peak[0], lines[-1] if lines else ""


def disk_budget(bundle: Path, name: str = "") -> int:
    if bundle.is_dir():
        return 0
    budget = min(MAX_BUNDLE_BYTES, ARCHIVE_FREE_BYTES + MAX_ARCHIVE_RATIO * bundle.stat().st_size)
    return min(budget, DISK_CEILING) if name in ISSUE_39 else budget



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--keep", type=Path, help="build the bundles here and keep them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{'case':28} {'size':>9} {'exit':>4} {'s':>6} {'peak RSS':>9} {'RSS ok':>6} "
          f"{'peak disk':>9} {'budget':>9} {'disk ok':>7}  error")
    failures = 0
    try:
        for name, build in CASES.items():
            if args.only and args.only not in name:
                continue
            bundle = build(work)
            size = bundle.stat().st_size if bundle.is_file() else sum(
                p.stat().st_blocks * 512 for p in bundle.rglob("*") if p.is_file())
            tmp = work / "tmp"
            tmp.mkdir(exist_ok=True)
            argv = command(name, bundle, work / "out")
            code, seconds, rss, disk, err = measure(bundle, tmp, argv, TIMEOUT_S)
            budget = disk_budget(bundle, name)
            ok_rss, ok_disk = rss < MEMORY_CEILING, disk <= budget
            failures += (code not in RESULTS.get(name, (2,))) + (not ok_rss) + (not ok_disk) + (
                seconds > TIMEOUT_S)
            print(f"{name:28} {size / MiB:8.1f}M {code:4d} {seconds:6.1f} {rss / MiB:8.0f}M "
                  f"{'yes' if ok_rss else 'NO':>6} {disk / MiB:8.0f}M {budget / MiB:8.0f}M "
                  f"{'yes' if ok_disk else 'NO':>7}  {err.removeprefix('cmax: error: ')[:110]}")
            shutil.rmtree(tmp, ignore_errors=True)
            if not args.keep:
                if bundle.is_dir():
                    shutil.rmtree(bundle)
                else:
                    bundle.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"memory ceiling {MEMORY_CEILING / MiB:.0f} MiB; {failures} bound(s) missed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
