"""``dcgmi diag -r N -j`` JSON: NVIDIA DCGM's GPU diagnostics, as providers run them at burn-in.

Shape from NVIDIA/DCGM ``testing/python3/dcgm_diag_schema.json`` (DCGM 4.x): a top-level
``"DCGM Diagnostic"`` object with ``test_categories[] -> {category, tests[] -> {name,
results[] -> {entity_group, entity_group_id, entity_id, status, warnings[]}, test_summary}}``,
plus ``entity_groups`` and ``metadata``. DCGM 3.x wrote ``"DCGM GPU Diagnostic"`` with
``results[] -> {gpu_id, status, warnings}`` (facebookresearch/gcm PR #38 reads both); both are
accepted.

The document never names its host, so the node is the file's name without ``.json``
(``dcgm/node-07.json`` -> ``node-07``): name each file after the host it ran on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError, EvidenceFormatError
from cmax.evidence import NODE_HEALTH_SCHEMA
from cmax.ingest.textlines import table
from cmax.limits import MAX_JSON_BYTES, read_bounded_text

TOP_KEYS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
_STATUS = {"pass": "pass", "fail": "fail", "warn": "warn", "warning": "warn", "skip": "skip",
           "skipped": "skip", "not run": "skip"}


def is_dcgm_diag(data: object) -> bool:
    return isinstance(data, dict) and any(
        isinstance(data.get(k), dict) and "test_categories" in data[k] for k in TOP_KEYS)


def _bad(path: Path, what: str, field: str,
         cls: type[EvidenceError] = EvidenceError) -> EvidenceError:
    """A JSON document that is not (or not wholly) what ``dcgmi diag -j`` prints."""
    return cls(f"dcgmi diag JSON: {what}", file=path, field=field,
               expected="the document `dcgmi diag -r N -j` prints",
               fix="save the unmodified output of `dcgmi diag -r 3 -j > <host>.json`")


def parse_dcgm(path: Path) -> pl.DataFrame:
    """One node-health row per (test, GPU) that did not pass, and one summary row per node."""
    try:
        data: Any = json.loads(read_bounded_text(path, limit=MAX_JSON_BYTES))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise EvidenceError(f"not valid JSON ({type(exc).__name__})", file=path,
                            fix="save the unmodified output of `dcgmi diag -r 3 -j`") from None
    if not is_dcgm_diag(data):
        raise _bad(path, "no 'DCGM Diagnostic' test_categories", "DCGM Diagnostic",
                   EvidenceFormatError)
    key = next(k for k in TOP_KEYS if isinstance(data.get(k), dict))
    node = path.stem
    cats = data[key].get("test_categories")
    if not isinstance(cats, list):
        raise _bad(path, "test_categories is not a list", f"{key}.test_categories")
    gpus: set[str] = set()
    rows: list[dict[str, Any]] = []
    for ci, cat in enumerate(cats):
        tests = cat.get("tests") if isinstance(cat, dict) else None
        if not isinstance(tests, list):
            raise _bad(path, f"test_categories[{ci}] has no tests list",
                       f"{key}.test_categories[{ci}].tests")
        for ti, test in enumerate(tests):
            where = f"{key}.test_categories[{ci}].tests[{ti}]"
            if not isinstance(test, dict) or not isinstance(test.get("results"), list):
                raise _bad(path, "a test without a results list", where)
            name = str(test.get("name", "?"))
            for result in test["results"]:
                if not isinstance(result, dict):
                    raise _bad(path, "a result that is not an object", f"{where}.results")
                gpu = result.get("entity_id", result.get("gpu_id", result.get("gpu_ids")))
                group = str(result.get("entity_group", "GPU"))
                if group.upper() == "GPU" and gpu is not None:
                    gpus.update(str(gpu).split(","))
                status = _STATUS.get(str(result.get("status", "")).strip().lower())
                if status is None:
                    raise _bad(path, f"unknown status {result.get('status')!r}",
                               f"{where}.results")
                if status in ("fail", "warn"):
                    warnings = result.get("warnings")
                    texts = [str(w.get("warning", "")) if isinstance(w, dict) else str(w)
                             for w in warnings] if isinstance(warnings, list) else []
                    rows.append({"node": node, "gpus": None, "check": f"dcgmi diag: {name}",
                                 "status": status, "value": None, "median": None,
                                 "detail": f"{group} {gpu}: {status}"
                                 + (f" ({'; '.join(t for t in texts if t)[:300]})"
                                    if any(texts) else ""),
                                 "line": None})
    count = len(gpus) or None
    worst = "fail" if any(r["status"] == "fail" for r in rows) else (
        "warn" if rows else "pass")
    rows.append({"node": node, "gpus": count, "check": "dcgmi diag", "status": worst,
                 "value": None, "median": None,
                 "detail": f"{len(rows)} test result(s) not passed" if rows else "all passed",
                 "line": None})
    for row in rows:
        row["gpus"] = count
        row["source_file"] = None
    return table(rows, NODE_HEALTH_SCHEMA)


def dcgm_summary(path: Path) -> dict[str, object]:
    frame = parse_dcgm(path)
    last = frame.row(frame.height - 1, named=True)
    return {"format": "dcgm-diag", "node": last["node"], "gpus": last["gpus"],
            "status": last["status"],
            "problems": [r["detail"] for r in frame.head(frame.height - 1).iter_rows(named=True)]}
