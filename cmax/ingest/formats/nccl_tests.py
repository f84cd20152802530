"""nccl-tests text output (``all_reduce_perf`` and friends), as printed or as pasted.

Recognised by the header nccl-tests prints (``# nThread N nGpus M``), the table header
(``#  size  count  type``) or the closing ``# Avg bus bandwidth :``; pasted copies lose the
``#`` or gain ``[1,0]<stdout>:`` / srun prefixes, so the markers allow for both (NVIDIA/
nccl-tests ``src/common.cu``).

The format comes from the tool's own source (NVIDIA/nccl-tests ``src/util.cu``,
``writeDeviceReport``/``writeResultHeader``/``writeResultFooter``): a ``# nThread ...``
header, one ``#  Rank  N Group  G Pid P on HOST device D [bus] NAME`` line per rank, a column
header, one row per message size (``size count type redop root`` then out-of-place and
in-place ``time algbw busbw #wrong``; with ``-I 1`` each half adds ``i_min i_max i_p99 i_cv%``),
then ``# Avg bus bandwidth : X``. Older builds print an ``error`` column and no ``root``.

Buyers and providers publish it in many other shapes, and each has a rule here:

* **Copies in documentation**: the leading ``#`` stripped, every line indented. Header lines
  are recognised with or without their ``#``.
* **Launcher prefixes**: Open MPI ``--tag-output`` (``[1,0]<stdout>:``) and ``srun --label``
  (``0: ``) are removed before a line is read.
* **Shell prompts and command lines** around the block: a command naming a ``*_perf`` binary
  gives the collective, and its arguments (``-g``/``-t`` after the binary; ``-np``/``-n``/
  ``--ntasks``/``-N`` before it) give the process and node counts.
* **Elided or partial device lists** (``...``, ``# Truncated``, a list starting mid-way, or
  nccl-tests' own 2 KiB per-process cut): the rank count is never the number of lines seen.
  It comes from the strongest evidence present (``_resolve_counts``): a complete list, the
  collective's bus/alg bandwidth factor at the largest size (all_reduce ``2(n-1)/n``,
  all_gather/reduce_scatter/alltoall ``(n-1)/n``), the launcher's stated process count
  (processes x nThread x nGpus), the highest rank + 1 (a lower bound no count may go under),
  and last a binary run without a launcher (one process). A note says which won and which
  were set aside. Hosts whose listed ranks form equal contiguous blocks covering every rank
  (``Rank 0``/``7`` on one, ``8``/``15`` on the next) give the node count.
* **Job-script echoes**: ``EXEC_CMD=/path/all_reduce_perf`` names the test, launches nothing.
* **An older alltoall** whose header names ``redop`` while its rows leave it blank.
* **``-d all``**: one sweep per datatype; :mod:`cmax.ingest.formats._nccl_datatypes` picks the
  rated one.
* **No average line**: the summary computes one and labels it ``computed``.
* **Several runs in one file**: each block keeps its own collective, ranks and hosts.
* **A row cut mid-write** (the job was killed: the row is the file's last line, or the next
  line starts another run): dropped with a note. Its columns are never re-read in another
  layout: the column layout is fixed per block by its header (or its first full row).

Identity facts (GPU names, hosts, rank and node counts, the NCCL transport lines such as
``NET/IB``, ``NET/Socket`` or the AWS Libfabric (EFA) plugin) are recorded while reading.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.evidence import NCCL_SCHEMA
from cmax.ingest.facts import Fact
from cmax.ingest.formats._nccl_datatypes import rated_rows
from cmax.ingest.formats._nccl_domains import MNNVL_KEY, domains_of, mnnvl_domain
from cmax.ingest.formats._protocol import NcclFormat, Probe, register
from cmax.ingest.textlines import table
from cmax.reading.limits import MAX_NCCL_ROWS, limit_error, read_bounded_lines

COLLECTIVES = (
    "reduce_scatter", "all_reduce", "all_gather", "alltoall", "broadcast", "sendrecv",
    "hypercube", "scatter", "gather", "reduce",
)
_BINARY = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")_perf(?:_mpi)?\b")
_STARTING = re.compile(r"Collective test starting:\s*(\w+?)(?:_perf)?(?:_mpi)?\s*$")
_HEADER = re.compile(r"^nThread\s+(\d{1,6})\s+nGpus\s+(\d{1,6})")
_RANK = re.compile(
    r"^Rank\s+(\d{1,9})\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+"
    r"(?:\s+\[[^\]]*\]\s*(.*))?")
_AVG = re.compile(r"^Avg bus bandwidth\s*:\s*(\S+)")
# NCCL's own banner ("NCCL version 2.29.3+cuda13.1", bare or after "NCCL INFO") and nccl-tests'
# "nccl-tests version 2.17.9 nccl-headers=22903 nccl-library=22903" (ncclGetVersion's code)
_NCCL_BANNER = re.compile(r"\bNCCL version (\d{1,3}\.\d{1,3}\.\d{1,3})\b")
_NCCL_LIBRARY = re.compile(r"^nccl-tests version \S+.*\bnccl-library=(\d{4,6})\b")
_COLUMNS = re.compile(r"^size\s+count\s+type\b")
_TRUNCATED = re.compile(r"^[\[(]?\s*(?:\.{3}|…|truncated\b)", re.I)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PREFIXES = (
    re.compile(r"^\s*\[\d+,\d+\]<(?:stdout|stderr)>:\s?"),  # mpirun --tag-output
    re.compile(r"^\s*\d+:\s"),  # srun --label
)
_REDOPS = {"sum", "prod", "min", "max", "avg", "none", "mulsum", "premulsum"}
_INT = re.compile(r"^-?\d+$")
_COUNT = re.compile(r"[0-9]{1,7}")  # a process/node/GPU count on a command line
_FOOTER = ("Out of bounds values", "Avg bus bandwidth", "Collective test concluded",
           "GPU memory usage", "error:")
# NCCL_DEBUG=INFO transport lines, as NCCL prints them (NVIDIA/nccl src/transport/net_*.cc,
# src/init.cc "Using network %s"), and the channel lines "via NET/<name>/<dev>"; each keyed
# by a literal that must be in the line, so the chatter of thousands of ranks stays cheap.
_FABRIC: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("via NET/", re.compile(r"\bvia NET/(Socket|IB|AWS Libfabric)\b")),
    ("Using network", re.compile(r"\bUsing network (Socket|IB|AWS Libfabric|\S+)")),
    ("NET/OFI", re.compile(r"\bNET/OFI Selected Provider is (\S+)")),
    ("NET/Plugin", re.compile(
        r"\bNET/Plugin ?: (?:No plugin found|Could not find|Failed to load)[^\n]*")),
    ("NET/", re.compile(r"\bNET/(Socket|IB) : (?:Using|No device found)[^\n]*")),
)
# a shell variable set to the binary's path (echoed by job scripts before the launch)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_LAUNCHERS = {"mpirun", "mpiexec", "orterun", "srun", "prterun", "aprun", "jsrun"}
INT64_MAX = 2**63 - 1

HEADER_MARKERS = ("# nThread", "Avg bus bandwidth", "Collective test starting")


@dataclass(frozen=True)
class _Layout:
    """Where each value sits in a data row of one block (fixed for the whole block)."""

    ncols: int
    redop: int | None
    root: int | None
    halves: tuple[tuple[bool, int, int, int, int | None], ...]  # in_place, time, alg, bus, wrong
    extra_ok: bool = False  # a trailing timestamp column may split into several tokens


def _layout_from_header(tokens: list[str]) -> _Layout | None:
    names = [t.lower() for t in tokens]
    starts = [i for i, n in enumerate(names) if n in ("time", "cputime")]
    if not starts:
        return None
    halves = []
    for k, s in enumerate(starts[:2]):
        end = starts[k + 1] if k + 1 < len(starts) else len(names)
        part = {n: i for i, n in enumerate(names[s:end], start=s)}
        if "algbw" not in part or "busbw" not in part:
            return None
        wrong = part.get("#wrong", part.get("error"))
        halves.append((k == 1, s, part["algbw"], part["busbw"], wrong))
    return _Layout(ncols=len(names), redop=names.index("redop") if "redop" in names else None,
                   root=names.index("root") if "root" in names else None,
                   halves=tuple(halves), extra_ok="timestamp" in names)


def _without_redop(layout: _Layout) -> _Layout | None:
    """The layout of rows that leave the header's ``redop`` column blank.

    Older nccl-tests printed the operation name as an empty string for collectives without
    a reduction (alltoall), so its rows have one token fewer than the header names.
    """
    col = layout.redop
    if col is None:
        return None

    def at(i: int | None) -> int | None:
        return None if i is None else (i - 1 if i > col else i)

    return _Layout(ncols=layout.ncols - 1, redop=None, root=at(layout.root),
                   halves=tuple((ip, t - 1, a - 1, b - 1, at(w))
                                for ip, t, a, b, w in layout.halves),
                   extra_ok=layout.extra_ok)


def _layout_from_row(tokens: list[str]) -> _Layout | None:
    """The layout of a block without a column header, from its first full row."""
    n = len(tokens)
    has_root = n > 4 and _INT.match(tokens[4]) is not None
    lead = 5 if has_root else 4
    per_half = {8: 4, 16: 8}.get(n - lead) or {4: 4, 8: 8}.get(n - lead)
    if per_half is None or tokens[3].lower() not in _REDOPS:
        return None
    halves = [(False, lead, lead + 1, lead + 2, lead + 3)]
    if n - lead == 2 * per_half:
        s = lead + per_half
        halves.append((True, s, s + 1, s + 2, s + 3))
    return _Layout(ncols=n, redop=3, root=4 if has_root else None, halves=tuple(halves))


@dataclass
class NcclTest:
    """One test block of an nccl-tests output file."""

    collective: str | None
    threads: int | None = None
    gpus_per_thread: int | None = None
    ranks: set[int] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)
    rank_hosts: dict[int, str] = field(default_factory=dict)
    gpu_names: dict[str, int] = field(default_factory=dict)  # name -> first line
    host_lines: dict[str, int] = field(default_factory=dict)
    avg_busbw_gbps: float | None = None
    rows: list[dict[str, object]] = field(default_factory=list)
    sizes: int = 0
    cut_row: int | None = None  # line of a row cut mid-write that was not used
    header_line: int | None = None
    elided: bool = False  # the device list is incomplete (elided, truncated or partial)
    truncated_line: int | None = None  # "# Truncated ..." written by whoever pasted it
    processes: int | None = None  # from the launcher command line
    processes_assumed: bool = False  # one process only because no launcher was named
    launcher_nodes: int | None = None
    launcher_gpus: int | None = None  # -g on the command line
    layout: _Layout | None = None
    rank_count: int | None = None
    node_count: int | None = None
    notes: list[str] = field(default_factory=list)
    fabric: dict[str, int] = field(default_factory=dict)  # NCCL transport line -> first line
    env: tuple[Fact, ...] = ()  # transport settings a JSON output's env list records
    mnnvl: dict[str, tuple[str, int]] = field(default_factory=dict)  # host -> (domain, line)
    nvlink_domains: int | None = None  # NVLink domains (NVL72 racks) the run spans
    nccl_versions: dict[str, int] = field(default_factory=dict)  # NCCL library -> first line


@dataclass
class _Launch:
    """What a command line says about the run it launched."""

    collective: str | None = None
    processes: int | None = None
    nodes: int | None = None
    gpus: int | None = None
    threads: int | None = None
    assumed: bool = False  # processes = 1 only because no launcher precedes the binary


def _clean(text: str) -> str:
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if ":" in text:  # both launcher prefixes end in a colon
        for prefix in _PREFIXES:
            text = prefix.sub("", text, count=1)
    return text.strip()


def _opt(args: list[str], names: tuple[str, ...]) -> int | None:
    for i, arg in enumerate(args):
        for name in names:
            value = None
            if arg == name and i + 1 < len(args):
                value = args[i + 1]
            elif name.startswith("--") and arg.startswith(name + "="):
                value = arg.split("=", 1)[1]
            if value is not None and _COUNT.fullmatch(value):
                return int(value)
    return None


def _launch(body: str) -> _Launch | None:
    m = _BINARY.search(body)
    if not m:
        return None
    before = body[: m.start()].split()
    after = body[m.end():].split()
    out = _Launch(collective=m.group(1))
    prefix = body[: m.start()]
    if before and not prefix[-1].isspace() and _ASSIGNMENT.match(before[-1]):
        return out  # 'EXEC_CMD=/path/all_reduce_perf' names the test; it launches nothing
    if not _LAUNCHERS.intersection(Path(a).name for a in before):
        out.processes, out.assumed = 1, True  # the binary run directly is one process
    out.gpus = _opt(after, ("-g", "--ngpus"))
    out.threads = _opt(after, ("-t", "--nthreads"))
    out.processes = out.processes or _opt(before, ("-np", "-n", "--np", "--ntasks"))
    out.nodes = _opt(before, ("-N", "--nodes"))
    per_node = _opt(before, ("--ntasks-per-node", "--npernode", "-npernode", "-ppn"))
    hosts = next((before[i + 1] for i, a in enumerate(before[:-1]) if a in ("-H", "--host")),
                 None)
    if hosts and out.nodes is None:
        out.nodes = len([h for h in hosts.split(",") if h])
    if out.processes is None and out.nodes and per_node:
        out.processes = out.nodes * per_node
    return out


def _num(token: str) -> float | None:
    if token.upper() in ("N/A", "NA", "-"):
        return None
    return float(token)


def _wrong(token: str) -> int | None:
    if token.upper() in ("N/A", "NA", "-"):
        return None
    value = float(token)
    if not math.isfinite(value) or abs(value) > INT64_MAX:
        raise ValueError("#wrong out of range")
    return int(value)


def _collective_from_name(path: Path) -> str | None:
    name = path.name.lower()
    for coll in COLLECTIVES:
        if coll in name:
            return coll
    return None


def read_lines(path: Path) -> list[str]:
    """Lines split on ``\\n`` only (so numbers match editors), CR and bad UTF-8 tolerated;
    the file's size and each line's length bounded while reading (cmax.reading.limits)."""
    return [ln.rstrip(b"\n").rstrip(b"\r").decode("utf-8", errors="replace")
            for ln in read_bounded_lines(path)]


def _is_data(tokens: list[str]) -> bool:
    return (len(tokens) >= 3 and _INT.match(tokens[0]) is not None
            and _INT.match(tokens[1]) is not None and _INT.match(tokens[2]) is None)


def _starts_run(body: str) -> bool:
    return bool(_HEADER.match(body) or _STARTING.search(body) or _BINARY.search(body)
                or body.startswith(("Using devices", "nccl-tests version")))


def parse_nccl_tests(path: Path) -> list[NcclTest]:
    """Every test block in the file, with its rows (file line numbers kept)."""
    lines = read_lines(path)
    # a commented header line and its '#'-stripped documentation copy read the same
    bodies = [_clean(text).lstrip("#").strip() for text in lines]
    tests: list[NcclTest] = []
    pending: str | None = None  # a collective named before its block's header
    launch: _Launch | None = None
    current: NcclTest | None = None
    fabric: dict[str, int] = {}
    versions: dict[str, int] = {}  # the NCCL library the run loaded -> first line
    mnnvl: dict[str, tuple[str, int]] = {}  # host -> (NVLink domain, first line)
    rows = 0

    def block() -> NcclTest:
        nonlocal current
        if current is None:
            current = NcclTest(collective=pending)
            if launch is not None:
                current.processes, current.launcher_nodes = launch.processes, launch.nodes
                current.processes_assumed = launch.assumed
                current.launcher_gpus = launch.gpus
            tests.append(current)
        return current

    def finished() -> bool:
        return current is not None and (current.sizes > 0 or current.threads is not None)

    for idx, body in enumerate(bodies):
        lineno = idx + 1
        if not body:
            continue
        if "version" in body and (version := nccl_version(body)) is not None:
            versions.setdefault(version, lineno)
        if " NCCL " in body:  # NCCL_DEBUG chatter: every rank's, often most of the file
            if MNNVL_KEY in body and (where := mnnvl_domain(body)) is not None:
                mnnvl.setdefault(where[0], (where[1], lineno))
            pattern = next((p for k, p in _FABRIC if k in body), None)
            if pattern is not None and (m := pattern.search(body)):
                fabric.setdefault(m.group(0).strip(), lineno)
            continue
        if m := _STARTING.search(body):
            if m.group(1) in COLLECTIVES:
                pending = m.group(1)
            if finished():
                current = None  # the previous test is over
            if current is not None:
                current.collective = pending
            continue
        if m := _HEADER.match(body):
            if finished():
                current = None
            test = block()
            test.threads, test.gpus_per_thread = int(m.group(1)), int(m.group(2))
            test.header_line = lineno
            continue
        if m := _RANK.match(body):
            test = block()
            rank, host = int(m.group(1)), m.group(2)
            test.ranks.add(rank)
            test.rank_hosts.setdefault(rank, host)
            test.hosts.add(host)
            test.host_lines.setdefault(host, lineno)
            name = (m.group(3) or "").strip()
            if name and not name.endswith("..."):
                test.gpu_names.setdefault(name, lineno)
            elif name.endswith("..."):
                test.elided = True  # nccl-tests' own cut of a long per-process list
            continue
        if _TRUNCATED.search(body) and not _is_data(body.split()):
            test = block()
            if test.sizes == 0:
                test.elided = True
            test.truncated_line = test.truncated_line or lineno
            continue
        if m := _AVG.match(body):
            with contextlib.suppress(ValueError):
                value = float(m.group(1))
                if math.isfinite(value):
                    block().avg_busbw_gbps = value
            continue
        tokens = body.split()
        if _COLUMNS.match(body):
            layout = _layout_from_header(tokens)
            if layout is not None:
                block().layout = layout
            continue
        if not _is_data(tokens):
            if (cmd := _launch(body)) is not None:
                pending, launch = cmd.collective, cmd
                if finished():
                    current = None
            continue
        test = block()
        if test.layout is None:
            test.layout = _layout_from_row(tokens)
        row = _data_row(tokens, test.layout)
        if row is None and test.sizes == 0 and test.layout is not None:
            blank = _without_redop(test.layout)
            if blank is not None and (row := _data_row(tokens, blank)) is not None:
                test.layout = blank
                test.notes.append(f"line {lineno}: the rows leave the header's redop column "
                                  "blank (older nccl-tests, no reduction); read without it")
        if row is None:
            if _cut_mid_write(bodies, idx):
                test.cut_row = lineno  # its numbers cannot be trusted
                continue
            raise EvidenceError(
                f"malformed nccl-tests data row: {body[:80]!r}", file=path, line=lineno,
                expected="size count type [redop root] then time algbw busbw #wrong for "
                "out-of-place and in-place, as the block's column header says",
                fix="use the unmodified nccl-tests output")
        test.sizes += 1
        rows += 1
        if rows > MAX_NCCL_ROWS:
            raise limit_error(f"more than {MAX_NCCL_ROWS:,} data rows", f"{MAX_NCCL_ROWS:,} rows "
                              "in one nccl-tests file", file=path, line=lineno)
        for in_place, values in row[2]:
            test.rows.append({
                "size_bytes": row[0], "dtype": row[1], "time_us": values[0],
                "algbw_gbps": values[1], "busbw_gbps": values[2], "wrong": values[3],
                "in_place": in_place, "line": lineno,
            })
    fallback = pending or _collective_from_name(path)
    kept = [t for t in tests if t.sizes or t.ranks]
    for test in kept:
        if test.collective is None:
            test.collective = fallback
        _resolve_counts(test)
    for test in kept:
        test.fabric = fabric  # transport lines are printed once per process, not per test
        test.nccl_versions = versions
        test.mnnvl = mnnvl
        _resolve_domains(test)
    return kept


def nccl_version(body: str) -> str | None:
    """The NCCL library version a line states: NCCL's banner, else the ``nccl-library`` code
    nccl-tests prints (``NCCL_VERSION(X,Y,Z)`` in nccl.h: X*10000+Y*100+Z from 2.9, X*1000+Y*100+Z
    before), so both spell the same release the same way."""
    if m := _NCCL_BANNER.search(body):
        return m.group(1)
    if m := _NCCL_LIBRARY.match(body):
        code = int(m.group(1))
        major, rest = divmod(code, 10000) if code >= 20900 else divmod(code, 1000)
        return f"{major}.{rest // 100}.{rest % 100}"
    return None


def _resolve_domains(test: NcclTest) -> None:
    """How many NVLink domains the run spans: every MNNVL line of the file (each rank prints
    one, so they name every host even when the device list was cut), else rack host names
    of a complete device list."""
    if test.mnnvl:
        hosts = set(test.mnnvl)
    elif test.hosts and not test.elided:
        hosts = test.hosts
    else:
        return
    count, how = domains_of(hosts, {h: d for h, (d, _) in test.mnnvl.items()})
    if count is None:
        return
    test.nvlink_domains = count
    test.notes.append(f"{count} NVLink domain(s) from {how}"
                      + (": the job is split across NVLink domains" if count > 1 else ""))


def _cut_mid_write(bodies: list[str], idx: int) -> bool:
    """A bad row is cut mid-write if nothing follows it but a new run (or the end of file)."""
    for body in bodies[idx + 1:]:
        if not body:
            continue
        if body.startswith(_FOOTER) or _is_data(body.split()):
            return False
        return _starts_run(body)
    return True


_Values = tuple[float | None, float | None, float | None, int | None]


def _data_row(tokens: list[str],
              layout: _Layout | None) -> tuple[int, str, list[tuple[bool, _Values]]] | None:
    """(size, dtype, halves) or None when the row does not fit the block's layout."""
    if layout is None:
        return None
    n = len(tokens)
    if n != layout.ncols and not (layout.extra_ok and n >= layout.ncols - 1):
        return None
    try:
        if layout.redop is not None and tokens[layout.redop].lower() not in _REDOPS:
            return None
        if layout.root is not None and not _INT.match(tokens[layout.root]):
            return None
        size = int(tokens[0])
        if not 0 <= size <= INT64_MAX:
            return None
        halves: list[tuple[bool, _Values]] = []
        for in_place, t, a, b, w in layout.halves:
            halves.append((in_place, (_num(tokens[t]), _num(tokens[a]), _num(tokens[b]),
                                      _wrong(tokens[w]) if w is not None else None)))
    except (ValueError, IndexError):
        return None
    return size, tokens[2], halves


