"""nccl-tests output (``all_reduce_perf`` and friends), research/dgxc.md §5.2.

A test prints a ``# nThread ...`` header, one ``#  Rank  N Group  G Pid P on HOST device D
[bus] NAME`` line per rank (the multi-node header lists every host), then one row per message
size: ``size count type redop root`` followed by out-of-place ``time algbw busbw #wrong`` and
in-place ``time algbw busbw #wrong``. Each row becomes two canonical rows (``in_place`` false
and true). Older builds omit ``root`` (and ``redop``); ``N/A`` stays null. Several tests may
be concatenated in one file; each keeps its own collective and rank count.

The collective comes from ``# Collective test starting: X_perf`` (newer builds), else from a
command line naming the ``*_perf`` binary, else from the file name. It is never guessed from
the columns: several collectives print identical ``redop``/``root`` values.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from cmax.errors import CmaxError
from cmax.evidence import NCCL_SCHEMA
from cmax.ingest.textlines import table

COLLECTIVES = (
    "reduce_scatter", "all_reduce", "all_gather", "alltoall", "broadcast", "sendrecv",
    "hypercube", "scatter", "gather", "reduce",
)
_BINARY = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")_perf(?:_mpi)?\b")
_STARTING = re.compile(r"Collective test starting:\s*(\w+?)(?:_perf)?(?:_mpi)?\s*$")
_HEADER = re.compile(r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)")
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_REDOPS = {"sum", "prod", "min", "max", "avg", "none", "mulsum", "premulsum"}
_INT = re.compile(r"^-?\d+$")
INT64_MAX = 2**63 - 1

HEADER_MARKERS = ("# nThread", "Avg bus bandwidth", "Collective test starting")


@dataclass
class NcclTest:
    """One test block of an nccl-tests output file."""

    collective: str | None
    threads: int | None = None
    gpus_per_thread: int | None = None
    ranks: set[int] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)
    avg_busbw_gbps: float | None = None
    rows: list[dict[str, object]] = field(default_factory=list)
    sizes: int = 0
    cut_row: int | None = None  # line of a cut-off last data row that was not used


def _num(token: str) -> float | None:
    if token.upper() in ("N/A", "NA", "-"):
        return None
    return float(token)


def _wrong(token: str) -> int | None:
    if token.upper() in ("N/A", "NA", "-"):
        return None
    return int(float(token))


def _collective_from_name(path: Path) -> str | None:
    name = path.name.lower()
    for coll in COLLECTIVES:
        if coll in name:
            return coll
    return None


def read_lines(path: Path) -> list[str]:
    """Lines split on ``\\n`` only (so numbers match editors), CR and bad UTF-8 tolerated."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [ln.rstrip(b"\r").decode("utf-8", errors="replace") for ln in lines]


def parse_nccl_tests(path: Path) -> list[NcclTest]:
    """Every test block in the file, with its rows (file line numbers kept)."""
    raw = path.read_bytes()
    cut_tail = bool(raw) and not raw.endswith((b"\n", b"\r"))
    lines = read_lines(path)
    tests: list[NcclTest] = []
    pending: str | None = None  # a collective named before its block's header
    current: NcclTest | None = None

    def block() -> NcclTest:
        nonlocal current
        if current is None:
            current = NcclTest(collective=pending)
            tests.append(current)
        return current

    for lineno, text in enumerate(lines, start=1):
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if m := _STARTING.search(stripped):
                if m.group(1) in COLLECTIVES:
                    pending = m.group(1)
                if current is not None and (current.sizes or current.threads is not None):
                    current = None  # the previous test is over
                if current is not None:
                    current.collective = pending
                continue
            if m := _HEADER.match(stripped):
                if current is not None and (current.sizes or current.threads is not None):
                    current = None
                test = block()
                test.threads, test.gpus_per_thread = int(m.group(1)), int(m.group(2))
                continue
            if m := _RANK.match(stripped):
                test = block()
                test.ranks.add(int(m.group(1)))
                test.hosts.add(m.group(2))
                continue
            if m := _AVG.match(stripped):
                with contextlib.suppress(ValueError):
                    block().avg_busbw_gbps = float(m.group(1))
                continue
            if m := _BINARY.search(stripped):
                pending = m.group(1)
            continue
        tokens = stripped.split()
        if not (len(tokens) >= 3 and _INT.match(tokens[0]) and _INT.match(tokens[1])
                and not _INT.match(tokens[2])):
            if m := _BINARY.search(stripped):  # a command line echoed into the log
                pending = m.group(1)
            continue
        try:
            row = _data_row(tokens)
        except (ValueError, IndexError):
            if cut_tail and lineno == len(lines):
                block().cut_row = lineno  # cut off mid-write: its numbers cannot be trusted
                continue
            raise CmaxError(
                f"malformed nccl-tests data row: {stripped[:80]!r}", file=path, line=lineno,
                expected="size count type [redop root] then time algbw busbw #wrong for "
                "out-of-place and in-place",
                fix="use the unmodified nccl-tests output") from None
        test = block()
        test.sizes += 1
        for in_place, values in row["results"]:  # type: ignore[attr-defined]
            test.rows.append({
                "size_bytes": row["size"], "dtype": row["dtype"], "time_us": values[0],
                "algbw_gbps": values[1], "busbw_gbps": values[2], "wrong": values[3],
                "in_place": in_place, "line": lineno,
            })
    fallback = pending or _collective_from_name(path)
    for test in tests:
        if test.collective is None:
            test.collective = fallback
    return [t for t in tests if t.sizes or t.ranks]


