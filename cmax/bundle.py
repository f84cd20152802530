"""Open a bundle: a directory, ``.tar.gz``/``.tgz``/``.tar``/``.tar.zst`` or ``.zip`` holding
``cmax.toml``.

Archives come from providers, i.e. from outside the trust boundary, so extraction refuses
absolute paths, ``..`` components, links, device files, and archives that exceed the size or
member-count limits (a zip bomb must not fill the auditor's disk). A bundle whose single
top-level folder holds the manifest (the way ``tar czf x.tgz dir/`` packs) is accepted too.

A corrupt archive is refused whole, never read in part: a decompression error, a failed
gzip/xz/bzip2 or zip checksum (``tarfile`` stops at the end-of-archive block and never reads
the gzip trailer, so a .tar.gz whose CRC fails was accepted with altered content), and two
members with the same path (the last would silently win, e.g. a second ``cmax.toml``) are
all one BundleError. A ``.tar.zst`` (what ``llmb-run archive`` writes) is decompressed as a
stream (the ``zstandard`` package: the standard library has no zstd before Python 3.14) and
goes through the same member-by-member extraction, so it has the same bounds; a damaged or
truncated frame is the same one BundleError. The extraction directory is removed even when
cmax is stopped with SIGTERM or SIGINT (:func:`cleanup_on_signals`).
"""

from __future__ import annotations

import lzma
import shutil
import signal
import tarfile
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cmax.errors import BundleError
from cmax.limits import MAX_PATH_CHARS, MAX_PATH_DEPTH
from cmax.manifest import MANIFEST_NAME, Manifest, load_manifest

MAX_MEMBERS = 10_000
MAX_TOTAL_BYTES = 8 * 1024**3

# what a damaged archive raises beyond tarfile/zipfile's own errors: zlib.error (deflate),
# LZMAError (xz), EOFError (cut off), OSError (gzip.BadGzipFile, bz2 "Invalid data stream")
_CORRUPT = (tarfile.TarError, zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError,
            OSError, RuntimeError, NotImplementedError, ValueError)


def _corrupt(archive: Path, exc: BaseException) -> BundleError:
    if isinstance(exc, OSError) and exc.errno is not None:  # the system's fault (disk full)
        return BundleError(f"cannot unpack the bundle: {exc.strerror}", file=archive,
                           fix="free space in the temporary folder (TMPDIR) and retry")
    detail = str(exc).strip() or type(exc).__name__
    return BundleError(f"corrupt bundle archive: {detail}", file=archive,
                       expected="an archive that unpacks without errors",
                       fix="copy or download the bundle again (check it with `tar tzf` / "
                         "`unzip -t` / `zstd -t`)")


@contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGINT raise ``SystemExit(128 + signal)`` (143, 130:
    the shell's convention) instead of killing the process outright, so enclosing ``with``
    blocks (temporary directories, staged reports) clean up on the way out. A no-op outside
    the main thread, where Python cannot install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass(frozen=True)
class Bundle:
    """An opened bundle: where its files are and what its manifest says."""

    source: Path
    root: Path
    manifest: Manifest

    def resolve(self, relative: str, *, field: str) -> Path:
        """Path of a file the manifest names, refusing anything that leaves the bundle."""
        rel = PurePosixPath(relative.replace("\\", "/"))
        if rel.is_absolute() or ".." in rel.parts:
            raise BundleError(
                f"path {relative!r} leaves the bundle", file=self.source / MANIFEST_NAME,
                field=field, expected="a path relative to the bundle root",
            )
        path = self.root.joinpath(*rel.parts)
        try:
            resolved = path.resolve()
            exists = path.exists()
        except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL
            raise BundleError(f"path {relative[:80]!r} cannot be a file name: {exc}",
                              file=self.source / MANIFEST_NAME, field=field,
                              fix="correct the path") from None
        if not resolved.is_relative_to(self.root.resolve()):
            raise BundleError(
                f"path {relative!r} resolves outside the bundle (symlink?)",
                file=self.source / MANIFEST_NAME, field=field,
            )
        if not exists:
            raise BundleError(
                f"declared file {relative!r} is not in the bundle",
                file=self.source / MANIFEST_NAME, field=field,
                fix="add the file to the bundle or correct the path",
            )
        return path

    def display(self, path: Path) -> str:
        """A path as the user knows it: relative to the bundle."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def _size(n: int) -> str:
    return f"{n / 1024**3:g} GiB" if n >= 1024**3 else f"{n:,} bytes"


class _Members:
    """The member paths seen so far: a path given twice is refused (tar and zip both allow
    it, and extraction lets the last copy win, so a second ``cmax.toml`` appended to a
    provider's archive replaced the real one)."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive
        self.files: set[PurePosixPath] = set()
        self.dirs: set[PurePosixPath] = set()

    def check(self, name: str, *, is_dir: bool) -> PurePosixPath:
        rel = _check_member(name, self.archive)
        if rel in self.files or (not is_dir and rel in self.dirs):
            raise BundleError(f"archive member {name!r} appears more than once", file=self.archive,
                              expected="each path once",
                              fix="repack the bundle from a clean folder")
        (self.dirs if is_dir else self.files).add(rel)
        return rel


def _check_member(name: str, archive: Path) -> PurePosixPath:
    shown = name if len(name) <= 120 else name[:120] + "..."
    if len(name) > MAX_PATH_CHARS:
        raise BundleError(f"archive member path of {len(name):,} characters ({shown!r})",
                          file=archive, expected=f"at most {MAX_PATH_CHARS} characters")
    if any(ord(c) < 32 for c in name):
        raise BundleError(f"archive member {shown!r} has control characters in its name",
                          file=archive, fix="repack the bundle with plain file names")
    rel = PurePosixPath(name.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or (rel.parts and ":" in rel.parts[0]):
        raise BundleError(
            f"archive member {shown!r} would be written outside the bundle", file=archive,
            fix="repack the bundle with relative paths only",
        )
    if len(rel.parts) > MAX_PATH_DEPTH:
        raise BundleError(f"archive member {shown!r} is {len(rel.parts)} folders deep",
                          file=archive, expected=f"at most {MAX_PATH_DEPTH} levels")
    return rel


def _drain(stream: object) -> None:
    """Read a compressed stream to its end so its trailer checksum is verified."""
    read = getattr(stream, "read", None)
    if read is not None:
        while read(1 << 20):
            pass


ZSTD_SUFFIXES = (".tar.zst", ".tzst", ".tar.zstd")
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# a zstd window larger than this is refused before any memory is committed to it (zstd's
# own default limit for streams; llmb-run writes level 5, an 8 MiB window)
ZSTD_MAX_WINDOW = 1 << 27


def _is_zstd(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == ZSTD_MAGIC
    except OSError:
        return False


@contextmanager
def _open_tar(archive: Path) -> Iterator[tarfile.TarFile]:
    """The archive as a tar read member by member: zstd frames are decompressed as a stream
    (``r|``) so nothing is unpacked ahead of the member checks."""
    if not (archive.name.lower().endswith(ZSTD_SUFFIXES) or _is_zstd(archive)):
        with tarfile.open(archive, "r:*") as tar:
            yield tar
        return
    import zstandard  # only zstd bundles pay for the import

    decompressor = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    try:
        with archive.open("rb") as raw, \
                decompressor.stream_reader(raw, read_across_frames=True) as stream, \
                tarfile.open(fileobj=stream, mode="r|") as tar:
            yield tar
    except zstandard.ZstdError as exc:  # a damaged frame, a bad checksum, a huge window
        raise tarfile.ReadError(f"zstd: {exc}") from None


def _extract_tar(archive: Path, dest: Path) -> None:
    try:
        with _open_tar(archive) as tar:
            total = 0
            members = _Members(archive)
            # iterate rather than getmembers(): a hostile archive's index is never held whole
            for count, member in enumerate(tar, start=1):
                if count > MAX_MEMBERS:
                    raise BundleError(f"archive has more than {MAX_MEMBERS} members",
                                      file=archive, expected=f"at most {MAX_MEMBERS}")
                rel = members.check(member.name, is_dir=member.isdir())
                if member.issym() or member.islnk():
                    raise BundleError(
                        f"archive member {member.name!r} is a link", file=archive,
                        fix="bundle real files, not links",
                    )
                if not (member.isfile() or member.isdir()):
                    raise BundleError(f"archive member {member.name!r} is not a regular file",
                                      file=archive)
                total += member.size
                if total > MAX_TOTAL_BYTES:
                    raise BundleError("archive expands beyond the size limit", file=archive,
                                      expected=f"at most {_size(MAX_TOTAL_BYTES)} unpacked")
                target = dest.joinpath(*rel.parts)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                if source is None:
                    continue
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
            _drain(tar.fileobj)
    except _CORRUPT as exc:
        raise _corrupt(archive, exc) from None


def _extract_zip(archive: Path, dest: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise BundleError(f"archive has {len(infos)} members", file=archive,
                                  expected=f"at most {MAX_MEMBERS}")
            total = 0
            members = _Members(archive)
            for info in infos:
                rel = members.check(info.filename, is_dir=info.is_dir())
                mode = (info.external_attr >> 16) & 0o170000
                if mode == 0o120000:
                    raise BundleError(f"archive member {info.filename!r} is a link", file=archive,
                                      fix="bundle real files, not links")
                if mode not in (0, 0o100000, 0o040000):
                    raise BundleError(f"archive member {info.filename!r} is not a regular file",
                                      file=archive)
                if info.flag_bits & 0x1:
                    raise BundleError(f"archive member {info.filename!r} is encrypted",
                                      file=archive, fix="pack the bundle without a password")
                total += info.file_size
                if total > MAX_TOTAL_BYTES:
                    raise BundleError("archive expands beyond the size limit", file=archive,
                                      expected=f"at most {_size(MAX_TOTAL_BYTES)} unpacked")
                target = dest.joinpath(*rel.parts)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                written = 0
                with zf.open(info) as source, target.open("wb") as out:
                    while chunk := source.read(1 << 20):
                        written += len(chunk)
                        if written > info.file_size:
                            raise BundleError(f"member {info.filename!r} is larger than declared",
                                              file=archive)
                        out.write(chunk)
    except _CORRUPT as exc:
        raise _corrupt(archive, exc) from None


def _is_tar(path: Path) -> bool:
    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False


def _manifest_root(extracted: Path, source: Path) -> Path:
    if (extracted / MANIFEST_NAME).is_file():
        return extracted
    children = [p for p in extracted.iterdir() if not p.name.startswith(".")]
    if len(children) == 1 and (children[0] / MANIFEST_NAME).is_file():
        return children[0]
    raise BundleError(f"no {MANIFEST_NAME} at the top of the bundle", file=source,
                      fix=f"put {MANIFEST_NAME} at the bundle root (see README)")


@contextmanager
def open_bundle(path: str | Path) -> Iterator[Bundle]:
    """Open a bundle for the duration of a ``with`` block (archives go to a temp dir)."""
    source = Path(path)
    if not source.exists():
        raise BundleError("bundle not found", file=source,
                          expected="a directory, .tar.gz or .zip holding cmax.toml")
    if not (source.is_dir() or source.is_file()):
        # opening a named pipe blocks until a writer appears: cmax would hang
        raise BundleError("bundle is not a regular file (a named pipe, socket or device)",
                          file=source, expected="a directory, .tar.gz or .zip holding cmax.toml",
                          fix="copy the bundle into a plain file or folder")
    if source.is_dir():
        root = _manifest_root(source, source)
        yield Bundle(source=source, root=root, manifest=load_manifest(root / MANIFEST_NAME))
        return
    name = source.name.lower()
    with cleanup_on_signals(), tempfile.TemporaryDirectory(prefix="cmax-bundle-") as tmp:
        dest = Path(tmp)
        if name.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", *ZSTD_SUFFIXES)):
            _extract_tar(source, dest)
        elif name.endswith(".zip"):
            _extract_zip(source, dest)
        elif source.name == MANIFEST_NAME:
            root = source.parent
            yield Bundle(source=root, root=root, manifest=load_manifest(source))
            return
        elif zipfile.is_zipfile(source):  # renamed archive: trust the content, not the name
            _extract_zip(source, dest)
        elif _is_tar(source) or _is_zstd(source):
            _extract_tar(source, dest)
        else:
            raise BundleError("not a bundle", file=source,
                              expected="a directory, .tar.gz, .tgz, .tar, .tar.zst or .zip "
                              "holding cmax.toml")
        root = _manifest_root(dest, source)
        yield Bundle(source=source, root=root, manifest=load_manifest(root / MANIFEST_NAME))
