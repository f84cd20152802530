"""Incident logs (CSV or JSON): the provider's record of interruptions, for reliability.

A row names start, end, node, GPU, category and whether it was planned (research
reliability.md); the CSV is recognised by its header, the JSON by an array of such objects or
``{"incidents": [...]}``.

Columns (CSV header or JSON object keys, case-insensitive): ``start, end, node, gpu, category,
planned`` and optional ``description``. Times are ISO 8601; an offset is converted to UTC and a
time without one is taken as UTC (say so in the bundle's README if it is not). ``end`` may be
empty for an incident still open. ``planned`` accepts true/false, yes/no, 1/0,
planned/unplanned. Categories are kept as written (e.g. the Llama 3 paper's "Faulty GPU",
"Network Switch/Cable"): reliability scoring maps them.

A bad row is an error naming the file and line, never a skipped row: an interruption log
that silently loses incidents would flatter the provider. One leniency: when ``description`` is
the last CSV column, unquoted commas in it are taken as part of the text.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.evidence import INCIDENTS_SCHEMA, conform
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import IncidentFormat, Probe, register
from cmax.reading.limits import MAX_JSON_BYTES, csv_guarded, read_bounded_text, read_csv_header

REQUIRED = ("start", "end", "node", "category", "planned")
OPTIONAL = ("gpu", "description")
_TRUE = {"true", "yes", "y", "1", "planned", "t"}
_FALSE = {"false", "no", "n", "0", "unplanned", "f"}


def _header_ok(names: list[str]) -> bool:
    lowered = {n.strip().lower() for n in names}
    return all(k in lowered for k in REQUIRED)


def looks_like_incidents_csv(first_line: str) -> bool:
    return _header_ok(next(csv.reader([first_line]), []))


def looks_like_incidents_json(data: object) -> bool:
    items = data.get("incidents") if isinstance(data, dict) else data
    if isinstance(data, dict) and items == []:
        return True  # {"incidents": []}: an explicitly empty log, like a header-only CSV
    return (isinstance(items, list) and bool(items) and isinstance(items[0], dict)
            and _header_ok(list(items[0])))


def parse_time(value: object, *, file: Path, line: int, column: str,
               required: bool) -> dt.datetime | None:
    text = "" if value is None else str(value).strip()
    if not text:
        if required:
            raise EvidenceError(f"{column} is empty", file=file, line=line, field=column,
                                expected="an ISO 8601 time, e.g. 2026-07-03T14:05:00Z")
        return None
    try:
        stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise EvidenceError(f"invalid time {text!r}", file=file, line=line, field=column,
                            expected="an ISO 8601 time, e.g. 2026-07-03T14:05:00Z") from None
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=dt.UTC)
    return stamp.astimezone(dt.UTC)


def _planned(value: object, *, file: Path, line: int) -> bool:
    if isinstance(value, bool):
        return value
    text = "" if value is None else str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise EvidenceError(f"invalid planned value {value!r}", file=file, line=line, field="planned",
                        expected="true or false (yes/no, 1/0, planned/unplanned)")


def _row(raw: dict[str, Any], *, file: Path, line: int) -> dict[str, object]:
    row = {str(k).strip().lower(): v for k, v in raw.items() if k is not None}
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise EvidenceError(f"missing {', '.join(missing)}", file=file, line=line,
                            expected="start, end, node, gpu, category, planned")
    start = parse_time(row["start"], file=file, line=line, column="start", required=True)
    end = parse_time(row["end"], file=file, line=line, column="end", required=False)
    if start is not None and end is not None and end < start:
        raise EvidenceError(f"end {end.isoformat()} is before start {start.isoformat()}",
                            file=file, line=line, field="end",
                            fix="swap the times or correct the row")
    node = str(row["node"]).strip() if row["node"] is not None else ""
    category = str(row["category"]).strip() if row["category"] is not None else ""
    if not node:
        raise EvidenceError("node is empty", file=file, line=line, field="node",
                            expected="the affected node's name")
    if not category:
        raise EvidenceError("category is empty", file=file, line=line, field="category",
                            expected="a cause such as 'Faulty GPU' or 'Network Switch/Cable'")
    gpu = row.get("gpu")
    description = row.get("description")
    return {
        "start": start, "end": end, "node": node,
        "gpu": None if gpu is None or str(gpu).strip() == "" else str(gpu).strip(),
        "category": category, "planned": _planned(row["planned"], file=file, line=line),
        "description": None if description in (None, "") else str(description),
        "line": line,
    }


def parse_incidents_csv(path: Path) -> list[dict[str, object]]:
    try:
        text = read_bounded_text(path)
    except UnicodeDecodeError:
        raise EvidenceError("incident log is not UTF-8 text", file=path) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    read_csv_header(reader, file=path)
    if reader.fieldnames is None or not _header_ok(list(reader.fieldnames)):
        raise EvidenceError("incident CSV header is missing columns", file=path, line=1,
                            expected="a header with start,end,node,gpu,category,planned"
                            "[,description]")
    rows: list[dict[str, object]] = []
    for raw in csv_guarded(reader, file=path):
        values = [v for v in raw.values() if isinstance(v, str)]
        line = reader.line_num - sum(v.count("\n") for v in values)
        if None in raw:
            extra = raw.pop(None)
            last = reader.fieldnames[-1]
            if last.strip().lower() != "description":
                raise EvidenceError("row has more fields than the header", file=path, line=line,
                                    fix="quote fields that contain commas")
            # free text with unquoted commas in the last column: the commas were the text's
            raw[last] = ",".join([raw[last] or "", *extra])
        if all(v is None or str(v).strip() == "" for v in raw.values()):
            continue
        if any(v is None for v in raw.values()):
            raise EvidenceError("row has fewer fields than the header", file=path, line=line,
                                expected=f"{len(reader.fieldnames)} fields")
        rows.append(_row(raw, file=path, line=line))
    return rows


def parse_incidents_json(path: Path) -> list[dict[str, object]]:
    try:
        text = read_bounded_text(path, limit=MAX_JSON_BYTES)
    except UnicodeDecodeError:
        raise EvidenceError("incident log is not UTF-8 text", file=path) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EvidenceError(f"invalid JSON: {exc}", file=path) from None
    return incidents_from_json(text, data, path)


def incidents_from_json(text: str, data: Any, path: Path) -> list[dict[str, object]]:
    """The rows of an already parsed incident JSON (``text`` locates each item's line)."""
    items = data.get("incidents") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise EvidenceError("no incident list", file=path,
                            expected='a JSON array of incidents or {"incidents": [...]}')
    lines = _item_lines(text, len(items))
    rows = []
    for item, line in zip(items, lines, strict=True):
        if not isinstance(item, dict):
            raise EvidenceError("incident is not an object", file=path, line=line,
                                expected="{start, end, node, gpu, category, planned}")
        rows.append(_row(item, file=path, line=line))
    return rows


def _item_lines(text: str, count: int) -> list[int]:
    """Line on which each top-level array item starts (for error messages and provenance)."""
    decoder = json.JSONDecoder()
    start = text.find("[", text.find('"incidents"') + 1 if text.lstrip().startswith("{") else 0)
    pos = start + 1
    lines: list[int] = []
    while len(lines) < count:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        lines.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)
    return lines


