"""One ``cmax audit`` pass: find runs, score the new ones, record them, judge the drift.

Scoring is the slow part and happens outside the history lock; the store re-checks under
the lock, so a second ``cmax audit`` on the same root at the same time costs CPU but never
writes a row twice. New runs are recorded in batches, so an interrupted pass over a large
backlog keeps what it already scored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import CmaxError
from cmax.history.discover import RunRef, Unusable, discover_runs
from cmax.history.drift import (
    DriftItem,
    DriftKind,
    DriftPolicy,
    ExemplarStatus,
    detect_drift,
)
from cmax.history.store import HISTORY_DIRNAME, HistoryStore, rows_for_run
from cmax.scorecard import Scorecard

AssessFn = Callable[[Path], Scorecard]
ProgressFn = Callable[[int, int, RunRef], None]  # (runs done, runs to score, run just done)

BATCH_RUNS = 250

_KIND_ORDER: dict[str, int] = {
    kind: i for i, kind in enumerate((
        "evidence_changed", "regression_vs_previous", "regression_vs_best", "tier_down",
        "new_audit_fail", "sla_breach", "exemplar_expired", "exemplar_expiring", "tier_up"))
}


def _default_assess(path: Path) -> Scorecard:
    from cmax.pipeline import assess

    return assess(path)


@dataclass(frozen=True)
class AuditResult:
    """Everything one pass found; ``exit_code`` is what ``cmax audit`` returns."""

    root: Path
    history_path: Path
    as_of: dt.date | None
    runs_found: int
    scored: list[RunRef]
    already_recorded: int
    unusable: list[Unusable]
    items: list[DriftItem]
    exemplar: list[ExemplarStatus]
    history: pl.DataFrame
    policy: DriftPolicy

    @property
    def problems(self) -> list[DriftItem]:
        return [i for i in self.items if i.severity == "problem"]

    @property
    def exit_code(self) -> int:
        if any(u.fatal for u in self.unusable):
            return 2
        return 1 if self.problems else 0

    def to_json(self) -> dict[str, Any]:
        runs = self.history.filter(pl.col("row_kind") == "run")
        return {
            "root": str(self.root),
            "history": str(self.history_path),
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "runs": {
                "found": self.runs_found, "scored": len(self.scored),
                "already_recorded": self.already_recorded,
                "unusable": sum(1 for u in self.unusable if u.fatal),
                "in_history": runs.height,
                "clusters_in_history": runs["cluster"].n_unique(),
            },
            "items": [i.model_dump(mode="json") for i in self.items],
            "exemplar": [s.model_dump(mode="json") for s in self.exemplar],
            "unusable": [{"path": str(u.path), "error": u.error}
                         for u in self.unusable if u.fatal],
            "ignored": [{"path": str(u.path), "reason": u.error}
                        for u in self.unusable if not u.fatal],
            "exit_code": self.exit_code,
        }


def _changed_item(run: RunRef, recorded_digest: str) -> DriftItem:
    kind: DriftKind = "evidence_changed"
    return DriftItem(
        cluster=run.cluster, kind=kind, before=recorded_digest[:16], after=run.digest[:16],
        metric="bundle_sha256", run=run.run_dir,
        message=(f"run {run.run_dir} differs from the bundle recorded in the history "
                 "(evidence edited after it was audited?); the recorded result is kept"),
    )


def _score(run: RunRef, assess: AssessFn) -> Scorecard | Unusable:
    try:
        return assess(run.path)
    except CmaxError as exc:
        return Unusable(run.path, exc.one_line())
    except Exception as exc:  # one broken run must not stop a fleet audit
        return Unusable(run.path, f"internal error while scoring ({type(exc).__name__}: "
                                  f"{exc}); please report it with this bundle")


def _outcomes(pending: list[RunRef], score_fn: AssessFn,
              jobs: int) -> Iterator[tuple[RunRef, Scorecard | Unusable]]:
    """Score in order, in this process or in a pool of fresh ("spawn") worker processes."""
    if jobs <= 1 or len(pending) < 2:
        for run in pending:
            yield run, _score(run, score_fn)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")  # fork is unsafe with Polars' threads
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        results = pool.map(_score, pending, [score_fn] * len(pending), chunksize=4)
        yield from zip(pending, results, strict=True)


def run_audit(
    root: str | Path,
    history: str | Path | None = None,
    *,
    assess: AssessFn | None = None,
    as_of: dt.date | None = None,
    policy: DriftPolicy | None = None,
    progress: ProgressFn | None = None,
    batch_runs: int = BATCH_RUNS,
    jobs: int = 1,
) -> AuditResult:
    """Score every run under ``root`` not yet in the history, record it, and judge drift.

    ``assess`` defaults to :func:`cmax.pipeline.assess`; ``as_of`` ("today" for Exemplar
    expiry) defaults to the newest run in the history, so the same history always gives the
    same answer. ``jobs`` > 1 scores in that many worker processes (``assess`` must then be
    a module-level function); results are recorded in the same order either way.
    """
    root_path = Path(root)
    store = HistoryStore(Path(history) if history is not None else root_path / HISTORY_DIRNAME)
    runs, unusable = discover_runs(root_path, exclude=store.path)
    if not runs and not unusable:
        raise CmaxError("no runs found", file=root_path,
                        expected="run bundles laid out as <root>/<cluster>/<timestamp>/",
                        fix="point cmax audit at the folder that holds one folder per cluster")
    recorded = store.recorded()
    score_fn = assess or _default_assess
    changed: list[DriftItem] = []
    pending: list[RunRef] = []
    for run in runs:
        seen = recorded.get((run.cluster, run.run_dir))
        if seen is None:
            pending.append(run)
        elif seen.digest != run.digest:
            changed.append(_changed_item(run, seen.digest))
    scored: list[RunRef] = []
    batch: list[tuple[RunRef, list[dict[str, Any]]]] = []
    for index, (run, outcome) in enumerate(_outcomes(pending, score_fn, jobs), start=1):
        if progress is not None:
            progress(index, len(pending), run)
        if isinstance(outcome, Unusable):
            unusable.append(outcome)
            continue
        batch.append((run, rows_for_run(run, outcome)))
        if len(batch) >= batch_runs:
            scored += store.append(batch)
            batch = []
    scored += store.append(batch)
    frame = store.read()
    runs_frame = frame.filter(pl.col("row_kind") == "run")
    if as_of is None and runs_frame.height:
        as_of = max(ts.date() for ts in runs_frame["run_ts"].to_list())
    pol = policy or DriftPolicy()
    items: list[DriftItem] = []
    statuses: list[ExemplarStatus] = []
    if as_of is not None:
        items, statuses = detect_drift(frame, as_of, pol)
    items = sorted(changed + items,
                   key=lambda i: (i.cluster, _KIND_ORDER.get(i.kind, 99), i.workload or ""))
    return AuditResult(
        root=root_path, history_path=store.path, as_of=as_of, runs_found=len(runs),
        scored=scored, already_recorded=len(runs) - len(pending),
        unusable=sorted(unusable, key=lambda u: str(u.path)), items=items,
        exemplar=statuses, history=frame, policy=pol,
    )

