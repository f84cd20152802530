"""``cmax score``: the scorecard of one bundle (tier, Exemplar verdict, ratios, categories)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cmax.cli.common import (
    bundle_argument,
    emit_checks,
    emit_json,
    result_format_option,
    start_up,
    wants_checks,
)
from cmax.cli.package_options import package_options
from cmax.cli.policies import fail_on_option, policy_checks, scorecard_trips, verdict
from cmax.reading.safetext import one_line
from cmax.states import State, verdict_label

if TYPE_CHECKING:  # pydantic models: not imported for `--help`
    from cmax.render.page_one import PageOne
    from cmax.render.provenance import Source
    from cmax.scorecard import Scorecard, WorkloadResult
    from cmax.submission.intake.draft import Commercial

rubric_option = click.option(
    "--rubric", "rubric_path", type=click.Path(path_type=str), default=None,
    envvar="CMAX_RUBRIC", show_envvar=True,
    help="Rating rubric TOML to use instead of the shipped reference/rubric.toml.",
)


def _ci(low: float | None, high: float | None) -> str:
    return f"{low:.3f}-{high:.3f}" if low is not None and high is not None else "-"


def _num(value: float | None, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def _label(source: Source | None) -> str:
    """' [provider-attested]': a figure's evidence label at the end of its line."""
    return "" if source is None else f" [{one_line(source.text)}]"


def page_one_text(page: PageOne) -> list[str]:
    """Page 1 as text (:mod:`cmax.render.page_one`): the decision and the ask, then the key
    figures, in the words and roundings of the HTML scorecard and the brief."""
    lines = [f"Decision: {page.decision}. {one_line(page.ask)}"]
    if page.prices is not None:
        t = page.prices
        lines.append("  " + "   ".join(f"{f.label.lower()} {f.value}"
                                       for f in (t.quoted, t.parity, t.ask, t.value))
                     + " per GPU-hour")
    lines += [f"  {k.label}: {one_line(k.value)} ({one_line(k.detail)})"
              + _label(k.source)
              for k in page.keys if k.label != "Price per GPU-hour"]
    if page.prices is not None:
        lines.append(f"  {page.prices.inputs}")
    return lines


def _suite_run_note(run: WorkloadResult | None, runs: int) -> str:
    """What tells one run of a suite workload from the others: its log when the workload has
    several, and what its log states where it contradicts the declaration the suite groups
    it by ('log states fp8 (declared bf16)')."""
    from cmax.judgement.labels import stated

    if run is None:
        return ""
    said = [stated(run, name) for name in ("workload", "num_gpus", "precision")
            if name in run.log_states]
    parts = ([one_line(run.log)] if runs > 1 else []) + [f"log states {s}" for s in said]
    return f" [{'; '.join(parts)}]" if parts else ""


