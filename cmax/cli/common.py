"""Options and output helpers shared by the commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

format_option = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text for people; json (on stdout) for programs.",
)

no_pdf_option = click.option(
    "--no-pdf", "no_pdf", is_flag=True,
    help="Write HTML (and JSON) only, no PDF: faster, and needs none of WeasyPrint's "
    "system libraries.")

paper_option = click.option(
    "--paper", type=click.Choice(["a4", "letter"]), default="a4", show_default=True,
    help="Page size of the PDFs (and of the HTML when printed): a4, or letter for US buyers.")

result_format_option = click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "junit", "ctrf"]), default="text",
    show_default=True, help="text for people; json for programs; junit (JUnit XML) or ctrf "
    "(CTRF JSON) for CI test reports: one case per finding, gate, workload and network row, "
    "with stable ids (all on stdout).")

bundle_argument = click.argument("bundle", type=click.Path(path_type=str))


def emit_json(data: Any) -> None:
    """Write JSON to stdout; pydantic models are dumped in JSON mode. Non-finite floats
    become null (``allow_nan=False`` then guarantees no bare NaN/Infinity, which is not JSON)."""
    from cmax.limits import json_safe

    if hasattr(data, "model_dump"):  # a pydantic model; pydantic itself is not imported
        data = data.model_dump(mode="json")
    click.echo(json.dumps(json_safe(data), indent=2, sort_keys=False, ensure_ascii=False,
                          allow_nan=False))


def progress(message: str) -> None:
    """Progress and logs go to stderr so stdout stays clean for --format json; ``cmax -q``
    silences them."""
    if _VERBOSITY[0] >= 0:
        click.echo(message, err=True)


_VERBOSITY = [0]


def set_verbosity(level: int) -> None:
    """-1 quiet (no progress lines), 0 normal, 1+ verbose (set by ``cmax -q`` / ``-v``)."""
    _VERBOSITY[0] = level


def verbosity() -> int:
    return _VERBOSITY[0]


def emit_checks(fmt: str, checks: Any, command: str) -> None:
    """Write ``checks`` (:class:`cmax.export.Check`) as JUnit XML or CTRF JSON on stdout."""
    from cmax._about import __version__
    from cmax.export import to_ctrf, to_junit

    if fmt == "junit":
        click.echo(to_junit(checks, name=f"cmax {command}"))
    else:
        emit_json(to_ctrf(checks, version=__version__, command=command))


class Progress:
    """Progress of ``total`` items on stderr: a bar on a terminal; off one (CI, Slurm logs,
    a file) a line with the count, percent and elapsed time on the first item, then at most
    every ``every_s`` seconds, and on the last. ``cmax -q`` silences both."""

    def __init__(self, label: str, total: int, *, every_s: float = 10.0,
                 clock: Callable[[], float] | None = None, tty: bool | None = None) -> None:
        import sys
        import time

        self.label, self.total, self.every_s = label, total, every_s
        self._clock = clock or time.monotonic
        self._start = self._last = self._clock()
        self._done = 0
        self._bar: Any = None
        quiet = _VERBOSITY[0] < 0
        is_tty = sys.stderr.isatty() if tty is None else tty
        self._lines = not quiet and not is_tty
        if not quiet and is_tty and total > 0:
            from cmax.safetext import escape, raw_stream

            # the label (a bundle's name) escaped here, the bar's own codes written raw
            self._bar = click.progressbar(length=total, label=escape(label),
                                          file=raw_stream(sys.stderr), show_pos=True,
                                          show_eta=True)
            self._bar.__enter__()

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = self._clock()
        if self._lines and (self._done in (1, self.total) or now - self._last >= self.every_s):
            self._last = now
            pct = 100 * self._done / self.total if self.total else 100.0
            elapsed = int(now - self._start)
            click.echo(f"{self.label}: {self._done}/{self.total} ({pct:.0f}%), "
                       f"{elapsed // 60}m{elapsed % 60:02d}s elapsed", err=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


class ProgressCallback:
    """A ``(done, total, ...)`` callback for library code that learns ``total`` as it goes:
    opens a :class:`Progress` labelled ``label.format(total=total)`` on the first call.
    A context manager: leaving it closes the bar."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._progress: Progress | None = None

    def __call__(self, done: int, total: int, *_: object) -> None:
        if self._progress is None:
            self._progress = Progress(self.label.format(total=total), total)
        self._progress.advance()

    def __enter__(self) -> ProgressCallback:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.close()
            self._progress = None
