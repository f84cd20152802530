"""A helper process that draws the report charts and scorecard HTML for ``cmax report`` (and
``cmax demo``).

``cmax report`` is two long imports and a chain of work: the rating stage (Polars, pydantic)
makes the scorecard, matplotlib draws its charts, WeasyPrint lays it out. On one core they add
up; here the worker, a fresh interpreter started before anything heavy is imported, imports
matplotlib and the report modules while the parent rates the bundles, then draws the charts
and renders the scorecards' HTML (:func:`cmax.render.reports.scorecard_documents`) while the
parent imports WeasyPrint and writes the briefs; with two or more scorecards it draws the
leaderboard's charts too, so the parent never imports matplotlib. Each scorecard's
documents are sent as soon as they are drawn, so with several bundles the parent lays out the
first scorecard while the worker draws the next.

It pays when a CPU is free (a fraction of a ``cmax report``'s wall time, figures from
``benchmarks/bench_render.py --cli``); when other work already fills the CPUs the two
processes contend and it can cost as much. What it draws must not import the rating stack (page 1's
price drivers come from :mod:`cmax.price.drivers`): the parent waits for its answer right
after WeasyPrint's import and the brief, so every import here is on that path.

A fresh interpreter (``subprocess``), never a fork: the parent has Polars' thread pool by then.
The worker only accelerates. The parent takes its documents only for the very scorecards it
sent, and draws in-process, exactly as without a worker (same bytes, same one-line errors,
same warnings), whatever went wrong in the worker: it could not start, raised, warned, died or
took longer than :data:`TIMEOUT_S`. The worker runs in its own session, so the terminal's
Ctrl-C reaches only the parent, which kills the worker on the way out (``close``); a worker
whose parent died sees its input close and exits.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # not imported by the parent before it needs them
    from cmax.render.reports import ScorecardDocuments
    from cmax.scorecard import Scorecard

#: seconds the parent waits for the documents before drawing them itself (a first run on a
#: fresh machine builds matplotlib's font cache, ~10 s)
TIMEOUT_S = 120.0

_BOOT = ("import sys; root = sys.argv[1]; "
         "sys.path.insert(0, root) if root not in sys.path else None; "
         "from cmax.render.worker import main; main()")


class DocumentWorker:
    """The parent's end: ``start`` early, ``submit`` the scorecards once rated, then use the
    worker as a :class:`cmax.render.reports.DocumentSource` and ``close`` it."""

    def __init__(self, process: subprocess.Popen[bytes] | None) -> None:
        self._process = process
        self._sent: list[Any] = []
        # what has arrived so far: per scorecard its slug and documents, in the order sent,
        # then the leaderboard (None with fewer than two); guarded by _arrived
        self._documents: list[tuple[str, ScorecardDocuments]] = []
        self._leaderboard: Leaderboard | None = None
        self._ended = False  # no more will come: all arrived, or the worker failed or died
        self._arrived = threading.Condition()
        self._reader: threading.Thread | None = None
        self._deadline: float | None = None

    @classmethod
    def start(cls) -> DocumentWorker:
        """Start the worker; on a single CPU there is nothing to overlap, so none is started."""
        if _usable_cpus() < 2:
            return cls(None)
        root = str(Path(__file__).resolve().parents[2])  # the folder holding the cmax package
        try:
            process = subprocess.Popen(
                [sys.executable, "-P", "-c", _BOOT, root], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        except (OSError, ValueError):
            process = None
        return cls(process)

    def submit(self, cards: Sequence[Any], rank_by: str = "tier") -> None:
        """Hand the scorecards over (and how the leaderboard ranks them); the pipe is fed from
        a thread, so a large set does not block the parent until the worker has imported."""
        process = self._process
        if process is None or process.stdin is None or self._sent:
            return
        self._sent = list(cards)
        try:
            request = pickle.dumps((self._sent, rank_by), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # a card that cannot be pickled: everything is drawn here
            self.close()
            return
        stdin, process.stdin = process.stdin, None  # communicate() then only reads

        def feed() -> None:
            with contextlib.suppress(OSError):  # the worker is gone; collect() finds out
                stdin.write(request)
            with contextlib.suppress(OSError):
                stdin.close()

        threading.Thread(target=feed, name="cmax-document-worker-feed", daemon=True).start()
        out = process.stdout
        if out is not None:
            self._reader = threading.Thread(target=self._read, args=(out,), daemon=True,
                                            name="cmax-document-worker-read")
            self._reader.start()

    def _read(self, out: Any) -> None:
        """Take the worker's messages as they come (one pickle each: a scorecard's documents,
        then the leaderboard), until the last, a failure, or the pipe's end."""
        try:
            while True:
                kind, value = pickle.load(out)
                with self._arrived:
                    if kind == "card" and len(self._documents) < len(self._sent):
                        self._documents.append(value)
                    elif kind == "leaderboard":
                        self._leaderboard = value
                        break
                    else:  # "failed", or more scorecards than were sent
                        break
                    self._arrived.notify_all()
        except Exception:  # died, half a message, closed here
            pass
        with self._arrived:
            self._ended = True
            self._arrived.notify_all()

    def _wait(self, ready: Callable[[], bool]) -> bool:
        """Wait until ``ready()`` or nothing more can come; True if ready. The worker gets
        :data:`TIMEOUT_S` from the first wait for all of it; past that it is killed."""
        if self._reader is None:
            return False
        if self._deadline is None:
            self._deadline = time.monotonic() + TIMEOUT_S
        with self._arrived:
            while not ready() and not self._ended:
                left = self._deadline - time.monotonic()
                if left <= 0:
                    break
                self._arrived.wait(left)
            if ready():
                return True
            timed_out = not self._ended
        if timed_out:
            self.close()
        return False

    def documents(self, card: Scorecard, slug: str) -> ScorecardDocuments | None:
        """The documents the worker drew for ``card`` under ``slug``, or None (draw here);
        waits only for that scorecard's, not for the ones after it."""
        index = next((i for i, sent in enumerate(self._sent) if sent is card), None)
        if index is None or not self._wait(lambda: len(self._documents) > index):
            return None
        sent_slug, documents = self._documents[index]
        return documents if sent_slug == slug else None

    def leaderboard_charts(self, cards: Sequence[Scorecard],
                           labels: Sequence[str]) -> dict[str, str | None] | None:
        """The leaderboard charts the worker drew, if for these very cards in this order with
        these labels; else None (draw here)."""
        if not self._wait(lambda: self._leaderboard is not None):
            return None
        assert self._leaderboard is not None
        order, drawn_labels, uris = self._leaderboard
        ranked = [self._sent[i] for i in order]
        if len(ranked) != len(cards) or any(a is not b for a, b in zip(ranked, cards,
                                                                          strict=True)):
            return None
        return uris if list(drawn_labels) == list(labels) else None

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        if self._reader is not None:  # the pipe ends with the process
            self._reader.join(timeout=5)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        process.wait()

    def __enter__(self) -> DocumentWorker:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _warm_up() -> None:
    """Import what drawing needs and load matplotlib's font list, while the parent rates."""
    import importlib

    for name in ("matplotlib.figure", "matplotlib.backends.backend_svg", "matplotlib.dates",
                 "cmax.render.reports"):
        importlib.import_module(name)
    from matplotlib import font_manager

    font_manager.findfont("DejaVu Sans")


