"""A helper process that draws the scorecards' charts and writes their HTML for ``cmax report``.

``cmax report`` is two long imports and a chain of work: the rating stage (Polars, pydantic)
makes the scorecard, matplotlib draws its charts, WeasyPrint lays it out. On one core they add
up; here the worker, a fresh interpreter started before anything heavy is imported, imports
matplotlib and the report modules while the parent rates the bundles, then draws the charts
and renders the scorecards' HTML (:func:`cmax.render.reports.scorecard_documents`) while the
parent imports WeasyPrint and writes the briefs (issue 15).

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
from collections.abc import Sequence
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
    worker as a :data:`cmax.render.reports.DocumentSource` and ``close`` it."""

    def __init__(self, process: subprocess.Popen[bytes] | None) -> None:
        self._process = process
        self._sent: list[Any] = []
        self._answer: list[tuple[str, ScorecardDocuments]] | None = None
        self._collected = False

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

    def submit(self, cards: Sequence[Any]) -> None:
        """Hand the scorecards over; the pipe is fed from a thread, so a large set does not
        block the parent until the worker has finished importing."""
        process = self._process
        if process is None or process.stdin is None or self._sent:
            return
        self._sent = list(cards)
        try:
            request = pickle.dumps(self._sent, protocol=pickle.HIGHEST_PROTOCOL)
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

    def _collect(self) -> list[tuple[str, ScorecardDocuments]] | None:
        self._collected = True
        process = self._process
        if process is None or not self._sent:
            return None
        try:
            out, _ = process.communicate(timeout=TIMEOUT_S)
            status, answer = pickle.loads(out)
        except Exception:  # timed out, died, half an answer
            self.close()
            return None
        if status != "ok" or len(answer) != len(self._sent):
            return None
        return list(answer)

    def __call__(self, card: Scorecard, slug: str) -> ScorecardDocuments | None:
        """The documents the worker drew for ``card`` under ``slug``, or None (draw here)."""
        if not self._collected:
            self._answer = self._collect()
        for sent, (sent_slug, documents) in zip(self._sent, self._answer or (), strict=False):
            if sent is card and sent_slug == slug:
                return documents
        return None

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
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


def documents(cards: Sequence[Scorecard]) -> list[tuple[str, ScorecardDocuments]]:
    """What the worker computes: each scorecard's slug and documents, as ``render_reports``
    names and draws them."""
    from cmax.render.reports import scorecard_documents
    from cmax.render.slugs import report_slugs

    slugs = report_slugs(list(cards))
    return [(slug, scorecard_documents(card, slug)) for slug, card in zip(slugs, cards,
                                                                           strict=True)]


def main() -> None:
    """The worker process: warm up, read the pickled scorecards from stdin until it closes,
    answer ``("ok", documents(cards))`` on stdout, or ``("failed", None)`` if anything went
    wrong or warned (the parent then draws in-process, where it is reported as usual)."""
    import warnings

    payload: tuple[str, Any] = ("failed", None)
    try:
        _warm_up()
        cards = pickle.loads(sys.stdin.buffer.read())
        with warnings.catch_warnings(record=True) as caught:
            answer = documents(cards)
        if not caught:
            payload = ("ok", answer)
    except BaseException:  # the parent redoes the work and reports any error as usual
        pass
    try:
        sys.stdout.buffer.write(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        sys.stdout.buffer.flush()
    except OSError:  # the parent is gone
        pass
    os._exit(0)  # no module teardown: matplotlib's costs more than the drawing
