"""``--quote``, ``--term`` and ``--manifest`` for the commands that rate a bundle: the commercial
parts of an llmb-run package (the Exemplar archive, an install folder), which holds only logs
and job configurations (:mod:`cmax.submission.intake`). A bundle with its own ``cmax.toml`` states
them
there, so the options are refused for it rather than silently ignored."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

if TYPE_CHECKING:
    from cmax.submission.intake.draft import Commercial

F = TypeVar("F", bound=Callable[..., Any])


def commercial_of(quote: float | None, term: int | None,
                  manifest: str | None) -> Commercial | None:
    if quote is None and term is None and manifest is None:
        return None
    from cmax.reading.tomlfile import decode_toml, read_toml_bytes
    from cmax.submission.intake.draft import Commercial

    small: dict[str, Any] = {}
    if manifest is not None:
        path = Path(manifest)
        small = decode_toml(read_toml_bytes(path, what="manifest"), file=path, what="manifest")
    return Commercial(quote=quote, term_months=term, manifest=small)


def package_options(fn: F) -> F:
    """Add the three options; the command receives them as one ``commercial`` argument."""
    @functools.wraps(fn)
    def wrapper(*args: Any, quote: float | None, term: int | None, small: str | None,
                **kwargs: Any) -> Any:
        return fn(*args, commercial=commercial_of(quote, term, small), **kwargs)

    options = (
        click.option("--quote", type=float, default=None, metavar="USD",
                     help="llmb-run package: the quoted price per GPU-hour."),
        click.option("--term", type=int, default=None, metavar="MONTHS",
                     help="llmb-run package: the contract term in months."),
        click.option("--manifest", "small", type=click.Path(path_type=str), default=None,
                     metavar="FILE", help="llmb-run package: a small cmax.toml with what the "
                     "package cannot hold ([provider], [pricing], [sla], [reliability])."),
    )
    decorated: Callable[..., Any] = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)
