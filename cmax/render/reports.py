"""Scorecards, negotiation briefs and leaderboards as HTML and PDF, from Scorecard models only.

Every output is a pure function of the scorecards: no clock, no random ids, no environment.
Dates shown are the benchmark dates; PDF attachment dates are pinned; charts are
deterministic SVG. So the same scorecards give byte-identical files, which lets an auditor
diff two report runs and lets a provider reproduce the report a buyer holds.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cmax.errors import CmaxError
from cmax.findings import sort_findings
from cmax.reading.safetext import csv_cell, json_text
from cmax.render import charts, views
from cmax.render.formatting import log_states_text, run_label, twin_logs
from cmax.render.page_one import DRIVER_LEGEND, EXEMPLAR_SCOPE, page_one
from cmax.render.pdf import (
    DEFAULT_PAPER,
    DEFAULT_VARIANT,
    PdfAttachment,
    layout,
    on_paper,
    write_document,
    write_text_atomic,
)
from cmax.render.provenance import LEGEND, Sources
from cmax.render.slugs import report_slugs
from cmax.render.templates import render_template
from cmax.score.verdicts import serving_standing
from cmax.scorecard import Scorecard

MAX_FINDINGS_PRINTED = 150  # the rest stay in the attached CSV (long tables slow WeasyPrint)
BRIEF_MAX_PAGES = 2
# (compact CSS, reasons shown, demands shown): tried in order until the brief fits
BRIEF_LEVELS: tuple[tuple[bool, int, int], ...] = ((False, 12, 12), (True, 12, 12), (True, 6, 6))


@dataclass(frozen=True)
class StepChart:
    label: str
    uri: str


@dataclass(frozen=True)
class ScorecardCharts:
    ratio: str | None = None
    nccl: str | None = None
    incidents: str | None = None
    serving: str | None = None
    steps: list[StepChart] = field(default_factory=list)


def _uri(svg: str | None) -> str | None:
    return charts.data_uri(svg) if svg else None


def scorecard_charts(card: Scorecard) -> ScorecardCharts:
    steps = []
    for w, log in zip(card.workloads, twin_logs(card.workloads), strict=True):
        svg = charts.step_time_chart(w)
        if svg:
            label = run_label(w) + (f" ({log})" if log else "")
            steps.append(StepChart(label=label, uri=charts.data_uri(svg)))
    withheld = {j.id for j in card.judgements
                if j.kind == "training_run" and j.verdict == "withheld"}
    return ScorecardCharts(
        ratio=_uri(charts.ratio_chart(card.workloads, card.exemplar_bar, withheld)),
        nccl=_uri(charts.nccl_chart(card.network)),
        incidents=_uri(charts.incidents_chart(card.reliability)) if card.reliability else None,
        serving=_uri(charts.serving_chart(card.inference)),
        steps=steps,
    )


def findings_csv(card: Scorecard) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["severity", "rule", "file", "line", "run_id", "message", "fix"])
    for f in sort_findings(card.findings):
        writer.writerow([f.severity, csv_cell(f.rule), csv_cell(f.file),
                         "" if f.line is None else f.line, csv_cell(f.run_id),
                         csv_cell(f.message), csv_cell(f.fix)])
    return buf.getvalue()


#: one row per training run on the scorecard: what it measured, against what, and the verdict;
#: ``log_states`` names the declared identity its log contradicts ('precision=fp8': the
#: declared bf16 in ``precision`` is not what the log states)
RUNS_COLUMNS = ("run_id", "log", "workload", "precision", "num_gpus", "status", "window_first",
                "window_last", "steps_in_window", "mean_step_time_s", "tokens_per_s_per_gpu",
                "model_tflops_per_gpu", "mfu_pct", "ratio", "ci_low", "ci_high", "verdict",
                "log_states")


def runs_csv(card: Scorecard) -> str:
    """The scorecard's per-run table (training runs against their reference) as CSV."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(RUNS_COLUMNS)
    for w in card.workloads:
        first, last = w.window if w.window is not None else (None, None)
        row = {**w.model_dump(include=set(RUNS_COLUMNS)), "window_first": first,
               "window_last": last, "log_states": log_states_text(w)}
        if views.run_withheld(card, w):
            row["verdict"] = "withheld"
        writer.writerow(["" if row.get(c) is None else csv_cell(str(row[c]))
                         for c in RUNS_COLUMNS])
    return buf.getvalue()


