"""``cmax inspect``: detect one evidence file's format and summarise what cmax reads from it.

The summary is what a reviewer checks before trusting a bundle: how many steps, which
iterations, the means a reference comparison would use, the audit's verdict counts. Every
value is JSON-serialisable; NaN and inf never appear (they are counted instead).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cmax.errors import CmaxError
from cmax.ingest import (
    clustermax_audit,
    dcgm,
    dgxc_parse,
    incidents,
    llmb_sqlite,
    mlperf,
    nccl,
    nccl_json,
)
from cmax.ingest.detect import TRAINING_FORMATS, detect_format
from cmax.ingest.textlines import training_summary
from cmax.ingest.training import parse_training, pick_log


def inspect_file(path: Path) -> dict[str, Any]:
    """Summary of one evidence file (or an MLPerf results folder / llmb-run log folder)."""
    path = Path(path)
    if not path.exists():
        raise CmaxError("file not found", file=path)
    if path.is_dir():
        return _inspect_dir(path)
    fmt = detect_format(path)
    if fmt in TRAINING_FORMATS:
        return training_summary(parse_training(path, fmt))
    if fmt == "nccl-tests":
        return nccl.nccl_summary(nccl.parse_nccl_tests(path), path)
    if fmt == "nccl-tests-json":
        return nccl_json.json_summary(path)
    if fmt == "dcgm-diag":
        return dcgm.dcgm_summary(path)
    if fmt == "mlperf":
        return mlperf.mlperf_summary([mlperf.parse_result_file(path)], None)
    if fmt == "mlperf-system-json":
        return mlperf.system_summary(mlperf.load_system_json(path))
    if fmt == "clustermax-audit":
        return clustermax_audit.audit_summary(
            _located(path, lambda: clustermax_audit.grade_audit(
                clustermax_audit.load_audit(path))))
    if fmt == "incidents-csv":
        return incidents.incidents_summary(incidents.parse_incidents_csv(path), fmt)
    if fmt == "incidents-json":
        return incidents.incidents_summary(incidents.parse_incidents_json(path), fmt)
    if fmt == "dgxc-csv":
        return dgxc_parse.summary(dgxc_parse.parse_csv(path), fmt)
    if fmt == "dgxc-json":
        return dgxc_parse.summary(dgxc_parse.parse_json(path), fmt)
    if fmt == "llmb-sqlite":
        return llmb_sqlite.summary(llmb_sqlite.read_jobs(path))
    raise AssertionError(f"no summary for {fmt}")  # pragma: no cover - FORMATS is closed


def _located(path: Path, fn: Any) -> Any:
    """Run ``fn``; a CmaxError without a file gets this one."""
    try:
        return fn()
    except CmaxError as exc:
        if exc.file is None:
            raise CmaxError(exc.message, file=path, line=exc.line, field=exc.field,
                            expected=exc.expected, fix=exc.fix) from None
        raise


def _inspect_dir(path: Path) -> dict[str, Any]:
    results = mlperf.result_files(path)
    if results:
        runs = [mlperf.parse_result_file(p) for p in results]
        found = find_system_json(path, runs, root=path)
        return mlperf.mlperf_summary(runs, found[1] if found else None)
    log, notes = pick_log(path)
    fmt = detect_format(log)
    if fmt not in TRAINING_FORMATS:
        raise CmaxError(f"folder holds {fmt}, not an MLPerf results folder or training log",
                        file=path)
    out = training_summary(parse_training(log, fmt))
    out["file"] = log.name
    if notes:
        earlier = out.get("notes")
        out["notes"] = [*notes, *(earlier if isinstance(earlier, list) else [])]
    return out


def find_system_json(folder: Path, runs: list[mlperf.MlperfRun], *,
                     root: Path) -> tuple[Path, dict[str, object]] | None:
    """The system description beside the results, or ``systems/<platform>.json`` above them.

    MLPerf submissions keep ``results/<system>/<benchmark>/result_*.txt`` and
    ``systems/<system>.json``; the search never leaves ``root`` (the bundle).
    """
    for child in sorted(folder.glob("*.json")):
        try:
            return child, mlperf.load_system_json(child)
        except CmaxError:
            continue
    names = {r.platform for r in runs if r.platform} | {folder.parent.name}
    current = folder
    root = root.resolve()
    while True:
        for name in sorted(names):
            candidate = current / "systems" / f"{name}.json"
            if candidate.is_file() and candidate.resolve().is_relative_to(root):
                return candidate, mlperf.load_system_json(candidate)
        if current.resolve() == root or current.parent == current:
            return None
        current = current.parent
