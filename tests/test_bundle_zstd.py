"""zstd bundles (what ``llmb-run archive`` writes: ``tarfile`` in ``w|`` mode into a
``zstandard`` stream, NVIDIA/exemplar-performance:cli/llmb-run/src/llmb_run/archive.py@e249aa3)
open like any other archive and are held to the same bounds."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
import zstandard

import cmax.bundle
from cmax.bundle import open_bundle
from cmax.errors import CmaxError
from tests.test_bundle import _file, _good_members


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
    monkeypatch.setattr(cmax.bundle, "MAX_BUNDLE_BYTES", 1000)
    bomb = _tar_zst(tmp_path / "bomb.tar.zst", [*_good_members(), _file("z.bin", b"\0" * 50_000)])
    assert bomb.stat().st_size < 1000  # compresses to almost nothing
    with pytest.raises(CmaxError, match="size limit"), open_bundle(bomb):
        pass


def test_corrupt_or_cut_zstd_is_one_clear_error(tmp_path: Path) -> None:
    good = _tar_zst(tmp_path / "good.tar.zst", _good_members()).read_bytes()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0xFF
    cases = {"flipped.tar.zst": bytes(flipped), "cut.tar.zst": good[: len(good) - 9],
             "garbage.tar.zst": cmax.bundle.ZSTD_MAGIC + b"\0" * 64}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(CmaxError, match="corrupt bundle archive") as info, open_bundle(path):
            pass
        assert name in str(info.value)


def test_zstd_window_beyond_the_limit_is_refused(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmax.bundle, "ZSTD_MAX_WINDOW", 1 << 10)
    archive = _tar_zst(tmp_path / "w.tar.zst", [*_good_members(), _file("a.bin", b"ab" * 9000)])
    with pytest.raises(CmaxError, match="corrupt bundle archive"), open_bundle(archive):
        pass
