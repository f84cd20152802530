"""Keyword lines of a large log selected by a ``grep`` child; no Polars here.

A gigabyte log is mostly other ranks' chatter; GNU grep skips it faster than anything in
this process can (it is the floor ``benchmarks/bench_ingest.py`` compares against), so each
keyword gets a ``grep -anF`` child whose output a thread drains into a bounded queue while
Polars parses earlier chunks (:mod:`cmax.ingest.textlines`).

Nothing here imports Polars, so a command that reads one log can start grep before Polars is
imported (:func:`prestart`, ~0.13 s): by the time the parser asks for the log's step lines
(:func:`start_greps`), grep has been reading the file all along and the running child is
handed over instead of a second one started. The top of the file is read here too
(:func:`top`): the prestart and the step reader decide from the same bytes, in one place,
whether a log is read by grep at all, and the top the prestart read is handed over too.
"""

from __future__ import annotations

import atexit
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T")

#: the keyword of a NeMo 2 step line (``... | train_step_timing in s: 10.08 | ...``); the
#: parser is :mod:`cmax.ingest.formats.nemo`. Here because :func:`prestart` needs it without Polars.
NEMO2_KEY = "train_step_timing in s:"

# files up to this size are filtered in this process, in one read: a grep child and a reader
# thread per file would cost more than the read (the audit path: hundreds of small logs)
SMALL_FILE = 4 << 20
# grep output read from the pipe at a time: larger chunks cost peak memory and save no CPU
# time (benchmarks/bench_ingest.py)
GREP_CHUNK = 1 << 20
# grep output handed to a ``parse`` (the fields reader) at a time. A call has a fixed cost
# whatever the size (about what parsing 1 MiB of step lines costs), and its working memory
# grows with the size: on a 1 GiB chatty log `cmax inspect` takes 9% less CPU time with
# 4 MiB batches than with 1 MiB, and peaks at 139 MiB (1 MiB: 132; 8 MiB: 164); the budget
# for a noisy log is 150 MiB (benchmarks/bench_ingest.py)
GREP_BATCH = 4 << 20
# grep output a prestarted child may hold before its output is first read: grep keeps writing
# a chatty log's step lines while Polars is imported and the head is read
PRESTART_HOLD = 16 << 20
# the top of a log: identity facts, the step layout and the dense/sparse choice come from it
HEAD_BYTES = 4 << 20
# splitting every line of the file into fields (cmax.ingest._fields.scan) beats grep when at
# least one line in this many of the top is a step line (a long quiet run: 1 in 3; multi-node
# chatter is 1 in 40); sparser, grep skips the other lines without splitting them
DENSE = 8


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The top ``size`` bytes of ``path`` as whole lines (all of a shorter file)."""
    with path.open("rb") as fh:
        data = fh.read(size)
    return data[: data.rfind(b"\n") + 1] if len(data) == size else data


def keyword_lines(data: bytes, keys: Sequence[bytes], first_line: int = 1
                  ) -> list[tuple[int, bytes]]:
    """The lines of ``data`` (whole lines) holding any of ``keys``: (line number, bytes).

    What ``grep -nF`` does, in-process: ``bytes.find`` jumps from key to key, so the cost
    follows the matching lines, not the file. A line holding two keys comes once.
    """
    starts: set[int] = set()
    for key in keys:
        i = data.find(key)
        while i != -1:
            starts.add(data.rfind(b"\n", 0, i) + 1)
            end = data.find(b"\n", i)
            if end == -1:
                break
            i = data.find(key, end)
    out: list[tuple[int, bytes]] = []
    line, pos = first_line, 0
    for start in sorted(starts):
        line += data.count(b"\n", pos, start)
        pos = start
        end = data.find(b"\n", start)
        out.append((line, data[start:end if end != -1 else len(data)]))
    return out


def dense(head: bytes, found: Sequence[object]) -> bool:
    """Whether the ``found`` step lines of ``head`` (the top) are at least one line in DENSE."""
    return len(found) * DENSE >= head.count(b"\n")


@dataclass(frozen=True)
class Top:
    """The top of a log and how its step lines are read: the one home of that decision.

    The step reader (:class:`cmax.ingest._fields.StepQuery`) and :func:`prestart` both read it,
    so a prestarted grep is exactly the one the reader would start.
    """

    #: the top ``HEAD_BYTES`` as whole lines (empty for a small file: it is read whole)
    head: bytes
    #: the top's lines holding the key: (line number, bytes)
    found: list[tuple[int, bytes]]
    #: larger than SMALL_FILE
    large: bool
    #: large, and its top holds step lines at least one line in DENSE: every line is split
    #: into fields (no grep)
    dense: bool

    @property
    def grep(self) -> bool:
        """Whether the step lines are selected by a grep child: a large, sparse log."""
        return self.large and not self.dense


def top(path: Path, key: str) -> Top:
    """The top of ``path`` and the read it calls for (:class:`Top`); OSError as ``open``.
    The one :func:`prestart` read of the same file (same identity) is handed over, not read
    again."""
    ident = _identity(path)
    if ident[2] <= SMALL_FILE:
        return Top(b"", [], large=False, dense=False)
    read = _PRESTARTED_TOPS.pop((ident, key), None)
    if read is not None:
        return read
    head = read_head(path)
    found = keyword_lines(head, [key.encode()])
    return Top(head, found, large=True, dense=dense(head, found))


def _enlarge_pipe(stream: IO[bytes] | None) -> None:
    """Ask for a 1 MiB pipe (Linux): fewer wake-ups of the reader thread per gigabyte."""
    if stream is None:
        return
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError, ValueError):
        return  # not Linux or not allowed: the default pipe works, only slower


class GrepChild:
    """One ``grep -anF KEY`` child and a thread draining its output into a bounded queue.

    The thread keeps grep running while Polars (which releases the GIL) parses earlier chunks;
    the queue holds ``hold`` bytes (by default a batch, ``GREP_BATCH``, and two chunks more),
    so grep is not held up while a batch is parsed, and memory does not follow the file size.
    """

    def __init__(self, grep: str, path: Path, key: str, hold: int = 0) -> None:
        cmd = [grep, "-a", "-n", "-F", "-e", key, "--", str(path)]
        self.key = key
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env={**os.environ, "LC_ALL": "C"})
        _enlarge_pipe(self.proc.stdout)
        slots = max(hold, GREP_BATCH + 2 * GREP_CHUNK) // GREP_CHUNK
        self.chunks: queue.Queue[bytes | None] = queue.Queue(maxsize=slots)
        self._ended = False  # the queue's end (None) was taken
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def take_over(self) -> GrepChild:
        """A prestarted child handed to its reader: from now on its queue holds a batch and two
        chunks, as a child started by the reader does. The larger hold only bridged the imports;
        kept while the output is parsed, it would add to the parse's own memory whenever this
        process falls behind grep (a busy machine), up to the whole hold."""
        with self.chunks.mutex:
            self.chunks.maxsize = (GREP_BATCH + 2 * GREP_CHUNK) // GREP_CHUNK
        return self

    def stop(self) -> None:
        """Kill grep if it is still running, discard what it wrote, and reap it, its reader
        thread and its pipe (after a normal end this only closes the pipe)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        while not self._ended:  # the thread may be waiting to put a chunk: take them all
            self._ended = self.chunks.get() is None
        self.thread.join()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def _drain(self) -> None:
        stdout = self.proc.stdout
        try:
            while stdout is not None and (chunk := stdout.read(GREP_CHUNK)):
                self.chunks.put(chunk)
        except (OSError, ValueError):
            pass  # the pipe was closed under us (stop): nothing more to read
        finally:
            self.chunks.put(None)

    def frames(self, parse: Callable[[bytes], T], batch: int,
               idle: Callable[[], None] | None = None) -> list[T]:
        """``parse`` of the output, about ``batch`` bytes of whole lines at a time; then grep's
        exit status is in ``proc.returncode``. Call :meth:`stop` afterwards in any case.

        ``idle`` runs the first time the output runs dry (grep is the slower side on a chatty
        log: the wait would be wasted), else not at all: see :class:`Once`.
        """
        out: list[T] = []
        held: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = self.chunks.get(block=idle is None)
            except queue.Empty:
                assert idle is not None
                idle()
                idle = None
                continue
            if chunk is None:
                break
            held.append(chunk)
            size += len(chunk)
            if size >= batch:
                data = b"".join(held)
                cut = data.rfind(b"\n") + 1
                if cut:
                    out.append(parse(data[:cut]))
                held, size = [data[cut:]], len(data) - cut
        self._ended = True
        self.thread.join()
        self.proc.wait()
        if rest := b"".join(held):
            out.append(parse(rest if rest.endswith(b"\n") else rest + b"\n"))
        return out