Leaderboard = tuple[list[int], list[str], dict[str, str | None]]
"""The leaderboard's charts with the rank order (indices into the scorecards sent) and the
labels they were drawn for."""


def draw_each(cards: Sequence[Scorecard],
              rank_by: str = "tier") -> Iterator[tuple[str, Any]]:
    """What the worker computes, named and drawn as ``render_reports`` would, one message at
    a time: ``("card", (slug, documents))`` per scorecard in the order sent, then
    ``("leaderboard", charts or None)`` (None with fewer than two scorecards)."""
    from cmax.render import reports, views
    from cmax.render.slugs import report_slugs

    slugs = report_slugs(list(cards))
    for slug, card in zip(slugs, cards, strict=True):
        yield "card", (slug, reports.scorecard_documents(card, slug))
    leaderboard: Leaderboard | None = None
    if len(cards) >= 2:
        rows = views.leaderboard_rows(list(zip(slugs, cards, strict=True)),
                                      "value" if rank_by == "value" else "tier")
        ranked = [r.card for r in rows]
        labels = reports.leaderboard_labels(rows)
        order = [next(i for i, c in enumerate(cards) if c is card) for card in ranked]
        leaderboard = (order, labels, reports.leaderboard_charts(ranked, labels))
    yield "leaderboard", leaderboard


def main() -> None:
    """The worker process: warm up, read the pickled scorecards and rank order from stdin
    until it closes, then send each message of :func:`draw_each` on stdout as soon as it is
    drawn, or ``("failed", None)`` and stop if anything went wrong or warned (the parent then
    draws the rest in-process, where it is reported as usual)."""
    import warnings

    # the answer goes to the stdout the parent reads; anything a library prints goes to stderr
    answer_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)

    def send(message: tuple[str, Any]) -> None:
        answer_out.write(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        answer_out.flush()

    with contextlib.suppress(BaseException):  # the parent is gone, or redoes the work
        try:
            _warm_up()
            cards, rank_by = pickle.loads(sys.stdin.buffer.read())
            messages = draw_each(cards, rank_by)
            while True:
                with warnings.catch_warnings(record=True) as caught:
                    message = next(messages, None)
                if caught:
                    raise RuntimeError("a warning while drawing")
                if message is None:
                    break
                send(message)
        except BaseException:
            send(("failed", None))
    os._exit(0)  # no module teardown: matplotlib's costs more than the drawing
