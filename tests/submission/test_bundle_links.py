"""Links inside an archive: ``llmb-run archive`` stores each symlinked folder of an experiments
tree as a link member (archive.py@e249aa3: ``os.walk`` without following links, linked folders
added with ``dereference=False``), so a real Exemplar package may hold links. One that stays
inside the archive is kept and the package is rated as without it; one that leaves (absolute,
``..`` above the top, through a chain of links), loops or leads nowhere is refused, naming the
member and never its target (a target outside names the provider's own paths and logins)."""

from __future__ import annotations

import io
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

import cmax.submission.bundle
from cmax.errors import BundleError, CmaxError
from cmax.pipeline import assess, load
from cmax.submission.bundle import open_bundle
from tests.submission.intake.llmb_fakes import LOGIN, Job, archive, experiment_dir

NAME = "llmb-archive_26.08.00_20261101T120000Z.tar.zst"
JOB = Job(job_id=3913022, retries=(0, 1))


def _exp(tmp_path: Path) -> Path:
    """The experiment's ``<exp>/`` folder (holding ``<exp>_<ts>/``), relative to the stage."""
    return experiment_dir(Path(""), JOB).parent.parent


def _rated(path: Path) -> tuple[list[tuple[str, str, int, str]], list[str]]:
    with load(path) as loaded:
        runs = [(r.workload, r.precision, r.num_gpus, r.log) for r in loaded.bundle.manifest.runs]
    result = assess(path)
    return runs, sorted(f"{f.rule} {f.message}" for f in result.findings)


def test_links_inside_a_real_shaped_archive_are_kept_and_rated_as_without(
        tmp_path: Path) -> None:
    exp = _exp(tmp_path)
    inner = experiment_dir(Path(""), JOB)
    (tmp_path / "plain").mkdir()
    (tmp_path / "linked").mkdir()
    plain = archive(tmp_path / "plain" / NAME, [JOB], staging=tmp_path / "s1")
    linked = archive(tmp_path / "linked" / NAME, [JOB], staging=tmp_path / "s2", links={
        f"{exp}/latest": inner.parent.name,  # a folder link, as nemo-run leaves "latest"
        f"{exp}/current-log": f"{inner.parent.name}/{inner.name}/log-{inner.name}_3913022_1.out",
        f"{exp}/again": "latest",  # a chain of links, all inside
    })
    with tarfile.open(fileobj=io.BytesIO(_zstd_plain(linked))) as tar:
        kinds = {m.name.rsplit("/", 1)[-1]: m.type for m in tar.getmembers()}
    assert kinds["latest"] == kinds["again"] == kinds["current-log"] == tarfile.SYMTYPE
    assert _rated(linked) == _rated(plain)  # the links add no run and change no finding
    with load(linked) as loaded:
        assert len(loaded.bundle.manifest.runs) == 1
        folder = loaded.bundle.root / exp
        assert (folder / "latest").is_symlink() and (folder / "again").resolve() == (
            folder / inner.parent.name).resolve()


def _zstd_plain(path: Path) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(path.read_bytes()).read()


@pytest.mark.parametrize(("text", "why"), [
    (f"/lustre/fsw/{LOGIN}/llmb/workloads/elsewhere", "an absolute path"),
    ("../../../../../..", "climbs above"),
    ("../../../../../../outside", "climbs above"),
])
def test_a_link_leaving_a_real_shaped_archive_is_refused_naming_it(
        tmp_path: Path, text: str, why: str) -> None:
    exp = _exp(tmp_path)
    path = archive(tmp_path / NAME, [JOB], staging=tmp_path / "s", links={f"{exp}/latest": text})
    with pytest.raises(BundleError, match=f"is a link that leads outside the archive.*{why}") \
            as info, open_bundle(path):
        pass
    message = str(info.value)
    assert f"{exp.as_posix()}/latest" in message
    assert LOGIN not in message and text not in message  # the target is never shown


def _tar(path: Path, members: list[tuple[str, str | None, bytes]]) -> Path:
    """(name, link text or None, content); a link text starting with '=' is a hard link."""
    with tarfile.open(path, "w:gz") as tar:
        for name, link, data in members:
            info = tarfile.TarInfo(name)
            if link is None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = tarfile.LNKTYPE if link.startswith("=") else tarfile.SYMTYPE
            info.linkname = link.removeprefix("=")
            tar.addfile(info)
    return path


def _base() -> list[tuple[str, str | None, bytes]]:
    return [("a/b/c/x.txt", None, b"x\n"), ("z/y.txt", None, b"y\n")]


