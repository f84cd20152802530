"""Opening bundles: directories and archives, with hostile archives refused before anything
lands outside the temporary extraction directory."""

from __future__ import annotations

import io
import os
import signal
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import cmax.submission.bundle
from cmax.cli import main
from cmax.errors import BundleError, CmaxError
from cmax.submission.bundle import open_bundle
from tests.fakes import manifest_text
from tests.paths import DATA, REPO

MANIFEST = manifest_text('[[nccl]]\npath = "nccl/all_reduce.txt"', nodes=2, interconnect=None)


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _good_members(prefix: str = "") -> list[tuple[tarfile.TarInfo, bytes | None]]:
    return [_file(prefix + "cmax.toml", MANIFEST.encode()),
            _file(prefix + "nccl/all_reduce.txt", b"# nThread 1 nGpus 8\n")]


def test_directory_tgz_zip_and_nested_root(tmp_path: Path) -> None:
    folder = tmp_path / "dir"
    (folder / "nccl").mkdir(parents=True)
    (folder / "cmax.toml").write_text(MANIFEST)
    (folder / "nccl" / "all_reduce.txt").write_text("x")
    with open_bundle(folder) as bundle:
        assert bundle.manifest.provider.cluster == "example-h100-a"
        assert bundle.resolve("nccl/all_reduce.txt", field="nccl[0].path").is_file()
    tgz = _tar(tmp_path / "b.tar.gz", _good_members("bundle/"))  # tar czf b.tgz bundle/
    with open_bundle(tgz) as bundle:
        assert bundle.root.name == "bundle" and bundle.display(bundle.root / "cmax.toml") == (
            "cmax.toml")
        extracted = bundle.root
    assert not extracted.exists()  # the temporary copy is gone after the block
    zpath = tmp_path / "b.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("cmax.toml", MANIFEST)
        zf.writestr("nccl/all_reduce.txt", "x")
    with open_bundle(zpath) as bundle:
        assert bundle.manifest.system.nodes == 2
    renamed = tmp_path / "bundle.upload"  # a renamed archive is opened by its content
    renamed.write_bytes(zpath.read_bytes())
    with open_bundle(renamed) as bundle:
        assert bundle.manifest.system.nodes == 2


@pytest.mark.parametrize("name", ["../evil.txt", "/etc/evil.txt", "a/../../evil.txt",
                                  "C:\\evil.txt", "a\\..\\..\\evil.txt"])
def test_tar_path_traversal_refused(tmp_path: Path, name: str) -> None:
    archive = _tar(tmp_path / "t.tgz", [*_good_members(), _file(name)])
    with pytest.raises(CmaxError, match="outside the bundle"), open_bundle(archive):
        pass
    assert not (tmp_path / "evil.txt").exists()


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_tar_links_out_refused(tmp_path: Path, kind: bytes) -> None:
    """Links that stay inside are kept (tests/submission/test_bundle_links.py); these leave."""
    link = tarfile.TarInfo("nccl/link.txt")
    link.type = kind
    link.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else "../cmax.toml"
    archive = _tar(tmp_path / "t.tgz", [*_good_members(), (link, None)])
    with pytest.raises(CmaxError, match="is a link"), open_bundle(archive):
        pass


def test_tar_device_and_fifo_refused(tmp_path: Path) -> None:
    fifo = tarfile.TarInfo("pipe")
    fifo.type = tarfile.FIFOTYPE
    archive = _tar(tmp_path / "t.tgz", [*_good_members(), (fifo, None)])
    with pytest.raises(CmaxError, match="not a regular file"), open_bundle(archive):
        pass


def test_member_count_and_size_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmax.submission.bundle, "MAX_BUNDLE_FILES", 5)
    many = [*_good_members(), *(_file(f"junk/{i}.txt") for i in range(10))]
    with pytest.raises(CmaxError, match="more than 5 members"), open_bundle(
            _tar(tmp_path / "many.tgz", many)):
        pass
    zpath = tmp_path / "many.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for i in range(10):
            zf.writestr(f"junk/{i}.txt", "x")
    with pytest.raises(CmaxError, match="10 members"), open_bundle(zpath):
        pass
    monkeypatch.setattr(cmax.submission.bundle, "MAX_BUNDLE_FILES", 10_000)
    monkeypatch.setattr(cmax.submission.bundle, "MAX_BUNDLE_BYTES", 1000)
    big = [*_good_members(), _file("big.bin", b"0" * 5000)]
    with pytest.raises(CmaxError, match="size limit") as info, open_bundle(
            _tar(tmp_path / "big.tgz", big)):
        pass
    assert "1,000 bytes" in str(info.value)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cmax.toml", MANIFEST)
        zf.writestr("zeros.bin", b"\0" * 100_000)  # compresses to ~100 bytes
    with pytest.raises(CmaxError, match="size limit"), open_bundle(bomb):
        pass


