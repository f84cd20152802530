"""Periodic audits: a history of scored runs per cluster, drift against it, trend reports.

``run_audit`` is what ``cmax audit`` runs; ``render_trend_reports`` writes the HTML and PDF
trend reports from its result. The history (a Delta Lake table, local or on object storage,
with time travel) is described in :mod:`cmax.history.store`, where runs are scored (local
processes or Ray) in :mod:`cmax.history.executors`, the drift rules in
:mod:`cmax.history.drift` and their thresholds in ``reference/drift.toml``.
"""

from __future__ import annotations

from cmax.history.audit import AuditResult, run_audit
from cmax.history.discover import RunRef, Unusable, discover_runs, parse_run_timestamp
from cmax.history.drift import DriftItem, DriftPolicy, ExemplarStatus, detect_drift
from cmax.history.store import HISTORY_DIRNAME, HistoryStore, rows_for_run

__all__ = [
    "HISTORY_DIRNAME",
    "AuditResult",
    "DriftItem",
    "DriftPolicy",
    "ExemplarStatus",
    "HistoryStore",
    "RunRef",
    "Unusable",
    "detect_drift",
    "discover_runs",
    "parse_run_timestamp",
    "render_trend_reports",
    "rows_for_run",
    "run_audit",
]


def __getattr__(name: str) -> object:
    """The renderer pulls in matplotlib and WeasyPrint: import it only when asked for."""
    if name == "render_trend_reports":
        from cmax.history.trend import render_trend_reports

        return render_trend_reports
    raise AttributeError(f"module 'cmax.history' has no attribute {name!r}")
