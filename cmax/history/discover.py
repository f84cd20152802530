"""Find the audit runs under a runs root: ``<root>/<cluster>/<timestamp>/``.

This is the layout ClusterMAX's own runner uses when ``CLUSTERMAX_RUNS_ROOT`` is set
(``<root>/<slug>/<timestamp>/audit/``), so an auditor can drop a ``cmax.toml`` next to the
``audit/`` folder ClusterMAX wrote and the same tree serves both tools. Each run is a bundle:
a folder holding ``cmax.toml``, or a ``<timestamp>.tar.gz`` / ``.tgz`` / ``.tar`` / ``.zip``.

The timestamp folder name is the run's identity and its place on the time axis, so it must
parse: ClusterMAX writes ``%Y%m%d-%H%M%S-%f`` (runner) or ``%Y%m%d-%H%M%S`` (``run.sh``);
ISO dates (``2026-10-01``, ``2026-10-01T12:00:00Z``) and months (``2026-10``) are accepted too.
All are read as UTC, as ClusterMAX writes them.

A run is identified by cluster + folder name + a digest of the bundle's bytes. The digest
makes re-running idempotent and also makes evidence edited after it was recorded visible.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cmax.errors import HistoryError
from cmax.submission.manifest import MANIFEST_NAME

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar", ".zip")

TIMESTAMP_FORMATS_HELP = (
    "a UTC timestamp such as 20260824-140519-482113, 20260824-140519, 2026-08-24, "
    "2026-08-24T14:05:19Z or 2026-08"
)

_COMPACT = re.compile(
    r"(\d{4})(\d{2})(\d{2})(?:[-_T](\d{2})(\d{2})(\d{2})(?:[-.](\d{1,6}))?)?Z?"
)
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T_ ](\d{2})[:-]?(\d{2})(?:[:-]?(\d{2})(?:\.(\d{1,6}))?)?)?"
    r"(?:Z|[+-]00:?00)?"
)
_MONTH = re.compile(r"(\d{4})-(\d{2})")


def parse_run_timestamp(name: str) -> dt.datetime | None:
    """The UTC time a run folder's name encodes, or None when it is not a timestamp."""
    for pattern in (_COMPACT, _ISO, _MONTH):
        match = pattern.fullmatch(name)
        if match is None:
            continue
        parts = [g for g in match.groups()]
        year, month = int(parts[0]), int(parts[1])
        day = int(parts[2]) if len(parts) > 2 and parts[2] else 1
        hour, minute, second, micro = 0, 0, 0, 0
        if len(parts) > 3 and parts[3] is not None:
            hour, minute = int(parts[3]), int(parts[4])
            second = int(parts[5]) if parts[5] else 0
            micro = int(parts[6].ljust(6, "0")) if parts[6] else 0
        try:
            return dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=dt.UTC)
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class RunRef:
    """One run found under the root, before it is scored."""

    cluster: str
    run_dir: str
    timestamp: dt.datetime
    path: Path
    digest: str

    @property
    def run_key(self) -> str:
        """Stable identity: same cluster, same folder, same bytes -> same key."""
        text = f"{self.cluster}\0{self.run_dir}\0{self.digest}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Unusable:
    """A run that cannot be scored, with the one-line reason the user sees.

    ``fatal`` is False for stray files that do not look like runs at all (a README beside the
    cluster folders): they are listed, but do not make the audit fail.
    """

    path: Path
    error: str
    fatal: bool = True


def _file_digest(path: Path, into: hashlib._Hash) -> None:
    if not path.is_file():  # a named pipe or device: opening it blocks (ingest refuses it)
        into.update(b"special\0")
        return
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            into.update(chunk)