def _allreduce_factor(n: int) -> float:
    return 2 * (n - 1) / n


def _gather_factor(n: int) -> float:
    return (n - 1) / n


# busbw / algbw as a function of the rank count n (NVIDIA/nccl-tests doc/PERFORMANCE.md), and
# the largest factor it approaches
_FACTORS: dict[str, tuple[Callable[[int], float], float]] = {
    "all_reduce": (_allreduce_factor, 2.0),
    "all_gather": (_gather_factor, 1.0),
    "reduce_scatter": (_gather_factor, 1.0),
    "alltoall": (_gather_factor, 1.0),
}


def solve_ranks(collective: str | None, rows: list[dict[str, object]]) -> tuple[int, str] | None:
    """The rank count implied by busbw/algbw at the largest size, when it is unambiguous."""
    if collective not in _FACTORS:
        return None
    forward, limit = _FACTORS[collective]
    usable = [r for r in rows if isinstance(r["algbw_gbps"], float)
              and isinstance(r["busbw_gbps"], float) and math.isfinite(r["algbw_gbps"])
              and math.isfinite(r["busbw_gbps"]) and r["algbw_gbps"] >= 1.0]
    if not usable:
        return None
    row = max(usable, key=lambda r: (int(r["size_bytes"]), not r["in_place"]))  # type: ignore[call-overload]
    alg, bus = float(row["algbw_gbps"]), float(row["busbw_gbps"])  # type: ignore[arg-type]
    f = bus / alg
    if not 0.0 < f < limit:
        return None
    n = round(limit / (limit - f))  # inverts limit * (n - 1) / n
    if n < 2 or n > 1_000_000:
        return None
    # printed with 2 decimals: the neighbours n-1 and n+1 must be clearly further away
    tol = 0.006 / alg * (1 + f)
    if abs(forward(n) - f) > tol or min(abs(forward(n + 1) - f), abs(forward(n - 1) - f)) <= tol:
        return None
    how = (f"solved from busbw/algbw = {bus:g}/{alg:g} at {row['size_bytes']} B "
           f"(line {row['line']}): n = {n}")
    return n, how


