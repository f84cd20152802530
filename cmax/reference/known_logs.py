"""Public evidence cmax already knows: fingerprints of the logs and sweeps it ships.

A file anyone can copy from cmax, or from the public sources cmax's test data cites, measures
nothing of a provider's cluster. ``known_logs.json`` of a release holds, for each such file,
what identifies a copy of it (never the file itself):

- ``logs``: each sample bundle's training log (``samples/``, public in the wheel): the bundle's
  provider and cluster, the log's path and its first post-warm-up iterations, step times and
  losses (written from the samples by ``python tools/write_known_logs.py``, which a test keeps
  in step);
- ``sweeps``: each nccl-tests output published by others that cmax's test data copies verbatim
  (``tests/data/nccl/SOURCES.md``): its owner, the public source (repository, path and commit),
  the collective and every printed row (size, in place or not, time in us).

Only public evidence is fingerprinted: the synthetic fixtures of the test suite are not (their
numbers were written for the tests, and the suite declares them under other names).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError

FILE = "known_logs.json"
REGENERATE = "python tools/write_known_logs.py"


@dataclass(frozen=True)
class KnownLog:
    """A shipped training log: whose it is and its steady steps."""

    owner: str
    cluster: str
    path: str
    iteration: tuple[int, ...]
    step_time_s: tuple[float, ...]
    loss: tuple[float, ...]


@dataclass(frozen=True)
class KnownSweep:
    """A published nccl-tests output: whose it is, where it was published, its printed rows
    as (size in bytes, in place, time in us)."""

    owner: str
    source: str
    path: str
    collective: str
    rows: tuple[tuple[int, bool, float], ...]


@dataclass(frozen=True, eq=False)
class KnownEvidence:
    """Every fingerprint of a release (empty for a release without the index); compared and
    hashed by identity, as one release's index is loaded once."""

    logs: tuple[KnownLog, ...] = ()
    sweeps: tuple[KnownSweep, ...] = ()


def _bad(path: Path, what: str) -> ReferenceDataError:
    return ReferenceDataError(f"known-evidence index: {what}", file=path,
                              expected="the index tools/write_known_logs.py writes",
                              fix=f"regenerate it with `{REGENERATE}`")


def _log(entry: dict[str, Any], path: Path) -> KnownLog:
    try:
        return KnownLog(str(entry["owner"]), str(entry.get("cluster") or ""), str(entry["path"]),
                        tuple(int(i) for i in entry["iteration"]),
                        tuple(float(t) for t in entry["step_time_s"]),
                        tuple(float(x) for x in entry["loss"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(path, f"a log entry lacks or misstates {exc}") from None


def _sweep(entry: dict[str, Any], path: Path) -> KnownSweep:
    try:
        rows = tuple((int(size), bool(in_place), float(time))
                     for size, in_place, time in entry["rows"])
        return KnownSweep(str(entry["owner"]), str(entry["source"]), str(entry["path"]),
                          str(entry["collective"]), rows)
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(path, f"a sweep entry lacks or misstates {exc}") from None


@functools.lru_cache(maxsize=8)
def load_known_logs(directory: Path) -> KnownEvidence:
    """The fingerprints of a reference release folder (checked by its SHA256SUMS)."""
    path = directory / FILE
    if not path.is_file():
        return KnownEvidence()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _bad(path, f"unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise _bad(path, "not a JSON object")
    return KnownEvidence(tuple(_log(e, path) for e in data.get("logs") or []),
                         tuple(_sweep(e, path) for e in data.get("sweeps") or []))
