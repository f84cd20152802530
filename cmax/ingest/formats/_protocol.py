"""The format protocol and the registry it fills, apart from the registry's lookups.

Every format module imports what it needs from here (:class:`Format` and the base class of its
role, :class:`Probe`, :func:`register`), never from the package :mod:`cmax.ingest.formats`:
the package imports format modules by the names their declarations give
(:func:`cmax.ingest.formats.by_id`), and a format module importing the package back would make
every format one import cycle with it. This module imports no format module, so the registry's
imports point one way: package -> format module -> this module. See the package's docstring
for the protocol itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._declarations import DECLARATIONS, SQLITE_MAGIC, Declaration, Marker, Role
from cmax.reading.limits import MAX_JSON_BYTES, load_json, read_bounded_text

if TYPE_CHECKING:
    import polars as pl

    from cmax.submission.manifest import RunSpec

#: the package the shipped formats' modules are in (a declaration names one by its last part)
PACKAGE = __name__.rpartition(".")[0]

P = TypeVar("P")

HEAD_BYTES = 1 << 16
_NO_JSON: Any = object()


class Probe:
    """One evidence file opened for detection; caches what several sniffers and the parser share.

    Opening refuses what no format can be (a folder, a named pipe that would block, a missing
    or empty file) with an :class:`~cmax.errors.EvidenceError` naming the file.
    """

    def __init__(self, path: Path) -> None:
        path = Path(path)
        if path.is_dir():
            raise EvidenceError(
                "is a directory", file=path,
                expected="a single evidence file (an MLPerf results folder only where the "
                "manifest or `cmax inspect` accepts one)")
        if path.exists() and not path.is_file():
            # opening a named pipe blocks until someone writes to it: cmax would hang
            raise EvidenceError("not a regular file (a named pipe, socket or device)", file=path,
                                expected="an evidence file", fix="copy the evidence into a "
                                "plain file")
        try:
            with path.open("rb") as fh:
                head = fh.read(HEAD_BYTES)
        except FileNotFoundError:
            raise EvidenceError("file not found", file=path) from None
        except OSError as exc:
            raise EvidenceError(f"cannot read file: {exc.strerror}", file=path) from None
        if not head:
            raise EvidenceError("file is empty", file=path,
                                expected="evidence from a benchmark run")
        self.path = path
        self.head = head
        self.size = path.stat().st_size
        #: why a near-miss sniffer said no ("an SQLite database without a jobs table"): the
        #: unknown-format error quotes the first one
        self.why: list[str] = []

    @cached_property
    def head_text(self) -> str:
        """The head decoded (a BOM dropped, bad bytes replaced), leading blanks stripped."""
        return self.head.decode("utf-8-sig", errors="replace").lstrip()

    @cached_property
    def first_line(self) -> str:
        """The first non-blank line of the file (a CSV header, for instance)."""
        text = self.head_text
        return text.splitlines()[0] if text else ""

    @property
    def is_sqlite(self) -> bool:
        return self.head.startswith(SQLITE_MAGIC)

    @cached_property
    def text(self) -> str:
        """The whole file as UTF-8 text (BOM dropped); for JSON and CSV formats, not for logs."""
        try:
            return read_bounded_text(self.path)
        except UnicodeDecodeError as exc:
            raise EvidenceError(f"file is not UTF-8 text (at byte {exc.start:,})",
                                file=self.path) from None

    @cached_property
    def json(self) -> Any:
        """The parsed JSON document, or ``_NO_JSON`` when the file does not hold one.

        Only files whose head starts with ``{`` or ``[`` and of at most ``MAX_JSON_BYTES``
        are parsed; :attr:`json_problem` then says why a file that looked like JSON is not.
        """
        if self.head_text[:1] not in ("{", "["):
            return _NO_JSON
        if self.size > MAX_JSON_BYTES:
            self.json_problem = (f"a JSON document of {self.size:,} bytes, over cmax's limit of "
                                 f"{MAX_JSON_BYTES >> 20} MiB")
            return _NO_JSON
        try:
            text = self.text
        except EvidenceError as exc:  # not UTF-8
            self.json_problem = f"invalid JSON ({exc.message})"
            return _NO_JSON
        try:
            # bounded depth and digits (cmax.reading.limits): past them is its own EvidenceError
            return load_json(text, file=self.path)
        except ValueError as exc:
            self.json_problem = f"invalid JSON ({exc})"
            return _NO_JSON

    json_problem: str = ""

    def count_lines(self) -> int:
        """Lines in the file as an editor numbers them (a last line without newline counts)."""
        if "text" in self.__dict__:  # already read whole: count in memory
            text: str = self.__dict__["text"]
            return text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        count, last = 0, b""
        with self.path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                count += chunk.count(b"\n")
                last = chunk
        return count + (1 if last and not last.endswith(b"\n") else 0)

    @property
    def has_json(self) -> bool:
        return self.json is not _NO_JSON

    def require_json(self, what: str) -> Any:
        """The JSON document, or an error naming ``what`` was expected."""
        if not self.has_json:
            raise EvidenceError(self.json_problem or "not a JSON document", file=self.path,
                                expected=what)
        return self.json


@dataclass(frozen=True)
class RunRequest:
    """What a run-role format needs to turn its parsed file into a ``runs`` row."""

    spec: RunSpec
    run_id: str
    source_file: str  # bundle-relative path for the tables
    path: Path
    key: str  # manifest key, e.g. ``runs[0].log``
    declared: dict[str, Any]  # the parallel config the manifest declares (CONFIG_KEYS)


@dataclass
class RunPart:
    """A run-role format's contribution: ``runs`` row values, per-step rows, notes."""

    row: dict[str, Any]
    steps: pl.DataFrame | None = None
    notes: list[str] = field(default_factory=list)


class Format(ABC, Generic[P]):
    """One evidence format: identity, how it is recognised, how it is read and summarised."""

    id: str
    title: str  # what it is, for people
    role: Role
    tool: str  # which tool writes it, with the source the parser follows
    sample: str  # its test data, relative to tests/data/

    @property
    def home(self) -> str:
        """The module that holds this format (parser and registration)."""
        return type(self).__module__

    @property
    def declaration(self) -> Declaration:
        """What detection knows of this format without importing it (its declaration)."""
        return _DECLARED[self.id]

    @property
    def priority(self) -> int:
        return self.declaration.priority

    @property
    def markers(self) -> tuple[Marker, ...]:
        return self.declaration.markers

    #: a JSON format's test on the parsed document (wrap it in ``staticmethod``); the default
    #: :meth:`sniff` applies it to ``probe.json``
    json_shape: Callable[[Any], bool] | None = None

    def sniff(self, probe: Probe) -> bool:
        """Structural recognition from the head (magic, JSON shape, CSV header)."""
        shape = self.json_shape
        return shape is not None and probe.has_json and shape(probe.json)

    @abstractmethod
    def parse(self, probe: Probe) -> P:
        """Read the file; bad content raises an :class:`~cmax.errors.EvidenceError`."""

    @abstractmethod
    def summarise(self, parsed: P, probe: Probe) -> dict[str, Any]:
        """The ``cmax inspect`` summary: JSON-serialisable, no NaN or inf."""

    def facts(self, parsed: P) -> tuple[Fact, ...]:
        """Identity facts the file states about itself (parsers that record them keep them
        on the parsed object as ``facts``)."""
        return recorded_facts(parsed)

    def line_count(self, parsed: P, probe: Probe) -> int | None:
        """Lines in the file: the parser's own count where it keeps one (``line_count``);
        else counted here for every text format but the run logs, which can be gigabytes and
        whose parsers count while they stream (a second pass would double their I/O); None
        for binary formats."""
        count = getattr(parsed, "line_count", None)
        if isinstance(count, int):
            return count
        if probe.is_sqlite or (self.role == "run" and self.markers):
            return None
        return probe.count_lines()


def recorded_facts(parsed: object) -> tuple[Fact, ...]:
    """The facts a parser kept on its result: a ``facts`` attribute, or a ``facts()`` method."""
    facts = getattr(parsed, "facts", ())
    if callable(facts):
        facts = facts()
    return tuple(facts or ())


class RunFormat(Format[P]):
    """A training run's log or a run summary: fills one ``runs`` row (and ``steps``)."""

    role: Role = "run"

    @abstractmethod
    def read_run(self, parsed: P, request: RunRequest) -> RunPart:
        """The run's row values, its per-step rows if the format has them, and notes."""


class NcclFormat(Format[P]):
    """Collective-bandwidth measurements: rows of the ``nccl`` table."""

    role: Role = "nccl"

    @abstractmethod
    def frame(self, parsed: P, *, run_id: str, source_file: str, path: Path) -> pl.DataFrame:
        """Rows in :data:`cmax.ingest.evidence.NCCL_SCHEMA` (missing columns may be left out)."""

    def node_health(self, parsed: P, *, source_file: str) -> pl.DataFrame | None:
        """Rows in :data:`cmax.ingest.evidence.NODE_HEALTH_SCHEMA` the measurement also yields
        (nccl-tests JSON: per-process times by host); None when it yields none."""
        return None


class NodeHealthFormat(Format[P]):
    """Per-node health evidence beside the network tests (dcgmi diag): ``node_health`` rows."""

    role: Role = "node-health"

    @abstractmethod
    def node_health(self, parsed: P, *, source_file: str) -> pl.DataFrame:
        """Rows in :data:`cmax.ingest.evidence.NODE_HEALTH_SCHEMA`."""


class IncidentFormat(Format[P]):
    """An incident log: rows of the ``incidents`` table."""

    role: Role = "incidents"

    @abstractmethod
    def frame(self, parsed: P, *, source_file: str) -> pl.DataFrame:
        """Rows in :data:`cmax.ingest.evidence.INCIDENTS_SCHEMA`."""


class AuditFormat(Format[P]):
    """A cluster audit: rows of the ``audit_checks`` table and the cluster's name."""

    role: Role = "audit"

    @abstractmethod
    def checks(self, parsed: P, *, source_file: str) -> tuple[list[dict[str, Any]], str | None]:
        """Rows in :data:`cmax.ingest.evidence.AUDIT_SCHEMA` and the audited cluster's name."""


class InferenceFormat(Format[P]):
    """A serving benchmark's result file: rows of the ``inference`` table."""

    role: Role = "inference"
    #: False for a format whose files never say how the load was paced (AIPerf's CSV): ingest
    #: then takes the ``[[inference]]`` entry's ``concurrency``, a declaration, and refuses an
    #: entry that states none (an unpaced row would read as an offline maximum)
    records_load: bool = True

    @abstractmethod
    def frame(self, parsed: P, *, run_id: str, source_file: str) -> pl.DataFrame:
        """Rows in :data:`cmax.ingest.evidence.INFERENCE_SCHEMA` (missing columns may be left
        out)."""


class AccountingFormat(Format[P]):
    """Scheduler accounting: rows of the ``jobs`` table (each job's clock and hosts)."""

    role: Role = "accounting"

    @abstractmethod
    def frame(self, parsed: P, *, source_file: str) -> pl.DataFrame:
        """Rows in :data:`cmax.ingest.evidence.JOBS_SCHEMA`."""


class PowerFormat(Format[P]):
    """GPU power telemetry over time: rows of the ``power`` table."""

    role: Role = "power"

    @abstractmethod
    def frame(self, parsed: P, *, source_file: str) -> pl.DataFrame:
        """Rows in :data:`cmax.ingest.evidence.POWER_SCHEMA`."""


class StorageFormat(Format[P]):
    """A storage benchmark's result (MLPerf Storage summary, fio JSON): ``storage`` rows."""

    role: Role = "storage"

    @abstractmethod
    def frame(self, parsed: P, *, run_id: str, source_file: str) -> pl.DataFrame:
        """Rows in :data:`cmax.ingest.evidence.STORAGE_SCHEMA` (missing columns may be left out)."""


_ROLE_BASES: dict[str, type[Format[Any]]] = {
    base.role: base
    for base in (RunFormat, NcclFormat, NodeHealthFormat, IncidentFormat, AuditFormat,
                 InferenceFormat, PowerFormat, StorageFormat, AccountingFormat)}
#: the declared formats by id (:mod:`cmax.ingest.formats._declarations`, and any a test adds)
_DECLARED: dict[str, Declaration] = {d.id: d for d in DECLARATIONS}
#: the formats whose modules were imported, by id
_REGISTRY: dict[str, Format[Any]] = {}


def register(fmt: Format[Any]) -> Format[Any]:
    """Add ``fmt`` to the registry: called once by the module its declaration names.

    Refused here: a format not declared in :mod:`cmax.ingest.formats._declarations` (detection
    would never import it), registered from another module or with another role than its
    declaration states (detection would import the wrong module; ingest would fill another
    table), whose role does not match its class (a ``run`` format that is no ``RunFormat``
    has no ``read_run``), or registered twice.
    """
    declared = _DECLARED.get(fmt.id)
    if declared is None:
        raise RuntimeError(f"evidence format {fmt.id!r} is not declared: add it to "
                           "DECLARATIONS in cmax/ingest/formats/_declarations.py")
    if fmt.id in _REGISTRY:
        raise RuntimeError(f"evidence format {fmt.id!r} registered twice")
    if fmt.home != module_of(declared):
        raise RuntimeError(f"evidence format {fmt.id!r} is registered by {fmt.home} but "
                           f"declared in {module_of(declared)}")
    if fmt.role != declared.role:
        raise RuntimeError(f"evidence format {fmt.id!r}: role {fmt.role!r} but declared "
                           f"{declared.role!r}")
    for role, base in _ROLE_BASES.items():
        if isinstance(fmt, base) != (fmt.role == role):
            raise RuntimeError(f"evidence format {fmt.id!r} declares role {fmt.role!r} but is "
                               f"{'a' if isinstance(fmt, base) else 'not a'} {base.__name__} "
                               f"(role {role!r}): subclass the base class of its role")
    if declared.structural and fmt.json_shape is None and type(fmt).sniff is Format.sniff:
        raise RuntimeError(f"evidence format {fmt.id!r} is structural but has neither "
                           "sniff() nor json_shape")
    _REGISTRY[fmt.id] = fmt
    return fmt


def declare(declaration: Declaration) -> Declaration:
    """Add a declaration at run time (a test's own format); the shipped formats are declared
    in :data:`cmax.ingest.formats._declarations.DECLARATIONS`."""
    if declaration.id in _DECLARED:
        raise RuntimeError(f"evidence format {declaration.id!r} declared twice")
    _DECLARED[declaration.id] = declaration
    return declaration


def forget(format_id: str) -> None:
    """Remove a format declared at run time and its registration (a test's cleanup)."""
    _DECLARED.pop(format_id, None)
    _REGISTRY.pop(format_id, None)


def declarations() -> list[Declaration]:
    """Every declared format, in detection order (structural first, then by priority); none
    of their modules is imported."""
    return sorted(_DECLARED.values(), key=lambda d: (not d.structural, -d.priority, d.id))


def module_of(declared: Declaration) -> str:
    """The module a declaration names: one of this package, or a dotted path (a test's)."""
    return declared.module if "." in declared.module else f"{PACKAGE}.{declared.module}"

