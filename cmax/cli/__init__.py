"""The ``cmax`` command line (the pipeline it drives: docs/architecture.md).

Each command lives in its own module under ``cmax.cli`` and is imported only when invoked, so
``cmax --help`` stays fast and one command's heavy imports (WeasyPrint, matplotlib) never slow
another. Exit codes: :mod:`cmax.cli.exits`.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import importlib
import os
import re
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from typing import Any

import click

from cmax._about import __version__  # not cmax.__version__: see cmax/cli/beside.py
from cmax.cli import exits
from cmax.cli.beside import shared_with_clustermax
from cmax.cli.common import as_program, set_verbosity, verbosity
from cmax.errors import CmaxError
from cmax.reading.safetext import SafeStream
from cmax.reading.suggest import did_you_mean

# command name -> (module, one-line help shown by `cmax --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("cmax.cli.demo_cmd",
             "Rate the sample providers that ship with cmax and write reports."),
    "validate": ("cmax.cli.validate_cmd",
                 "Check a bundle's evidence against the reference: findings."),
    "score": ("cmax.cli.score_cmd",
              "Score a bundle: tier, Exemplar verdict, per-workload ratios."),
    "accept": ("cmax.cli.accept_cmd",
               "Acceptance per scalable unit: BM01 and NCCL bandwidth on every unit."),
    "price": ("cmax.cli.price_cmd",
              "Price advice for negotiation: quoted, parity and ask $/GPU-hr."),
    "report": ("cmax.cli.report_cmd",
               "Write HTML and PDF scorecards, briefs and a leaderboard."),
    "audit": ("cmax.cli.audit_cmd",
              "Periodic audit runs: history, drift, expiry, trend reports."),
    "init": ("cmax.cli.init_cmd",
             "Draft a commented cmax.toml from a folder or archive of evidence."),
    "inspect": ("cmax.cli.inspect_cmd",
                "Detect the format of one evidence file and summarise it."),
    "reference": ("cmax.cli.reference_cmd",
                  "Browse the reference baselines and catalogues."),
    "calc": ("cmax.cli.calc_cmd",
             "What-if calculator: MFU, step time, tokens/s, $/M tokens, J/token."),
    "schema": ("cmax.cli.schema_cmd",
               "JSON Schemas: scorecard, price, manifest, validate and audit output."),
    "docs": ("cmax.cli.docs_cmd",
             "Print a documentation page (manifest, rules, formats, ...)."),
}


# command name -> example invocations, shown under "Examples" in its --help
EXAMPLES: dict[str, tuple[str, ...]] = {
    "demo": ("cmax demo -o cmax-demo", "cmax demo --rank-by value --no-pdf"),
    "validate": ("cmax validate provider-bundle.tar.gz",
                 "cmax validate bundle/ --format junit --fail-on warning > validate.xml",
                 "cmax validate --rules"),
    "score": ("cmax score bundle/",
              "cmax score bundle/ --fail-on exemplar --fail-on tier-below:gold",
              "cmax score bundle/ --format junit > cmax-score.xml"),
    "accept": ("cmax accept bundle/", "cmax accept bundle/ --junit-xml acceptance.xml"),
    "price": ("cmax price bundle/", "cmax price bundle/ --format json"),
    "report": ("cmax report a.tar.gz b.tar.gz -o reports/",
               "cmax report bundle/ -o reports/ --no-pdf"),
    "audit": ("cmax audit runs/ -o trend-reports/",
              "CMAX_HISTORY=s3://bucket/cmax-history cmax audit runs/ --format junit",
              "cmax audit runs/ --history-as-of 2026-10-01"),
    "inspect": ("cmax inspect training/llama3.1-405b_bf16_512.log",),
    "init": ("cmax init my-evidence/ -o my-evidence/cmax.toml",
             "cmax init llmb-archive_26.08.00_20261101T120000Z.tar.zst"),
    "reference": ("cmax reference list", "cmax reference show llama3.1-405b"),
    "calc": ("cmax calc --model llama3.1-70b --gpu h100-sxm --precision bf16 --mfu 42%",
             "cmax calc --model llama3.1-70b --gpu h100-sxm --precision bf16 --mfu 42% "
             "--usd-per-gpu-hour 2.10",
             "cmax calc --offer h100-sxm=1.42@727.7 --offer gb200=2.272@1200"),
    "schema": ("cmax schema --model manifest", "cmax schema --model validate",
               "cmax schema --model audit"),
    "docs": ("cmax docs", "cmax docs manifest | less"),
}


class LazyGroup(click.Group):
    """A group whose sub-commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = module.command
        examples = EXAMPLES.get(cmd_name, ())
        if examples and command.epilog is None:
            command.epilog = "\b\nExamples:\n" + "\n".join(f"  {e}" for e in examples)
        return command

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command says which it may have meant (click only suggests among
        commands it has imported, and this group imports none up front)."""
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-") \
                and not ctx.resilient_parsing:
            hint = did_you_mean(name, COMMANDS)
            raise click.UsageError(f"No such command {name!r}."
                                   + (f" {hint[0].upper()}{hint[1:]}" if hint else ""), ctx=ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Exit codes: " + "; ".join(
                 f"{code} {text.split(':')[0]}" for code, text in exits.MEANING.items()))
@click.version_option(__version__, prog_name="cmax (cmax-rating)")
@click.option("-q", "--quiet", "quiet", is_flag=True,
              help="No progress lines on stderr (errors still print).")
@click.option("-v", "--verbose", "verbose", count=True,
              help="More on stderr: on an internal error, the whole traceback too.")
def cli(quiet: bool, verbose: int) -> None:
    """cmax rates GPU clouds: is this cluster as good as promised, and what is it worth?

    Evidence bundles (a directory, .tar.gz or .zip with a cmax.toml) are validated against
    NVIDIA reference results, scored into a ClusterMAX-style tier and priced.
    """
    set_verbosity(-1 if quiet else verbose)


GLOBAL_FLAGS = re.compile(r"^(-q|--quiet|-v+|--verbose)$")
"""The group's own options, which are flags: accepted after the command too."""


