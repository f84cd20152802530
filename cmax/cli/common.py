"""Options and output helpers shared by the commands."""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Callable, Iterator
from pathlib import Path
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

_format_choice = click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "junit", "ctrf"]), default="text",
    show_default=True, help="text for people; json for programs; junit (JUnit XML) or ctrf "
    "(CTRF JSON) for CI test reports: one case per finding, gate, workload and network row, "
    "with stable ids (all on stdout).")
_junit_file = click.option(
    "--junit-xml", "junit_xml", type=click.Path(dir_okay=False, path_type=str), default=None,
    metavar="FILE", help="Also write the checks as JUnit XML to FILE, beside the --format "
    "output (e.g. text on the terminal and JUnit for CI in one run).")
_ctrf_file = click.option(
    "--ctrf", "ctrf_file", type=click.Path(dir_okay=False, path_type=str), default=None,
    metavar="FILE", help="Also write the checks as CTRF JSON to FILE, beside the --format "
    "output.")


def result_format_option(f: F) -> F:
    """``--format`` (text, json, junit, ctrf on stdout) and ``--junit-xml FILE`` /
    ``--ctrf FILE`` (the same checks written to files, whatever ``--format`` prints)."""
    return _format_choice(_junit_file(_ctrf_file(f)))


def wants_checks(fmt: str, junit_xml: str | None, ctrf_file: str | None) -> bool:
    """Whether a command must build its checks: printed as JUnit/CTRF, or written to a file."""
    return fmt in ("junit", "ctrf") or bool(junit_xml) or bool(ctrf_file)


bundle_argument = click.argument("bundle", type=click.Path(path_type=str))


class SuggestingGroup(click.Group):
    """A group of sub-commands whose unknown name says which it may have meant, on every
    click the project supports (click 8.1 suggests nothing for a group's sub-command)."""

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        from cmax.reading.suggest import did_you_mean

        name = args[0] if args else ""
        if name and name not in self.commands and not name.startswith("-") \
                and not ctx.resilient_parsing:
            hint = did_you_mean(name, self.commands)
            raise click.UsageError(f"No such command {name!r}."
                                   + (f" {hint[0].upper()}{hint[1:]}" if hint else ""), ctx=ctx)
        return super().resolve_command(ctx, args)


def json_document(data: Any) -> str:
    """``data`` as the JSON cmax prints; pydantic models are dumped in JSON mode. Non-finite
    floats become null (``allow_nan=False`` then guarantees no bare NaN/Infinity, which is not
    JSON)."""
    from cmax.reading.limits import json_safe

    if hasattr(data, "model_dump"):  # a pydantic model; pydantic itself is not imported
        data = data.model_dump(mode="json")
    return json.dumps(json_safe(data), indent=2, sort_keys=False, ensure_ascii=False,
                      allow_nan=False)


_PROGRAM = [False]


def as_program() -> None:
    """This process is the ``cmax`` program (:func:`cmax.cli.run`): it ends when its command
    does."""
    _PROGRAM[0] = True


@contextlib.contextmanager
def start_up() -> Iterator[None]:
    """A command's heavy imports (Polars, NumPy, the stages and their pydantic models), with
    Python's cyclic garbage collector paused.

    Importing the stages leaves some 100,000 long-lived objects and next to no garbage, and in
    a short command the collector's passes over them while they are created (a full pass
    among them) are most of its work, all of it finding nothing. Once they are imported they
    are moved out of the collector's sight (``gc.freeze``) and it runs as usual over what the
    command itself allocates. Only in the ``cmax`` program: a process calling
    :func:`cmax.cli.main` again and again (a test run) keeps its collector as it is."""
    if not _PROGRAM[0] or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def emit_json(data: Any) -> None:
    """Write :func:`json_document` of ``data`` to stdout."""
    click.echo(json_document(data))


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


def emit_checks(fmt: str, checks: Any, command: str, *, junit_xml: str | None = None,
                ctrf_file: str | None = None) -> None:
    """Write ``checks`` (:class:`cmax.export.Check`) as JUnit XML or CTRF JSON on stdout (when
    ``fmt`` asks for one) and to the ``--junit-xml`` / ``--ctrf`` files (each written whole,
    then moved into place, so a reader never sees half a report)."""
    from cmax._about import __version__
    from cmax.export import to_ctrf, to_junit

    def junit() -> str:
        return to_junit(checks, name=f"cmax {command}")

    def ctrf() -> str:
        return json_document(to_ctrf(checks, version=__version__, command=command))

    for target, text in ((junit_xml, junit), (ctrf_file, ctrf)):
        if target:
            _write_whole(Path(target), text() + "\n")
    if fmt == "junit":
        click.echo(junit())
    elif fmt == "ctrf":
        click.echo(ctrf())


def _write_whole(target: Path, text: str) -> None:
    """``text`` into ``target`` through a temporary file beside it and one rename."""
    import os
    import tempfile

    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise click.UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, target)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise click.UsageError(f"cannot write {target}: {exc.strerror or exc}") from None


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
            from cmax.reading.safetext import escape, raw_stream

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