def scorecard_text(card: Scorecard) -> list[str]:
    """A compact human summary; the JSON has everything."""
    from cmax.render.formatting import identity_columns, twin_logs
    from cmax.render.page_one import page_one
    from cmax.render.provenance import LEGEND, Sources
    from cmax.render.views import run_verdict
    from cmax.score.verdicts import serving_withheld_by, withheld_label

    page = page_one(card)
    sources = Sources(card)
    region = f" ({one_line(card.region)})" if card.region else ""
    fabric = f", {card.interconnect}" if card.interconnect else ""
    lines = [  # names from the manifest: a line break in one must not forge a line
        f"{one_line(card.provider)} · {one_line(card.cluster)}{region}",
        f"  {card.nodes} × {card.gpus_per_node} {card.gpu}{fabric}; benchmarked "
        f"{card.benchmark_date}; reference {card.reference_release}; rubric {card.rubric}",
        f"Tier: {page.tier}   score {page.score}" + ("/100" if page.rated else "")
        + f"   Exemplar-style suite: {page.exemplar.label} (bar {page.exemplar_bar})",
    ]
    if card.tier_without_declarations is not None:
        lines.append(f"  without self-declarations: {card.tier_without_declarations}")
    if card.scale is not None:
        lines.append(f"  scale: {card.scale.summary}")
    lines += page_one_text(page)
    if card.workloads:
        head, idents = identity_columns(card.workloads)
        lines += ["", "Training throughput vs reference (steady-state window)",
                  f"  {head} {'ratio':>7} {'95% CI':>13}  {'verdict':<28} evidence"]
        for w, ident, twin in zip(card.workloads, idents, twin_logs(card.workloads),
                                  strict=True):
            basis = sources.run(w)
            said = run_verdict(card, w)
            lines.append(f"  {ident} {_num(w.ratio):>7} {_ci(w.ci_low, w.ci_high):>13}  "
                         f"{said:<28} "
                         + (one_line(basis.text) if basis is not None else "-")
                         + (f"  {one_line(twin)}" if twin else ""))
    if card.exemplar.workloads:
        lines += ["", f"Exemplar-style suite: {card.exemplar_state.label} (every run of each "
                      f"workload above {card.exemplar_bar:.0%} of reference)"
                  + _label(page.exemplar_source)]
        by_id = {w.run_id: w for w in card.workloads if w.run_id}
        for sw in card.exemplar.workloads:
            runs = ", ".join(f"{_num(r.ratio)} " + (
                withheld_label(r.withheld_by) if r.verdict == "withheld"
                else verdict_label(r.verdict)) + _suite_run_note(by_id.get(r.run_id or ""),
                                                                 len(sw.runs))
                for r in sw.runs)
            lines.append(f"  {sw.workload[:22]:<22} {sw.precision[:6]:<6} {sw.num_gpus:>5}  "
                         f"{sw.state.label:<13}  {len(sw.runs)} run(s): {runs}")
    if card.network:
        lines += ["", "Network (nccl-tests bus bandwidth, large messages)"
                  + _label(sources.of("fabric"))]
        for n in card.network:
            ref = f"{n.reference_busbw_gbps:g}" if n.reference_busbw_gbps is not None else "-"
            lines.append(f"  {n.collective:<14} {n.nodes:>3} node(s) {n.busbw_gbps:8.1f} GB/s "
                         f"vs {ref:>6}  ratio {_num(n.ratio)}  {verdict_label(n.verdict)}")
    if card.mlperf:
        lines += ["", "MLPerf Training (olympic time to train)"]
        for i, m in enumerate(card.mlperf):
            lines.append(f"  {m.benchmark:<22} {_num(m.score_min, '.2f'):>8} min vs "
                         f"{_num(m.reference_min, '.2f'):>8}  ratio {_num(m.ratio)}  "
                         f"{verdict_label(m.verdict)}{_label(sources.mlperf(i))}")
    if card.inference:
        lines += ["", "Serving throughput vs reference (output tok/s per GPU, same model, GPU, "
                      "precision, lengths)"]
        for inf in card.inference:
            ref = (f"{inf.reference_tok_s_per_gpu:,.0f}"
                   if inf.reference_tok_s_per_gpu is not None else "-")
            per_gpu = (f"{inf.output_tok_s_per_gpu:,.0f}"
                       if inf.output_tok_s_per_gpu is not None else "-")
            cost = (f"  ${inf.usd_per_million_output_tokens:.3f}/M out"
                    if inf.usd_per_million_output_tokens is not None
                    # a quote, a measured rate, a figure not earned: its row says so
                    else "  not priced" if card.price is not None and not inf.priced
                    and inf.output_tok_s_per_gpu else "")
            if inf.usd_per_million_input_tokens is not None:
                cost += f", ${inf.usd_per_million_input_tokens:.3f}/M in"
            if inf.ci_low is not None and inf.ci_high is not None:
                cost += f"  CI {inf.ci_low:.3f}-{inf.ci_high:.3f}"
            if inf.comparison == "curve":
                cost += f"  (on the curve, {len([p for p in inf.points if p.ratio])} points)"
            # a result the gates hold as withheld says by which errors (another model or GPU
            # than declared, a contradicted GPU count), as a withheld run does
            judged = card.judgement("serving_result", inf.entry)
            held = ("; " + withheld_label(serving_withheld_by(card, inf))
                    if judged is not None and judged.verdict == "withheld" else "")
            lines.append(f"  {inf.model[:22]:<22} {inf.precision[:6]:<6} {inf.input_len}/"
                         f"{inf.output_len} x{inf.gpus} ({inf.gpus_basis}) {per_gpu:>7} vs "
                         f"{ref:>7}  ratio {_num(inf.ratio)}  {verdict_label(inf.verdict)}"
                         f"{held}{cost}" + _label(sources.serving(inf)))
    if card.storage:
        lines += ["", "Storage and checkpoints vs reference"]
        for i, st in enumerate(card.storage):
            what = f"{st.benchmark} {st.workload or ''} {st.direction}".replace("  ", " ")
            measured = f"{st.measured:,.4g} {st.unit}" if st.measured is not None else "-"
            against = f" vs {st.reference:,.4g}" if st.reference is not None else ""
            ratio = f"  ratio {_num(st.ratio)}" if st.ratio is not None else ""
            why = f": {st.reason}" if st.reason else ""
            lines.append(f"  {what[:40]:<40} {measured}{against}{ratio}  {st.verdict}{why}"
                         + _label(sources.storage(i)))
        if card.checkpoint is not None:
            ck = card.checkpoint
            lines.append(f"  checkpoint time: {ck.save_s:.1f} s per save, {ck.share:.2%} of wall "
                         f"time at one per {ck.interval_min:g} min (reference "
                         f"{ck.reference_share:.2%}) → goodput × {ck.ratio:.4f}")
    rel = card.reliability
    if rel is not None:
        mtbf = f"{rel.mtbf_gpu_hours:,.0f} GPU-h" if rel.mtbf_gpu_hours else "no interruptions"
        lines += ["", f"Reliability: {rel.per_1000_gpu_days:.4f} interruptions per 1,000 "
                      f"GPU-days (Llama 3 405B: {rel.reference_per_1000_gpu_days:.4f}); "
                      f"MTBF {mtbf}",
                  f"  E[ETTR] {rel.ettr:.4f} vs reference {rel.reference_ettr:.4f} for a "
                  f"{rel.job_gpus:,}-GPU job → goodput ratio {rel.goodput_ratio:.4f}",
                  f"  evidence: {_label(sources.of('reliability'))[2:-1] or '-'}"]
    if card.sla is not None:
        s = card.sla
        worst = ("" if s.worst_uptime_pct is None
                 else f", worst node-month {s.worst_uptime_pct:.3f}%")
        lines.append(f"SLA: contracted {s.contracted_uptime_pct:g}% per node per month: "
                     f"{'met' if s.met else 'NOT met'}, {s.node_months_below} of "
                     f"{s.node_months} node-months below{worst} (fleet average uptime "
                     f"{s.measured_uptime_pct:.3f}%, which the contract does not judge); "
                     f"credit owed {s.credit_pct:.4g}% of the measured period's bill")
        lines.append(f"  evidence: {_label(sources.of('sla'))[2:-1] or '-'}")
        lines.append(f"  witness: {s.witness}" + (
            f"; nodes in breach: {', '.join(s.nodes_in_breach[:8])}"
            + (f" and {len(s.nodes_in_breach) - 8} more" if len(s.nodes_in_breach) > 8 else "")
            if s.nodes_in_breach else "") + (
            f"; {s.unlogged_outages} outage(s) the monitoring shows are not in the incident log"
            if s.unlogged_outages else ""))
    lines += ["", "Categories (score × weight; basis)"]
    width = max((len(c.heading) for c in card.categories), default=14)
    for c in card.categories:
        if c.state is State.NOT_SCORED:
            lines.append(f"  {c.heading:<{width}} {'-':>6}   {c.state.label}: no evidence (left "
                         "out of the score)")
            continue
        lines.append(f"  {c.heading:<{width}} {c.score:6.1f} × {c.weight:<4g} {c.state.label}")
        if len(c.components) > 1:  # a mixed category says which part is weak
            lines.append("      " + " · ".join(
                f"{p.label} {p.score:.1f} ×{p.weight:g}" for p in c.components))
    if card.gates:
        lines += ["", "Gates"]
        for g in card.gates:
            cap = "" if g.binding_cap is None else f" → caps the tier at {g.binding_cap}"
            lines.append(f"  {g.state.label:<13}  {g.name}{cap}")
    counts = card.finding_counts
    lines += ["", LEGEND,
              "", f"Findings: {counts.get('error', 0)} error(s), {counts.get('warning', 0)} "
                  f"warning(s), {counts.get('info', 0)} info (cmax validate lists them)"]
    return lines


