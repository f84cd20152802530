"""``cmax demo``: the whole pipeline on the sample bundles that ship with cmax."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cmax.cli.common import emit_json, format_option, no_pdf_option, paper_option, progress
from cmax.reading.safetext import one_line

if TYPE_CHECKING:
    from cmax.render.page_one import PageOne


def table(pages: Sequence[PageOne]) -> list[str]:
    """The demo's table: one line per provider, read from its page 1."""
    lines = [f"{'provider':<18} {'gpu':<9} {'tier':<16} {'score':>6} {'exemplar':>13} "
             f"{'quoted':>7} {'ask':>7} {'value':>7}  decision"]
    for page in pages:
        tiles = page.prices
        quoted, ask, value = ((tiles.quoted.value, tiles.ask.value, tiles.value.value)
                              if tiles is not None else ("-", "-", "-"))
        lines.append(f"{one_line(page.provider[:18]):<18} {page.gpu[:9]:<9} {page.tier:<16} "
                     f"{page.score:>6} {page.exemplar.label:>13} {quoted:>7} {ask:>7} "
                     f"{value:>7}  {page.decision}")
    return lines


@click.command("demo", help="Rate the sample providers that ship with cmax and write their "
               "HTML and PDF scorecards, negotiation briefs and a leaderboard.")
@click.option("-o", "--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              default=Path("cmax-demo"), show_default=True, help="Where to write the reports.")
@click.option("--rank-by", "rank_by", type=click.Choice(["tier", "value"]), default="tier",
              show_default=True, help="Leaderboard order: tier (then the Exemplar state, then "
              "score), or value ($ per reference-grade GPU-hour, cheapest first).")
@no_pdf_option
@paper_option
@format_option
def command(out_dir: Path, rank_by: str, no_pdf: bool, paper: str, fmt: str) -> None:
    from cmax.render.worker import DocumentWorker

    # charts drawn in a second process while this one rates and writes (as in cmax report)
    with DocumentWorker.start() as worker:
        from cmax.pipeline import assess
        from cmax.render import render_reports
        from cmax.render.reports import documents_from
        from cmax.submission.samples import sample_bundles

        cards = []
        for bundle in sample_bundles():
            progress(f"scoring {bundle.name} ...")
            cards.append(assess(bundle))
        worker.submit(cards, rank_by)
        progress(f"rendering reports into {out_dir} ...")
        with documents_from(worker):
            files = render_reports(cards, out_dir,
                                   rank_by="value" if rank_by == "value" else "tier",
                                   pdf=not no_pdf, paper=paper)
    from cmax.price.tokens import compare
    from cmax.render.page_one import decision, page_one
    from cmax.render.provenance import Sources
    from cmax.render.views import tokens_sentence

    # across GPU generations offers are compared per training token, never per GPU-hour
    result = compare(cards)
    token_rank = {r.index: (rank, r) for rank, r in enumerate(result.ranked, start=1)}
    energy_rank = {r.index: rank for rank, r in enumerate(result.by_energy, start=1)}
    if fmt == "json":
        emit_json({
            "out_dir": str(out_dir.resolve()),
            "basket": result.basket,
            "scales": result.scales,
            "providers": [
                {"provider": c.provider, "cluster": c.cluster, "gpu": c.gpu, "tier": c.tier,
                 "decision": decision(c), "score": c.score, "exemplar_pass": c.exemplar_pass,
                 "exemplar_state": c.exemplar_state.value,
                 "ask_usd_per_gpu_hour": c.price.ask_usd_per_gpu_hour if c.price else None,
                 "usd_per_reference_gpu_hour":
                     c.price.usd_per_reference_gpu_hour if c.price else None,
                 "usd_per_million_tokens":
                     token_rank[i][1].usd_per_million_tokens if i in token_rank else None,
                 "tokens_rank": token_rank[i][0] if i in token_rank else None,
                 "tokens_unranked": result.unranked.get(i),
                 "joules_per_token":
                     token_rank[i][1].joules_per_token if i in token_rank else None,
                 "joules_rank": energy_rank.get(i),
                 "joules_basis": power.text if (power := Sources(c).power()) else None}
                for i, c in enumerate(cards)
            ],
            "files": [str(f.resolve()) for f in files],
        })
        return
    for line in table([page_one(c) for c in cards]):
        click.echo(line)
    click.echo("(quoted, ask: $ per GPU-hour; value: $ per reference-grade GPU-hour, comparable "
               "within one GPU type only)")
    if result.ranked:
        basket = ", ".join(f"{k.replace(':', ' ')} at {result.scales[k]:,} GPUs"
                           for k in result.basket)
        click.echo(f"\nAcross GPU generations: $ per million training tokens ({basket}; "
                   "interruptions priced in), cheapest first")
        for rank, r in enumerate(result.ranked, start=1):
            c = cards[r.index]
            power = Sources(c).power()
            joules = (f"{r.joules_per_token:6.2f} J/token (#{energy_rank[r.index]}"
                      + (f", {power.short})" if power is not None else ")")
                      if r.joules_per_token is not None else "J/token unknown")
            click.echo(f"  {rank}. {c.provider[:18]:<18} {c.gpu[:9]:<9} "
                       f"${r.usd_per_million_tokens:.3f}/M tokens   {joules:<28} "
                       f"{c.tier}: {decision(c)}")
        for i, why in sorted(result.unranked.items()):
            click.echo(f"  -  {cards[i].provider[:18]:<18} not ranked: {why}")
        top = cards[result.ranked[0].index]
        sentence = tokens_sentence(top, cards)
        if sentence:
            click.echo(f"  {top.provider} ({top.gpu}): {sentence}")
    click.echo(f"\nReports written to {out_dir.resolve()}:")
    for f in files:
        click.echo(f"  {f.resolve()}")
