"""Evidence formats as plugins: one protocol, one registry, detection by content.

A format is declared once (:mod:`cmax.ingest.formats._declarations`: its id, the module that
holds it, its role, its priority and what detection needs before that module is imported)
and is a :class:`Format` subclass instance registered with :func:`register` in that module,
named by its id (``nccl_tests`` for ``nccl-tests``; one module holds a family whose ids share
that stem, ``nemo`` for ``nemo1`` and ``nemo2``): its sniffing, parser, facts and plugin
together, with its test data under ``tests/data/``. Modules whose name starts with ``_`` are
shared by several formats and register none. A format module takes the protocol (``Format``,
its role's base class, ``Probe``, ``register``) from :mod:`cmax.ingest.formats._protocol`,
never from this package, which imports the format modules by name: the imports point one way.
A format's module is imported the first time it is wanted: when detection picks the format
(or must ask its sniffer), when code holding its id asks for it (:func:`by_id`), or when every
format is listed (:func:`all_formats`: ``cmax docs formats``); reading one NeMo log imports
the NeMo module and no other. ``docs/formats.md`` is generated from the registry
(``python -m cmax.ingest.formats docs/formats.md``) and a test keeps it in step.

The protocol has three steps:

``sniff(probe)`` / ``json_shape``
    Structural recognition from the file's head: magic bytes, the JSON document's shape (a
    JSON format only declares ``json_shape``, a test on the parsed document), a CSV header.
    Runs before any text marker, highest ``priority`` first, because a head that is SQLite,
    JSON or a known CSV header decides the question; a format's sniffer is asked only when
    the head facts of its declaration hold (:func:`may_be`).
``markers``
    Text logs are recognised by the marker strings of their declarations instead (a literal
    that must be present and a regex that must match). The file is scanned in growing chunks
    (1 MiB, then up to 8 MiB) until a marker appears, so a multi-gigabyte log is decided from
    its first megabytes; within a chunk the highest ``priority`` wins (an MLPerf result file
    embeds a framework's log, so ``:::MLLOG`` beats every training marker).
``parse(probe)`` / ``summarise(parsed, probe)``
    Read the file into the format's own parsed object, and summarise that for ``cmax
    inspect``. What a format contributes to the canonical tables depends on its ``role``
    (``run``, ``nccl``, ``mlperf``, ``mlperf-system``, ``audit``, ``incidents``): see the
    role base classes in :mod:`cmax.ingest.formats._protocol`. ``facts(parsed)`` and
    ``line_count(parsed)`` feed :class:`cmax.ingest.evidence.EvidenceFile`.

The :class:`Probe` opens the file once for detection and caches what sniffers share: the head
bytes, the first line, the decoded text and the parsed JSON document, so a JSON file is
parsed once for both detection and parsing.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from cmax.errors import EvidenceFormatError
from cmax.ingest.formats._declarations import Declaration, Marker, Role
from cmax.ingest.formats._protocol import (
    _DECLARED,
    _REGISTRY,
    AccountingFormat,
    AuditFormat,
    Format,
    IncidentFormat,
    InferenceFormat,
    NcclFormat,
    NodeHealthFormat,
    PowerFormat,
    Probe,
    RunFormat,
    RunPart,
    RunRequest,
    StorageFormat,
    declarations,
    declare,
    forget,
    module_of,
    recorded_facts,
    register,
)
from cmax.reading.limits import MAX_JSON_BYTES

__all__ = [
    "CHUNK",
    "MAX_JSON_BYTES",
    "AccountingFormat",
    "AuditFormat",
    "Declaration",
    "Format",
    "IncidentFormat",
    "InferenceFormat",
    "Marker",
    "NcclFormat",
    "NodeHealthFormat",
    "PowerFormat",
    "Probe",
    "Role",
    "RunFormat",
    "RunPart",
    "RunRequest",
    "StorageFormat",
    "all_formats",
    "by_id",
    "declarations",
    "declare",
    "forget",
    "identify",
    "may_be",
    "recorded_facts",
    "register",
    "unknown",
]

CHUNK = 8 << 20
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def all_formats() -> list[Format[Any]]:
    """Every format, in detection order; imports every format module (``cmax docs formats``
    and the tests: a command reading files imports only the formats it meets)."""
    return [by_id(d.id) for d in declarations()]


def by_id(format_id: str) -> Format[Any]:
    """The format with this id, its module imported on first use (for code that stored an id,
    e.g. EvidenceFile.kind); KeyError for an id nobody declared."""
    fmt = _REGISTRY.get(format_id)
    if fmt is None:
        declared = _DECLARED[format_id]
        importlib.import_module(module_of(declared))
        fmt = _REGISTRY.get(format_id)
        if fmt is None:
            raise RuntimeError(f"{module_of(declared)} does not register the evidence format "
                               f"{format_id!r} its declaration says it holds")
    return fmt



def unknown(path: Path, why: str = "") -> EvidenceFormatError:
    """The error for content no format recognises, pointing at the list of formats."""
    tried = ", ".join(d.id for d in declarations())
    return EvidenceFormatError(
        f"unrecognised evidence format{': ' + why if why else ''}; tried {tried}",
        file=path, fix="check that this is the unmodified tool output; `cmax docs formats` lists "
        "every format cmax reads and how each is recognised")


def may_be(declared: Declaration, probe: Probe) -> bool:
    """Whether a structural format's declared head facts hold for ``probe``: only then can
    its ``sniff`` say yes, so only then is its module imported and asked."""
    if declared.magic and probe.head.startswith(declared.magic):
        return True
    if declared.json and probe.has_json:
        return True
    pattern = declared.head_pattern
    if pattern is not None and pattern.search(probe.head_text):
        return True
    return probe.path.name in declared.names


def identify(path: Path) -> tuple[Format[Any], Probe]:
    """The format of one evidence file, decided by its content, and its probe."""
    probe = Probe(path)
    order = declarations()
    for declared in order:
        if declared.structural and may_be(declared, probe) and by_id(declared.id).sniff(probe):
            return by_id(declared.id), probe
    if probe.is_sqlite:
        raise unknown(probe.path, probe.why[0] if probe.why else "an SQLite database")
    found = _scan_markers(probe.path, [d for d in order if not d.structural])
    if found is not None:
        return by_id(found.id), probe
    if probe.why:
        raise unknown(probe.path, probe.why[0])
    problem = probe.json_problem
    if probe.has_json:
        data = probe.json
        keys = sorted(data)[:6] if isinstance(data, dict) else []
        problem = "JSON of no known shape" + (f" (keys: {', '.join(keys)})" if keys else "")
    # a text log may start with "[": only a "{" head or valid JSON makes JSON the diagnosis
    if problem and (probe.head_text[:1] == "{" or probe.has_json):
        raise unknown(probe.path, problem)
    raise unknown(probe.path)


def _scan_markers(path: Path, formats: list[Declaration]) -> Declaration | None:
    """Scan growing chunks (1 MiB, then up to 8 MiB) until a marker appears or the file ends."""
    overlap = b""
    size = 1 << 20
    with path.open("rb") as fh:
        while raw := fh.read(size):
            chunk = overlap + raw
            text: str | None = None
            for declared in formats:
                for marker in declared.markers:
                    if marker.literal not in chunk:
                        continue
                    if text is None:
                        text = _ANSI.sub("", chunk.decode("utf-8", errors="replace"))
                    if marker.pattern.search(text):
                        return declared
            overlap = chunk[-4096:]
            size = min(size * 2, CHUNK)
    return None
