"""What every serving-benchmark format shares: the result rows of one file, the number
and JSON-lines readers, and the plugin base class that turns rows into the ``inference``
table (:data:`cmax.ingest.evidence.INFERENCE_SCHEMA`). Each tool's own module maps its field
names onto that table explicitly and registers its format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.evidence import INFERENCE_SCHEMA, conform
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import InferenceFormat, Probe
from cmax.reading.limits import MAX_JSON_BYTES, load_json, read_bounded_text


@dataclass
class Results:
    """The result rows of one file, each with its line, and the identity facts it states."""

    rows: list[dict[str, Any]]
    facts: list[Fact] = field(default_factory=list)


def number(value: Any) -> float | None:
    """A finite number, ``inf`` for vLLM's unbounded rate, else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):  # "inf" (an unbounded rate) or a --metadata value such as "0.0"
        try:
            return float(value)
        except ValueError:
            return None
    if isinstance(value, int | float):
        return float(value)
    return None


def json_objects(probe: Probe, expected: str) -> list[tuple[int, Any]]:
    """The result objects of a file and the line each starts on: one JSON document (line 1),
    or one object per line as the tools append them (``--append-result``, SGLang's JSONL)."""
    if probe.has_json:
        return [(1, probe.json)]
    objects: list[tuple[int, Any]] = []
    try:
        text = read_bounded_text(probe.path, limit=MAX_JSON_BYTES)
    except UnicodeDecodeError as exc:
        raise EvidenceError(f"file is not UTF-8 text (at byte {exc.start:,})", file=probe.path,
                            expected=expected) from None
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            objects.append((line_no, load_json(line, file=probe.path)))
        except ValueError as exc:
            raise EvidenceError(f"line is not a JSON result object ({exc})", file=probe.path,
                                line=line_no, expected=expected,
                                fix="submit the file exactly as the benchmark wrote it") from None
    return objects


class ServingResult(InferenceFormat[Results]):
    """What both tools' results share: rows of the inference table, one per result."""

    def frame(self, parsed: Results, *, run_id: str, source_file: str) -> pl.DataFrame:
        many = len(parsed.rows) > 1
        rows = [{**row, "run_id": f"{run_id}#{k}" if many else run_id,
                 "source_file": source_file} for k, row in enumerate(parsed.rows)]
        return conform(pl.DataFrame(rows, infer_schema_length=None), INFERENCE_SCHEMA)

    def summarise(self, parsed: Results, probe: Probe) -> dict[str, Any]:
        """Each result's output rate and concurrency cap (None: uncapped), in file order."""
        return {"format": self.id, "results": len(parsed.rows),
                "output_tok_s": [r.get("output_tok_s") for r in parsed.rows],
                "concurrency": [r.get("concurrency") for r in parsed.rows]}