def scorecard_json(card: Scorecard) -> str:
    return json_text(card.model_dump_json(indent=2)) + "\n"


def _common(card: Scorecard) -> dict[str, Any]:
    page = page_one(card)
    return {
        "card": card,
        "page": page,
        "cmax_version": card.cmax_version,
        "headlines": views.headline_findings(card),
        "reasons": views.reasoning(card),
        "gap": page.gap,
        "loss_basis": views.loss_basis(card),
        "sources": Sources(card),
        "run_verdict": lambda w: views.run_verdict(card, w),
        "cost_standing": views.cost_standing,
        "serving_standing": lambda r: serving_standing(card, r),
    }


PAGE1_TERMS = ("tier", "reference", "throughput ratio", "goodput", "parity price", "ask", "value",
               "busbw", "Exemplar", "SLA credit")


def scorecard_html(card: Scorecard, slug: str, medium: str, chart_set: ScorecardCharts,
                   heatmap: str | None = None) -> str:
    findings = views.all_findings(card)
    audit_checks = views.audit_checks_sorted(card)
    return render_template(
        "scorecard.html.j2",
        **_common(card),
        slug=slug,
        medium=medium,
        tier_changes=views.tier_changes(card),
        components_line=views.components_line,
        category_columns=views.category_columns(card.categories),
        rating_notes=views.rating_notes(card),
        driver_legend=DRIVER_LEGEND,
        exemplar_scope=EXEMPLAR_SCOPE,
        evidence_legend=LEGEND,
        glossary_page1=views.glossary(*PAGE1_TERMS),
        charts=chart_set,
        audit_checks=audit_checks,
        audit_problems=[c for c in audit_checks if c.status == "FAIL"],
        suspects=views.suspect_nodes(card),
        suspect_offer=views.suspect_offer(card),
        heatmap=heatmap,
        findings_shown=findings[:MAX_FINDINGS_PRINTED],
        findings_hidden=max(0, len(findings) - MAX_FINDINGS_PRINTED),
        evidence_files=sorted(card.evidence_files, key=lambda e: e.path),
        attachments=[f"{slug}.scorecard.json", f"{slug}.findings.csv"],
        max_workloads=100,
    )


BRIEF_TERMS = ("tier", "Exemplar", "reference", "parity price", "value", "goodput", "SLA credit")


def brief_html(card: Scorecard, level: int = 0, peers: Sequence[Scorecard] = ()) -> str:
    compact, max_reasons, max_demands = BRIEF_LEVELS[level]
    comparison = views.value_comparison(card, list(peers)) if len(peers) > 1 else []
    common = _common(card)
    basis = common["page"].basis
    # what the figures rest on, beside the terms: the shortest column of the glossary has room
    evidence = [views.Term("evidence", " ".join(basis))] if basis else []
    return render_template(
        "brief.html.j2", **common, compact=compact,
        gates_note=views.other_gates_note(card),
        why=views.brief_reasons(card)[:max_reasons],
        demands=views.brief_demands(card)[:max_demands],
        comparison=comparison, value_line=views.value_sentence(comparison),
        tokens_line=views.tokens_sentence(card, list(peers)) if len(peers) > 1 else None,
        serving=views.serving_costs(card),
        glossary=[*views.glossary(*BRIEF_TERMS), *evidence],
    )


@dataclass(frozen=True)
class ScorecardDocuments:
    """A scorecard's two HTML documents: the one written as ``.html`` and the one laid out
    into the PDF. Both carry the charts; drawing them is most of the time it takes."""

    html: str
    pdf: str


