"""``cmax docs [TOPIC]``: the documentation pages, shipped inside the package.

Error messages point at ``docs/<topic>.md``; a pip install has no checkout to open it in, so
the same pages travel in the wheel (``cmax/_data/docs``) and this command prints them.
"""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem

from cmax.cli.common import emit_json, format_option


def _pages() -> dict[str, str]:
    from cmax.resources import data_dir

    pages = {}
    for path in sorted(data_dir("docs").glob("*.md")):
        first = path.read_text(encoding="utf-8").lstrip().splitlines()[0]
        pages[path.stem] = first.lstrip("# ").strip()
    return pages


def _complete(ctx: click.Context, param: click.Parameter,
              incomplete: str) -> list[CompletionItem]:
    """The documentation topics for shell completion, each with its page's title."""
    return [CompletionItem(name, help=title) for name, title in _pages().items()
            if name.startswith(incomplete)]


@click.command("docs", help="Print a documentation page (the docs/*.md an error message names) "
               "or, without TOPIC, list them.")
@click.argument("topic", required=False, shell_complete=_complete)
@format_option
def command(topic: str | None, fmt: str) -> None:
    from cmax.errors import CmaxError
    from cmax.resources import data_dir

    pages = _pages()
    if topic is None:
        if fmt == "json":
            emit_json({"topics": pages})
            return
        width = max(map(len, pages))
        for name, title in pages.items():
            click.echo(f"{name:<{width}}  {title}")
        return
    name = topic.removeprefix("docs/").removesuffix(".md").lower()
    if name not in pages:
        raise CmaxError(f"no documentation page {topic!r}", field="TOPIC",
                        expected=", ".join(pages), fix="run `cmax docs` for the list")
    text = (data_dir("docs") / f"{name}.md").read_text(encoding="utf-8")
    if fmt == "json":
        emit_json({"topic": name, "markdown": text})
    else:
        click.echo(text, nl=not text.endswith("\n"))
