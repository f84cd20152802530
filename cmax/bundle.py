"""Open a bundle: a directory, ``.tar.gz``/``.tgz``/``.tar`` or ``.zip`` holding ``cmax.toml``.

Archives come from providers, i.e. from outside the trust boundary, so extraction refuses
absolute paths, ``..`` components, links, device files, and archives that exceed the size or
member-count limits (a zip bomb must not fill the auditor's disk). A bundle whose single
top-level folder holds the manifest (the way ``tar czf x.tgz dir/`` packs) is accepted too.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cmax.errors import CmaxError
from cmax.manifest import MANIFEST_NAME, Manifest, load_manifest

MAX_MEMBERS = 10_000
MAX_TOTAL_BYTES = 8 * 1024**3


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
            raise CmaxError(
                f"path {relative!r} leaves the bundle", file=self.source / MANIFEST_NAME,
                field=field, expected="a path relative to the bundle root",
            )
        path = self.root.joinpath(*rel.parts)
        resolved = path.resolve()
        if not resolved.is_relative_to(self.root.resolve()):
            raise CmaxError(
                f"path {relative!r} resolves outside the bundle (symlink?)",
                file=self.source / MANIFEST_NAME, field=field,
            )
        if not path.exists():
            raise CmaxError(
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


def _check_member(name: str, archive: Path) -> PurePosixPath:
    rel = PurePosixPath(name.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or (rel.parts and ":" in rel.parts[0]):
        raise CmaxError(
            f"archive member {name!r} would be written outside the bundle", file=archive,
            fix="repack the bundle with relative paths only",
        )
    return rel


def _extract_tar(archive: Path, dest: Path) -> None:
    try:
        with tarfile.open(archive, "r:*") as tar:
            total = 0
            # iterate rather than getmembers(): a hostile archive's index is never held whole
            for count, member in enumerate(tar, start=1):
                if count > MAX_MEMBERS:
                    raise CmaxError(f"archive has more than {MAX_MEMBERS} members",
                                    file=archive, expected=f"at most {MAX_MEMBERS}")
                rel = _check_member(member.name, archive)
                if member.issym() or member.islnk():
                    raise CmaxError(
                        f"archive member {member.name!r} is a link", file=archive,
                        fix="bundle real files, not links",
                    )
                if not (member.isfile() or member.isdir()):
                    raise CmaxError(f"archive member {member.name!r} is not a regular file",
                                    file=archive)
                total += member.size
                if total > MAX_TOTAL_BYTES:
                    raise CmaxError("archive expands beyond the size limit", file=archive,
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
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise CmaxError(f"cannot read archive: {exc}", file=archive,
                        fix="check that the .tar.gz is complete and not corrupt") from None


def _extract_zip(archive: Path, dest: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise CmaxError(f"archive has {len(infos)} members", file=archive,
                                expected=f"at most {MAX_MEMBERS}")
            total = 0
            for info in infos:
                rel = _check_member(info.filename, archive)
                mode = (info.external_attr >> 16) & 0o170000
                if mode == 0o120000:
                    raise CmaxError(f"archive member {info.filename!r} is a link", file=archive,
                                    fix="bundle real files, not links")
                if mode not in (0, 0o100000, 0o040000):
                    raise CmaxError(f"archive member {info.filename!r} is not a regular file",
                                    file=archive)
                if info.flag_bits & 0x1:
                    raise CmaxError(f"archive member {info.filename!r} is encrypted",
                                    file=archive, fix="pack the bundle without a password")
                total += info.file_size
                if total > MAX_TOTAL_BYTES:
                    raise CmaxError("archive expands beyond the size limit", file=archive,
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
                            raise CmaxError(f"member {info.filename!r} is larger than declared",
                                            file=archive)
                        out.write(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
        raise CmaxError(f"cannot read archive: {exc}", file=archive,
                        fix="check that the .zip is complete and not corrupt") from None


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
    raise CmaxError(f"no {MANIFEST_NAME} at the top of the bundle", file=source,
                    fix=f"put {MANIFEST_NAME} at the bundle root (see README)")


@contextmanager
def open_bundle(path: str | Path) -> Iterator[Bundle]:
    """Open a bundle for the duration of a ``with`` block (archives go to a temp dir)."""
    source = Path(path)
    if not source.exists():
        raise CmaxError("bundle not found", file=source,
                        expected="a directory, .tar.gz or .zip holding cmax.toml")
    if source.is_dir():
        root = _manifest_root(source, source)
        yield Bundle(source=source, root=root, manifest=load_manifest(root / MANIFEST_NAME))
        return
    name = source.name.lower()
    with tempfile.TemporaryDirectory(prefix="cmax-bundle-") as tmp:
        dest = Path(tmp)
        if name.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
            _extract_tar(source, dest)
        elif name.endswith(".zip"):
            _extract_zip(source, dest)
        elif source.name == MANIFEST_NAME:
            root = source.parent
            yield Bundle(source=root, root=root, manifest=load_manifest(source))
            return
        elif zipfile.is_zipfile(source):  # renamed archive: trust the content, not the name
            _extract_zip(source, dest)
        elif _is_tar(source):
            _extract_tar(source, dest)
        else:
            raise CmaxError("not a bundle", file=source,
                            expected="a directory, .tar.gz, .tgz, .tar or .zip holding cmax.toml")
        root = _manifest_root(dest, source)
        yield Bundle(source=source, root=root, manifest=load_manifest(root / MANIFEST_NAME))