def scorecard_documents(card: Scorecard, slug: str) -> ScorecardDocuments:
    chart_set = scorecard_charts(card)
    heatmap = _uri(views.pair_heatmap(card))
    return ScorecardDocuments(html=scorecard_html(card, slug, "html", chart_set, heatmap),
                              pdf=scorecard_html(card, slug, "pdf", chart_set, heatmap))


class DocumentSource(Protocol):
    """Documents drawn elsewhere (:class:`cmax.render.worker.DocumentWorker`); None from
    either method means "draw it here"."""

    def documents(self, card: Scorecard, slug: str) -> ScorecardDocuments | None: ...

    def leaderboard_charts(self, cards: Sequence[Scorecard],
                           labels: Sequence[str]) -> dict[str, str | None] | None: ...


_document_source: ContextVar[DocumentSource | None] = ContextVar("document_source",
                                                                 default=None)


@contextmanager
def documents_from(source: DocumentSource) -> Iterator[None]:
    """Within the block, take scorecard documents and leaderboard charts from ``source``
    (e.g. the ones :mod:`cmax.render.worker` drew in another process), drawing here any it
    does not have."""
    token = _document_source.set(source)
    try:
        yield
    finally:
        _document_source.reset(token)


def _documents(card: Scorecard, slug: str) -> ScorecardDocuments:
    source = _document_source.get()
    found = source.documents(card, slug) if source is not None else None
    return found if found is not None else scorecard_documents(card, slug)


def render_scorecard(card: Scorecard, slug: str, out_dir: Path, *,
                     pdf: bool = True, paper: str = DEFAULT_PAPER) -> list[Path]:
    """``<slug>.scorecard.{json,html,pdf}``, ``<slug>.findings.csv`` and ``<slug>.runs.csv`` on
    ``paper``; the PDF carries the JSON and both CSVs too (the CSVs beside it are for a
    spreadsheet, with or without the PDF)."""
    documents = _documents(card, slug)
    card_json = scorecard_json(card)
    found_csv, run_rows = findings_csv(card), runs_csv(card)
    paths = [out_dir / f"{slug}.scorecard.{ext}" for ext in ("json", "html", "pdf")]
    tables = [out_dir / f"{slug}.findings.csv", out_dir / f"{slug}.runs.csv"]
    write_text_atomic(card_json, paths[0])
    write_text_atomic(on_paper(documents.html, paper), paths[1])
    write_text_atomic(found_csv, tables[0])
    write_text_atomic(run_rows, tables[1])
    if not pdf:
        return [*paths[:2], *tables]
    document = layout(on_paper(documents.pdf, paper))
    write_document(document, paths[2], pdf_variant=DEFAULT_VARIANT, attachments=[
        PdfAttachment(f"{slug}.scorecard.json", card_json.encode("utf-8"),
                      "cmax scorecard (JSON, schema from `cmax schema`)"),
        PdfAttachment(f"{slug}.findings.csv", found_csv.encode("utf-8"),
                      "all validation findings (CSV)"),
        PdfAttachment(f"{slug}.runs.csv", run_rows.encode("utf-8"),
                      "every training run against its reference (CSV)"),
    ])
    return [*paths, *tables]


def _fitted_brief(card: Scorecard, peers: Sequence[Scorecard], paper: str) -> tuple[str, Any]:
    """The brief's HTML and layout at the first level of ``BRIEF_LEVELS`` that fits two
    pages; when that takes two pages and the next level only tightens the type (same reasons
    and demands), that one if it fits on one: a second page holding only the glossary or a
    table's last rows is not worth turning the page for."""
    for level in range(len(BRIEF_LEVELS)):
        html = on_paper(brief_html(card, level, peers), paper)
        document = layout(html)
        if len(document.pages) <= BRIEF_MAX_PAGES:
            break
    following = level + 1
    if (len(document.pages) > 1 and following < len(BRIEF_LEVELS)
            and BRIEF_LEVELS[following][1:] == BRIEF_LEVELS[level][1:]):
        tighter = on_paper(brief_html(card, following, peers), paper)
        laid = layout(tighter)
        if len(laid.pages) == 1:
            return tighter, laid
    return html, document


