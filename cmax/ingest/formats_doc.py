"""docs/formats.md, generated from the format registry and the table declarations.

Kept apart from the registry (:mod:`cmax.ingest.formats`) because it reads the tables
(:data:`cmax.ingest.evidence.TABLES`), which themselves name what the registry's formats carry: the
registry stays below the tables, the page above both. ``python -m cmax.ingest.formats
docs/formats.md`` writes it; a test fails while the file is stale.
"""

from __future__ import annotations

import sys

from cmax.ingest.evidence import TABLES
from cmax.ingest.formats import all_formats

_DOC_HEAD = """\
# Evidence formats

<!-- generated from the format registry by `python -m cmax.ingest.formats docs/formats.md`;
do not edit by hand: tests/ingest/test_ingest_formats.py fails when this file is out of step -->

cmax decides a file's format from its **content**, never its name: providers rename files
freely. Detection runs in two passes. First the *structural* formats look at the file's head
(SQLite magic, the shape of a JSON document, a CSV header), highest priority first. Then the
*text* formats' markers are searched in growing chunks of the file (1 MiB, then up to 8 MiB)
until one appears; within a chunk the highest priority wins, so an MLPerf result file, which
embeds a framework's log, is never taken for that log. A file nothing recognises is refused
with an error that lists every format tried and points here.

Each format has a **role**: which canonical table it fills, and so which manifest key may
name it (declared once per table in `cmax/ingest/evidence.py` `TABLES`):
"""

_DOC_TAIL = """\
## Adding a format

1. Put a real (or faithfully reduced) sample of the tool's output under `tests/data/`, and
   cite the tool's own source or the published output it follows.
2. Declare it in `cmax/ingest/formats/_declarations.py` (`DECLARATIONS`): its id, the module
   that holds it, its role, its priority, and what detection needs before that module is
   imported: `markers` (a text format: a literal and a regex its content holds), or the head
   facts under which its sniffer can say yes (`magic` bytes, `json`, a `head` regex, file
   `names`). Detection imports only the module of the format it picks.
3. Add **one module** under `cmax/ingest/formats/`, named by the format id, holding the parser
   and a plugin class that subclasses the base class of its role
   (`RunFormat`, `NcclFormat`, `NodeHealthFormat`, `IncidentFormat`, `AuditFormat`, or
   `Format` for `mlperf`) and sets `id`, `title`, `tool` and `sample`. A structural format
   is recognised by `json_shape` (a test on the parsed JSON document) or `sniff(probe)`
   (`probe.first_line`, `probe.head`). It implements `parse(probe)`, `summarise(parsed,
   probe)` and the role's method, and calls `register(...)`, which refuses a format its
   declaration does not state. `facts(parsed)` defaults to the parser's `facts`; return the
   identity statements the file makes about itself (see `cmax/ingest/facts.py`).
4. Regenerate this file: `python -m cmax.ingest.formats docs/formats.md`. The registry tests
   check that the format detects its own `sample`, renamed, that every file under
   `tests/data/` and `samples/` is detected the same whether every format module is imported
   or none, and that this file is in step.
"""


def formats_markdown() -> str:
    """docs/formats.md, generated from the registry."""
    rows = ["| id | role | recognised by | what it is |", "| --- | --- | --- | --- |"]
    sections = []
    for fmt in all_formats():
        how = (f"text marker, priority {fmt.priority}" if fmt.markers
               else f"structure, priority {fmt.priority}")
        rows.append(f"| `{fmt.id}` | {fmt.role} | {how} | {fmt.title} |")
        doc = (sys.modules[fmt.home].__doc__ or "").strip()  # the format's module's
        lines = [f"### `{fmt.id}`: {fmt.title}", "", f"- Written by: {fmt.tool}",
                 f"- Role: `{fmt.role}`",
                 f"- Module: `{fmt.home}` (plugin `{type(fmt).__name__}`)",
                 f"- Sample: `tests/data/{fmt.sample}`" if not fmt.sample.startswith("(")
                 else f"- Sample: {fmt.sample}"]
        lines += [f"- Marker: `{m.regex}`" for m in fmt.markers]
        first = doc.split("\n\n")[0].replace("\n", " ") if doc else ""
        if first:
            lines += ["", first]
        sections.append("\n".join(lines))
    tables = ["| table | manifest key | roles | an empty file |", "| --- | --- | --- | --- |"]
    for table in TABLES:
        key = f"`{table.key()}`"
        tables.append(f"| `{table.name}` | {key if table.section else '(beside another)'} | "
                      f"{', '.join(f'`{r}`' for r in table.roles)} | "
                      f"{f'`{table.empty}`' if table.empty else 'its own rules'} |")
    return "\n".join([_DOC_HEAD, *tables, "", "## Formats", "", *rows, "",
                      *[s + "\n" for s in sections],
                      _DOC_TAIL])