def test_zip_traversal_and_symlink_refused(tmp_path: Path) -> None:
    zpath = tmp_path / "t.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("cmax.toml", MANIFEST)
        zf.writestr("../../evil.txt", "x")
    with pytest.raises(CmaxError, match="outside the bundle"), open_bundle(zpath):
        pass
    spath = tmp_path / "s.zip"
    with zipfile.ZipFile(spath, "w") as zf:
        zf.writestr("cmax.toml", MANIFEST)
        info = zipfile.ZipInfo("nccl/all_reduce.txt")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(CmaxError, match="is a link"), open_bundle(spath):
        pass


def test_corrupt_archives_and_non_bundles(tmp_path: Path) -> None:
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(CmaxError, match="corrupt bundle archive"), open_bundle(broken):
        pass
    half = tmp_path / "half.zip"
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("cmax.toml", MANIFEST)
    half.write_bytes(good.read_bytes()[:40])
    with pytest.raises(CmaxError), open_bundle(half):
        pass
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(CmaxError, match="not a bundle"), open_bundle(text):
        pass
    with pytest.raises(CmaxError, match="bundle not found"), open_bundle(tmp_path / "nope"):
        pass
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CmaxError, match=r"no cmax\.toml"), open_bundle(empty):
        pass


def test_declared_path_escaping_bundle_refused(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "cmax.toml").write_text(MANIFEST)
    (tmp_path / "secret.txt").write_text("x")
    with open_bundle(folder) as bundle:
        # a link made after the bundle was opened: resolve checks again
        (folder / "link.txt").symlink_to(tmp_path / "secret.txt")
        with pytest.raises(CmaxError, match="leaves the bundle") as info:
            bundle.resolve("../secret.txt", field="nccl[0].path")
        assert info.value.field == "nccl[0].path"
        with pytest.raises(CmaxError, match="outside the bundle"):
            bundle.resolve("link.txt", field="nccl[0].path")
        with pytest.raises(CmaxError, match="not in the bundle"):
            bundle.resolve("nccl/all_reduce.txt", field="nccl[0].path")


def test_manifest_error_names_key_value_and_expectation(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "cmax.toml").write_text(MANIFEST.replace("nodes = 2", "nodes = -2"))
    with pytest.raises(CmaxError) as info, open_bundle(folder):
        pass
    line = info.value.one_line()
    assert "system.nodes" in line and "-2" in line and "expected" in line


def _gz_bundle(tmp_path: Path) -> bytes:
    return _tar(tmp_path / "seed.tar.gz", _good_members()).read_bytes()


def test_gzip_crc_failure_is_a_corrupt_bundle(tmp_path: Path) -> None:
    """tarfile stops at the end-of-archive block and never checked the gzip trailer, so a
    .tar.gz that gzip and GNU tar refuse was opened with altered content."""
    data = bytearray(_gz_bundle(tmp_path))
    data[-8] ^= 0xFF  # the CRC-32 of the trailer
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(bytes(data))
    with pytest.raises(CmaxError, match=r"corrupt bundle archive.*CRC"), open_bundle(bad):
        pass


