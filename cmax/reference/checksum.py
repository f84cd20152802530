"""SHA-256 guard over the reference data files.

A scorecard is only defensible if the numbers it was judged against are the released ones; a
hand-edited CSV would silently change every verdict. ``SHA256SUMS`` (``sha256sum`` format)
lists every file the reference loader reads; the loader refuses to run on a mismatch. After a
deliberate edit, regenerate it with ``python -m cmax.reference.checksum --write`` (and bump
``release.toml``). ``rubric.toml`` is not covered: the scoring rubric is owned and checked by
the scoring stage.

The *release digest* (:func:`release_digest`) covers every data file of the folder, the rubric,
the drift policy and the seed included: the test suite pins one digest per release id
(``tests/reference/test_release_pins.py``), so data that changes without a new id in
``release.toml`` fails the suite even where the loader does not read the file.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from cmax.errors import CmaxError, ReferenceDataError

SUMS_FILE = "SHA256SUMS"
# Every file the reference loader reads (the rubric belongs to the scoring stage).
GUARDED_FILES = (
    "release.toml",
    "baselines.csv",
    "gpus.toml",
    "models.toml",
    "conventions.toml",
    "network.toml",
    "exemplar.toml",
    "reliability.toml",
    "llama3_interruptions.csv",
    "economics.toml",
    "inference.csv",
    "mlperf_nvidia.csv",
    "mlperf_rcp.json",
    "known_logs.json",
)

REGENERATE = "python -m cmax.reference.checksum --write"
# The data files the release digest covers, at any depth of the reference folder.
DATA_SUFFIXES = (".csv", ".toml", ".json")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def compute_checksums(directory: Path) -> dict[str, str]:
    missing = [name for name in GUARDED_FILES if not (directory / name).is_file()]
    if missing:
        raise ReferenceDataError(
            f"reference data is incomplete: missing {', '.join(missing)}",
            file=directory, fix="reinstall cmax-rating or restore the reference/ folder",
        )
    return {name: file_sha256(directory / name) for name in GUARDED_FILES}


def read_checksums(directory: Path) -> dict[str, str]:
    path = directory / SUMS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReferenceDataError(
            "the reference checksum file is missing", file=path,
            fix=f"regenerate it with `{REGENERATE}` if the data is intended",
        ) from exc
    sums: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ReferenceDataError(
                "malformed checksum line", file=path, line=number,
                expected="'<64 hex digits>  <file name>'", fix=f"regenerate with `{REGENERATE}`",
            )
        sums[name.strip()] = digest.lower()
    return sums


def verify_checksums(directory: Path) -> None:
    """Raise ReferenceDataError naming the first file whose content differs from SHA256SUMS."""
    expected = read_checksums(directory)
    actual = compute_checksums(directory)
    for name in GUARDED_FILES:
        if name not in expected:
            raise ReferenceDataError(
                f"reference file {name} is not listed in {SUMS_FILE}",
                file=directory / SUMS_FILE, fix=f"regenerate with `{REGENERATE}`",
            )
        if expected[name] != actual[name]:
            raise ReferenceDataError(
                "reference data was modified after its release (checksum mismatch)",
                file=directory / name,
                expected=f"sha256 {expected[name][:12]}… from {SUMS_FILE}",
                fix=f"restore the released file, or if the change is intended bump release.toml "
                    f"and run `{REGENERATE}` (or tools/build_reference.py)",
            )


def release_digest(directory: Path) -> str:
    """One SHA-256 over every data file of the folder (name and content, sorted by path).

    ``SHA256SUMS`` guards what the loader reads at run time; this digest is what a release id
    stands for, so a changed rubric or seed row is a new release too.
    """
    digest = hashlib.sha256()
    files = sorted(p for p in directory.rglob("*")
                   if p.is_file() and p.suffix in DATA_SUFFIXES)
    for path in files:
        digest.update(f"{path.relative_to(directory).as_posix()}  {file_sha256(path)}\n".encode())
    return digest.hexdigest()


def write_checksums(directory: Path) -> Path:
    sums = compute_checksums(directory)
    path = directory / SUMS_FILE
    lines = [f"{digest}  {name}" for name, digest in sums.items()]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    import argparse  # the command line only: the loader imports this module at every start

    from cmax.resources import data_dir

    parser = argparse.ArgumentParser(
        prog="python -m cmax.reference.checksum",
        description="Verify (default) or rewrite (--write) reference/SHA256SUMS.",
    )
    parser.add_argument("--write", action="store_true", help="rewrite SHA256SUMS from the files")
    parser.add_argument("--dir", type=Path, default=None, help="reference folder (default: cmax's)")
    args = parser.parse_args(argv)
    directory = args.dir or data_dir("reference")
    try:
        if args.write:
            print(f"wrote {write_checksums(directory)}")
        else:
            verify_checksums(directory)
            print(f"{directory}: all {len(GUARDED_FILES)} reference files match {SUMS_FILE}")
        print(f"release digest {release_digest(directory)}")
    except CmaxError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