def incidents_frame(rows: list[dict[str, object]], *, source_file: str) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame(schema=INCIDENTS_SCHEMA)
    frame = pl.DataFrame(
        [{**r, "source_file": source_file} for r in rows],
        schema_overrides={"start": pl.Datetime("us", "UTC"), "end": pl.Datetime("us", "UTC")},
        infer_schema_length=None,
    )
    return conform(frame, INCIDENTS_SCHEMA)


def incidents_summary(rows: list[dict[str, object]], fmt: str) -> dict[str, object]:
    starts = [r["start"] for r in rows if isinstance(r["start"], dt.datetime)]
    return {
        "format": fmt,
        "incidents": len(rows),
        "planned": sum(1 for r in rows if r["planned"] is True),
        "unplanned": sum(1 for r in rows if r["planned"] is False),
        "open": sum(1 for r in rows if r["end"] is None),
        "first": min(starts).isoformat() if starts else None,
        "last": max(starts).isoformat() if starts else None,
        "categories": dict(sorted(_count(str(r["category"]) for r in rows).items())),
    }


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def incident_facts(rows: list[dict[str, object]]) -> tuple[Fact, ...]:
    """One ``host`` fact per distinct node the log names, at its first row."""
    seen: dict[str, int | None] = {}
    for r in rows:
        node = str(r["node"])
        if node not in seen:
            line = r.get("line")
            seen[node] = line if isinstance(line, int) else None
    return tuple(Fact("host", node, line) for node, line in seen.items())


Rows = list[dict[str, object]]


class _IncidentLog(IncidentFormat[Rows]):
    def summarise(self, parsed: Rows, probe: Probe) -> dict[str, Any]:
        return incidents_summary(parsed, self.id)

    def facts(self, parsed: Rows) -> tuple[Fact, ...]:
        return incident_facts(parsed)

    def frame(self, parsed: Rows, *, source_file: str) -> pl.DataFrame:
        return incidents_frame(parsed, source_file=source_file)


class IncidentsCsv(_IncidentLog):
    id = "incidents-csv"
    title = "Incident log (CSV)"
    tool = "the provider (header `start,end,node,gpu,category,planned[,description]`)"
    sample = "ingest/incidents.csv"

    def sniff(self, probe: Probe) -> bool:
        return looks_like_incidents_csv(probe.first_line)

    def parse(self, probe: Probe) -> Rows:
        return parse_incidents_csv(probe.path)


class IncidentsJson(_IncidentLog):
    id = "incidents-json"
    title = "Incident log (JSON)"
    tool = 'the provider (`[{"start", "end", "node", ...}]` or `{"incidents": [...]}`)'
    sample = "ingest/incidents.json"
    json_shape = staticmethod(looks_like_incidents_json)

    def parse(self, probe: Probe) -> Rows:
        data = probe.require_json("an incident log: a JSON array or {\"incidents\": [...]}")
        return incidents_from_json(probe.text, data, probe.path)


register(IncidentsCsv())
register(IncidentsJson())
