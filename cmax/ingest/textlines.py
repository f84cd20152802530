"""Streaming line reader and the shared rules for training logs.

Training logs reach gigabytes (every rank's NCCL chatter goes to the same file), so they are
never read into Python line by line. Only lines holding a format's keywords are kept: a
``grep`` child selects them from a large file, an in-process ``bytes.find`` filter from a
small one (no child process for the kilobyte logs of an audit), Polars' streaming scanner
when grep is missing. Polars pulls the numbers out of the kept lines with regexes, a
bounded chunk at a time, so memory follows the step table, not the file. Identity facts
(world size, hosts, precision, parallel sizes, ...) come from the top of the log only
(:func:`head_facts`).

Real logs are messy, and each mess has a rule here:

* ANSI colour codes may sit between a label and its number: every value pattern allows them.
* CRLF endings are stripped by the reader; a lone ``\\r`` (progress-bar redraws) stays inside
  the line so line numbers keep counting ``\\n`` only, as editors and ``grep -n`` do.
* Invalid UTF-8 is replaced, not fatal; so is a NUL byte (it ends nothing: the step after it
  on the same line is kept).
* A last line without a newline was cut off mid-write: its numbers may be cut too, so its step
  is not used and the run says so in ``notes``.
* The same iteration printed again (several ranks, duplicated lines) is one step: the first
  occurrence's values and line number are kept.
* A restart inside one log shows as the iteration counter jumping back; the later attempt wins
  for every iteration it printed (llmb-run keeps the highest retry), and ``restarts`` counts it.
* NaN or inf values are kept as printed; validation flags them.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest import _greplines as greplines
from cmax.ingest._greplines import HEAD_BYTES, GrepChild, keyword_lines, read_head
from cmax.ingest.evidence import STEPS_SCHEMA, conform
from cmax.ingest.facts import Fact
from cmax.recipes.window import steady_state_window

# A number as training frameworks print it: 12, 10.08, 7.401e+02, 3.000000E-05, nan, inf.
NUM = r"([-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|NAN|inf|Inf|INF))"
# the same with thousands separators (TorchTitan prints ``tps: 1,234``)
GROUPED_NUM = r"([-+]?\d[\d,]*(?:\.\d*)?)"
# Whitespace and ANSI colour codes that may separate a label from its value.
GAP = r"(?:\s|\x1b\[[0-9;]*[A-Za-z])*"

# An iteration counter falling back by more than this is a restart, not interleaved ranks
# printing the same few iterations slightly out of order.
RESTART_SLACK = 2
#: iterations listed in a runs-table column (skipped_at): enough to place them, bounded
MAX_LISTED = 20

#: a parser's step rows: the steps table's columns but the two ingest adds (run and file)
STEP_COLUMNS: dict[str, pl.DataType] = {
    name: dtype for name, dtype in STEPS_SCHEMA.items() if name not in ("run_id", "source_file")}

CONFIG_KEYS = ("seq_len", "gbs", "mbs", "tp", "pp", "cp", "ep", "vp")


def scan_lines(path: Path) -> pl.LazyFrame:
    """Every ``\\n``-terminated line of a text file as ``line`` (1-based) and ``text``.

    Polars' line scanner strips a CR before the LF and keeps empty lines, so numbering holds;
    it rejects invalid UTF-8 (the caller then reads the file in-process, replacing bad bytes).
    """
    return pl.scan_lines(path, name="text", row_index_name="line", row_index_offset=1)


# ``grep`` is the fastest line filter on any Unix box (it is the I/O floor the benchmark
# compares against); for a large file it selects the keyword lines in its own process and
# Polars parses only those, chunk by chunk. A small file (the audit path: hundreds of runs,
# kilobytes each) is filtered in-process instead: a grep child and a reader thread per file
# would cost more than the read. Without grep (or if it fails) a large file is read by
# Polars' own streaming line scanner. All paths give identical frames (tests run each).
USE_GREP = True
# what an editor shows for a NUL byte: grep prints it inside the line, Polars' CSV reader
# would end the line there (and drop the step after it), so it is replaced before parsing
NUL = b"\x00"
NUL_AS = "\ufffd".encode()


def query_lines(
    path: Path,
    build: Callable[[pl.LazyFrame], pl.LazyFrame],
    *,
    keys: Sequence[str],
    parse: Callable[[bytes], pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """``build`` applied to the lines holding any of ``keys`` (``line``, ``text``), in order.

    With several keys, ``build`` must yield at most one row per line (a line holding two keys
    is read twice on the grep path and kept once). ``parse``, when given, turns a batch of
    ``grep -n`` output (whole ``N:text`` lines, about ``GREP_BATCH`` bytes) into the rows
    ``build`` would give, faster (:func:`cmax.ingest._fields.parse_grep`). Reader failures
    become a CmaxError naming the file.
    """
    with LineQuery(path, keys) as lines:
        return lines.collect(build, parse)


def facts_and_lines(
    path: Path,
    build: Callable[[pl.LazyFrame], pl.LazyFrame],
    *,
    keys: Sequence[str],
) -> tuple[list[Fact], pl.DataFrame]:
    """:func:`head_facts` and :func:`query_lines` of one log, the facts read while grep
    reads the file (see ``LineQuery.collect``)."""
    head: list[Fact] = []
    with LineQuery(path, keys) as lines:
        return head, lines.collect(build, meanwhile=lambda: head.extend(head_facts(path)))


class LineQuery:
    """:func:`query_lines` in two steps, so a parser works while grep reads the file.

    On a large file the grep children start when the query is made; ``collect`` reads their
    output. Work that needs no step line runs while grep reads: what must come before the
    parse (a layout learned from the top, :class:`cmax.ingest._fields.StepQuery`) between the
    two steps, the rest (the head's identity facts) as ``collect``'s ``meanwhile``. On two
    cores that work costs no wall time; done first it would delay grep by as much. Use it as a
    context manager: greps whose output was never read are stopped on the way out.
    """

    def __init__(self, path: Path, keys: Sequence[str]) -> None:
        self.path, self.keys = path, tuple(keys)
        try:
            self.size = path.stat().st_size
        except OSError as exc:
            raise reader_error(exc, path) from None
        self._greps = (greplines.start_greps(path, self.keys)
                       if USE_GREP and self.size > greplines.SMALL_FILE else None)

    def __enter__(self) -> LineQuery:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop greps still running (their output is not wanted)."""
        for g in self._greps or ():
            g.stop()

    def collect(self, build: Callable[[pl.LazyFrame], pl.LazyFrame],
                parse: Callable[[bytes], pl.DataFrame] | None = None,
                meanwhile: Callable[[], None] | None = None) -> pl.DataFrame:
        """The rows :func:`query_lines` gives (see there for ``build`` and ``parse``).

        ``meanwhile`` is work that needs no line (the head's facts): run once, the first time
        grep's output runs dry, where the wait for grep would be wasted; done before the
        parse it would delay it by as much. Without grep it runs first.
        """
        path = self.path
        once = greplines.Once(meanwhile)
        try:
            grepped = (_grep_frames(self._greps, build, self.keys, parse, once)
                       if self._greps else None)
            self._greps = None
            once()
            if grepped is not None:
                frame = grepped
            elif self.size <= greplines.SMALL_FILE:
                frame = _via_python(path, build, self.keys)
            else:
                frame = _via_polars(path, build, self.keys)
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise reader_error(exc, path) from None
        frame = frame.with_columns(pl.col("line").cast(pl.Int64))
        if frame.get_column("line").is_sorted():
            return contiguous([frame])  # one grep or the in-process reader: in file order
        return frame.sort("line", maintain_order=True)


def reader_error(exc: Exception, path: Path) -> EvidenceError:
    """The one-line error for a log a reader failed on (Polars' first line, or the OS's)."""
    if isinstance(exc, OSError):
        return EvidenceError(f"cannot read log: {exc.strerror or exc}", file=path)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return EvidenceError(f"cannot parse log: {first}", file=path)


# Up to this many rows the step table is made one buffer per column (a small copy); beyond
# it the per-chunk buffers are kept, since a copy would double the peak.
CONTIGUOUS_ROWS = 250_000


def contiguous(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """``frames`` stacked; one buffer per column when the table is small.

    Chunked columns hold the same rows, but a sum or mean over them adds in another order,
    which can move the last bit of a float; a run's usual few hundred steps are therefore
    made contiguous (as the readers always did). A multi-million-step table stays in chunks:
    copying it would double the peak memory for a last-bit difference.
    """
    frames = list(frames)
    rows = sum(f.height for f in frames)
    single = len(frames) == 1 and all(n == 1 for n in frames[0].n_chunks("all"))
    if single:
        return frames[0]
    return pl.concat(frames, how="vertical_relaxed", rechunk=rows <= CONTIGUOUS_ROWS)


def _keyword_filter(keys: Sequence[str]) -> pl.Expr:
    text = pl.col("text")
    if len(keys) == 1:
        return text.str.contains(keys[0], literal=True)
    return text.str.contains_any(list(keys))


def _via_polars(path: Path, build: Callable[[pl.LazyFrame], pl.LazyFrame],
                keys: Sequence[str]) -> pl.DataFrame:
    """Polars' streaming line scanner; a file that is not valid UTF-8 goes to the Python reader."""
    lines = scan_lines(path).filter(_keyword_filter(keys))
    try:
        return build(lines).collect(engine="streaming")
    except (pl.exceptions.PolarsError, OSError) as exc:
        text = str(exc).strip()
        if "utf" in text.lower():
            return _via_python(path, build, keys)  # invalid UTF-8: the lossy reader
        first = text.splitlines()[0] if text else type(exc).__name__
        raise EvidenceError(f"cannot read log: {first}", file=path) from None


def line_blocks(path: Path, block: int = greplines.GREP_CHUNK) -> Iterator[tuple[int, bytes]]:
    """The file as blocks of whole lines, each with the number of its first line.

    A last line without a newline gets one, as grep prints it.
    """
    line = 1
    rest = b""
    with path.open("rb") as fh:
        while raw := fh.read(block):
            data = rest + raw
            cut = data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
            if data:
                yield line, data
                line += data.count(b"\n")
        if rest:
            yield line, rest + b"\n"


def _python_chunks(path: Path, keys: Sequence[str]) -> Iterator[bytes]:
    """Keyword lines as ``grep -n`` prints them (``N:text``), a block at a time."""
    bkeys = [k.encode() for k in keys]
    for first, data in line_blocks(path):
        found = keyword_lines(data, bkeys, first)
        if found:
            yield b"".join(b"%d:%s\n" % item for item in found)


def _via_python(path: Path, build: Callable[[pl.LazyFrame], pl.LazyFrame],
                keys: Sequence[str]) -> pl.DataFrame:
    """Keyword lines filtered in this process: one ``collect()`` for a small file."""
    small = path.stat().st_size <= greplines.SMALL_FILE
    chunks = list(_python_chunks(path, keys)) if small else None
    if chunks is not None:  # small: one frame, one collect
        if not chunks:
            return empty_result(build)
        return build(grep_lines(b"".join(chunks)).lazy()).collect()
    frames = [build(grep_lines(chunk).lazy()).collect() for chunk in _python_chunks(path, keys)]
    return contiguous(frames) if frames else empty_result(build)


def _grep_frames(greps: Sequence[GrepChild], build: Callable[[pl.LazyFrame], pl.LazyFrame],
                 keys: Sequence[str], parse: Callable[[bytes], pl.DataFrame] | None,
                 idle: Callable[[], None]) -> pl.DataFrame | None:
    """The greps' keyword lines parsed by Polars chunk by chunk; None: grep failed.

    A line holding two keys comes once per key; ``build`` yields at most one row per line, so
    the first is kept.
    """
    try:
        if parse is None:
            frames = [frame for g in greps for frame in g.frames(
                lambda data: build(grep_lines(data).lazy()).collect(), greplines.GREP_CHUNK,
                idle)]
        else:
            frames = [frame for g in greps
                      for frame in g.frames(parse, greplines.GREP_BATCH, idle)]
    finally:
        for g in greps:  # after an error, stop greps whose output was never read
            g.stop()
    if any(g.proc.returncode not in (0, 1) for g in greps):
        return None  # grep failed (unsupported flags, unreadable file): use Polars
    if not frames:
        return empty_result(build)
    frame = contiguous(frames)
    if len(keys) > 1:
        frame = frame.sort("line", maintain_order=True).unique(
            subset=["line"], keep="first", maintain_order=True)
    return frame


def lines_at(path: Path, numbers: Sequence[int], key: str) -> pl.DataFrame:
    """The lines of ``path`` numbered ``numbers`` (sorted) that hold ``key``, as ``line`` and
    ``text`` exactly as the other readers give them (bad UTF-8 and NUL replaced, CR before
    LF dropped). One pass counting newlines; Python touches only the wanted lines."""
    wanted = iter(numbers)
    target = next(wanted, None)
    found: list[bytes] = []
    bkey = key.encode()
    blocks = line_blocks(path) if target is not None else ()  # none wanted: nothing read
    for first, data in blocks:
        if target is None:
            break
        after = first + data.count(b"\n")  # the first line of the next block
        if target >= after:
            continue
        split = data.split(b"\n")  # only blocks holding a wanted line are split
        while target is not None and target < after:
            text = split[target - first]
            if bkey in text:
                found.append(b"%d:%s\n" % (target, text))
            target = next(wanted, None)
    if not found:
        return pl.DataFrame(schema={"line": pl.Int64(), "text": pl.String()})
    return grep_lines(b"".join(found))


def grep_lines(data: bytes) -> pl.DataFrame:
    """``N:text`` lines printed by ``grep -n`` as ``line`` and ``text`` (CR before LF dropped)."""
    if data.find(NUL) != -1:
        data = data.replace(NUL, NUL_AS)
    raw = pl.read_csv(io.BytesIO(data), has_header=False, separator="\x00", quote_char=None,
                      schema={"raw": pl.String()}, encoding="utf8-lossy",
                      truncate_ragged_lines=True)
    parts = pl.col("raw").str.splitn(":", 2)
    return raw.select(
        parts.struct.field("field_0").cast(pl.Int64).alias("line"),
        parts.struct.field("field_1").fill_null("").alias("text"),
    )


def empty_result(build: Callable[[pl.LazyFrame], pl.LazyFrame]) -> pl.DataFrame:
    """What ``build`` gives for no lines: its columns, no rows."""
    empty = pl.DataFrame(schema={"line": pl.Int64(), "text": pl.String()})
    return build(empty.lazy()).collect()


def first_match(path: Path, key: str, pattern: str, *, within: int = 1000
                ) -> tuple[str, int] | None:
    """Group 1 of ``pattern`` and its line, on the first of the first ``within`` lines holding
    ``key`` (None when none of them matches).

    For values printed on every step line but needed once (the global batch size), so the
    full scan does not pay a regex per line for them. Read in-process, stopping at the first
    hit: no grep child, no Polars query.
    """
    rx = re.compile(pattern)
    seen = 0
    for first, data in line_blocks(path, 1 << 20):
        for line, raw in keyword_lines(data, [key.encode()], first):
            found = rx.search(raw.decode("utf-8", errors="replace"))
            if found:
                return found.group(1), line
            seen += 1
            if seen >= within:
                return None
    return None


# Megatron / NeMo argument name -> canonical runs column (Megatron's argument dump prints
# ``  tensor_model_parallel_size ........ 4``, NeMo configs ``tensor_model_parallel_size: 4``)
ARG_KEYS: dict[str, str] = {
    "seq_length": "seq_len",
    "global_batch_size": "gbs",
    "micro_batch_size": "mbs",
    "tensor_model_parallel_size": "tp",
    "pipeline_model_parallel_size": "pp",
    "context_parallel_size": "cp",
    "expert_model_parallel_size": "ep",
    "virtual_pipeline_model_parallel_size": "vp",
    "world_size": "world_size",
}
ARG_LINE = r"\b(" + "|".join(ARG_KEYS) + r")\s*(?:\.{2,}|:|=)\s*(\d+)\s*$"
# Statements of the same shape that are identity facts, not the run's configuration columns:
# the model's shape (Megatron ``  num_layers ........ 80``, ``  hidden_size ..... 8192``; NeMo
# configs ``num_layers: 80``) and the GPUs per node (Lightning trainer ``devices: 8``)
SHAPE_KEYS: dict[str, tuple[str, str]] = {
    "num_layers": ("architecture", "layers"),
    "hidden_size": ("architecture", "hidden"),
    "num_attention_heads": ("architecture", "heads"),
    "devices": ("parallel", "devices"),
}
_SHAPE_RX = re.compile(r"\b(" + "|".join(SHAPE_KEYS) + r")\s*(?:\.{2,}|:|=)\s*(\d+)\s*$")

# Identity facts are printed while a job starts (argument dump, launcher, NCCL set-up), so
# only the top of a log is read for them: the whole of a small log, the first HEAD_BYTES of a
# large one. Each rule: a literal the line must hold (cheap to find), the fact kind, a regex
# whose group ``v`` (and ``k``) make the value, and how the value is written.
_SETTING = r"\s*(?:\.{2,}|:|=)\s*['\"]?(?P<v>[A-Za-z0-9_.+-]+)"
_FACT_RULES: list[tuple[str, str, str, str]] = [
    # Megatron-LM arguments.py: "using world size: 64, data-parallel size: 2, ..."
    ("using world size", "gpu_count", r"using world size:\s*(?P<v>\d+)", "{v}"),
    ("using world size", "parallel", r"\bdata-parallel size:\s*(?P<v>\d+)", "dp={v}"),
    ("using world size", "parallel", r"\bcontext-parallel size:\s*(?P<v>\d+)", "cp={v}"),
    ("using world size", "parallel", r"tensor-model-parallel size:\s*(?P<v>\d+)", "tp={v}"),
    ("using world size", "parallel", r"pipeline-model-parallel size:\s*(?P<v>\d+)", "pp={v}"),
    # Megatron argument dump / NeMo config: "  world_size ........ 64", "world_size: 64"
    ("world_size", "gpu_count", r"\bworld_size\s*(?:\.{2,}|:|=)\s*(?P<v>\d+)", "{v}"),
    # PyTorch Lightning (NeMo): "All distributed processes registered. Starting with 16
    # processes" and "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/16"
    ("processes registered", "gpu_count",
     r"processes registered\. Starting with (?P<v>\d+) processes", "{v}"),
    ("MEMBER:", "gpu_count",
     r"Initializing distributed: GLOBAL_RANK: \d+, MEMBER: \d+/(?P<v>\d+)", "{v}"),
    # Slurm's environment as job scripts echo it: SLURM_JOB_NUM_NODES / SLURM_NNODES
    ("NODES=", "node_count", r"\bSLURM_(?:JOB_NUM_NODES|NNODES)=(?P<v>\d+)", "{v}"),
    ("num_nodes", "node_count", r"\bnum_nodes\s*(?:\.{2,}|:|=)\s*(?P<v>\d+)", "{v}"),
    # NCCL debug lines name the host: "node001:1234:5678 [0] NCCL INFO ..."
    ("NCCL INFO", "host",
     r"^(?:\[?\d+\]?:\s*)?(?P<v>[A-Za-z][A-Za-z0-9._-]*):\d+:\d+ \[\d+\] NCCL INFO", "{v}"),
    # nvidia-smi -L ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)") and its table rows
    ("NVIDIA", "gpu", r"\bGPU \d+: (?P<v>NVIDIA [^(\n]*?)\s*\(UUID", "{v}"),
    ("NVIDIA", "gpu",
     r"^\|\s+\d+\s+(?P<v>NVIDIA [A-Za-z0-9][A-Za-z0-9 -]*?)\s+(?:On|Off)\s", "{v}"),
    # precision settings: Megatron "fp8 ........ hybrid", "fp8_recipe ... delayed",
    # "bf16 ..... True"; NeMo / Megatron-Bridge configs "fp8: hybrid", "precision: bf16-mixed",
    # "mixed_precision: bf16_mixed"; CLI "--fp8-format hybrid"
    ("fp8", "precision", r"(?:^|[\s,{(])(?P<k>fp8(?:_recipe|_format)?)" + _SETTING, "{k}={v}"),
    ("fp8-format", "precision", r"--fp8-format[= ]\s*(?P<v>\S+)", "fp8_format={v}"),
    ("bf16", "precision", r"(?:^|[\s,{(])(?P<k>bf16)" + _SETTING, "{k}={v}"),
    ("precision", "precision", r"\b(?P<k>(?:mixed_)?precision)" + _SETTING, "{k}={v}"),
    # NeMo exp_manager: "Experiments will be logged at /results/llama3.1_8b"
    ("Experiments will be logged at", "experiment",
     r"Experiments will be logged at (?P<v>\S+)", "{v}"),
    # TorchTitan: "Starting job: DeepSeek-V3 671B training"
    ("Starting job:", "model", r"Starting job:\s*(?P<v>.+?)\s*$", "{v}"),
    # pyxis (Slurm container plugin) and any NGC image reference
    ("docker image", "container", r"docker image:?\s*(?P<v>\S+)", "{v}"),
    ("nvcr.io", "container", r"(?P<v>nvcr\.io[/#][A-Za-z0-9._/-]+:[A-Za-z0-9._-]+)", "{v}"),
    ("Jax Version", "framework", r"Jax Version:\s*(?P<v>\S+)", "jax {v}"),
    ("NeMo version", "framework", r"NeMo version:?\s*(?P<v>\S+)", "nemo {v}"),
]
_COMPILED = [(key.encode(), kind, re.compile(rx), fmt) for key, kind, rx, fmt in _FACT_RULES]
_ARG_RX = re.compile(ARG_LINE)
# precision named inside an experiment or config name ("pretrain_llama3.1_8b_fp8_gpus8")
_NAMED_PRECISION = re.compile(r"(?<![a-z0-9])(mxfp8|nvfp4|fp8|bf16|fp16)(?![a-z0-9])", re.I)


def head_facts(path: Path, *, head: int = HEAD_BYTES) -> list[Fact]:
    """Identity facts printed in the top ``head`` bytes of a log, in file order.

    Each rule's keyword is found with ``bytes.find`` and its regex runs only on those lines;
    NCCL lines (most of a multi-node log's top) are matched once per distinct host prefix.
    Each (kind, value) is kept once, at its first line.
    """
    data = read_head(path, head)
    found: list[Fact] = []
    rules: dict[bytes, list[tuple[str, re.Pattern[str], str]]] = {}
    for key, kind, rx, fmt in _COMPILED:
        rules.setdefault(key, []).append((kind, rx, fmt))
    for key, group in rules.items():
        prefixes: set[bytes] = set()
        hosts_only = all(kind == "host" for kind, _, _ in group)
        for line, raw in keyword_lines(data, [key]):
            if hosts_only:  # the host is the line's prefix: one regex per distinct one
                prefix = raw.split(b":", 1)[0]
                if prefix in prefixes:
                    continue
                prefixes.add(prefix)
            text = raw.decode("utf-8", errors="replace").rstrip("\r")
            for kind, rx, fmt in group:
                if (m := rx.search(text)) is None:
                    continue
                value = fmt.format(**{k: v for k, v in m.groupdict().items() if v is not None})
                if kind == "experiment":
                    value = value.rstrip("/").rsplit("/", 1)[-1]
                    found.extend(Fact("precision", named.lower(), line, "experiment name")
                                 for named in _NAMED_PRECISION.findall(value))
                found.append(Fact(kind, value.strip(), line))
    for name in ARG_KEYS:
        key = name.encode()
        for line, raw in keyword_lines(data, [key]):
            # an argument line ends in its number after the last mention of the key (a NeMo
            # step line also says global_batch_size, mid-line): check that before the regex
            tail = raw[raw.rfind(key) + len(key):].strip(b" \t\r.:=")
            if tail.isdigit() and (m := _ARG_RX.search(raw.decode("utf-8", "replace"))):
                found.append(Fact("parallel", f"{ARG_KEYS[m.group(1)]}={m.group(2)}", line))
    for name, (kind, short) in SHAPE_KEYS.items():
        key = name.encode()
        for line, raw in keyword_lines(data, [key]):
            tail = raw[raw.rfind(key) + len(key):].strip(b" \t\r.:=")
            if tail.isdigit() and (m := _SHAPE_RX.search(raw.decode("utf-8", "replace"))) \
                    and m.group(1) == name:
                found.append(Fact(kind, f"{short}={m.group(2)}", line))
    return _first_of_each(found)


def _first_of_each(facts: Sequence[Fact]) -> list[Fact]:
    """Facts in file order, each (kind, value) once (its first line); empty values dropped."""
    seen: set[tuple[str, str]] = set()
    out: list[Fact] = []
    for fact in sorted(facts, key=lambda f: f.line or 0):
        if fact.value and (fact.kind, fact.value) not in seen:
            seen.add((fact.kind, fact.value))
            out.append(fact)
    return out


def value_pattern(label: str, *, number: str = NUM, sep: str = r"\s*[:=]?",
                  field_start: bool = False) -> str:
    """The regex of a number printed after ``label`` (a regex); group 1 is the number.

    ``field_start``: the label must open a field after a ``|``, as NeMo 2's ``key: value``
    fields do (the first field is the ``iteration N/M`` text); then a label inside another
    field's text is not taken for it, and the fields reader (:mod:`cmax.ingest._fields`) reads
    exactly the same numbers.
    """
    lead = r"\|" + GAP if field_start else ""
    return lead + label + sep + GAP + number


def value_after(label: str, *, number: str = NUM, sep: str = r"\s*[:=]?",
                field_start: bool = False) -> pl.Expr:
    """The number printed after ``label`` (a regex), as a string (null when absent)."""
    return pl.col("text").str.extract(
        value_pattern(label, number=number, sep=sep, field_start=field_start), 1)


def to_float(expr: pl.Expr, *, grouped: bool = False) -> pl.Expr:
    """Printed number -> Float64 (nan/inf survive); ``grouped`` drops thousands separators."""
    if grouped:
        expr = expr.str.replace_all(",", "", literal=True)
    return expr.cast(pl.Float64, strict=False)


def to_int(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Int64, strict=False)


def unterminated_tail(path: Path) -> str | None:
    """The last line when the file does not end in a newline (a cut-off write), else None."""
    size = path.stat().st_size
    if size == 0:
        return None
    with path.open("rb") as fh:
        fh.seek(max(0, size - (1 << 20)))
        tail = fh.read()
    if tail.endswith((b"\n", b"\r")):
        return None
    return tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace")


@dataclass
class TrainingLog:
    """Per-step rows of one training log plus what the log says about its run."""

    format: str
    framework: str
    steps: pl.DataFrame
    max_iteration: int | None = None
    config: dict[str, int] = field(default_factory=dict)
    #: the iteration each later attempt resumed from (a restart inside the log), file order
    resumed_at: tuple[int, ...] = ()
    #: iterations whose line reports skipped iterations (Megatron: the optimizer step was
    #: skipped, e.g. on an inf/nan gradient), and how many were skipped in all
    skipped_at: tuple[int, ...] = ()
    skipped: int = 0
    invalid_grad_norm: bool = False
    notes: list[str] = field(default_factory=list)
    source: Path | None = None
    #: identity facts the log states (world size, hosts, precision, experiment, parallel
    #: sizes, ...), see :func:`head_facts`; validation compares them with the manifest
    facts: list[Fact] = field(default_factory=list)

    @property
    def restarts(self) -> int:
        return len(self.resumed_at)

    def run_columns(self) -> dict[str, object]:
        """What the log says about its own continuity, as runs-table columns."""
        return {"restarts": self.restarts,
                "resumed_at": ",".join(map(str, self.resumed_at)) or None,
                "skipped_iterations": self.skipped or None,
                "skipped_at": ",".join(map(str, self.skipped_at[:MAX_LISTED])) or None}

    def status(self) -> str:
        """llmb-run's verdict, in its order (NVIDIA/exemplar-performance:cli/llmb-run/src/
        llmb_run/pretrain_log_parser.py@e249aa3 ``_build_result``): a NaN grad norm
        (invalid_grad_norm); no step read at all (no_data); steps read but none inside the
        window (llmb-run says no_data too; cmax names why: no_window); the final iteration or
        a window iteration missing (incomplete); else success."""
        if self.invalid_grad_norm:
            return "invalid_grad_norm"
        if self.steps.height == 0:
            return "no_data"
        iterations = self.steps["iteration"]
        last = int(iterations.max())  # type: ignore[arg-type]
        window = steady_state_window(None, last)
        present = iterations.filter(iterations.is_between(window.first, window.last)).n_unique()
        if present == 0:
            return "no_window"
        if self.max_iteration is not None and not (iterations == self.max_iteration).any():
            return "incomplete"
        if present < window.last - window.first + 1:
            return "incomplete"
        return "success"


def table(records: Sequence[Mapping[str, object]], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Canonical table from row dicts (an empty list gives an empty table, not a null row)."""
    if not records:
        return pl.DataFrame(schema=schema)
    return conform(pl.DataFrame(records, infer_schema_length=None), schema)


def empty_steps() -> pl.DataFrame:
    return pl.DataFrame(schema=STEP_COLUMNS)


def drop_cut_tail(
    events: pl.DataFrame, path: Path, keywords: Sequence[str], notes: list[str],
) -> pl.DataFrame:
    """Remove the event read from a cut-off last line (it is the last event when present)."""
    tail = unterminated_tail(path)
    if tail is None or events.height == 0 or not any(k in tail for k in keywords):
        return events
    notes.append(
        f"last line {int(events['line'][-1])} has no newline (cut off); its step was not used")
    return events.head(events.height - 1)


def settle_steps(events: pl.DataFrame, notes: list[str] | None = None
                 ) -> tuple[pl.DataFrame, tuple[int, ...]]:
    """One row per iteration: first occurrence wins within an attempt, the last attempt wins.

    ``events`` are in file order with at least ``iteration`` and ``line``. Returns the steps in
    iteration order (canonical columns) and the iteration each later attempt resumed from (one
    per restart), noted in ``notes``.
    """
    if events.height == 0:
        return empty_steps(), ()
    if events.get_column("iteration").null_count():  # filtering copies: only when needed
        events = events.filter(pl.col("iteration").is_not_null())
    if rising(events.get_column("iteration")):
        # strictly increasing (the common case): nothing to settle, and no sorted copy of a
        # multi-million-row table
        return _canonical(events), ()
    back = (pl.col("iteration").diff() < -RESTART_SLACK).fill_null(False)
    events = events.with_columns(back.cast(pl.Int64).cum_sum().alias("_attempt"),
                                 pl.int_range(pl.len()).alias("_order"))
    resumes = tuple(int(v) for v in events.filter(back)["iteration"].to_list())
    if resumes and notes is not None:
        notes.append(f"{len(resumes)} restart(s) inside the log (resumed at iteration "
                     f"{', '.join(map(str, resumes))}); the later attempt's steps are used")
    settled = (
        events.sort(["iteration", "_attempt", "_order"], descending=[False, True, False])
        .unique(subset=["iteration"], keep="first", maintain_order=True)
    )
    return _canonical(settled), resumes


def rising(values: pl.Series) -> bool:
    """Whether ``values`` strictly increase, with no null. Chunk by chunk: a dense log's step
    table comes in a thousand chunks, and a diff over them would first copy the whole column
    into one."""
    if values.null_count():
        return False
    last = None
    for chunk in values.get_chunks():
        if chunk.len() > 1 and not (chunk.slice(1) > chunk.slice(0, chunk.len() - 1)).all():
            return False
        if chunk.len():
            if last is not None and chunk[0] <= last:
                return False
            last = chunk[-1]
    return True


def _canonical(events: pl.DataFrame) -> pl.DataFrame:
    cols = [
        (pl.col(name) if name in events.columns else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in STEP_COLUMNS.items()
    ]
    return events.select(cols)


def clean_steps(steps: pl.DataFrame) -> pl.DataFrame:
    """Steps with a finite, positive step time, first occurrence of each iteration: the steps a
    window mean reads (the case's, :mod:`cmax.resolve.case`, and ``cmax inspect``'s)."""
    keep = steps.select(
        pl.col("step_time_s").is_not_null()
        & pl.col("step_time_s").is_finite()
        & (pl.col("step_time_s") > 0)
        & pl.col("iteration").is_not_null()
    ).to_series()
    # a long run's steps are nearly always all clean, unique and in order: then no copy of the
    # table (a long run's copies would dominate `cmax score`'s memory)
    frame = steps if keep.all() else steps.filter(keep)
    if rising(frame.get_column("iteration")):
        return frame
    return frame.unique(subset="iteration", keep="first", maintain_order=True).sort("iteration")


def finite_mean(values: pl.Series) -> float | None:
    """Mean over finite values (NaN/inf are counted separately by the caller), or None."""
    finite = values.drop_nulls().cast(pl.Float64)
    finite = finite.filter(finite.is_finite())
    if finite.len() == 0:
        return None
    mean = float(finite.mean())  # type: ignore[arg-type]
    if not math.isfinite(mean):  # the sum of 1e308s overflows; the mean of x / n cannot
        mean = float((finite / finite.len()).sum())
    return mean


def log_facts(head: Sequence[Fact], framework: str, steps_from: int | None,
              extra: Sequence[Fact] = ()) -> list[Fact]:
    """The log's identity facts: those of its top (``head``, from :func:`head_facts`, which
    parsers call before the big scan so its buffers are gone by the time the step table
    peaks), the framework its step lines are written by (at the first step line) and what
    the parser read elsewhere (``extra``), in file order, each (kind, value) once."""
    facts = [*head, *extra]
    if steps_from is not None:
        facts.append(Fact("framework", framework, steps_from, "step-line format"))
    return _first_of_each(facts)


def first_line(events: pl.DataFrame) -> int | None:
    """Line of the first event (None when there is none)."""
    return int(events["line"][0]) if events.height else None
