"""A device, named pipe or socket anywhere in a bundle folder or a folder of llmb-run
packages is one error before anything is copied or read (issue 39: a /dev/zero clone in a
sub-folder of a package folder was copied, 2 GiB written to TMPDIR in 18 s; a named pipe
there exited 70)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from cmax.cli import main
from tests.paths import SAMPLES
from tests.submission.intake.llmb_fakes import Job, archive


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def _zero_device(path: Path) -> None:
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pytest.skip("no permission to make a device node here")


MAKERS: dict[str, Callable[[Path], None]] = {"pipe": _fifo, "socket": _socket,
                                             "device": _zero_device}


def _package_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "handover"
    folder.mkdir()
    archive(folder / "llmb-archive_26.08.00_20261101T120000Z.tar.zst", [Job()],
            staging=tmp_path / "stage")
    (folder / "nccl").mkdir()
    return folder


def _sample_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    shutil.copytree(SAMPLES / "aurora-compute", folder)
    return folder


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("build", [_package_folder, _sample_folder])
def test_a_special_file_in_a_sub_folder_is_one_error_before_any_copy(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
        build: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = build(tmp_path)
    MAKERS[kind](folder / "nccl" / "extra.txt")
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    assert main(["validate", str(folder)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "'nccl/extra.txt' is not a regular file (a device, named pipe or socket)" in err
    assert list(temp.iterdir()) == []  # refused before the package was unpacked


def test_the_package_copy_refuses_a_special_file_put_in_place_after_the_walk(
        tmp_path: Path) -> None:
    """The copy of a package folder's other files opens each without blocking and copies
    only a regular file: a pipe swapped in after the folder was checked is refused too."""
    import cmax.submission.bundle
    from cmax.errors import BundleError

    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(BundleError, match="not a regular file"):
        cmax.submission.bundle._copy_regular(str(tmp_path / "pipe"), str(tmp_path / "copy"))
    assert not (tmp_path / "copy").exists()