def _walk(folder: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            yield Path(dirpath) / name
        # symlinked folders are not descended into; record them as links below
        for name in dirnames:
            if (Path(dirpath) / name).is_symlink():
                yield Path(dirpath) / name


def bundle_digest(path: Path) -> str:
    """sha256 over a bundle's content: every file's relative path, link target and bytes."""
    outer = hashlib.sha256()
    try:
        if path.is_file():
            outer.update(b"archive\0")
            _file_digest(path, outer)
            return outer.hexdigest()
        for file in _walk(path):
            rel = file.relative_to(path).as_posix()
            outer.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            if file.is_symlink():
                outer.update(b"link\0" + os.readlink(file).encode("utf-8", "surrogateescape"))
            else:
                inner = hashlib.sha256()
                _file_digest(file, inner)
                outer.update(inner.digest())
            outer.update(b"\n")
    except OSError as exc:
        raise HistoryError(f"cannot read run: {exc.strerror or exc}", file=path,
                        fix="check the file permissions under the runs root") from None
    return outer.hexdigest()


def _run_name(entry: Path) -> str | None:
    if entry.is_dir():
        return entry.name
    lower = entry.name.lower()
    for suffix in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            return entry.name[: -len(suffix)]
    return None


def _missing_manifest(entry: Path) -> str | None:
    """Why a run folder is not a bundle, in words that say how to make it one."""
    if not entry.is_dir() or (entry / MANIFEST_NAME).is_file():
        return None
    children = [p for p in entry.iterdir() if not p.name.startswith(".")]
    if len(children) == 1 and (children[0] / MANIFEST_NAME).is_file():
        return None
    if (entry / "audit" / "audit.values.json").is_file():
        return (f"ClusterMAX audit output without a {MANIFEST_NAME}; fix: add a {MANIFEST_NAME} "
                "to this run folder with [audit] path = \"audit/audit.values.json\"")
    return f"no {MANIFEST_NAME} in this run folder; fix: every run folder must be a bundle"


def discover_runs(root: Path, *, exclude: Path | None = None,
                  ) -> tuple[list[RunRef], list[Unusable]]:
    """Every run under ``root`` in (cluster, time) order, and the entries that are not runs.

    ``exclude`` is the history folder when it lives inside the root under a visible name.
    """
    if not root.exists():
        raise HistoryError("runs root not found", file=root,
                        expected="a folder laid out as <root>/<cluster>/<timestamp>/")
    if not root.is_dir():
        raise HistoryError("runs root is not a folder", file=root,
                        expected="a folder laid out as <root>/<cluster>/<timestamp>/")
    runs: list[RunRef] = []
    unusable: list[Unusable] = []
    try:
        skip = exclude.resolve() if exclude is not None else None
        clusters = sorted(p for p in root.iterdir()
                          if not p.name.startswith(".") and p.resolve() != skip)
    except OSError as exc:
        raise HistoryError(f"cannot list runs root: {exc.strerror}", file=root) from None
    for cluster_dir in clusters:
        if not cluster_dir.is_dir():
            unusable.append(Unusable(cluster_dir, "ignored: not a cluster folder; expected "
                                     "<root>/<cluster>/<timestamp>/", fatal=False))
            continue
        if (cluster_dir / MANIFEST_NAME).is_file():
            # a run one level too high: its nccl/, training/ would each be called a bad run
            unusable.append(Unusable(cluster_dir, f"a bundle ({MANIFEST_NAME}) where a cluster "
                                     "folder belongs; fix: move it to "
                                     f"{root}/<cluster>/{cluster_dir.name}/"))
            continue
        seen: dict[str, Path] = {}
        for entry in sorted(p for p in cluster_dir.iterdir() if not p.name.startswith(".")):
            name = _run_name(entry)
            if name is None:
                unusable.append(Unusable(entry, "ignored: not a run; expected a <timestamp>/ "
                                         "folder or a <timestamp>.tar.gz / .zip bundle",
                                         fatal=False))
                continue
            stamp = parse_run_timestamp(name)
            if stamp is None:
                unusable.append(Unusable(entry, f"run name {name!r} is not a timestamp "
                                         f"(expected {TIMESTAMP_FORMATS_HELP}); rename it"))
                continue
            if name in seen:
                unusable.append(Unusable(entry, f"run {name!r} exists twice in "
                                         f"{cluster_dir.name} (also {seen[name].name}); "
                                         "keep one"))
                continue
            seen[name] = entry
            reason = _missing_manifest(entry)
            if reason is not None:
                unusable.append(Unusable(entry, reason))
                continue
            runs.append(RunRef(cluster=cluster_dir.name, run_dir=name, timestamp=stamp,
                               path=entry, digest=bundle_digest(entry)))
    runs.sort(key=lambda r: (r.cluster, r.timestamp, r.run_dir))
    return runs, unusable
