"""The ``cmax`` command line (the pipeline it drives: docs/architecture.md).

Each command lives in its own module under ``cmax.cli`` and is imported only when invoked, so
``cmax --help`` stays fast and one command's heavy imports (WeasyPrint, matplotlib) never slow
another. Exit codes: 0 ok, 1 problems found (errors, regressions), 2 unusable input or usage.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
from typing import Any

import click

from cmax import __version__
from cmax.errors import CmaxError

# command name -> (module, one-line help shown by `cmax --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("cmax.cli.demo_cmd",
             "Rate the sample providers that ship with cmax and write reports."),
    "validate": ("cmax.cli.validate_cmd",
                 "Check a bundle's evidence against the reference: findings."),
    "score": ("cmax.cli.score_cmd",
              "Score a bundle: tier, Exemplar verdict, per-workload ratios."),
    "price": ("cmax.cli.price_cmd",
              "Price advice for negotiation: quoted, parity and ask $/GPU-hr."),
    "report": ("cmax.cli.report_cmd",
               "Write HTML and PDF scorecards, briefs and a leaderboard."),
    "audit": ("cmax.cli.audit_cmd",
              "Periodic audit runs: history, drift, expiry, trend reports."),
    "inspect": ("cmax.cli.inspect_cmd",
                "Detect the format of one evidence file and summarise it."),
    "reference": ("cmax.cli.reference_cmd",
                  "Browse the reference baselines and catalogues."),
    "calc": ("cmax.cli.calc_cmd",
             "What-if calculator: MFU, step time, tokens/s, $/M tokens, J/token."),
    "schema": ("cmax.cli.schema_cmd",
               "Print the JSON Schemas of the Scorecard and PriceAdvice."),
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
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cmax (cmax-rating)")
def cli() -> None:
    """cmax rates GPU clouds: is this cluster as good as promised, and what is it worth?

    Evidence bundles (a directory, .tar.gz or .zip with a cmax.toml) are validated against
    NVIDIA reference results, scored into a ClusterMAX-style tier and priced.
    """


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2, never a traceback."""
    try:
        result: Any = cli.main(args=argv, prog_name="cmax", standalone_mode=False)
    except CmaxError as exc:
        click.echo(f"cmax: error: {exc.one_line()}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("cmax: aborted", err=True)
        return 130
    except click.UsageError as exc:
        # one line, like every other user error; click's own block spans three
        where = exc.ctx.command_path if exc.ctx is not None else "cmax"
        click.echo(f"cmax: error: {exc.format_message()} (see `{where} --help`)", err=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return 2 if exc.exit_code in (1, 2) else exc.exit_code
    except KeyboardInterrupt:
        click.echo("cmax: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    if isinstance(result, int):
        return result
    return 0


def run() -> None:
    """The ``cmax`` program: :func:`main`, then a quick exit. Whatever a command writes is
    closed when it returns, so after the exit handlers (logging, Ray, temporary folders) the
    interpreter's module-by-module teardown of WeasyPrint, matplotlib and polars only costs
    time: ~0.3 s, half a bare WeasyPrint run (issue 15)."""
    code = main()
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError):  # a closed pipe has nothing left to receive
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
