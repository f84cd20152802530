"""Which evidence format a file holds, decided by its content, never by its name.

Providers rename files freely (``run1.txt``, ``out.log``), so names prove nothing. Binary and
structured formats are recognised by their first bytes (SQLite magic, JSON shape, CSV header);
text logs by marker strings, read in chunks until one appears, so a multi-gigabyte log is
decided from its first few megabytes. When a chunk holds markers of several formats, the more
specific wins: MLPerf result files embed framework logs, so ``:::MLLOG`` beats any training
marker.
"""

from __future__ import annotations

import re
from pathlib import Path

from cmax.errors import CmaxError
from cmax.ingest import (
    clustermax_audit,
    dcgm,
    dgxc_parse,
    incidents,
    llmb_sqlite,
    mlperf,
    nccl_json,
)
from cmax.limits import load_json

TRAINING_FORMATS = ("nemo1", "nemo2", "megatron", "maxtext", "paxml", "torchtitan")
SUMMARY_FORMATS = ("dgxc-csv", "dgxc-json", "llmb-sqlite")
FORMATS = (
    *TRAINING_FORMATS, *SUMMARY_FORMATS, "mlperf", "mlperf-system-json", "nccl-tests",
    "clustermax-audit", "incidents-csv", "incidents-json", "nccl-tests-json", "dcgm-diag",
)

CHUNK = 8 << 20
MAX_JSON_BYTES = 256 << 20
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# (format, literal that must be present, marker regex) in priority order
_TEXT_MARKERS: tuple[tuple[str, bytes, re.Pattern[str]], ...] = (
    ("mlperf", b":::MLLOG", re.compile(re.escape(mlperf.TOKEN) + r"\s*\{")),
    # nccl-tests also as pasted: '#' stripped, indented, behind [1,0]<stdout>: or srun labels
    ("nccl-tests", b"nThread", re.compile(r"^[^\n]{0,40}?\bnThread\s+\d+\s+nGpus\s+\d+", re.M)),
    ("nccl-tests", b"Avg bus bandwidth", re.compile(r"#?\s*Avg bus bandwidth\s*:")),
    ("nccl-tests", b"count", re.compile(r"^\s*#?\s+size\s+count\s+type\b", re.M)),
    ("nemo2", b"train_step_timing", re.compile(r"train_step_timing in s\s*:")),
    ("nemo1", b"train_step_timing", re.compile(r"train_step_timing in s\s*=")),
    ("megatron", b"elapsed time per iteration",
     re.compile(r"elapsed time per iteration \(ms\)\s*:")),
    ("maxtext", b"completed step:", re.compile(r"completed step:\s*\d+")),
    ("paxml", b"train_step()", re.compile(r"train_step\(\) took\s*[\d.]")),
    ("torchtitan", b"step:", re.compile(r"\bstep:\s*\d+\s+loss:.*\b(?:tflops|tps):")),
)


def _tried() -> str:
    return ", ".join(FORMATS)


def unknown(path: Path, why: str = "") -> CmaxError:
    return CmaxError(
        f"unrecognised evidence format{': ' + why if why else ''}; tried {_tried()}",
        file=path, fix="check that this is the unmodified tool output (see README, formats)")


def detect_format(path: Path) -> str:
    """The format id of one evidence file (see ``FORMATS``); unknown -> CmaxError."""
    path = Path(path)
    if path.is_dir():
        raise CmaxError("is a directory", file=path,
                        expected="a single evidence file (an MLPerf results folder only where "
                        "the manifest or `cmax inspect` accepts one)")
    if path.exists() and not path.is_file():
        # opening a named pipe blocks until someone writes to it: cmax would hang
        raise CmaxError("not a regular file (a named pipe, socket or device)", file=path,
                        expected="an evidence file", fix="copy the evidence into a plain file")
    try:
        with path.open("rb") as fh:
            head = fh.read(1 << 16)
    except FileNotFoundError:
        raise CmaxError("file not found", file=path) from None
    except OSError as exc:
        raise CmaxError(f"cannot read file: {exc.strerror}", file=path) from None
    if not head:
        raise CmaxError("file is empty", file=path, expected="evidence from a benchmark run")
    if head.startswith(llmb_sqlite.MAGIC):
        if llmb_sqlite.has_jobs_table(path):
            return "llmb-sqlite"
        raise unknown(path, "an SQLite database without an llmb-run `jobs` table")
    text_head = head.decode("utf-8-sig", errors="replace")
    stripped = text_head.lstrip()
    json_problem = ""
    if stripped[:1] in ("{", "[") and path.stat().st_size <= MAX_JSON_BYTES:
        fmt, json_problem = _detect_json(path)
        if fmt:
            return fmt
    first = stripped.splitlines()[0] if stripped else ""
    if dgxc_parse.looks_like_csv(first):
        return "dgxc-csv"
    if incidents.looks_like_incidents_csv(first):
        return "incidents-csv"
    fmt = _detect_text(path)
    if fmt:
        return fmt
    if json_problem and (stripped[:1] == "{" or json_problem.startswith("JSON")):
        raise unknown(path, json_problem)
    raise unknown(path)


def _detect_json(path: Path) -> tuple[str | None, str]:
    try:
        # bounded: JSON nested thousands deep raised RecursionError here (cmax.limits)
        data = load_json(path.read_text(encoding="utf-8-sig"), file=path)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"invalid JSON ({exc})"
    if clustermax_audit.is_audit_json(data):
        return "clustermax-audit", ""
    if dgxc_parse.is_dgxc_json(data):
        return "dgxc-json", ""
    if mlperf.is_system_json(data):
        return "mlperf-system-json", ""
    if incidents.looks_like_incidents_json(data):
        return "incidents-json", ""
    if nccl_json.is_nccl_json(data):
        return "nccl-tests-json", ""
    if dcgm.is_dcgm_diag(data):
        return "dcgm-diag", ""
    keys = sorted(data)[:6] if isinstance(data, dict) else []
    return None, "JSON of no known shape" + (f" (keys: {', '.join(keys)})" if keys else "")


def _detect_text(path: Path) -> str | None:
    """Scan growing chunks (1 MB, then up to 8 MB) until a marker appears or the file ends."""
    overlap = b""
    size = 1 << 20
    with path.open("rb") as fh:
        while raw := fh.read(size):
            chunk = overlap + raw
            text: str | None = None
            for fmt, literal, marker in _TEXT_MARKERS:
                if literal not in chunk:
                    continue
                if text is None:
                    text = _ANSI.sub("", chunk.decode("utf-8", errors="replace"))
                if marker.search(text):
                    return fmt
            overlap = chunk[-4096:]
            size = min(size * 2, CHUNK)
    return None
