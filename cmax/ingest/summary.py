"""``cmax inspect``: detect one evidence file's format and summarise what cmax reads from it.

The summary is what a reviewer checks before trusting a bundle: how many steps, which
iterations, the means a reference comparison would use, the audit's verdict counts. Every
value is JSON-serialisable; NaN and inf never appear (they are counted instead). A file goes
through the same registry as ``ingest`` (identify, parse, then the format's ``summarise``), so
inspect and ingest can never read a file differently, and ``facts`` lists the identity facts
ingest records for it (what the file says about its GPUs, hosts, scale, precision, ...). A
folder is an MLPerf results tree or a training run's log folder (llmb-run keeps the highest
retry).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cmax.errors import EvidenceError, EvidenceFormatError
from cmax.ingest.formats import Format, Probe, identify
from cmax.ingest.training import pick_log


def inspect_file(path: Path) -> dict[str, Any]:
    """Summary of one evidence file (or an MLPerf results folder / llmb-run log folder)."""
    path = Path(path)
    if not path.exists():
        raise EvidenceError("file not found", file=path)
    if path.is_dir():
        return _inspect_dir(path)
    fmt, probe = identify(path)
    return _summary(fmt, probe)


def _summary(fmt: Format[Any], probe: Probe) -> dict[str, Any]:
    """The format's summary plus what ingest records for the file: its identity facts."""
    parsed = fmt.parse(probe)
    out = fmt.summarise(parsed, probe)
    facts = fmt.facts(parsed)
    if facts:
        out["facts"] = [{"kind": f.kind, "value": f.value, "line": f.line, "where": f.where}
                        for f in facts]
    return out


def _inspect_dir(path: Path) -> dict[str, Any]:
    from cmax.ingest.formats import mlperf  # a folder only: a file's format module is its own

    if mlperf.is_mlperf_tree(path):
        return mlperf.inspect_tree(path)
    log, notes = pick_log(path)
    fmt, probe = identify(log)
    if fmt.role != "run":
        raise EvidenceFormatError(
            f"folder holds {fmt.id}, not an MLPerf results folder or training log", file=path)
    out = _summary(fmt, probe)
    out["file"] = log.name
    if notes:
        earlier = out.get("notes")
        out["notes"] = [*notes, *(earlier if isinstance(earlier, list) else [])]
    return out