def _resolve_counts(test: NcclTest) -> None:
    """Rank and node counts from the strongest evidence the block holds.

    Strongest first: a complete device list (every rank's own line), the bus/alg bandwidth
    factor (the tool's own arithmetic), a launcher's stated process count, the highest listed
    rank + 1 (a lower bound), and last the assumption of one process when the binary was
    run without a launcher. A weaker source never overrides a stronger one, and no count
    below a listed rank is accepted; the notes say which source won and what was set aside.
    """
    listed = len(test.ranks)
    highest = max(test.ranks) + 1 if test.ranks else None
    complete = bool(test.ranks) and not test.elided and test.ranks == set(range(listed))
    per_proc = (test.threads or 1) * (test.gpus_per_thread or test.launcher_gpus or 1)
    solved = solve_ranks(test.collective, test.rows)
    stated = (test.processes * per_proc
              if test.processes is not None and not test.processes_assumed else None)
    if complete and max(stated or 0, solved[0] if solved else 0) > listed:
        complete = False  # ranks 0..k listed, but the run had more: the bottom was cut off
        test.elided = True
    if complete:
        test.rank_count = listed
        test.node_count = len(test.hosts)
        return
    candidates: list[tuple[int, str]] = []
    if solved is not None:
        candidates.append((solved[0], f"ranks {solved[1]}"))
    if stated is not None:
        candidates.append((stated, f"ranks from the launcher command: {test.processes} "
                                   f"process(es) x {per_proc} GPU(s) each = {stated}"))
    if highest is not None:
        candidates.append((highest, f"ranks = highest listed rank + 1 = {highest} (the device "
                                    "list is incomplete; a lower bound)"))
    if test.processes_assumed:
        candidates.append((per_proc, f"ranks from the command line: the binary run without a "
                                     f"launcher is 1 process(es) x {per_proc} GPU(s) each = "
                                     f"{per_proc}"))
    elif not candidates and (test.threads is not None or test.launcher_gpus is not None):
        candidates.append((per_proc, f"ranks = nThread x nGpus = {per_proc}, assuming one "
                                     "process (no device lines, no launcher command)"))
    floor = highest or 0
    usable = [c for c in candidates if c[0] >= floor]
    if usable:
        test.rank_count, why = usable[0]
        test.notes.append(why)
        for count, other in candidates[candidates.index(usable[0]) + 1:]:
            if count == test.rank_count:
                test.notes.append(f"agrees: {other}")
            else:
                reason = (f"below rank {floor - 1} listed" if count < floor
                          else "weaker evidence")
                test.notes.append(f"set aside ({reason}): {other}")
    if test.ranks:
        test.notes.insert(0, f"device list incomplete: {listed} rank line(s) seen")
    if test.launcher_nodes is not None:
        test.node_count = test.launcher_nodes
    elif test.rank_count is not None and (blocks := _host_blocks(test)) is not None:
        test.node_count = len(test.hosts)
        test.notes.append(f"nodes = {test.node_count} from the device lines: {blocks}")