def render_brief(card: Scorecard, slug: str, out_dir: Path,
                 peers: Sequence[Scorecard] = (), *, pdf: bool = True,
                 paper: str = DEFAULT_PAPER) -> list[Path]:
    """``<slug>.brief.{html,pdf}``, made more compact until it fits in two pages; with
    ``peers`` (every scorecard rated together) it compares their value. Without ``pdf`` only
    the HTML, at full length (nothing is laid out, so nothing needs to fit two pages)."""
    if not pdf:
        path = out_dir / f"{slug}.brief.html"
        write_text_atomic(on_paper(brief_html(card, 0, peers), paper), path)
        return [path]
    html, document = _fitted_brief(card, peers, paper)
    paths = [out_dir / f"{slug}.brief.html", out_dir / f"{slug}.brief.pdf"]
    write_text_atomic(html, paths[0])
    attachments = []
    if card.price is not None:
        attachments.append(PdfAttachment(
            f"{slug}.price.json",
            (json_text(card.price.model_dump_json(indent=2)) + "\n").encode("utf-8"),
            "cmax price advice (JSON)"))
    write_document(document, paths[1], pdf_variant=DEFAULT_VARIANT, attachments=attachments)
    return paths


def leaderboard_csv(rows: Sequence[views.LeaderboardRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["rank", "provider", "cluster", "tier", "decision", "score", "exemplar_pass",
                     "exemplar_state",
                     "lowest_ratio", "network_ratio", "quoted_usd_per_gpu_hour",
                     "ask_usd_per_gpu_hour", "usd_per_reference_gpu_hour", "value_rank",
                     "serving_lowest_ratio", "serving_usd_per_million_output_tokens",
                     "gpu", "usd_per_million_tokens", "tokens_rank", "joules_per_token",
                     "joules_rank", "scorecard"])
    for r in rows:
        c = r.card
        writer.writerow([
            r.rank, csv_cell(c.provider), csv_cell(c.cluster), c.tier, r.decision, c.score,
            "" if c.exemplar_pass is None else c.exemplar_pass, c.exemplar_state.value,
            "" if r.lowest_ratio is None else r.lowest_ratio,
            "" if r.network_ratio is None else r.network_ratio,
            c.price.quoted_usd_per_gpu_hour if c.price else "",
            "" if c.price is None or c.price.ask_usd_per_gpu_hour is None
            else c.price.ask_usd_per_gpu_hour,
            "" if r.value is None else r.value, "" if r.value_rank is None else r.value_rank,
            "" if r.serving_ratio is None else r.serving_ratio,
            "" if r.serving_usd is None else r.serving_usd,
            csv_cell(c.gpu), "" if r.tokens_usd is None else round(r.tokens_usd, 4),
            "" if r.tokens_rank is None else r.tokens_rank,
            "" if r.joules_per_token is None else round(r.joules_per_token, 4),
            "" if r.joules_rank is None else r.joules_rank,
            f"{r.slug}.scorecard.json",
        ])
    return buf.getvalue()


def leaderboard_html(rows: Sequence[views.LeaderboardRow], medium: str,
                     chart_uris: dict[str, str | None], rank_by: views.RankBy = "tier") -> str:
    cards = [r.card for r in rows]
    dates = sorted(c.benchmark_date for c in cards)
    return render_template(
        "leaderboard.html.j2",
        cmax_version=cards[0].cmax_version,
        rows=rows,
        medium=medium,
        charts=chart_uris,
        rank_by=rank_by,
        gpu_types=len({c.gpu for c in cards}),
        releases=sorted({c.reference_release for c in cards}),
        first_date=dates[0],
        last_date=dates[-1],
    )


def leaderboard_labels(rows: Sequence[views.LeaderboardRow]) -> list[str]:
    return [f"{r.card.provider[:28]} · {r.card.cluster[:20]}" for r in rows]


def leaderboard_charts(cards: Sequence[Scorecard],
                       labels: Sequence[str]) -> dict[str, str | None]:
    """The leaderboard's charts as ``data:`` URIs, for ``cards`` in rank order."""
    return {"score": _uri(charts.score_chart(cards, labels)),
            "price": _uri(charts.price_chart(cards, labels))}


def render_leaderboard(pairs: Sequence[tuple[str, Scorecard]], out_dir: Path,
                       rank_by: views.RankBy = "tier", *, pdf: bool = True,
                       paper: str = DEFAULT_PAPER) -> list[Path]:
    rows = views.leaderboard_rows(list(pairs), rank_by)
    labels = leaderboard_labels(rows)
    cards = [r.card for r in rows]
    source = _document_source.get()
    chart_uris = source.leaderboard_charts(cards, labels) if source is not None else None
    if chart_uris is None:
        chart_uris = leaderboard_charts(cards, labels)
    paths = [out_dir / "leaderboard.html", out_dir / "leaderboard.pdf"]
    table = out_dir / "leaderboard.csv"
    rows_csv = leaderboard_csv(rows)
    write_text_atomic(on_paper(leaderboard_html(rows, "html", chart_uris, rank_by), paper),
                      paths[0])
    write_text_atomic(rows_csv, table)
    if not pdf:
        return [paths[0], table]
    document = layout(on_paper(leaderboard_html(rows, "pdf", chart_uris, rank_by), paper))
    write_document(document, paths[1], pdf_variant=DEFAULT_VARIANT, attachments=[
        PdfAttachment("leaderboard.csv", rows_csv.encode("utf-8"), "leaderboard rows (CSV)"),
    ])
    return [*paths, table]


def _check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise CmaxError("the output path exists and is not a directory", file=out_dir,
                        fix="pass a directory with -o, e.g. -o reports/")


def render_reports(scorecards: Sequence[Scorecard], out_dir: Path,
                   rank_by: views.RankBy = "tier", *, pdf: bool = True,
                   paper: str = DEFAULT_PAPER,
                   progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Write every report for ``scorecards`` into ``out_dir``; return the paths, sorted.

    Per provider: ``<slug>.scorecard.{json,html,pdf}`` and ``<slug>.brief.{html,pdf}``; with
    two or more scorecards also ``leaderboard.{html,pdf}``, ranked ``rank_by`` tier (then
    score) or value ($ per reference-grade GPU-hour). Each file is written atomically.
    ``pdf=False`` writes no PDF (``--no-pdf``: WeasyPrint is then never imported).
    ``paper`` is the page size of the PDFs and of the HTML's print style (``PAPERS``).
    ``progress(done, total)`` is called after each brief, scorecard and the leaderboard.
    """
    if not scorecards:
        raise CmaxError("no scorecards to report", fix="pass at least one bundle")
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)
    cards = list(scorecards)
    slugs = report_slugs(cards)
    written: list[Path] = []
    total, documents = 2 * len(cards) + (len(cards) >= 2), 0

    def done() -> None:
        nonlocal documents
        documents += 1
        if progress is not None:
            progress(documents, total)

    # the briefs first: they need no charts, so they import WeasyPrint and get written while
    # a document worker may still be drawing the scorecards' charts
    for slug, card in zip(slugs, cards, strict=True):
        written += render_brief(card, slug, out_dir, cards, pdf=pdf, paper=paper)
        done()
    for slug, card in zip(slugs, cards, strict=True):
        written += render_scorecard(card, slug, out_dir, pdf=pdf, paper=paper)
        done()
    if len(cards) >= 2:
        written += render_leaderboard(list(zip(slugs, cards, strict=True)), out_dir, rank_by,
                                      pdf=pdf, paper=paper)
        done()
    return sorted(written)