class Once:
    """Work that needs no step line, run once while grep reads (a parser's head facts).

    Handed to :meth:`GrepChild.frames` as ``idle``; the reader calls it again when all is
    read, which does nothing if it already ran.
    """

    def __init__(self, work: Callable[[], None] | None) -> None:
        self._work = work

    def __call__(self) -> None:
        work, self._work = self._work, None
        if work is not None:
            work()


# prestarted children not yet handed over: (file identity, key) -> child
_PRESTARTED: dict[tuple[tuple[int, int, int, int], str], GrepChild] = {}
# the tops prestart read, not yet handed over to the step reader: (file identity, key) -> top
_PRESTARTED_TOPS: dict[tuple[tuple[int, int, int, int], str], Top] = {}


def _identity(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def start_greps(path: Path, keys: Sequence[str]) -> list[GrepChild] | None:
    """One ``grep`` child per key, all started at once (a prestarted one is handed over);
    None when grep cannot be started.

    Single-string grep is several times faster than one grep with several strings, and two
    cores run two of them side by side.
    """
    grep = shutil.which("grep")
    if grep is None:
        return None
    greps: list[GrepChild] = []
    try:
        ident = _identity(path)
        for key in keys:
            prestarted = _PRESTARTED.pop((ident, key), None)
            greps.append(prestarted.take_over() if prestarted is not None
                         else GrepChild(grep, path, key))
    except OSError:
        for g in greps:
            g.stop()
        return None
    return greps


def prestart(path: Path) -> None:
    """Start grep on a large sparse NeMo 2 log now, before Polars is imported.

    Only where the parser would start the very same grep (same file, size and key; a large
    file whose top holds the key, sparsely): :func:`start_greps` then takes it over. A child
    never taken over is stopped by :func:`stop_prestarted` or at exit. Any doubt (unreadable
    file, no grep) starts nothing: the parser will say what is wrong.
    """
    grep = shutil.which("grep")
    try:
        if grep is None or not path.is_file():
            return
        ident = _identity(path)
        log = top(path, NEMO2_KEY)
        if log.large:  # the step reader decides from these bytes too: handed over
            _PRESTARTED_TOPS[(ident, NEMO2_KEY)] = log
        if not (log.grep and log.found):  # the key in the top: a NeMo 2 log, read by grep
            return
        if (ident, NEMO2_KEY) in _PRESTARTED:
            return
        _PRESTARTED[(ident, NEMO2_KEY)] = GrepChild(grep, path, NEMO2_KEY, PRESTART_HOLD)
    except OSError:
        return


def return_freed_buffers() -> None:
    """Have glibc give large freed buffers back to the system at once (a command's process).

    glibc raises its mmap threshold after the first large free, so later megabyte chunks of
    grep output come from the heap and their memory stays with the process after they are
    parsed: with a prestarted grep's backlog, `cmax inspect` of a 2 GiB chatter log peaked at
    152 MiB (16 MiB held), 131-140 MiB with the threshold fixed at 256 KiB. Polars allocates
    with its own jemalloc and is not affected. Elsewhere (musl, macOS) nothing changes.
    """
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, 256 << 10)
    except (OSError, AttributeError):
        return


# mallopt's parameter number for the mmap threshold (glibc malloc.h)
_M_MMAP_THRESHOLD = -3


def stop_prestarted() -> None:
    """Stop prestarted children nobody took over (the file was read another way), and drop
    the tops nobody took."""
    _PRESTARTED_TOPS.clear()
    while _PRESTARTED:
        _PRESTARTED.popitem()[1].stop()


atexit.register(stop_prestarted)