def _host_blocks(test: NcclTest) -> str | None:
    """Each listed host's ranks as one contiguous block that together cover every rank.

    nccl-tests launches rank-contiguous per node; when the first and last lines of every
    host's block are listed (``Rank 0``/``Rank 7`` on one host, ``8``/``15`` on the next) the
    hosts seen are all the hosts, even though the lines between were elided.
    """
    spans: dict[str, list[int]] = {}
    for rank, host in test.rank_hosts.items():
        spans.setdefault(host, []).append(rank)
    blocks = sorted((min(r), max(r), h) for h, r in spans.items())
    size = blocks[0][1] - blocks[0][0] + 1 if blocks else 0
    if (not blocks or blocks[0][0] != 0 or blocks[-1][1] + 1 != test.rank_count
            or any(b[1] - b[0] + 1 != size for b in blocks)
            or any(b[0] != a[1] + 1 for a, b in itertools.pairwise(blocks))):
        return None
    return ", ".join(f"ranks {lo}-{hi} on {host}" for lo, hi, host in blocks)


def nccl_facts(tests: list[NcclTest]) -> tuple[Fact, ...]:
    """The identity facts the file states: GPUs, hosts, rank/node counts, transport lines."""
    facts: list[Fact] = []
    for test in tests:
        facts += [Fact("gpu", name, line) for name, line in test.gpu_names.items()]
        facts += [Fact("host", host, line) for host, line in test.host_lines.items()]
        if test.rank_count is not None:
            facts.append(Fact("gpu_count", str(test.rank_count), test.header_line,
                              where=f"{test.collective} ranks"))
        if test.node_count is not None:
            facts.append(Fact("node_count", str(test.node_count), test.header_line,
                              where=f"{test.collective} hosts"))
    if tests:
        facts += [Fact("fabric", text, line) for text, line in tests[0].fabric.items()]
        facts += [Fact("nvlink_domain", domain, line, where=host)
                  for host, (domain, line) in tests[0].mnnvl.items()]
        facts += [Fact("software", version, line, where="nccl")
                  for version, line in tests[0].nccl_versions.items()]
    return tuple(sorted(set(facts), key=lambda f: (f.line or 0, f.kind, f.value)))


