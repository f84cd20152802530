"""``cmax price``: the quoted, parity and ask $/GPU-hour for a negotiation, with the arithmetic."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cmax.cli.common import bundle_argument, emit_json, format_option, start_up
from cmax.cli.package_options import package_options
from cmax.cli.score_cmd import rubric_option
from cmax.reading.safetext import one_line
from cmax.states import NOT_ASSESSED

if TYPE_CHECKING:  # pydantic models: not imported for `--help`
    from cmax.scorecard import PriceAdvice, Scorecard
    from cmax.submission.intake.draft import Commercial


def _money(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"${value:,.{digits}f}"


def _assessed(value: float | None) -> str:
    return NOT_ASSESSED if value is None else _money(value)


def sla_line(a: PriceAdvice) -> str:
    """The SLA credit as money and as a percentage of the named bill, or "not assessed"."""
    if a.sla_credit_usd is None or a.sla_period_bill_usd is None:
        return f"  SLA credit   {NOT_ASSESSED} (no [sla] terms or no incident log)"
    pct = "" if a.sla_credit_pct is None else f" ({a.sla_credit_pct:.4g}% of"
    return (f"  SLA credit   {_money(a.sla_credit_usd)} owed{pct or ' on'} the measured "
            f"period's bill of {_money(a.sla_period_bill_usd)}" + (")" if pct else "")
            + ("" if a.sla_credit_term_projection_usd is None else
               f"; projection over the term, not owed: "
               f"{_money(a.sla_credit_term_projection_usd)}"))


def price_text(card: Scorecard, advice: PriceAdvice) -> list[str]:
    """Page 1's decision and ask (:mod:`cmax.render.page_one`, with this advice), then the
    advice's figures to more digits and the arithmetic behind them."""
    from cmax.render.page_one import page_one
    from cmax.render.provenance import Sources

    a = advice
    page = page_one(card.model_copy(update={"price": advice}))
    ratio = "-" if a.throughput_ratio is None else f"{a.throughput_ratio:.4f}"
    adj = "" if a.adjustment_pct is None else f" ({a.adjustment_pct:+.2f}% vs quote)"
    lines = [
        f"{one_line(card.provider)} · {one_line(card.cluster)}",
        f"Decision: {page.decision}. {page.ask}",
        f"  tier {page.tier}, score {page.score}; Exemplar (performance only): "
        f"{page.exemplar.label}",
        "",
        f"  quoted       {_money(a.quoted_usd_per_gpu_hour)}/GPU-hr",
        f"  parity       {_money(a.parity_usd_per_gpu_hour, 4)}/GPU-hr  (throughput {ratio} "
        f"× goodput {a.goodput_ratio:.4f}"
        + (" assumed: no incident log)" if a.goodput_loss_usd is None else ")"),
        f"  ask          {_money(a.ask_usd_per_gpu_hour)}/GPU-hr{adj}",
        f"  value        {_money(a.usd_per_reference_gpu_hour, 4)} per reference-grade "
        "GPU-hour (quoted ÷ (throughput × goodput))",
        f"  term         {a.term_months} months × {a.contract_gpus:,} GPUs: "
        f"{_money(a.term_cost_usd)}; goodput loss {_assessed(a.goodput_loss_usd)}; effective "
        + (f"{_money(a.effective_term_cost_usd)} (credits not subtracted)"
           if a.effective_term_cost_usd is not None
           else f"{NOT_ASSESSED} (no incident log: the term cost is a floor)"),
        sla_line(a),
    ]
    if a.drivers:
        lines += ["", "  What moves the price ($/GPU-hour less than the quote is worth; "
                      "minus: worth more, in the provider's favour)"]
        lines += [f"  {d.usd_per_gpu_hour:>8.4f}  {d.name}: {d.detail}" for d in a.drivers]
    if a.workloads:
        from cmax.render.formatting import identity_columns, twin_logs
        from cmax.render.views import cost_standing

        head, idents = identity_columns(a.workloads)
        lines += ["", f"  {head} {'tok/s/GPU':>10} {'$/M tok':>8} {'ref $/M':>8} "
                      f"{'J/token':>8}"]
        for w, ident, twin in zip(a.workloads, idents, twin_logs(a.workloads), strict=True):
            def cell(v: float | None, fmt: str) -> str:
                return "-" if v is None else format(v, fmt)
            lines.append(
                f"  {ident} {cell(w.tokens_per_s_per_gpu, ',.1f'):>10} "
                f"{cell(w.usd_per_million_tokens, '.4f'):>8} "
                f"{cell(w.reference_usd_per_million_tokens, '.4f'):>8} "
                f"{cell(w.joules_per_token, '.3f'):>8}"
                + (f"  {twin}" if twin else "")
                + ("" if w.priced else f"  not priced: {cost_standing(w)}"))
        note = Sources(card).power_note()
        if note is not None and any(w.joules_per_token is not None for w in a.workloads):
            lines.append(f"  {note}")
    if a.usd_per_million_tokens is not None:
        basket = ", ".join(f"{k} {share:.0%}" for k, share in a.token_basket.items())
        lines += ["", f"  $ per million training tokens on the buyer's workload ({basket}; "
                      f"interruptions priced in): {_money(a.usd_per_million_tokens, 4)}"]
        lines += [f"    {c.workload}:{c.precision} at {c.num_gpus:,} GPUs  "
                  f"{_money(c.usd_per_million_tokens, 4)}  ("
                  + ("" if c.basis == "estimate" else "measured: ") + f"{c.basis_detail})"
                  for c in a.token_costs
                  if f"{c.workload}:{c.precision}" in a.token_basket]
    lines += ["", "Reasoning"] + [f"  {step}" for step in a.reasoning]
    return lines


@click.command("price", help="Price advice for a negotiation: parity price = quoted $/GPU-hr "
               "× throughput ratio × goodput ratio, the ask (min of quoted and parity), value "
               "per reference-grade GPU-hour, $ per million tokens, J/token, cost over the "
               "contract term with goodput loss, SLA credit owed, and the reasoning. "
               "Exit 0, or 2 on unusable input (e.g. no [pricing]).")
@bundle_argument
@click.option("--workload", "workload", default=None, metavar="KEY[=SHARE],...",
              help="The buyer's workload for $ per million training tokens: "
                   "workload:precision (llama3.1-405b:bf16), or a basket weighted by token "
                   "share (llama3.1-405b:bf16=3,llama3.1-70b:fp8=1). Default: [pricing] "
                   "workloads, else every workload the offer measured, equal shares. A "
                   "workload the offer did not run is estimated (labelled, with its basis).")
@rubric_option
@format_option
@package_options
def command(bundle: str, workload: str | None, rubric_path: str | None, fmt: str,
            commercial: Commercial | None = None) -> None:
    with start_up():
        from cmax.pipeline import load
        from cmax.price import price
        from cmax.score import load_rubric, score

    rubric = load_rubric(rubric_path)
    with load(bundle, commercial=commercial) as loaded:
        card = score(loaded.evidence, loaded.findings, loaded.reference, rubric)
        advice = price(loaded.evidence, card, loaded.reference, workload=workload)
        errors = sum(1 for f in loaded.findings if f.severity == "error")
    if errors:
        click.echo(f"cmax: warning: {errors} validation error(s) in this bundle; this advice "
                   "rests on evidence that failed validation (run `cmax validate`)", err=True)
    if fmt == "json":
        emit_json(advice)
    else:
        click.echo("\n".join(price_text(card, advice)))