@click.command("score", help="Score a bundle: tier, Exemplar-style verdict, per-workload "
               "ratios with 95% confidence intervals, ClusterMAX-style categories and gates. "
               "Exit 0 when validation found no errors, 1 when it did (or when a --fail-on "
               "policy trips), 2 on unusable input.")
@bundle_argument
@rubric_option
@fail_on_option("score")
@result_format_option
@package_options
@click.pass_context
def command(ctx: click.Context, bundle: str, rubric_path: str | None,
            fail_on: tuple[str, ...], fmt: str, junit_xml: str | None, ctrf_file: str | None,
            commercial: Commercial | None = None) -> None:
    with start_up():  # with the stages assess runs, so that theirs is in start-up too
        from cmax.pipeline import assess
        from cmax.price import price  # noqa: F401
        from cmax.score import load_rubric, score  # noqa: F401

    rubric = load_rubric(rubric_path)
    card = assess(bundle, rubric=rubric, commercial=commercial)
    trips = {policy: scorecard_trips(card, policy) for policy in fail_on}
    if wants_checks(fmt, junit_xml, ctrf_file):
        from cmax.export import scorecard_checks

        emit_checks(fmt, [*scorecard_checks(card), *policy_checks(trips)], "score",
                    junit_xml=junit_xml, ctrf_file=ctrf_file)
    if fmt == "json":
        emit_json(card)
    elif fmt == "text":
        click.echo("\n".join(scorecard_text(card)))
    ctx.exit(verdict(trips))

