"""zstd bundles (what ``llmb-run archive`` writes: ``tarfile`` in ``w|`` mode into a
``zstandard`` stream, NVIDIA/exemplar-performance:cli/llmb-run/src/llmb_run/archive.py@e249aa3)
open like any other archive and are held to the same bounds."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
import zstandard

import cmax.submission.bundle
from cmax.errors import CmaxError
from cmax.submission.bundle import open_bundle
from tests.submission.test_bundle import _file, _good_members


def _tar_zst(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]],
             *, checksum: bool = True) -> Path:
    compressor = zstandard.ZstdCompressor(level=5, write_checksum=checksum)
    with path.open("wb") as raw, compressor.stream_writer(raw) as stream, \
            tarfile.open(fileobj=stream, mode="w|") as tar:
        for info, data in members:
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data or b""))
    return path


def test_tar_zst_opens_under_both_llmb_names_and_by_content(tmp_path: Path) -> None:
    for name in ("llmb-archive_26.08.00_20261101T120000Z.tar.zst",
                 "llmb-archive-20261101T120000Z.tar.zst", "renamed.bin"):
        archive = _tar_zst(tmp_path / name, _good_members("llmb-archive-20261101T120000Z/"))
        with open_bundle(archive) as bundle:
            assert bundle.root.name == "llmb-archive-20261101T120000Z"
            assert bundle.resolve("nccl/all_reduce.txt", field="x").read_bytes() == (
                b"# nThread 1 nGpus 8\n")


def test_tar_zst_is_held_to_the_tar_bounds(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    link = tarfile.TarInfo("nccl/link.txt")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    with pytest.raises(CmaxError, match="is a link"), open_bundle(
            _tar_zst(tmp_path / "l.tar.zst", [*_good_members(), (link, None)])):
        pass
    with pytest.raises(CmaxError, match="outside the bundle"), open_bundle(
            _tar_zst(tmp_path / "t.tar.zst", [*_good_members(), _file("../evil")])):
        pass
    monkeypatch.setattr(cmax.submission.bundle, "MAX_BUNDLE_BYTES", 1000)
    bomb = _tar_zst(tmp_path / "bomb.tar.zst", [*_good_members(), _file("z.bin", b"\0" * 50_000)])
    assert bomb.stat().st_size < 1000  # compresses to almost nothing
    with pytest.raises(CmaxError, match="size limit"), open_bundle(bomb):
        pass


def test_corrupt_or_cut_zstd_is_one_clear_error(tmp_path: Path) -> None:
    good = _tar_zst(tmp_path / "good.tar.zst", _good_members()).read_bytes()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0xFF
    cases = {"flipped.tar.zst": bytes(flipped), "cut.tar.zst": good[: len(good) - 9],
             "garbage.tar.zst": cmax.submission.bundle.ZSTD_MAGIC + b"\0" * 64}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(CmaxError, match="corrupt bundle archive") as info, open_bundle(path):
            pass
        assert name in str(info.value)


def test_zstd_window_beyond_the_limit_is_refused(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmax.submission.bundle, "ZSTD_MAX_WINDOW", 1 << 10)
    archive = _tar_zst(tmp_path / "w.tar.zst", [*_good_members(), _file("a.bin", b"ab" * 9000)])
    with pytest.raises(CmaxError, match="corrupt bundle archive"), open_bundle(archive):
        pass


# every way a tar can declare a sparse member (GNU header; PAX formats 0.0, 0.1 and 1.0, whose
# map sits in the member's data and was read number by number: a 58 KB archive took 71 s)
SPARSE_PAX = {
    "0.0": {"GNU.sparse.size": "100", "GNU.sparse.numblocks": "0"},
    "0.1": {"GNU.sparse.map": "0,1", "GNU.sparse.size": "100", "GNU.sparse.numblocks": "1"},
    "1.0": {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "s.bin",
            "GNU.sparse.realsize": "100"},
}


@pytest.mark.parametrize("container", ["tgz", "tar.zst"])
@pytest.mark.parametrize("version", list(SPARSE_PAX))
def test_a_pax_sparse_member_is_refused_before_its_map_is_read(
        tmp_path: Path, container: str, version: str) -> None:
    from tests.submission.test_bundle import _tar

    info = tarfile.TarInfo("s.bin")
    info.pax_headers = SPARSE_PAX[version]
    members = [*_good_members(), (info, b"%d\n" % 10**12 + b"1\n" * 5000)]
    make = _tar if container == "tgz" else _tar_zst
    archive = make(tmp_path / f"s.{container}", members)
    with pytest.raises(CmaxError, match=r"'s\.bin' is a sparse file"), open_bundle(archive):
        pass


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE,
                                  tarfile.GNUTYPE_SPARSE])
def test_tar_zst_headers_are_bounded_like_tar_gz(tmp_path: Path, kind: bytes) -> None:
    """The zstd stream goes through the same bounded tar header: a 16 GiB long name or PAX
    record set is refused before it is read, a sparse member before its map."""
    info = tarfile.TarInfo("././@LongLink" if kind != tarfile.GNUTYPE_SPARSE else "sp.bin")
    info.type = kind
    info.size = 16 * 1024**3 if kind != tarfile.GNUTYPE_SPARSE else 0
    archive = tmp_path / "h.tar.zst"
    archive.write_bytes(zstandard.ZstdCompressor().compress(
        info.tobuf(tarfile.GNU_FORMAT) + b"a" * 4096))
    match = "sparse file" if kind == tarfile.GNUTYPE_SPARSE else "extended header of"
    with pytest.raises(CmaxError, match=match), open_bundle(archive):
        pass


def zero_frame(gib: float) -> bytes:
    """A zstd frame of ``gib`` GiB of zeros written as RLE blocks of 128 KiB: 4 bytes a block,
    so 64 GiB is a 2 MiB frame (RFC 8878 3.1.1: frame header without content size, window
    descriptor 2^17; block header = size << 3 | RLE << 1 | last)."""
    blocks = int(gib * (1 << 30)) >> 17
    header = b"\x28\xb5\x2f\xfd" + b"\x00" + bytes([7 << 3])
    block = ((1 << 17) << 3 | 1 << 1).to_bytes(3, "little") + b"\0"
    last = ((1 << 17) << 3 | 1 << 1 | 1).to_bytes(3, "little") + b"\0"
    return header + block * (blocks - 1) + last


def test_the_frame_generator_writes_what_zstd_reads() -> None:
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(zero_frame(1 / 256)))
    data = reader.read(8 << 20)
    assert len(data) == 4 << 20 and not any(data)


def test_bytes_decompressed_after_the_tar_ends_count_against_the_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: a valid .tar.zst followed by a 64 GiB frame of zeros (2 MB) was read to its
    end, against no budget, and the bundle accepted. Here the budget is 1 MiB + 100 x the
    archive and the trailing frame 64 MiB; the same bundle without the frame opens."""
    monkeypatch.setattr(cmax.submission.bundle, "ARCHIVE_FREE_BYTES", 1 << 20)
    archive = _tar_zst(tmp_path / "b.tar.zst", _good_members())
    with open_bundle(archive):
        pass
    archive.write_bytes(archive.read_bytes() + zero_frame(1 / 16))
    with pytest.raises(CmaxError, match="compression bomb"), open_bundle(archive):
        pass
