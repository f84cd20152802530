"""``cmax inspect``: detect one evidence file's format and summarise what cmax reads from it.

The summary is what a reviewer checks before trusting a bundle: how many steps, which
iterations, the means a reference comparison would use, the audit's verdict counts. Every
value is JSON-serialisable; NaN and inf never appear (they are counted instead). A file goes
through the same registry as ``ingest`` (identify, parse, then the format's ``summarise``), so
inspect and ingest can never read a file differently. A folder is an MLPerf results tree or a
training run's log folder (llmb-run keeps the highest retry).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cmax.errors import CmaxError, EvidenceError, EvidenceFormatError
from cmax.ingest import mlperf
from cmax.ingest.formats import identify
from cmax.ingest.training import pick_log


def inspect_file(path: Path) -> dict[str, Any]:
    """Summary of one evidence file (or an MLPerf results folder / llmb-run log folder)."""
    path = Path(path)
    if not path.exists():
        raise EvidenceError("file not found", file=path)
    if path.is_dir():
        return _inspect_dir(path)
    fmt, probe = identify(path)
    return fmt.summarise(fmt.parse(probe), probe)


def _inspect_dir(path: Path) -> dict[str, Any]:
    is_tree = getattr(mlperf, "is_mlperf_tree", None)
    inspect_tree = getattr(mlperf, "inspect_tree", None)
    if is_tree is not None and inspect_tree is not None:
        if is_tree(path):
            summary: dict[str, Any] = inspect_tree(path)
            return summary
    else:  # pragma: no cover - before MLPERF's tree reader
        results = mlperf.result_files(path)
        if results:
            runs = [mlperf.parse_result_file(p) for p in results]
            found = find_system_json(path, runs, root=path)
            return mlperf.mlperf_summary(runs, found[1] if found else None)
    log, notes = pick_log(path)
    fmt, probe = identify(log)
    if fmt.role != "run":
        raise EvidenceFormatError(
            f"folder holds {fmt.id}, not an MLPerf results folder or training log", file=path)
    out = fmt.summarise(fmt.parse(probe), probe)
    out["file"] = log.name
    if notes:
        earlier = out.get("notes")
        out["notes"] = [*notes, *(earlier if isinstance(earlier, list) else [])]
    return out


def find_system_json(folder: Path, runs: list[mlperf.MlperfRun], *,
                     root: Path) -> tuple[Path, dict[str, Any]] | None:
    """The system description beside the results, or ``systems/<platform>.json`` above them.

    MLPerf submissions keep ``results/<system>/<benchmark>/result_*.txt`` and
    ``systems/<system>.json``; the search never leaves ``root`` (the bundle). Used until
    :mod:`cmax.ingest.mlperf` reads whole trees itself.
    """
    for child in sorted(folder.glob("*.json")):
        try:
            return child, dict(mlperf.load_system_json(child))
        except CmaxError:
            continue
    names = {r.platform for r in runs if r.platform} | {folder.parent.name}
    current = folder
    root = root.resolve()
    while True:
        for name in sorted(names):
            candidate = current / "systems" / f"{name}.json"
            if candidate.is_file() and candidate.resolve().is_relative_to(root):
                return candidate, dict(mlperf.load_system_json(candidate))
        if current.resolve() == root or current.parent == current:
            return None
        current = current.parent