def nccl_frame(tests: list[NcclTest], *, run_id: str, source_file: str,
               path: Path) -> pl.DataFrame:
    """Canonical ``nccl`` rows for the parsed tests."""
    records: list[dict[str, object]] = []
    for index, test in enumerate(tests):
        if test.collective is None:
            raise EvidenceError(
                "cannot tell which collective this nccl-tests output measured", file=path,
                expected="a '# Collective test starting: <name>_perf' line, the command line, "
                "or a file name containing the test name",
                fix="keep the full nccl-tests output or name the file e.g. all_reduce_perf.txt")
        hosts = ",".join(sorted(test.hosts)) if test.hosts and not test.elided else None
        for row in test.rows:
            records.append({"run_id": run_id, "collective": test.collective,
                            "ranks": test.rank_count, "nodes": test.node_count,
                            "source_file": source_file, "block": index, "hosts": hosts,
                            "nvlink_domains": test.nvlink_domains, **row})
    return table(records, NCCL_SCHEMA)


def test_notes(tests: list[NcclTest]) -> list[str]:
    """What a reader should know about how the file was read (one line each)."""
    notes: list[str] = []
    multi = len(tests) > 1
    for i, t in enumerate(tests):
        where = f"test {i + 1} ({t.collective}): " if multi else ""
        notes += [where + n for n in t.notes]
        if t.cut_row is not None:
            notes.append(f"{where}line {t.cut_row} is a cut-off data row (cut mid-write); not used")
        if t.truncated_line is not None:
            notes.append(f"{where}line {t.truncated_line}: the output was truncated by whoever "
                         "pasted it; the rows shown are used")
        if t.avg_busbw_gbps is None and t.sizes:
            notes.append(f"{where}no 'Avg bus bandwidth' line: the average is computed over "
                         "the rows shown")
    return notes


