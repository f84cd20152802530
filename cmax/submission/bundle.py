"""Open a bundle: a directory, ``.tar.gz``/``.tgz``/``.tar``/``.tar.zst`` or ``.zip`` holding
``cmax.toml``.

Archives come from providers, i.e. from outside the trust boundary, so extraction refuses
absolute paths, ``..`` components, links that lead out of the archive, device files, and
archives that exceed the size or member-count limits (a zip bomb must not fill the auditor's
disk). A link that stays inside is kept: ``llmb-run archive`` stores each symlinked folder of
an experiments tree as a link member (``tarfile`` with ``dereference=False``,
NVIDIA/exemplar-performance:cli/llmb-run/src/llmb_run/archive.py@e249aa3), so a real Exemplar
package may hold some (:meth:`Unpacker.finish`). A bundle whose single
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

import errno
import lzma
import os
import posixpath
import shutil
import signal
import stat
import tarfile
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, Literal, NoReturn

from cmax.errors import BundleError
from cmax.reading.limits import (
    ARCHIVE_FREE_BYTES,
    MAX_ARCHIVE_LINKS,
    MAX_ARCHIVE_RATIO,
    MAX_BUNDLE_BYTES,
    MAX_BUNDLE_FILES,
    MAX_HEADER_BYTES,
    MAX_PACKAGE_ARCHIVES,
    MAX_PATH_CHARS,
    MAX_PATH_DEPTH,
)
from cmax.submission.manifest import MANIFEST_NAME, Manifest, load_manifest, manifest_from

if TYPE_CHECKING:
    from cmax.submission.intake.draft import Commercial
    from cmax.submission.intake.facts import PackageFacts

# what a damaged archive raises beyond tarfile/zipfile's own errors: zlib.error (deflate),
# LZMAError (xz), EOFError (cut off), OSError (gzip.BadGzipFile, bz2 "Invalid data stream")
_CORRUPT = (tarfile.TarError, zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError,
            OSError, RuntimeError, NotImplementedError, ValueError)


def _corrupt(archive: Path, exc: BaseException) -> BundleError:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return BundleError(f"cannot unpack the bundle: {exc.strerror}", file=archive,
                           fix="free space in the temporary folder (TMPDIR) and retry")
    if isinstance(exc, OSError) and exc.errno is not None:  # a name the system cannot hold
        return BundleError(f"cannot unpack the bundle: {exc.strerror}", file=archive,
                           fix="repack the bundle with short, plain file names")
    detail = str(exc).strip() or type(exc).__name__
    return BundleError(f"corrupt bundle archive: {detail}", file=archive,
                       expected="an archive that unpacks without errors",
                       fix="copy or download the bundle again (check it with `tar tzf` / "
                         "`unzip -t` / `zstd -t`)")


_STOP_CODES: list[int] = []  # the exit code of a stop in progress (at most one)


def stop_code() -> int | None:
    """The exit code (143, 130) of the stop signal this process is unwinding from, None when
    not stopping: for callers of a library that turns the signal's SystemExit into one of its
    own (Ray's ``get`` raises SystemExit(1))."""
    return _STOP_CODES[0] if _STOP_CODES else None


@contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGINT raise ``SystemExit(128 + signal)`` (143, 130:
    the shell's convention) instead of killing the process outright, so enclosing ``with``
    blocks (temporary directories, staged reports) clean up on the way out; further stop
    signals are then ignored until the block has unwound. A no-op outside
    the main thread, where Python cannot install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    stopped = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopped
        stopped = True
        ignore_stop_signals()  # a second signal must not cut the cleanup short
        _STOP_CODES[:] = [128 + signum]
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        if not stopped:  # once stopping, the process is on its way out: keep ignoring
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def ignore_stop_signals() -> None:
    """Ignore SIGTERM and SIGINT from now on: called as a stop begins, so that a second
    signal (Ctrl-C reaches every process of the group, and then cmax stops its workers
    itself) cannot interrupt the removal of a temporary folder half-way."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        # a Python no-op, not SIG_IGN: a signal already pending when the handler changes
        # would otherwise raise OSError("Signal 15 ignored due to race condition")
        signal.signal(sig, _ignore)


def _ignore(signum: int, frame: object) -> None:
    return None


@dataclass(frozen=True)
class Bundle:
    """An opened bundle: where its files are and what its manifest says."""

    source: Path
    root: Path
    manifest: Manifest
    # an llmb-run package's own facts when its manifest was drafted from the evidence
    package: PackageFacts | None = None

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
    return f"{n / 1024**3:.3g} GiB" if n >= 1024**3 else f"{n:,} bytes"


def _shown(name: str) -> str:
    return repr(name if len(name) <= 120 else name[:120] + "...")


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


Kind = Literal["file", "dir", "link", "other"]


@dataclass(frozen=True)
class _Link:
    """A link member, made only once every file is written."""

    name: str  # the member's name as archived
    rel: PurePosixPath  # where the link goes
    text: str  # the link's own text (a symlink's target as stored)
    target: PurePosixPath  # what it leads to, relative to the archive's top
    hard: bool  # a tar hard link: a second name for an earlier member


class Unpacker:
    """Every bound on what an archive may unpack, in the one place every archive type's
    members go through (tar, zip, and any compression wrapped around a tar).

    Per member, before a byte of it is written: the member count, the path (relative,
    inside the bundle, shallow, no control characters, not given twice), the type (files,
    folders and links that stay inside; no devices or pipes) and the declared size against
    what is left of the budget. While it is written: the bytes actually produced, against the
    declared size and the budget, so a member that lies about its size is stopped at the
    lie. The budget is the smaller of :data:`~cmax.reading.limits.MAX_BUNDLE_BYTES` and
    :data:`~cmax.reading.limits.ARCHIVE_FREE_BYTES` +
    :data:`~cmax.reading.limits.MAX_ARCHIVE_RATIO` times
    the archive's size, so a compression bomb is refused after writing at most that much.
    """

    def __init__(self, archive: Path, dest: Path, *, spent: int = 0) -> None:
        self.archive = archive
        self.dest = dest
        self.members = _Members(archive)
        self.count = 0
        self.written = spent  # bytes earlier archives of the same bundle unpacked
        self.links: list[_Link] = []
        self.files: set[PurePosixPath] = set()  # the regular files written, by member path
        size = archive.stat().st_size
        self.budget = min(MAX_BUNDLE_BYTES, spent + ARCHIVE_FREE_BYTES + MAX_ARCHIVE_RATIO * size)

    def _over(self, total: int) -> BundleError:
        if self.budget < MAX_BUNDLE_BYTES:
            return BundleError(
                f"archive unpacks to more than {_size(self.budget)}, over {MAX_ARCHIVE_RATIO} "
                f"times its own size (a compression bomb?)", file=self.archive,
                expected=f"at most {_size(ARCHIVE_FREE_BYTES)} plus {MAX_ARCHIVE_RATIO} "
                "times the archive's size unpacked",
                fix="check the bundle's files; evidence this repetitive is not a tool's output")
        return BundleError("archive expands beyond the size limit", file=self.archive,
                           expected=f"at most {_size(MAX_BUNDLE_BYTES)} unpacked",
                           fix="split the evidence into several bundles")

    def member(self, name: str, kind: Kind, size: int, *, link: str = "",
               hard: bool = False) -> Path | None:
        """Check one member from its header; the path to write a file to, or None for a
        folder (created here) or a link (``link`` its text, made by :meth:`finish`)."""
        self.count += 1
        if self.count > MAX_BUNDLE_FILES:
            raise BundleError(f"archive has more than {MAX_BUNDLE_FILES} members",
                              file=self.archive, expected=f"at most {MAX_BUNDLE_FILES}")
        rel = self.members.check(name, is_dir=kind == "dir")
        if kind == "link":
            self.links.append(self._link(name, rel, link, hard=hard))
            return None
        if kind == "other":
            raise BundleError(f"archive member {_shown(name)} is not a regular file",
                              file=self.archive, fix="bundle regular files and folders only")
        target = self.dest.joinpath(*rel.parts)
        if kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
            return None
        if self.written + size > self.budget:
            raise self._over(self.written + size)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.files.add(rel)
        return target

    def _leaves(self, name: str, why: str) -> BundleError:
        # the target is not shown: a link out names the provider's own paths (and logins)
        return BundleError(f"archive member {_shown(name)} is a link that leads outside the "
                           f"archive ({why})", file=self.archive,
                           expected="links relative to a file or folder inside the archive",
                           fix="archive the files themselves, not links to them")

    def _link(self, name: str, rel: PurePosixPath, text: str, *, hard: bool) -> _Link:
        """A link member checked from its text alone: relative, and leading, as written,
        to something inside the archive that does not hold the link itself."""
        if len(self.links) >= MAX_ARCHIVE_LINKS:
            raise BundleError(f"archive has more than {MAX_ARCHIVE_LINKS:,} links",
                              file=self.archive, expected=f"at most {MAX_ARCHIVE_LINKS:,}",
                              fix="archive the files themselves, not links to them")
        if not text or len(text) > MAX_PATH_CHARS or any(ord(c) < 32 for c in text):
            raise self._leaves(name, "its target is empty, too long or not a plain path")
        written = PurePosixPath(text.replace("\\", "/"))
        if written.is_absolute() or (written.parts and ":" in written.parts[0]):
            raise self._leaves(name, "an absolute path")
        joined = written if hard else rel.parent / written
        target = PurePosixPath(posixpath.normpath(joined.as_posix()))
        if target.parts[:1] == ("..",):
            raise self._leaves(name, "'..' climbs above the archive's top")
        if target == rel or target in rel.parents:
            raise BundleError(f"archive member {_shown(name)} is a link to a folder that holds "
                              "it (a loop)", file=self.archive,
                              fix="archive the files themselves, not links to them")
        return _Link(name, rel, text.replace("\\", "/"), target, hard)

    def finish(self) -> None:
        """Make the links once every file is written (so nothing is ever written through a
        link), then check where each really leads. Hard links first, before any symbolic
        link exists: each must name a regular file member by its own path, so its copy can
        never pass through a link (a hard link listed first, naming a path through a chain
        of links that leaves the archive, opened the outside file). Then each symlink must
        resolve, through any chain of links, to a file or folder of the archive. A link
        inside a linked folder, a link where the archive also has a folder, a link to
        something the archive does not hold, a loop, a chain that leaves: one BundleError."""
        top = self.dest.resolve()
        linked = {link.rel for link in self.links}
        for link in self.links:
            path = self.dest.joinpath(*link.rel.parts)
            if any(parent in linked for parent in link.rel.parents):
                raise BundleError(f"archive member {_shown(link.name)} is a link inside a "
                                  "linked folder", file=self.archive,
                                  fix="archive the files themselves, not links to them")
            if path.exists() or path.is_symlink():
                raise BundleError(f"archive member {_shown(link.name)} is a link where the "
                                  "archive also holds a folder or file", file=self.archive,
                                  fix="repack the bundle from a clean folder")
        for link in self.links:
            if link.hard:
                self._copy_hard_link(link, self.dest.joinpath(*link.rel.parts))
        for link in self.links:
            if not link.hard:
                path = self.dest.joinpath(*link.rel.parts)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.symlink_to(link.text)
        for link in self.links:
            if link.hard:
                continue
            path = self.dest.joinpath(*link.rel.parts)
            try:
                if not path.resolve().is_relative_to(top):
                    raise self._leaves(link.name, "through other links")
                path.resolve(strict=True)
            except FileNotFoundError:
                raise BundleError(f"archive member {_shown(link.name)} is a link to "
                                  f"{_shown(link.target.as_posix())}, which the archive does "
                                  "not hold", file=self.archive,
                                  fix="archive what the link points to, or leave the link "
                                  "out") from None
            except (OSError, RuntimeError):  # a loop through other links
                raise BundleError(f"archive member {_shown(link.name)} is a link in a loop "
                                  "of links", file=self.archive,
                                  fix="archive the files themselves, not links to them") from None

    def _copy_hard_link(self, link: _Link, path: Path) -> None:
        source = self.dest.joinpath(*link.target.parts)
        if link.target not in self.files:
            raise BundleError(f"archive member {_shown(link.name)} is a hard link to "
                              f"{_shown(link.target.as_posix())}, which is not a file of the "
                              "archive", file=self.archive,
                              fix="archive the files themselves, not links to them")
        size = source.lstat().st_size
        if self.written + size > self.budget:
            raise self._over(self.written + size)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, path, follow_symlinks=False)
        self.written += size

    def write(self, name: str, source: IO[bytes], target: Path, size: int) -> None:
        """Copy one member's bytes, stopping at its declared size or the budget."""
        produced = 0
        with target.open("wb") as out:
            while chunk := source.read(1 << 20):
                produced += len(chunk)
                if produced > size:
                    raise BundleError(f"member {_shown(name)} is larger than declared",
                                      file=self.archive, fix="repack the bundle")
                if self.written + produced > self.budget:
                    raise self._over(self.written + produced)
                out.write(chunk)
        self.written += produced

    def drain(self, stream: object) -> None:
        """Read a compressed stream to its end, so its trailer checksum is verified, every
        byte decompressed after the tar's end counted against the budget: a valid .tar.zst
        followed by a zstd frame of 64 GiB of zeros (2 MB on disk) was read to its end,
        about 10 s a GiB, and the bundle accepted."""
        read = getattr(stream, "read", None)
        if read is None:
            return
        while chunk := read(1 << 20):
            self.written += len(chunk)
            if self.written > self.budget:
                raise self._over(self.written)


_EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE,
             tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)


class _BoundedTarInfo(tarfile.TarInfo):
    """A tar header that refuses, before ``tarfile`` reads it, an extended header (GNU long
    name, PAX records) larger than :data:`~cmax.reading.limits.MAX_HEADER_BYTES` (``tarfile`` reads
    one whole into memory: a 16 GiB "long name" took a 17 MB archive to a MemoryError) and a
    GNU sparse member, old (GNU header) or PAX (``GNU.sparse.*`` records): its map is read
    number by number, unbounded (format 1.0 keeps it in the member's data: a 58 KB archive
    took 71 s), and no bundle needs one."""

    def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in _EXTENDED and self.size > MAX_HEADER_BYTES:
            raise BundleError(f"archive holds a tar extended header of {self.size:,} bytes",
                              expected=f"at most {MAX_HEADER_BYTES:,}",
                              fix="repack the bundle with plain `tar czf`")
        if self.type == tarfile.GNUTYPE_SPARSE:
            _refuse_sparse(self.name)
        member: tarfile.TarInfo = super()._proc_member(tar)  # type: ignore[misc]
        return member

    # tarfile calls one of these for a member whose PAX records describe a sparse file (their
    # arguments differ between Python versions; the first is always the member)
    def _proc_gnusparse_00(self, member: tarfile.TarInfo, *rest: Any) -> None:
        _refuse_sparse(_sparse_name(member, rest))

    def _proc_gnusparse_01(self, member: tarfile.TarInfo, *rest: Any) -> None:
        _refuse_sparse(_sparse_name(member, rest))

    def _proc_gnusparse_10(self, member: tarfile.TarInfo, *rest: Any) -> None:
        _refuse_sparse(_sparse_name(member, rest))


def _sparse_name(member: tarfile.TarInfo, rest: tuple[Any, ...]) -> str:
    """The member's real name: PAX sparse formats keep it in GNU.sparse.name."""
    pax = next((r for r in rest if isinstance(r, dict)), {})
    return str(pax.get("GNU.sparse.name", member.name))


def _refuse_sparse(name: str) -> NoReturn:
    raise BundleError(f"archive member {_shown(name)} is a sparse file",
                      fix="repack the bundle without --sparse")


def _tar_kind(member: tarfile.TarInfo) -> Kind:
    if member.issym() or member.islnk():
        return "link"
    if member.isdir():
        return "dir"
    return "file" if member.isfile() else "other"


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
        with tarfile.open(archive, "r:*", tarinfo=_BoundedTarInfo) as tar:
            yield tar
        return
    import zstandard  # only zstd bundles pay for the import

    decompressor = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    try:
        with archive.open("rb") as raw, \
                decompressor.stream_reader(raw, read_across_frames=True) as stream, \
                tarfile.open(fileobj=stream, mode="r|", tarinfo=_BoundedTarInfo) as tar:
            yield tar
    except zstandard.ZstdError as exc:  # a damaged frame, a bad checksum, a huge window
        raise tarfile.ReadError(f"zstd: {exc}") from None


def _extract_tar(archive: Path, dest: Path, *, spent: int = 0) -> int:
    """Unpack a tar under the bounds above; the bytes written, ``spent`` included."""
    try:
        with _open_tar(archive) as tar:
            unpack = Unpacker(archive, dest, spent=spent)
            # iterate rather than getmembers(): a hostile archive's index is never held whole
            for member in tar:
                target = unpack.member(member.name, _tar_kind(member), member.size,
                                       link=member.linkname, hard=member.islnk())
                if target is None:
                    continue
                source = tar.extractfile(member)
                if source is None:
                    continue
                with source:
                    unpack.write(member.name, source, target, member.size)
            unpack.drain(tar.fileobj)
            unpack.finish()
            return unpack.written
    except BundleError as exc:  # a header refused inside tarfile does not know the archive
        raise (exc.with_context(file=archive) if exc.file is None else exc) from None
    except _CORRUPT as exc:
        raise _corrupt(archive, exc) from None


def package_archives(folder: Path) -> list[Path]:
    """The ``llmb-run archive`` files at the top of a folder without its own ``cmax.toml``
    runs: one Exemplar package per scalable unit, handed over side by side."""
    from cmax.submission.intake.package import has_full_manifest

    found = sorted(p for p in folder.iterdir() if p.name.lower().startswith("llmb-archive")
                   and p.name.lower().endswith(ZSTD_SUFFIXES) and p.is_file()
                   and not p.is_symlink())
    if not found or has_full_manifest(folder):
        return []
    if len(found) > MAX_PACKAGE_ARCHIVES:
        raise BundleError(f"{len(found)} llmb-run archives in one folder", file=folder,
                          expected=f"at most {MAX_PACKAGE_ARCHIVES} (one per scalable unit)",
                          fix="rate the units in smaller groups")
    return found


def _unpack_packages(folder: Path, archives: list[Path], dest: Path) -> None:
    """Each archive into a folder of its own name (the unit), under one size budget; what
    else the folder holds (a small ``cmax.toml``, files it names) is copied beside them, the
    folder having passed :func:`check_closed` (so its links stay inside and its size is
    bounded)."""
    spent = 0
    names = set()
    for archive in archives:
        unit = dest / archive.name[: -len(next(s for s in ZSTD_SUFFIXES
                                               if archive.name.lower().endswith(s)))]
        unit.mkdir()
        names.add(unit.name)
        spent = _extract_tar(archive, unit, spent=spent)
    for entry in sorted(folder.iterdir()):
        if entry in archives or entry.name in names:
            continue
        if entry.is_dir():
            shutil.copytree(entry, dest / entry.name, copy_function=_copy_regular)
        else:
            _copy_regular(str(entry), str(dest / entry.name))


def _zip_kind(info: zipfile.ZipInfo) -> Kind:
    mode = (info.external_attr >> 16) & 0o170000
    if mode == 0o120000:
        return "link"
    if mode not in (0, 0o100000, 0o040000):
        return "other"
    return "dir" if info.is_dir() else "file"


def _extract_zip(archive: Path, dest: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_BUNDLE_FILES:
                raise BundleError(f"archive has {len(infos)} members", file=archive,
                                  expected=f"at most {MAX_BUNDLE_FILES}")
            unpack = Unpacker(archive, dest)
            for info in infos:
                kind = _zip_kind(info)
                link = ""  # a zip symlink's target is its content
                if kind == "link" and 0 < info.file_size <= MAX_PATH_CHARS \
                        and not info.flag_bits & 0x1:
                    link = zf.read(info).decode("utf-8", errors="replace")
                target = unpack.member(info.filename, kind, info.file_size, link=link)
                if target is None:
                    continue
                if info.flag_bits & 0x1:
                    raise BundleError(f"archive member {_shown(info.filename)} is encrypted",
                                      file=archive, fix="pack the bundle without a password")
                with zf.open(info) as source:
                    unpack.write(info.filename, source, target, info.file_size)
            unpack.finish()
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
        if children[0].is_symlink():  # a folder holding only a link to a bundle elsewhere
            raise _link_error(source, children[0].name)
        return children[0]
    raise BundleError(f"no {MANIFEST_NAME} at the top of the bundle", file=source,
                      fix=f"put {MANIFEST_NAME} at the bundle root (see README)")


def _link_error(source: Path, name: str) -> BundleError:
    return BundleError(f"{_shown(name)} is a link that leads outside the bundle",
                       file=source, expected="every file and folder inside the bundle folder",
                       fix="copy the file into the bundle instead of linking it")


def _special_error(source: Path, rel: str) -> BundleError:
    return BundleError(f"{_shown(rel)} is not a regular file (a device, named pipe or "
                       "socket)", file=source, expected="regular files and folders only",
                       fix="remove it from the bundle folder, or copy its content into a file")


def _copy_regular(source: str, dest: str) -> None:
    """``shutil.copytree``'s copy function for a bundle folder: the file is opened without
    blocking (a named pipe would wait for a writer) and copied only when the opened file is a
    regular one, so a device or pipe put in place after :func:`check_closed` is still never
    read (a /dev/zero clone wrote 2 GiB to TMPDIR in 18 s)."""
    fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as src:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _special_error(Path(source), Path(source).name)
        with open(dest, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)


def check_closed(root: Path, source: Path) -> None:
    """Refuse a folder bundle that reaches outside itself, before anything in it is read.

    One walk of the folder (links not followed) finds every symbolic link, wherever it is:
    the manifest itself, a declared file, a member of a declared folder, a sibling a reader
    looks up (an llmb retry log, an MLPerf system JSON or ``scaling.json``). A link whose
    target resolves inside the bundle is kept; one that leaves it (or loops) is refused,
    naming the link and not its target, so nothing from outside reaches any output. The
    same walk refuses every entry that is neither a regular file nor a folder (a device, a
    named pipe, a socket: reading one never ends or blocks), and adds up the files' sizes and
    counts the entries against the bundle limits
    (:data:`~cmax.reading.limits.MAX_BUNDLE_BYTES`, :data:`~cmax.reading.limits.MAX_BUNDLE_FILES`),
    the
    bounds an archive gets while it is unpacked. Checking the tree up front, rather than at
    each of the many places readers open files, is what makes the promise hold for readers
    added later.
    """
    top = root.resolve()
    count = total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        folder = Path(dirpath)
        for name in (*dirnames, *filenames):
            count += 1
            if count > MAX_BUNDLE_FILES:
                raise BundleError(f"bundle folder holds more than {MAX_BUNDLE_FILES:,} files "
                                  "and folders", file=source,
                                  expected=f"at most {MAX_BUNDLE_FILES:,}",
                                  fix="bundle only the evidence the manifest names")
            path = folder / name
            rel = path.relative_to(root).as_posix()
            try:
                info = path.lstat()
                if stat.S_ISLNK(info.st_mode):
                    if not path.resolve(strict=False).is_relative_to(top):
                        raise _link_error(source, rel)
                    info = path.stat()
            except (OSError, RuntimeError):  # a link loop, a name the system cannot hold
                raise _link_error(source, rel) from None
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                raise _special_error(source, rel)
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > MAX_BUNDLE_BYTES:
                    raise BundleError(f"bundle folder holds more than "
                                      f"{_size(MAX_BUNDLE_BYTES)} (at {_shown(rel)})",
                                      file=source, expected=f"at most {_size(MAX_BUNDLE_BYTES)}",
                                      fix="bundle only the evidence the manifest names")


def _bundle_at(folder: Path, source: Path, commercial: Commercial | None, *,
               closed: bool = False) -> Bundle:
    """The bundle in an opened folder: its ``cmax.toml``, or for an llmb-run package (an
    Exemplar archive, an install folder, experiments) the manifest drafted from its evidence
    (:mod:`cmax.submission.intake.package`)."""
    from cmax.submission.intake.package import open_package, top_manifest

    top = top_manifest(folder)
    full = top is not None and top.full
    if closed and not full:
        check_closed(folder, source)  # before any llmb-run file is looked for
    drafted = None if full else open_package(folder, source=source, commercial=commercial)
    if drafted is not None:
        return Bundle(source=source, root=drafted.root, manifest=drafted.manifest,
                      package=drafted.draft.facts)
    if commercial is not None:
        raise BundleError("--quote, --term and --manifest are for llmb-run packages without "
                          f"{MANIFEST_NAME}", file=source,
                          fix=f"state [pricing] and the rest in the bundle's {MANIFEST_NAME}")
    root = _manifest_root(folder, source)
    if closed:
        check_closed(root, source)
    path = root / MANIFEST_NAME
    table = top.table if top is not None and top.path == path else None
    return Bundle(source=source, root=root, manifest=load_manifest(path) if table is None
                  else manifest_from(table, path))


@contextmanager
def open_bundle(path: str | Path, *, commercial: Commercial | None = None) -> Iterator[Bundle]:
    """Open a bundle for the duration of a ``with`` block (archives go to a temp dir).
    ``commercial``: a price, term or small manifest for a package without ``cmax.toml``."""
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
        archives = package_archives(source)
        if not archives:
            yield _bundle_at(source, source, commercial, closed=True)
            return
        check_closed(source, source)
        with cleanup_on_signals(), tempfile.TemporaryDirectory(prefix="cmax-bundle-") as tmp:
            _unpack_packages(source, archives, Path(tmp))
            yield _bundle_at(Path(tmp), source, commercial)
        return
    if source.name == MANIFEST_NAME:
        root = source.parent
        check_closed(root, root)
        yield Bundle(source=root, root=root, manifest=load_manifest(source))
        return
    with cleanup_on_signals(), tempfile.TemporaryDirectory(prefix="cmax-bundle-") as tmp:
        dest = Path(tmp)
        if not _unpack(source, dest):
            raise BundleError("not a bundle", file=source,
                              expected="a directory, .tar.gz, .tgz, .tar, .tar.zst or .zip "
                              "holding cmax.toml")
        yield _bundle_at(dest, source, commercial)


def _unpack(source: Path, dest: Path) -> bool:
    """Unpack an archive into ``dest`` under the bounds above; False if it is no archive."""
    name = source.name.lower()
    if name.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", *ZSTD_SUFFIXES)) or (
            not name.endswith(".zip") and not zipfile.is_zipfile(source)
            and (_is_tar(source) or _is_zstd(source))):
        _extract_tar(source, dest)
    elif name.endswith(".zip") or zipfile.is_zipfile(source):
        _extract_zip(source, dest)
    else:
        return False
    return True


@contextmanager
def evidence_folder(path: str | Path) -> Iterator[Path]:
    """A folder or archive of evidence (no manifest needed) as a folder for a ``with`` block:
    an archive is unpacked, with every bound a bundle has, into a temporary folder."""
    source = Path(path)
    if source.is_dir():
        check_closed(source, source)
        archives = package_archives(source)
        if not archives:
            yield source
            return
        with cleanup_on_signals(), tempfile.TemporaryDirectory(prefix="cmax-evidence-") as tmp:
            _unpack_packages(source, archives, Path(tmp))
            yield Path(tmp)
        return
    if not source.is_file():
        raise BundleError("not found or not a regular file", file=source,
                          expected="a folder or an archive of evidence files")
    with cleanup_on_signals(), tempfile.TemporaryDirectory(prefix="cmax-evidence-") as tmp:
        if not _unpack(source, Path(tmp)):
            raise BundleError("not a folder or an archive", file=source,
                              expected="a folder, .tar.gz, .tgz, .tar, .tar.zst or .zip")
        yield Path(tmp)
