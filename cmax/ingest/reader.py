"""Reading a bundle's files once each: identify, check the format plays the role its manifest
key needs, parse, and record the file (digest, format, facts, line count) as an
:class:`~cmax.ingest.evidence.EvidenceFile`, with every error re-keyed to the manifest key.

Ingest (:mod:`cmax.ingest.assemble`) and the ``[[nccl]]`` folder reader
(:mod:`cmax.ingest.network_files`) share one reader per bundle, so a file named twice is
recorded once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cmax.errors import CmaxError, EvidenceFormatError
from cmax.ingest.evidence import EvidenceFile
from cmax.ingest.facts import Fact
from cmax.ingest.formats import Format, Probe, identify
from cmax.reading.limits import digest_lines
from cmax.submission.bundle import Bundle


class BundleReader:
    """Per-bundle state: evidence files recorded once each, errors re-keyed to the manifest."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.files: dict[str, EvidenceFile] = {}
        #: digests taken before parsing, with the line bound checked on the same pass
        self.digests: dict[str, str] = {}

    def rel(self, path: Path) -> str:
        return self.bundle.display(path)

    def record(self, path: Path, kind: str, facts: tuple[Fact, ...] = (), *,
               line_count: int | None = None) -> str:
        """Record ``path`` (once) with its digest, format, facts and line count."""
        rel = self.rel(path)
        if rel not in self.files:
            digest = self.digests.get(rel) or digest_lines(path, lines=False)
            self.files[rel] = EvidenceFile(path=rel, kind=kind, sha256=digest,
                                           size_bytes=path.stat().st_size, facts=tuple(facts),
                                           line_count=line_count)
        return rel

    def read(self, path: Path, role: type[Any], what: str) -> tuple[Any, Any, str]:
        """Identify ``path``, check its format has ``role``, parse and record it.

        Returns the format, the parsed object and the bundle-relative path. (``role`` is an
        abstract base class, which a ``type[T]`` parameter cannot take under mypy.)
        """
        try:
            fmt, probe = identify(path)
        except EvidenceFormatError as exc:
            raise exc.with_context(expected=what) from None
        checked = _expect(probe, fmt, role, what)
        rel = self.rel(probe.path)
        if rel not in self.digests:  # before any reader holds a line (cmax.reading.limits)
            # a JSON document is read whole within MAX_JSON_BYTES, not line by line: its one
            # line (a Prometheus answer, a benchmark's result) may be longer than a log's may
            lines = not probe.is_sqlite and not probe.has_json
            self.digests[rel] = digest_lines(probe.path, lines=lines)
        parsed = checked.parse(probe)
        rel = self.record(probe.path, checked.id, checked.facts(parsed),
                          line_count=checked.line_count(parsed, probe))
        return checked, parsed, rel

    @contextmanager
    def key(self, key: str) -> Iterator[None]:
        """Errors inside name the manifest key and the bundle-relative file.

        The error keeps its class, ``line`` and ``fix`` (:meth:`CmaxError.with_context`).
        """
        try:
            yield
        except CmaxError as exc:
            file = exc.file
            root = self.bundle.root.resolve()
            if file is not None and Path(file).resolve().is_relative_to(root):
                file = Path(file).resolve().relative_to(root).as_posix()
            field = exc.field or key
            if exc.field and not exc.field.startswith(key.split(".")[0].split("[")[0]):
                field = f"{key} ({exc.field})"
            raise exc.with_context(file=file, field=field) from None


def _expect(probe: Probe, fmt: Format[Any], role: type[Any], what: str) -> Format[Any]:
    """``fmt`` if it plays ``role``; else an error saying what the key needs."""
    plays = isinstance(fmt, role)  # (kept out of the `if`: mypy would narrow fmt to Any)
    if plays:
        return fmt
    raise EvidenceFormatError(f"file holds {fmt.id}, not {what}", file=probe.path,
                              expected=what, fix="check the manifest points at the right file")
