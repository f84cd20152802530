"""``cmax accept``: acceptance per scalable unit, as a buyer signs a cluster off."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cmax.cli.common import (
    bundle_argument,
    emit_checks,
    emit_json,
    result_format_option,
    wants_checks,
)
from cmax.cli.exits import FINDINGS, OK
from cmax.cli.package_options import package_options

if TYPE_CHECKING:
    from cmax.scorecard import Scorecard
    from cmax.submission.intake.draft import Commercial


def acceptance_text(card: Scorecard) -> list[str]:
    """The per-unit acceptance as text: one block per unit, a line per requirement."""
    from cmax.score.acceptance import SOURCE

    lines = [f"{card.provider} / {card.cluster}: acceptance per scalable unit ({SOURCE})"]
    for unit in card.acceptance:
        verdict = "ACCEPTED" if unit.accepted else "NOT ACCEPTED"
        hosts = f", {len(unit.hosts)} hosts" if unit.hosts else ""
        lines += ["", f"{unit.name} ({unit.source}{hosts}): {verdict}"]
        for r in unit.requirements:
            lines.append(f"  {r.state.label:<13}  {r.requirement}: {r.title}")
            lines.append(f"                 {r.detail}")
    accepted = sum(u.accepted for u in card.acceptance)
    lines += ["", f"{accepted} of {len(card.acceptance)} unit(s) accepted"]
    return lines


@click.command("accept", help="Acceptance per scalable unit: each unit (an llmb-run package "
               "of a bundle of several, a [[units]] entry of cmax.toml, else the whole bundle) "
               "judged on the requirements of NVIDIA's Requirements for AI Clouds that the "
               "evidence decides: BM01 (every Exemplar benchmark within 5% of NVIDIA's target) "
               "and NCCL multi-node bus bandwidth. Exit 0 when every unit is accepted, 1 when "
               "one is not, 2 on unusable input.")
@bundle_argument
@result_format_option
@package_options
@click.pass_context
def command(ctx: click.Context, bundle: str, fmt: str, junit_xml: str | None,
            ctrf_file: str | None, commercial: Commercial | None = None) -> None:
    from cmax.pipeline import assess

    card = assess(bundle, commercial=commercial)
    if wants_checks(fmt, junit_xml, ctrf_file):
        from cmax.export import acceptance_checks

        emit_checks(fmt, acceptance_checks(card), "accept", junit_xml=junit_xml,
                    ctrf_file=ctrf_file)
    if fmt == "json":
        emit_json({"provider": card.provider, "cluster": card.cluster,
                   "units": [u.model_dump(mode="json") for u in card.acceptance]})
    elif fmt == "text":
        click.echo("\n".join(acceptance_text(card)))
    ctx.exit(OK if card.acceptance and all(u.accepted for u in card.acceptance) else FINDINGS)