def _bandwidths(frame: pl.DataFrame, printed: float | None) -> tuple[dict[str, object],
                                                                     list[str]]:
    """One test's average (as printed, else computed over its rows) and peaks, and the notes
    of the datatype it is rated on."""
    # nan/inf rows are reported by validation; here they would print as NaN/Infinity (no JSON)
    busbw = [v for v in frame["busbw_gbps"].to_list() if v is not None and math.isfinite(v)]
    rated, type_notes = rated_rows(frame)

    def peak(in_place: bool) -> float | None:
        half = rated.filter((pl.col("in_place").fill_null(False) == in_place)
                            & pl.col("busbw_gbps").is_finite())["busbw_gbps"]
        return float(half.max()) if half.len() else None  # type: ignore[arg-type]

    avg = printed if printed is not None else (sum(busbw) / len(busbw) if busbw else None)
    return {"avg_busbw_gbps": round(avg, 3) if avg is not None else None,
            "avg_busbw_source": "printed" if printed is not None else "computed",
            "max_busbw_gbps": peak(False) if peak(False) is not None else peak(True),
            "max_busbw_in_place_gbps": peak(True)}, type_notes


def nccl_summary(tests: list[NcclTest], path: Path) -> dict[str, object]:
    """The file at a glance. Several tests in one paste (two collectives, or two runs of
    one) are reported each under ``tests``; their bandwidths are never averaged together,
    so the top-level average and peaks are those of a single test only."""
    frame = nccl_frame(tests, run_id="inspect", source_file=path.name, path=path)
    collectives = sorted({str(t.collective) for t in tests})
    ranks = sorted({t.rank_count for t in tests if t.rank_count is not None})
    nodes = sorted({t.node_count for t in tests if t.node_count is not None})
    out: dict[str, object] = {
        "format": "nccl-tests",
        "collective": collectives[0] if len(collectives) == 1 else ",".join(collectives),
        "ranks": ranks[0] if len(ranks) == 1 else (ranks or None),
        "nodes": nodes[0] if len(nodes) == 1 else (nodes or None),
        "rows": sum(t.sizes for t in tests),
    }
    type_notes: list[str] = []
    if len(tests) == 1:
        figures, type_notes = _bandwidths(frame, tests[0].avg_busbw_gbps)
        out.update(figures)
    else:
        out.update({"avg_busbw_gbps": None, "avg_busbw_source": f"per test ({len(tests)} tests)",
                    "max_busbw_gbps": None, "max_busbw_in_place_gbps": None})
    out["wrong"] = int(sum(w for w in frame["wrong"].drop_nulls().to_list()))
    if tests and tests[0].nccl_versions:
        out["nccl_version"] = ", ".join(tests[0].nccl_versions)
    notes = test_notes(tests) + type_notes
    if notes:
        out["notes"] = notes
    if len(tests) > 1:
        each: list[dict[str, object]] = []
        for i, t in enumerate(tests):
            figures, notes_of_test = _bandwidths(
                nccl_frame([t], run_id="inspect", source_file=path.name, path=path),
                t.avg_busbw_gbps)
            type_notes += [f"test {i + 1} ({t.collective}): {n}" for n in notes_of_test]
            each.append({"collective": t.collective, "ranks": t.rank_count,
                         "nodes": t.node_count, "rows": t.sizes, **figures})
        out["tests"] = each
        if type_notes:
            out["notes"] = [*(out.get("notes") or []), *type_notes]  # type: ignore[misc]
    return out


class NcclTests(NcclFormat[list[NcclTest]]):
    id = "nccl-tests"
    title = "nccl-tests output (text)"
    tool = "NVIDIA nccl-tests (`all_reduce_perf -b 8 -e 16G -f 2 -g 1`, ...) stdout"
    sample = "ingest/nccl/all_reduce_1node.txt"

    def parse(self, probe: Probe) -> list[NcclTest]:
        return parse_nccl_tests(probe.path)

    def summarise(self, parsed: list[NcclTest], probe: Probe) -> dict[str, Any]:
        return nccl_summary(parsed, probe.path)

    def facts(self, parsed: list[NcclTest]) -> tuple[Fact, ...]:
        return nccl_facts(parsed)

    def frame(self, parsed: list[NcclTest], *, run_id: str, source_file: str,
              path: Path) -> pl.DataFrame:
        return nccl_frame(parsed, run_id=run_id, source_file=source_file, path=path)


register(NcclTests())
