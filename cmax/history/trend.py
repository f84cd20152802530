"""Trend reports: one per cluster and one for the fleet, in HTML and PDF.

Everything shown comes from the history and the drift result, never from the clock, so the
same history and ``as_of`` give byte-identical files. Periods that overlap between runs (a
quarterly reliability window re-reported every month) are counted once: each day belongs to
the newest run whose period covers it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.history.audit import AuditResult
from cmax.history.charts import Series, bar_chart, ratio_chart, step_chart
from cmax.history.drift import (
    TIER_ORDER,
    DriftItem,
    ExemplarStatus,
    Point,
    RunPoint,
    WorkloadKey,
    key_label,
    timelines,
)
from cmax.reading.limits import json_safe
from cmax.reading.safetext import json_text

MAX_LEGEND_SERIES = 10


def report_stem(cluster: str) -> str:
    """A file name for a cluster's report; odd names get a hash so two never collide."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", cluster)
    if safe != cluster:
        safe += "-" + hashlib.sha256(cluster.encode()).hexdigest()[:8]
    return f"cluster-{safe}.trend"


def _month(day: dt.date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def incidents_per_month(runs: Sequence[RunPoint]) -> list[tuple[str, int]]:
    """Unexpected incidents per calendar month; each day counted from the newest covering run."""
    covered = [r for r in runs if r.row["period_start"] is not None
               and r.row["period_end"] is not None]
    owner: dict[dt.date, int] = {}
    for index, run in enumerate(covered):
        day, end = run.row["period_start"], run.row["period_end"]
        while day <= end:
            owner[day] = index
            day += dt.timedelta(days=1)
    months: dict[str, int] = {}
    for day in owner:
        months.setdefault(_month(day), 0)
    for index, run in enumerate(covered):
        for when, count in zip(run.row["incident_dates"] or [], run.row["incident_counts"] or [],
                               strict=False):
            if owner.get(when) == index:
                months[_month(when)] += int(count)
    return sorted(months.items())


@dataclass(frozen=True)
class SlaPeriod:
    """One SLA reporting period; the SLA is judged per node and month."""

    period: str
    label: str
    contracted: float
    measured: float
    met: bool
    credit: float | None
    run: str
    worst: float | None = None
    node_months: int | None = None
    below: int | None = None

    @property
    def compliance_pct(self) -> float:
        """Share of node-months at or above the contracted uptime (all or nothing if unknown)."""
        if self.node_months and self.below is not None:
            return 100.0 * (self.node_months - self.below) / self.node_months
        return 100.0 if self.met else 0.0


def sla_periods(runs: Sequence[RunPoint]) -> list[SlaPeriod]:
    """SLA result per reporting period (newest run wins when a period is re-reported)."""
    latest: dict[tuple[Any, Any], RunPoint] = {}
    for run in runs:
        if run.row["sla_measured_pct"] is None:
            continue
        key = (run.row["period_start"], run.row["period_end"])
        latest[key] = run
    out = []
    for (start, end), run in sorted(latest.items(), key=lambda kv: (str(kv[0][1]), str(kv[0][0]))):
        period = f"{start} – {end}" if start and end else run.run_dir
        out.append(SlaPeriod(
            period=period, label=_month(end) if end else run.run_dir[:7],
            contracted=run.row["sla_contracted_pct"], measured=run.row["sla_measured_pct"],
            met=bool(run.row["sla_met"]), credit=run.row["sla_credit_pct"], run=run.run_dir,
            worst=run.row["sla_worst_pct"], node_months=run.row["sla_node_months"],
            below=run.row["sla_node_months_below"]))
    return out


def _series_for(runs: Sequence[RunPoint], key: WorkloadKey, label: str) -> Series | None:
    """The ratios of ``key`` over time: only those whose run's judgement lets them count."""
    pts = [(r.day, r.points[key]) for r in runs
           if key in r.points and r.points[key].counted and r.points[key].ratio is not None]
    if not pts:
        return None
    return Series(label=label, dates=[d for d, _ in pts],
                  values=[p.ratio for _, p in pts if p.ratio is not None],
                  low=[p.ci_low for _, p in pts], high=[p.ci_high for _, p in pts])


def _not_counted(every: Sequence[tuple[RunPoint, Point]], newest_run: str, newest: Point
                 ) -> str:
    """Why a workload's table row leaves runs out: how many were recorded without a ratio
    that counts, and the newest run's verdict when it is one of them ('' when none is)."""
    left = sum(not p.counted for _, p in every)
    if not left:
        return ""
    said = f"{left} run{'s' if left > 1 else ''} not counted"
    if not newest.counted:
        ratio = f" {newest.ratio:.3f}" if newest.ratio is not None else ""
        said += f"; newest, {newest_run}:{ratio} {newest.verdict or 'not rated'}"
    return said


def _bar(runs: Sequence[RunPoint]) -> float | None:
    bars = [r.row["exemplar_bar"] for r in runs if r.row["exemplar_bar"] is not None]
    return float(bars[-1]) if bars else None


def _fmt_num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _item_rows(items: Sequence[DriftItem]) -> list[dict[str, str]]:
    """The items with a before and an after (every kind but SLA breaches)."""
    return [{
        "cluster": i.cluster, "kind": i.kind.replace("_", " "), "severity": i.severity,
        "workload": i.workload or "", "before": _fmt_num(i.before),
        "after": _fmt_num(i.after),
        "change": f"{i.change_pct:+.1f}%" if i.change_pct is not None else "",
        "message": i.message,
    } for i in items if i.kind != "sla_breach"]


def _sla_rows(items: Sequence[DriftItem]) -> list[dict[str, str]]:
    """SLA breaches in columns of their own: a contracted and a measured uptime are not a
    before and an after."""
    return [{
        "cluster": i.cluster, "period": i.period or "–",
        "contracted": f"{_fmt_num(i.before, 3)}%", "measured": f"{_fmt_num(i.after, 3)}%",
        "measured_what": "worst node-month" if i.metric == "worst_node_month_uptime_pct"
        else "uptime",
        "credit": "–" if i.credit_pct is None else f"{i.credit_pct:g}%", "message": i.message,
    } for i in items if i.kind == "sla_breach"]


def _cluster_context(cluster: str, runs: list[RunPoint], items: list[DriftItem],
                     status: ExemplarStatus | None, as_of: dt.date) -> dict[str, Any]:
    latest = runs[-1]
    keys = sorted({k for r in runs for k in r.points if k[0] == "workload"})
    series = [s for k in keys if (s := _series_for(runs, k, key_label(k))) is not None]
    workload_rows = []
    for key in sorted({k for r in runs for k in r.points}):
        every = [(r, r.points[key]) for r in runs if key in r.points]
        newest_run, newest = every[-1]
        pts = [(r, p) for r, p in every if p.counted]
        last_run, last = pts[-1] if pts else every[-1]
        ratios = [p.ratio for _, p in pts if p.ratio is not None]
        shown = last if pts else None
        workload_rows.append({
            "label": key_label(key), "runs": len(pts), "last_run": last_run.run_dir,
            "held": _not_counted(every, newest_run.run_dir, newest),
            "ratio": _fmt_num(shown.ratio if shown else None),
            "ci": (f"{shown.ci_low:.3f}–{shown.ci_high:.3f}"
                   if shown and shown.ci_low is not None and shown.ci_high is not None
                   else "–"),
            "best": _fmt_num(max(ratios) if ratios else None),
            "tokens": f"{shown.tokens:,.0f}" if shown and shown.tokens else "–",
            "busbw": f"{shown.busbw:,.1f}" if shown and shown.busbw else "–",
            "current": newest_run is latest,
        })
    tiers = [(r.day, TIER_ORDER.index(r.row["tier"])) for r in runs
             if r.row["tier"] in TIER_ORDER]
    incidents = incidents_per_month(runs)
    slas = sla_periods(runs)
    return {
        "cluster": cluster, "provider": latest.row["provider"], "gpu": latest.row["gpu"],
        "as_of": as_of.isoformat(), "first_run": runs[0].run_dir, "last_run": latest.run_dir,
        "run_count": len(runs), "tier": latest.row["tier"], "score": latest.row["score"],
        "exemplar": status, "items": _item_rows(items), "sla_items": _sla_rows(items),
        "problems": sum(1 for i in items if i.severity == "problem"),
        "ratio_chart": ratio_chart(series, bar=_bar(runs)) if series else None,
        "workloads": workload_rows,
        "tier_chart": step_chart([d for d, _ in tiers], [lvl for _, lvl in tiers],
                                 TIER_ORDER) if tiers else None,
        "incidents": incidents[-12:],
        "incident_chart": bar_chart([m for m, _ in incidents], [n for _, n in incidents],
                                    ylabel="unexpected incidents", integer=True)
        if incidents else None,
        "sla": slas,
        "sla_chart": bar_chart(
            [p.label for p in slas], [p.compliance_pct for p in slas],
            ylabel="node-months meeting SLA %", ylim=(0.0, 100.0),
            colors=["#2e8b57" if p.met else "#b22222" for p in slas]) if slas else None,
        "runs": [{
            "run": r.run_dir, "date": r.day.isoformat(), "tier": r.row["tier"],
            "score": f"{r.row['score']:.1f}",
            "exemplar": {True: "met", False: "not met"}.get(r.row["exemplar_pass"],
                                                             "not evaluated"),
            "audit_fail": (len(r.row["audit_fail"]) if r.row["audit_fail"] is not None
                           else "–"),
            "sla": ("–" if r.row["sla_met"] is None else ("met" if r.row["sla_met"]
                                                           else "breached")),
            "release": r.row["reference_release"],
        } for r in reversed(runs)],
    }


def _fleet_context(result: AuditResult, lines: dict[str, list[RunPoint]],
                   statuses: dict[str, ExemplarStatus], as_of: dt.date) -> dict[str, Any]:
    clusters = []
    for cluster, runs in lines.items():
        latest = runs[-1]
        prev_tier = runs[-2].row["tier"] if len(runs) > 1 else None
        cluster_items = [i for i in result.items if i.cluster == cluster]
        status = statuses.get(cluster)
        clusters.append({
            "cluster": cluster, "provider": latest.row["provider"], "gpu": latest.row["gpu"],
            "runs": len(runs), "last_run": latest.run_dir, "tier": latest.row["tier"],
            "prev_tier": prev_tier, "score": f"{latest.row['score']:.1f}",
            "exemplar": status.status if status else "never",
            "expires": status.until if status else "–",
            "sla": ("–" if latest.row["sla_met"] is None
                    else f"{latest.row['sla_measured_pct']:.3f}%"),
            "sla_met": latest.row["sla_met"],
            "problems": sum(1 for i in cluster_items if i.severity == "problem"),
            "href": report_stem(cluster) + ".html",
        })
    keys = sorted({k for runs in lines.values() for r in runs for k in r.points
                   if k[0] == "workload"})
    charts = []
    for key in keys:
        series = [s for c, runs in lines.items() if (s := _series_for(runs, key, c)) is not None]
        if series:
            bar = next((b for runs in lines.values() if (b := _bar(runs)) is not None), None)
            charts.append({"label": key_label(key), "clusters": len(series),
                           "chart": ratio_chart(series, bar=bar, wide=False,
                                                legend=len(series) <= MAX_LEGEND_SERIES)})
    months: dict[str, int] = {}
    for runs in lines.values():
        for month, count in incidents_per_month(runs):
            months[month] = months.get(month, 0) + count
    incidents = sorted(months.items())
    sla_month: dict[str, list[bool]] = {}
    for runs in lines.values():
        for period in sla_periods(runs):
            sla_month.setdefault(period.label, []).append(period.met)
    sla_rows: list[dict[str, Any]] = [
        {"month": m, "clusters": len(v), "met": sum(v), "pct": 100.0 * sum(v) / len(v)}
        for m, v in sorted(sla_month.items())]
    sla_labels = [str(r["month"]) for r in sla_rows]
    sla_pcts = [float(r["pct"]) for r in sla_rows]
    tier_months = sorted({_month(r.day) for runs in lines.values() for r in runs})[-12:]
    tier_grid = []
    for cluster, runs in lines.items():
        cells = []
        for month in tier_months:
            in_month = [r for r in runs if _month(r.day) == month]
            cells.append(in_month[-1].row["tier"] if in_month else "")
        tier_grid.append({"cluster": cluster, "cells": cells})
    return {
        "as_of": as_of.isoformat(), "clusters": clusters,
        "run_count": sum(len(r) for r in lines.values()),
        "items": _item_rows(result.items), "sla_items": _sla_rows(result.items),
        "problems": sum(1 for i in result.items if i.severity == "problem"),
        "charts": charts,
        "incidents": incidents,
        "incident_chart": bar_chart([m for m, _ in incidents], [n for _, n in incidents],
                                    ylabel="unexpected incidents", integer=True)
        if incidents else None,
        "sla": sla_rows,
        "sla_chart": bar_chart(sla_labels, sla_pcts, ylabel="% of clusters meeting SLA",
                               ylim=(0.0, 100.0)) if sla_rows else None,
        "tier_months": tier_months, "tier_grid": tier_grid,
        "unusable": [{"path": str(u.path), "error": u.error}
                     for u in result.unusable if u.fatal],
    }


def _attachment(payload: Any) -> bytes:
    # non-finite floats become null: NaN/Infinity are not JSON (cmax.reading.limits)
    return (json_text(json.dumps(json_safe(payload), indent=2, sort_keys=True,
                                 ensure_ascii=False, allow_nan=False)) + "\n").encode()


def _emit(out: Path, stem: str, template: str, context: dict[str, Any],
          items: list[DriftItem], pdf: bool, paper: str) -> list[Path]:
    from cmax.render.pdf import PdfAttachment, on_paper, write_pdf, write_text_atomic
    from cmax.render.templates import render_template

    html = on_paper(render_template(template, **context), paper)
    html_path = out / f"{stem}.html"
    write_text_atomic(html, html_path)
    if not pdf:
        return [html_path]
    pdf_path = out / f"{stem}.pdf"
    data = _attachment([i.model_dump(mode="json") for i in items])
    write_pdf(html, pdf_path, attachments=[PdfAttachment(
        "drift.json", data, "drift items of this trend report (cmax audit)")])
    return [html_path, pdf_path]


def _emit_cluster(out: Path, cluster: str, runs: list[RunPoint], items: list[DriftItem],
                  status: ExemplarStatus | None, as_of: dt.date, rules: dict[str, Any],
                  pdf: bool, paper: str) -> list[Path]:
    context = _cluster_context(cluster, runs, items, status, as_of)
    return _emit(out, report_stem(cluster), "trend_cluster.html.j2", {**context, "rules": rules},
                 items, pdf, paper)


def render_trend_reports(result: AuditResult, out_dir: str | Path, *,
                         pdf: bool = True, jobs: int = 1, paper: str = "a4",
                         progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Write the fleet and per-cluster trend reports; returns the files written, in order.

    ``jobs`` > 1 renders the cluster reports in that many worker processes (charts and PDF
    layout are the slow part); the files are the same either way. ``progress(done, total)``
    is called after each report (the fleet's, then one per cluster). ``paper``: the page
    size (``cmax.render.pdf.PAPERS``).
    """
    out = Path(out_dir)
    if result.as_of is None:
        return []
    as_of = result.as_of
    lines = timelines(result.history, as_of)
    statuses = {s.cluster: s for s in result.exemplar}
    rules = dataclasses.asdict(result.policy)
    written = _emit(out, "fleet.trend", "trend_fleet.html.j2",
                    {**_fleet_context(result, lines, statuses, as_of), "rules": rules},
                    result.items, pdf, paper)
    tasks = [(out, cluster, runs, [i for i in result.items if i.cluster == cluster],
              statuses.get(cluster), as_of, rules, pdf, paper) for cluster, runs in lines.items()]

    def done(n: int) -> None:
        if progress is not None:
            progress(n, len(tasks) + 1)

    done(1)
    if jobs <= 1 or len(tasks) < 2:
        for n, task in enumerate(tasks, start=2):
            written += _emit_cluster(*task)
            done(n)
        return written
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from cmax.history.executors import children_spared_sigint, stop_pool

    context = multiprocessing.get_context("spawn")
    with children_spared_sigint():  # cmax stops these workers itself: Ctrl-C is not theirs
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    try:
        with children_spared_sigint():
            results = pool.map(_emit_cluster, *zip(*tasks, strict=True))
        for n, files in enumerate(results, start=2):
            written += files
            done(n)
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return written
