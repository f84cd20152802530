"""DCGM diagnostics JSON (``dcgmi diag -r N -j``): per-node GPU health.

Recognised by its top-level ``DCGM GPU Diagnostic`` (or ``DCGM Diagnostic``) object with
``test_categories``; read into node-health rows (NETWORK). Providers run these diagnostics at
burn-in.

Shape from NVIDIA/DCGM ``testing/python3/dcgm_diag_schema.json`` (DCGM 4.x): a top-level
``"DCGM Diagnostic"`` object with ``test_categories[] -> {category, tests[] -> {name,
results[] -> {entity_group, entity_group_id, entity_id, status, warnings[]}, test_summary}}``,
plus ``entity_groups`` and ``metadata``. DCGM 3.x wrote ``"DCGM GPU Diagnostic"`` with
``results[] -> {gpu_id, status, warnings}`` (facebookresearch/gcm PR #38 reads both); both are
accepted.

DCGM 3.x indexes ``results`` by GPU id, so a run on some of the GPUs leaves ``null``
entries (``nvvs/src/JsonOutput.cpp``); those are skipped, and text dcgmi printed before
the document (a banner, a warning line) is ignored with a note. Every status is kept:
``Skip`` is *not evaluated*, never a pass, and a deployment (configuration) finding such as
persistence mode off is kept apart from hardware faults, which alone fail a node.

The document never names its host, so the node is the file's name without ``.json``
(``dcgm/node-07.json`` -> ``node-07``): name each file after the host it ran on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError, EvidenceFormatError
from cmax.ingest.evidence import NODE_HEALTH_SCHEMA
from cmax.ingest.formats._protocol import NodeHealthFormat, Probe, register
from cmax.ingest.textlines import table
from cmax.reading.limits import MAX_JSON_BYTES, load_json, read_bounded_text

TOP_KEYS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
_STATUS = {"pass": "pass", "fail": "fail", "warn": "warn", "warning": "warn", "skip": "skip",
           "skipped": "skip", "not run": "skip"}
STATUSES = ("pass", "warn", "fail", "skip")
# check-name prefix of a configuration finding: the node is set up wrong (persistence mode off,
# a library or environment variable, another process on the GPU), which a reboot or a setting
# fixes; only a hardware fault fails a node (cmax.score.nodes). DCGM's deployment tests
# (3.x: the "Deployment" category's tests; 4.x: the one "software" test), except the ones
# that read the GPU's own state: retired pages / row remapping and the inforom.
CONFIG_CHECK = "dcgmi diag configuration: "
_HARDWARE_WORDS = ("page retirement", "row remap", "retired page", "remapp", "inforom",
                   "sram")


def is_hardware_check(check: str) -> bool:
    """Whether a node-health row's check is a hardware test (a failure fails the node)."""
    return not check.startswith(CONFIG_CHECK)


def is_dcgm_diag(data: object) -> bool:
    return isinstance(data, dict) and any(
        isinstance(data.get(k), dict) and "test_categories" in data[k] for k in TOP_KEYS)


def looks_like_dcgm_diag(head: str) -> bool:
    """A head whose JSON document follows leading text (a banner or a warning line)."""
    return any(f'"{k}"' in head for k in TOP_KEYS) and "test_categories" in head


def _bad(path: Path, what: str, field: str,
         cls: type[EvidenceError] = EvidenceError) -> EvidenceError:
    """A JSON document that is not (or not wholly) what ``dcgmi diag -j`` prints."""
    return cls(f"dcgmi diag JSON: {what}", file=path, field=field,
               expected="the document `dcgmi diag -r N -j` prints",
               fix="save the unmodified output of `dcgmi diag -r 3 -j > <host>.json`")


def _load(path: Path) -> tuple[Any, int]:
    """The JSON document and the number of lines of text printed before it.

    ``dcgmi`` may print a line before its document (``Successfully ran diagnostic for
    group.``, a deprecation or driver warning); the document itself starts at the first line
    opening with ``{``.
    """
    try:
        text = read_bounded_text(path, limit=MAX_JSON_BYTES)
    except UnicodeDecodeError:
        raise EvidenceError("file is not UTF-8 text", file=path,
                            fix="save the unmodified output of `dcgmi diag -r 3 -j`") from None
    lines = text.splitlines(keepends=True)
    lead = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("{")), 0)
    try:
        return load_json("".join(lines[lead:]), file=path), lead
    except ValueError as exc:
        raise EvidenceError(f"not valid JSON ({type(exc).__name__})", file=path,
                            fix="save the unmodified output of `dcgmi diag -r 3 -j`") from None


def _configuration(category: str, name: str, texts: list[str]) -> bool:
    deployment = category.lower() == "deployment" or name.lower() == "software"
    said = " ".join([name, *texts]).lower()
    return deployment and not any(w in said for w in _HARDWARE_WORDS)