def test_decompression_errors_are_a_corrupt_bundle(tmp_path: Path) -> None:
    """zlib.error (deflate) and LZMAError (xz) escaped as tracebacks."""
    zpath = tmp_path / "b.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cmax.toml", MANIFEST * 20)
    data = bytearray(zpath.read_bytes())
    start = 30 + len("cmax.toml")  # the first member's compressed bytes
    data[start + 5:start + 25] = b"\xff" * 20
    zpath.write_bytes(bytes(data))
    with pytest.raises(CmaxError, match="corrupt bundle archive"), open_bundle(zpath):
        pass
    xz = tmp_path / "b.tar.xz"
    with tarfile.open(xz, "w:xz") as tar:
        info, payload = _file("cmax.toml", MANIFEST.encode())
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    raw = bytearray(xz.read_bytes())
    raw[len(raw) // 2] ^= 0x55
    xz.write_bytes(bytes(raw))
    with pytest.raises(CmaxError, match="corrupt bundle archive"), open_bundle(xz):
        pass


def test_duplicate_members_are_refused(tmp_path: Path) -> None:
    """Two cmax.toml members: the last silently won ($0.01 instead of $2.45)."""
    second = MANIFEST.replace("example-h100-a", "someone-else")
    tgz = _tar(tmp_path / "dup.tar.gz",
               [*_good_members(), _file("./cmax.toml", second.encode())])
    with pytest.raises(CmaxError, match=r"'\./cmax\.toml' appears more than once"), \
            open_bundle(tgz):
        pass
    zpath = tmp_path / "dup.zip"
    with zipfile.ZipFile(zpath, "w") as zf, pytest.warns(UserWarning, match="Duplicate"):
        zf.writestr("cmax.toml", MANIFEST)
        zf.writestr("cmax.toml", second)
    with pytest.raises(CmaxError, match="appears more than once"), open_bundle(zpath):
        pass


@pytest.mark.parametrize(("name", "message"), [
    ("/".join(["d"] * 200) + "/x", "201 folders deep"),
    ("/".join(["d"] * 2000) + "/x", "path of 4,001 characters"),
    ("a" * 5000, "path of 5,000 characters"),
    ("evil\x01name", "control characters"),
], ids=["deep", "deep-and-long", "long", "control"])
def test_member_path_depth_and_length_are_bounded(tmp_path: Path, name: str,
                                                  message: str) -> None:
    """A 2,000-level-deep member path printed ~5,000 lines of traceback."""
    zpath = tmp_path / "deep.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("cmax.toml", MANIFEST)
        zf.writestr(name, "x")
    with pytest.raises(CmaxError, match=message) as caught, open_bundle(zpath):
        pass
    assert len(str(caught.value)) < 400


def test_named_pipe_as_bundle_path_is_refused_not_waited_on(tmp_path: Path) -> None:
    for name in ("bundle.tar.gz", "bundle.zip", "bundle"):
        fifo = tmp_path / name
        os.mkfifo(fifo)
        with pytest.raises(CmaxError, match="not a regular file"), open_bundle(fifo):
            pass


# The holder sleeps in short steps, as cmax works in Python between library calls: the kernel
# may deliver the signal to a library's worker thread, and CPython then runs the handler only
# when the main thread next executes bytecode, which one long sleep would delay past the wait.
_HOLD = """
import sys, time
from cmax.submission.bundle import open_bundle
with open_bundle(sys.argv[1]) as bundle:
    print(bundle.root, flush=True)
    for _ in range(600):
        time.sleep(0.1)
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_removes_the_extraction_directory(tmp_path: Path, sig: signal.Signals,
                                                 code: int) -> None:
    """Killed while an archive was open, cmax left its temporary directory behind."""
    tgz = _tar(tmp_path / "b.tar.gz", _good_members())
    with subprocess.Popen([sys.executable, "-c", _HOLD, str(tgz)], stdout=subprocess.PIPE,
                          text=True, cwd=REPO) as proc:
        assert proc.stdout is not None
        root = Path(proc.stdout.readline().strip())
        assert root.is_dir()
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == code
    assert not root.exists()


# --- the bundle is a closed world: no link out of a folder bundle is followed --------------

OUTSIDE = "OUTSIDE-SECRET-7f3a"


def _refused(path: Path, match: str) -> BundleError:
    with pytest.raises(BundleError, match=match) as info, open_bundle(path):
        pass
    return info.value


def _outside(tmp_path: Path) -> Path:
    """A folder beside the bundle holding files a hostile link points at."""
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    (out / "passwd").write_text(f"root:x:0:0:{OUTSIDE}:/root:/bin/bash\n")
    (out / "cmax.toml").write_text(f'[provider]\nname = "{OUTSIDE}"\n')
    nccl = (DATA / "ingest" / "nccl" / "all_reduce_1node.txt").read_text()
    (out / "nccl.txt").write_text(nccl.replace("node", "outsidehost"))
    (out / "folder").mkdir(exist_ok=True)
    (out / "folder" / "a.txt").write_text(nccl)
    return out


# each a place a reader opens: the manifest, a declared file, members of declared folders
# (nccl-tests, llmb retries, MLPerf results), and siblings looked up (system JSON, scaling)
LINKS = {
    "cmax.toml": "cmax.toml",
    "nccl/all_reduce.txt": "nccl.txt",
    "nccl/more/c.txt": "nccl.txt",
    "nccl/more/sub": "folder",
    "training/retries/log-pretrain_llama3.1_8b_77_2.out": "passwd",
    "mlperf/results/example_h100_64x8/llama31_405b/result_3.txt": "passwd",
    "mlperf/results/example_h100_64x8/llama31_405b/scaling.json": "passwd",
    "mlperf/systems/example_h100_64x8.json": "passwd",
    "audit/.hidden.json": "passwd",
}


@pytest.mark.parametrize("where", list(LINKS))
def test_a_link_leaving_a_folder_bundle_is_refused_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    from tests.ingest.test_ingest_bundle import build_bundle
    root = build_bundle(tmp_path / "b")
    link = root / where
    link.unlink(missing_ok=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(_outside(tmp_path) / LINKS[where])
    error = _refused(root, "link that leads outside the bundle")
    assert repr(where) in error.message and OUTSIDE not in str(error)
    assert str(tmp_path / "outside") not in str(error)  # the target is not shown
    assert main(["validate", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert OUTSIDE not in captured.err and "Traceback" not in captured.err


def test_a_folder_whose_only_child_links_to_a_bundle_elsewhere_is_refused(
        tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "real"
    elsewhere.mkdir(parents=True)
    (elsewhere / "cmax.toml").write_text(MANIFEST)
    wrapper = tmp_path / "wrapper"
    wrapper.mkdir()
    (wrapper / "bundle").symlink_to(elsewhere)
    _refused(wrapper, "'bundle' is a link that leads outside")


def test_link_loops_and_links_inside_the_bundle(tmp_path: Path) -> None:
    root = tmp_path / "b"
    root.mkdir()
    (root / "cmax.toml").write_text(MANIFEST)
    (root / "data").mkdir()
    (root / "data" / "x.txt").write_text("x")
    (root / "alias.txt").symlink_to(root / "data" / "x.txt")  # stays inside: kept
    (root / "data-again").symlink_to("data")
    with open_bundle(root) as bundle:
        assert bundle.resolve("alias.txt", field="f").read_text() == "x"
    (root / "loop").symlink_to("loop")
    _refused(root, "'loop' is a link")


def test_folder_bundle_size_and_entry_limits(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "b"
    root.mkdir()
    (root / "cmax.toml").write_text(MANIFEST)
    with (root / "sparse.bin").open("wb") as fh:  # 20 GiB that take no disk
        fh.truncate(20 * 1024**3)
    _refused(root, r"more than 8 GiB \(at 'sparse.bin'\)")
    (root / "sparse.bin").unlink()
    monkeypatch.setattr(cmax.submission.bundle, "MAX_BUNDLE_FILES", 5)
    for i in range(5):
        (root / f"{i}.txt").write_text("x")
    _refused(root, "more than 5 files and folders")


def _header_bomb(path: Path, kind: bytes, size: int) -> Path:
    """A .tar.gz whose first header announces an extended header (GNU long name, PAX) of
    ``size`` bytes: a few KB on disk, the header's data cut short."""
    info = tarfile.TarInfo("././@LongLink")
    info.type = kind
    info.size = size
    import gzip
    path.write_bytes(gzip.compress(info.tobuf(tarfile.GNU_FORMAT) + b"a" * 4096))
    return path


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE])
def test_huge_tar_extended_header_is_refused_before_it_is_read(tmp_path: Path,
                                                               kind: bytes) -> None:
    archive = _header_bomb(tmp_path / "h.tgz", kind, 16 * 1024**3)
    error = _refused(archive, "extended header of 17,179,869,184 bytes")
    assert error.file == str(archive)
    long = "/".join(["n" * 100] * 3)
    small = _tar(tmp_path / "ok.tgz", [*_good_members(), _file(long)])
    with open_bundle(small) as bundle:  # a real long name (a GNU or PAX header) is fine
        assert (bundle.root / long).is_file()