def hoist_global_flags(argv: list[str]) -> list[str]:
    """``cmax score bundle/ -q`` as ``cmax -q score bundle/``: a global flag written after the
    command (where most tools take it) moves before it; nothing after ``--`` moves."""
    command = next((i for i, arg in enumerate(argv) if arg in COMMANDS), None)
    if command is None:
        return argv
    end = argv.index("--") if "--" in argv[command:] else len(argv)
    moved = [a for a in argv[command + 1:end] if GLOBAL_FLAGS.match(a)]
    kept = [a for a in argv[command + 1:end] if not GLOBAL_FLAGS.match(a)]
    return [*argv[:command], *moved, argv[command], *kept, *argv[end:]]


def _prog_name() -> str:
    """``cmax-rating`` when run under that name (its completion variable is
    ``_CMAX_RATING_COMPLETE``), else ``cmax``."""
    return "cmax-rating" if os.path.basename(sys.argv[0]) == "cmax-rating" else "cmax"


def _internal_error(exc: Exception) -> int:
    """A bug, not bad input: one line, the traceback in a file, its own exit code."""
    text = "".join(traceback.format_exception(exc))
    header = (f"cmax-rating {__version__}, Python {sys.version.split()[0]}, "
              f"{dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}\n"
              f"argv: {sys.argv!r}\n\n")
    where = "not saved"
    try:
        fd, path = tempfile.mkstemp(prefix="cmax-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(header + text)
        where = f"traceback saved to {path}"
    except OSError as err:
        where = f"traceback not saved ({err.strerror}); run with -v to print it"
    if verbosity() > 0:
        click.echo(text, err=True, nl=False)
    summary = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    click.echo(f"cmax: internal error: {summary} (a bug in cmax, not in the input; {where}; "
               "please attach it to a bug report)", err=True)
    return exits.INTERNAL


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2, never a traceback;
    anything else is an internal error (:func:`_internal_error`). Exit codes:
    :mod:`cmax.cli.exits`. Also the entry point ClusterMAX's ``cmax`` script ends up calling
    when both tools share an environment (:mod:`cmax.cli.beside`), so that is checked first."""
    # everything printed, results and errors, with control characters made visible
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        with _stops_unwind():
            return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


@contextlib.contextmanager
def _stops_unwind() -> Iterator[None]:
    """SIGTERM and SIGINT, at any moment of a command (an import, a worker starting), unwind
    as ``SystemExit(128 + signal)``, which :func:`_main` reports in one line: a SIGINT was a
    KeyboardInterrupt, which click answers with a blank line of its own (or, raised inside a
    library, a traceback), and a SIGTERM before a command set its own handler
    (:func:`cmax.submission.bundle.cleanup_on_signals`) killed cmax without a word. Once stopping,
    further stop signals are ignored so the cleanups run to the end. The handlers in place
    before (a test runner's) are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _stop(signum: int, frame: object) -> None:
    for sig in STOP_SIGNALS:
        signal.signal(sig, _ignore)
    raise SystemExit(128 + signum)


def _ignore(signum: int, frame: object) -> None:
    return None


def _after_stop() -> None:
    """After a stop has been reported in its one line, the interpreter's teardown says
    nothing more: a process pool's exit hook (concurrent.futures) can find its wake-up pipe
    already closed by the stop and would print 'Exception ignored in ... OSError: Bad file
    descriptor' under the line."""
    sys.unraisablehook = lambda unraisable: None


def _main(argv: list[str] | None) -> int:
    shared = shared_with_clustermax()
    if shared is not None:
        click.echo(f"cmax: error: {shared}", err=True)
        return exits.CONFLICT
    try:
        args = hoist_global_flags(sys.argv[1:] if argv is None else list(argv))
        result: Any = cli.main(args=args, prog_name=_prog_name(), standalone_mode=False)
    except CmaxError as exc:
        click.echo(f"cmax: error: {exc.one_line()}", err=True)
        return exits.BAD_INPUT
    except click.exceptions.Abort as exc:  # click's form of Ctrl-C
        # click 8.2+ chains the KeyboardInterrupt as the cause, click 8.1 only as the context
        cause = exc.__cause__ or exc.__context__
        _after_stop()
        if isinstance(cause, KeyboardInterrupt):
            detail = f": {cause}" if str(cause) else ""
            click.echo(f"cmax: interrupted{detail}", err=True)
            return exits.INTERRUPTED
        click.echo("cmax: aborted", err=True)
        return exits.INTERRUPTED
    except click.UsageError as exc:
        # one line, like every other user error; click's own block spans three
        where = exc.ctx.command_path if exc.ctx is not None else "cmax"
        click.echo(f"cmax: error: {exc.format_message()} (see `{where} --help`)", err=True)
        return exits.BAD_INPUT
    except click.ClickException as exc:
        exc.show()
        return exits.BAD_INPUT if exc.exit_code in (1, 2) else exc.exit_code
    except KeyboardInterrupt as exc:
        _after_stop()
        detail = f": {exc}" if str(exc) else ""
        click.echo(f"cmax: interrupted{detail}", err=True)
        return exits.INTERRUPTED
    except BrokenPipeError:
        return exits.OK
    # a stop signal (cmax.submission.bundle.cleanup_on_signals): say what was kept
    except SystemExit as exc:
        notes = getattr(exc, "__notes__", ())
        if notes or exc.code in STOPPED:
            _after_stop()
        for note in notes:
            click.echo(f"cmax: interrupted: {note}", err=True)
        if not notes and exc.code in STOPPED:
            click.echo(f"cmax: {STOPPED[exc.code]}", err=True)
        raise
    except Exception as exc:  # not a CmaxError: a bug in cmax
        return _internal_error(exc)
    if isinstance(result, int):
        return result
    return 0


STOPPED = {128 + signal.SIGINT: "interrupted", 128 + signal.SIGTERM: "stopped (SIGTERM)"}


def _finish(code: list[int]) -> None:
    """The last exit handler: flush, then leave without the interpreter's module teardown."""
    with contextlib.suppress(OSError, ValueError):  # a closed pipe has nothing to receive
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code[0])


def run() -> None:
    """The ``cmax`` and ``cmax-rating`` programs: :func:`main`, then a quick exit.

    Whatever a command writes is closed when it returns, so once the exit handlers have run
    (logging, Ray, temporary folders) the interpreter's module-by-module teardown of
    WeasyPrint, matplotlib and Polars only costs time. Exit handlers run last-registered
    first, so :func:`_finish`, registered before any command imports a library, runs after all
    of theirs and ends the process with the command's code.
    """
    # Polars' allocator (jemalloc) reads its settings once, when a command first imports
    # Polars: one arena for every thread, so the buffers one thread frees serve the next
    # allocations of the other (with an arena each, a dense GiB log's parse held ~25 MiB more
    # at its peak, for the same CPU time: benchmarks/bench_ingest.py). A user's own wins.
    os.environ.setdefault("_RJEM_MALLOC_CONF", "narenas:1")
    as_program()
    code = [exits.INTERNAL]
    atexit.register(_finish, code)
    try:
        code[0] = main()
    except SystemExit as exc:  # shell completion ends with sys.exit()
        code[0] = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    sys.exit(code[0])