def _data_row(tokens: list[str]) -> dict[str, object]:
    rest = tokens[3:]
    if len(rest) in (10, 6):
        if rest[0].lower() not in _REDOPS or not _INT.match(rest[1]):
            raise ValueError("redop/root")
        vals = rest[2:]
    elif len(rest) in (9, 5):
        if rest[0].lower() not in _REDOPS:
            raise ValueError("redop")
        vals = rest[1:]
    elif len(rest) in (8, 4):
        vals = rest
    else:
        raise ValueError("column count")
    results: list[tuple[bool, tuple[float | None, float | None, float | None, int | None]]] = []
    for idx, in_place in ((0, False), (4, True)):
        if idx + 4 > len(vals):
            break
        t, a, b, w = vals[idx: idx + 4]
        results.append((in_place, (_num(t), _num(a), _num(b), _wrong(w))))
    size = int(tokens[0])
    if size > INT64_MAX or any(w is not None and abs(w) > INT64_MAX
                               for _, (_, _, _, w) in results):
        raise ValueError("integer out of range")  # no real message size; Int64 column
    return {"size": size, "dtype": tokens[2], "results": results}


def nccl_frame(tests: list[NcclTest], *, run_id: str, source_file: str,
               path: Path) -> pl.DataFrame:
    """Canonical ``nccl`` rows for the parsed tests."""
    records: list[dict[str, object]] = []
    for test in tests:
        if test.collective is None:
            raise CmaxError(
                "cannot tell which collective this nccl-tests output measured", file=path,
                expected="a '# Collective test starting: <name>_perf' line, the command line, "
                "or a file name containing the test name",
                fix="keep the full nccl-tests output or name the file e.g. all_reduce_perf.txt")
        ranks = len(test.ranks) or None
        nodes = len(test.hosts) or None
        for row in test.rows:
            records.append({"run_id": run_id, "collective": test.collective, "ranks": ranks,
                            "nodes": nodes, "source_file": source_file, **row})
    return table(records, NCCL_SCHEMA)


def nccl_summary(tests: list[NcclTest], path: Path) -> dict[str, object]:
    frame = nccl_frame(tests, run_id="inspect", source_file=path.name, path=path)
    collectives = sorted({str(t.collective) for t in tests})
    # nan/inf rows are reported by validation; here they would print as NaN/Infinity (no JSON)
    busbw = [v for v in frame["busbw_gbps"].to_list() if v is not None and math.isfinite(v)]
    printed = [t.avg_busbw_gbps for t in tests if t.avg_busbw_gbps is not None]
    avg = printed[0] if len(tests) == 1 and printed else (
        sum(busbw) / len(busbw) if busbw else None)
    ranks = sorted({len(t.ranks) for t in tests if t.ranks})
    nodes = sorted({len(t.hosts) for t in tests if t.hosts})
    out: dict[str, object] = {
        "format": "nccl-tests",
        "collective": collectives[0] if len(collectives) == 1 else ",".join(collectives),
        "ranks": ranks[0] if len(ranks) == 1 else (ranks or None),
        "nodes": nodes[0] if len(nodes) == 1 else (nodes or None),
        "rows": sum(t.sizes for t in tests),
        "avg_busbw_gbps": round(avg, 3) if avg is not None else None,
        "avg_busbw_source": "printed" if len(tests) == 1 and printed else "computed",
        "max_busbw_gbps": max(busbw) if busbw else None,
        "wrong": int(sum(w for w in frame["wrong"].drop_nulls().to_list())),
    }
    cut = [t.cut_row for t in tests if t.cut_row is not None]
    if cut:
        out["notes"] = [f"last line {cut[0]} is a cut-off data row (no newline); not used"]
    if len(tests) > 1:
        out["tests"] = [
            {"collective": t.collective, "ranks": len(t.ranks) or None, "rows": t.sizes,
             "avg_busbw_gbps": t.avg_busbw_gbps}
            for t in tests
        ]
    return out