def parse_dcgm(path: Path) -> pl.DataFrame:
    """One node-health row per (test, GPU) that did not pass, and one summary row per node.

    Every status is kept: failures and warnings (hardware, or configuration under
    ``CONFIG_CHECK``), and skipped tests as ``skip`` rows (not evaluated); the summary row
    counts all four and names what was not evaluated. ``null`` entries (DCGM 3.x indexes
    results by GPU id, so a GPU left out of the run is a ``null``) are skipped.
    """
    data, lead = _load(path)
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
    counts = dict.fromkeys(STATUSES, 0)
    skipped: list[str] = []
    for ci, cat in enumerate(cats):
        if cat is None:
            continue
        tests = cat.get("tests") if isinstance(cat, dict) else None
        if not isinstance(tests, list):
            raise _bad(path, f"test_categories[{ci}] has no tests list",
                       f"{key}.test_categories[{ci}].tests")
        category = str(cat.get("category", ""))
        for ti, test in enumerate(tests):
            if test is None:
                continue
            where = f"{key}.test_categories[{ci}].tests[{ti}]"
            if not isinstance(test, dict) or not isinstance(test.get("results"), list):
                raise _bad(path, "a test without a results list", where)
            name = str(test.get("name", "?"))
            for result in test["results"]:
                if result is None:
                    continue
                if not isinstance(result, dict):
                    raise _bad(path, "a result that is not an object", f"{where}.results")
                gpu = result.get("entity_id", result.get("gpu_id", result.get("gpu_ids")))
                group = str(result.get("entity_group", "GPU"))
                if group.upper() == "GPU" and gpu is not None:
                    gpus.update(g.strip() for g in str(gpu).split(",") if g.strip())
                status = _STATUS.get(str(result.get("status", "")).strip().lower())
                if status is None:
                    raise _bad(path, f"unknown status {result.get('status')!r}",
                               f"{where}.results")
                counts[status] += 1
                if status == "pass":
                    continue
                if status == "skip" and name not in skipped:
                    skipped.append(name)
                warnings = result.get("warnings")
                texts = [str(w.get("warning", "")) if isinstance(w, dict) else str(w)
                         for w in warnings] if isinstance(warnings, list) else []
                config = status != "skip" and _configuration(category, name, texts)
                label = f"{CONFIG_CHECK}{name}" if config else f"dcgmi diag: {name}"
                said = "; ".join(t for t in texts if t)[:300]
                rows.append({"node": node, "gpus": None, "check": label, "status": status,
                             "value": None, "median": None,
                             "detail": f"{group} {gpu}: {status}"
                             + (" (skipped: not evaluated)" if status == "skip" else "")
                             + (f" ({said})" if said else ""),
                             "line": None})
    count = len(gpus) or None
    hardware = [r for r in rows if is_hardware_check(r["check"]) and r["status"] != "skip"]
    # a skipped test is not a pass: a node with tests skipped is at best "warn"
    worst = "fail" if any(r["status"] == "fail" for r in hardware) else (
        "warn" if rows else "pass")
    tally = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    detail = f"results: {tally}"
    if skipped:
        detail += f"; not evaluated (skipped): {', '.join(skipped)}"
    config_tests = sorted({r["check"].removeprefix(CONFIG_CHECK) for r in rows
                     if not is_hardware_check(r["check"])})
    if config_tests:
        detail += f"; configuration findings (not hardware): {', '.join(config_tests)}"
    if lead:
        detail += f"; {lead} line(s) of text before the JSON ignored"
    rows.append({"node": node, "gpus": count, "check": "dcgmi diag", "status": worst,
                 "value": None, "median": None, "detail": detail, "line": None})
    for row in rows:
        row["gpus"] = count
        row["source_file"] = None
    return table(rows, NODE_HEALTH_SCHEMA)


def dcgm_summary(path: Path) -> dict[str, object]:
    frame = parse_dcgm(path)
    last = frame.row(frame.height - 1, named=True)
    rest = frame.head(frame.height - 1)
    return {"format": "dcgm-diag", "node": last["node"], "gpus": last["gpus"],
            "status": last["status"], "results": last["detail"],
            "problems": [r["detail"] for r in rest.iter_rows(named=True)
                         if r["status"] != "skip" and is_hardware_check(r["check"])],
            "configuration": [f"{r['check'].removeprefix(CONFIG_CHECK)}: {r['detail']}"
                              for r in rest.iter_rows(named=True)
                              if not is_hardware_check(r["check"])],
            "not_evaluated": sorted({str(r["check"]).removeprefix("dcgmi diag: ")
                                     for r in rest.iter_rows(named=True)
                                     if r["status"] == "skip"})}


class DcgmDiag(NodeHealthFormat[pl.DataFrame]):
    id = "dcgm-diag"
    title = "DCGM diagnostics (JSON)"
    tool = "NVIDIA DCGM `dcgmi diag -r 3 -j` on one node"
    sample = "nccl/dcgm/node-a.json"
    json_shape = staticmethod(is_dcgm_diag)

    def sniff(self, probe: Probe) -> bool:
        if super().sniff(probe):
            return True
        # the document after a line of text dcgmi printed first (not JSON as a whole)
        return probe.head_text[:1] != "{" and looks_like_dcgm_diag(probe.head_text)

    def parse(self, probe: Probe) -> pl.DataFrame:
        return parse_dcgm(probe.path)

    def summarise(self, parsed: pl.DataFrame, probe: Probe) -> dict[str, Any]:
        return dict(dcgm_summary(probe.path))

    def node_health(self, parsed: pl.DataFrame, *, source_file: str) -> pl.DataFrame:
        return parsed.with_columns(pl.lit(source_file).alias("source_file"))


register(DcgmDiag())