def test_sparse_tar_member_is_refused(tmp_path: Path) -> None:
    info = tarfile.TarInfo("sparse.bin")
    info.type = tarfile.GNUTYPE_SPARSE
    archive = _tar(tmp_path / "s.tgz", [*_good_members(), (info, b"")])
    _refused(archive, r"'sparse\.bin' is a sparse file")


@pytest.mark.parametrize("suffix", ["tgz", "zip"])
def test_compression_bomb_is_refused_after_a_bounded_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str) -> None:
    monkeypatch.setattr(cmax.submission.bundle, "ARCHIVE_FREE_BYTES", 1 << 20)
    zeros = b"\0" * (8 << 20)  # 8 MiB of zeros: gzip/deflate write it in ~8 KB
    archive = tmp_path / f"bomb.{suffix}"
    if suffix == "tgz":
        _tar(archive, [_file("zeros.bin", zeros), *_good_members()])  # no manifest first
    else:
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("zeros.bin", zeros)
            zf.writestr("cmax.toml", MANIFEST)
    budget = (1 << 20) + 100 * archive.stat().st_size
    assert budget < len(zeros)
    _refused(archive, "over 100 times its own size")
    # the same archive with the ratio bound lifted unpacks: only the bound refused it
    monkeypatch.setattr(cmax.submission.bundle, "ARCHIVE_FREE_BYTES", 64 << 20)
    with open_bundle(archive) as bundle:
        assert (bundle.root / "zeros.bin").stat().st_size == len(zeros)