@pytest.mark.parametrize(("links", "message"), [
    # as written a/b/y.txt, but the chain leaves: l leads to z/, and z/../.. is above the top
    ([("a/b/c/l", "../../../z"), ("a/b/c/m", "l/../../y.txt")], "outside the archive.*other"),
    ([("p", "q"), ("q", "p")], "loop of links"),
    ([("a/up", "..")], "a folder that holds it"),
    ([("a/gone", "b/missing")], "which the archive does not hold"),
    ([("l", "a"), ("l/inner", "b")], "inside a linked folder"),
    ([("a/b", "../z")], "also holds a folder"),
    ([("a/h", "=../z/y.txt")], "climbs above"),
    ([("a/h", "=a/b")], "not a file of the archive"),
])
def test_links_that_leave_loop_or_lead_nowhere_are_refused(
        tmp_path: Path, links: list[tuple[str, str]], message: str) -> None:
    path = _tar(tmp_path / "t.tgz", [*_base(), *((n, t, b"") for n, t in links)])
    with pytest.raises(BundleError, match=message), cmax.submission.bundle.evidence_folder(path):
        pass


def test_links_inside_are_kept_in_tar_and_zip(tmp_path: Path) -> None:
    path = _tar(tmp_path / "t.tgz", [*_base(), ("a/alias", "b/c/x.txt", b""),
                                     ("a/hard.txt", "=z/y.txt", b""), ("zz", "z", b"")])
    with cmax.submission.bundle.evidence_folder(path) as folder:
        assert (folder / "a" / "alias").is_symlink()
        assert (folder / "a" / "alias").read_bytes() == b"x\n"
        assert not (folder / "a" / "hard.txt").is_symlink()  # a copy of the member it names
        assert (folder / "a" / "hard.txt").read_bytes() == b"y\n"
        assert (folder / "zz" / "y.txt").read_bytes() == b"y\n"
    kept = _zip(tmp_path / "kept.zip", [("a/alias", "b/c/x.txt")])
    with cmax.submission.bundle.evidence_folder(kept) as folder:
        assert (folder / "a" / "alias").is_symlink()
        assert (folder / "a" / "alias").read_bytes() == b"x\n"
    out = _zip(tmp_path / "out.zip", [("a/alias", "b/c/x.txt"), ("out", "../etc")])
    with pytest.raises(CmaxError, match="'out' is a link that leads outside"), \
            cmax.submission.bundle.evidence_folder(out):
        pass


def _zip(path: Path, links: list[tuple[str, str]]) -> Path:
    """A zip holding a/b/c/x.txt and symbolic links (a zip link's content is its target)."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a/b/c/x.txt", "x\n")
        for name, text in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, text)
    return path


def test_links_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmax.submission.bundle, "MAX_ARCHIVE_LINKS", 2)
    path = _tar(tmp_path / "t.tgz", [*_base(), *((f"l{i}", "z", b"") for i in range(3))])
    with pytest.raises(BundleError, match="more than 2 links"), \
            cmax.submission.bundle.evidence_folder(path):
        pass
    # a hard link's copy is counted
    monkeypatch.setattr(cmax.submission.bundle, "MAX_BUNDLE_BYTES", 3)
    path = _tar(tmp_path / "h.tgz", [("z/y.txt", None, b"y\n"), ("h", "=z/y.txt", b"")])
    with (pytest.raises(BundleError, match="size limit"),
          cmax.submission.bundle.evidence_folder(path)):
        pass


def test_a_hard_link_through_links_that_leave_is_refused_before_any_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: a hard link listed first, naming a path through a chain of symbolic links
    (each inside as written) that really leads two folders above the extraction folder, was
    copied before the links were checked: the outside file was opened and read. Hard links
    are now copied before any symbolic link exists, from regular file members only."""
    tmp = tmp_path / "a" / "b"
    tmp.mkdir(parents=True)
    (tmp_path / "a" / "secret").write_text("OUTSIDE\n")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    opened: list[str] = []
    real_open = open

    def watch(file: object, *args: object, **kwargs: object) -> object:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", watch)
    path = _tar(tmp_path / "t.tgz", [("h", "=q/m/secret", b""), *_base(),
                                     ("a/b/c/l", "../../../z", b""),
                                     ("q/m", "../a/b/c/l/../../..", b"")])
    with pytest.raises(BundleError, match="'h' is a hard link to 'q/m/secret', which is not a "
                                          "file of the archive"), \
            cmax.submission.bundle.evidence_folder(path):
        pass
    assert not any(name.endswith("secret") for name in opened)
