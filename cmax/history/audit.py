"""One ``cmax audit`` pass: find runs, score the new ones, record them, judge the drift.

Scoring is the slow part and fans out (:mod:`cmax.history.executors`: local processes or
Ray); recording stays here, in batches, each one Delta commit that re-checks what is already
recorded, so a second ``cmax audit`` on the same root at the same time costs CPU but never
writes a row twice, and an interrupted pass over a large backlog keeps what it already
recorded. Every run recorded by the pass is judged against its predecessors.

A run is refused (exit 2, the other runs still recorded) when the cluster folder it is filed
under is not the cluster its manifest names: recording it would put another cluster's numbers
on this cluster's timeline and invent regressions.

With ``history_version`` / ``history_as_of`` the pass only reads: it reports what the
history said at that version, judging the runs that version recorded.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import HistoryError
from cmax.history.discover import RunRef, Unusable, discover_runs
from cmax.history.drift import (
    DriftItem,
    DriftKind,
    DriftPolicy,
    ExemplarStatus,
    detect_drift,
)
from cmax.history.executors import ExecutorName, require_ray, score_runs
from cmax.history.store import HISTORY_DIRNAME, HistoryStore, rows_for_run
from cmax.scorecard import Scorecard
from cmax.submission.bundle import cleanup_on_signals

AssessFn = Callable[[Path], Scorecard]
ProgressFn = Callable[[int, int, RunRef], None]  # (runs done, runs to score, run just done)

BATCH_RUNS = 250

_KIND_ORDER: dict[str, int] = {
    kind: i for i, kind in enumerate((
        "evidence_changed", "regression_vs_previous", "regression_vs_best", "not_counted",
        "tier_down",
        "new_audit_fail", "audit_fail", "sla_breach", "exemplar_lapsed", "exemplar_expired",
        "exemplar_expiring", "audits_stopped", "tier_up"))
}


def _default_assess(path: Path) -> Scorecard:
    from cmax.pipeline import assess

    return assess(path)


class AuditInterrupted(KeyboardInterrupt):
    """Ctrl-C during an audit, raised after the runs scored so far were recorded: a second
    ``cmax audit`` scores only the rest. (A stop signal, which
    cmax.submission.bundle.cleanup_on_signals
    turns into SystemExit, keeps its SystemExit and carries this text as a note.)"""

    def __init__(self, recorded: int, pending: int) -> None:
        self.recorded, self.pending = recorded, pending
        super().__init__(f"{recorded} of {pending} new runs were scored and recorded in the "
                         "history; run cmax audit again to score the rest")


@dataclass(frozen=True)
class AuditResult:
    """Everything one pass found; ``exit_code`` is what ``cmax audit`` returns."""

    root: Path
    history_path: str
    as_of: dt.date | None
    runs_found: int
    scored: list[RunRef]
    already_recorded: int
    unusable: list[Unusable]
    items: list[DriftItem]
    exemplar: list[ExemplarStatus]
    history: pl.DataFrame
    policy: DriftPolicy
    history_version: int | None = None  # the table version reported on
    time_travel: bool = False  # read an older version; nothing scored or recorded
    notes: tuple[str, ...] = ()  # one-off messages (the Parquet history's migration)

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
            "history": self.history_path,
            "history_version": self.history_version,
            "time_travel": self.time_travel,
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
            "notes": list(self.notes),
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


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def misfiled(run: RunRef, card: Scorecard) -> Unusable | None:
    """A run whose manifest names another cluster than the folder it is filed under.

    The folder may hold the cluster's name or its slug (``Aurora H100 East`` in
    ``aurora-h100-east/``); anything else is refused, naming both sides and what the audit
    file says about itself, so the auditor can tell which one is wrong.
    """
    if run.cluster == card.cluster or _slug(run.cluster) == _slug(card.cluster):
        return None
    audit = card.audit.cluster if card.audit is not None else None
    said = f" and its audit (clusterName) says {audit!r}" if audit else ""
    return Unusable(run.path, (
        f"filed under cluster {run.cluster!r} but its manifest says provider.cluster = "
        f"{card.cluster!r}{said}; not recorded, so {run.cluster!r}'s timeline is not mixed "
        f"with another cluster's runs; fix: move it to <root>/{card.cluster}/{run.run_dir}/, "
        "or correct provider.cluster in its cmax.toml"))


def _added_in(store: HistoryStore, version: int, frame: pl.DataFrame) -> frozenset[str]:
    """The run keys that ``version`` added (what the audit that wrote it had judged)."""
    keys = set(frame.filter(pl.col("row_kind") == "run")["run_key"].to_list())
    if version == 0:
        return frozenset(keys)
    before = store.read(version - 1).filter(pl.col("row_kind") == "run")["run_key"]
    return frozenset(keys - set(before.to_list()))


def _travel(root_path: Path, store: HistoryStore, version: int | None,
            when: dt.datetime | None, as_of: dt.date | None,
            policy: DriftPolicy) -> AuditResult:
    """What the history said at an older version: read-only, nothing scored."""
    if when is not None:
        version = store.resolve_as_of(when)
    assert version is not None
    frame = store.read(version)
    as_of, items, statuses = _judge(frame, as_of, policy, _added_in(store, version, frame))
    return AuditResult(
        root=root_path, history_path=store.location, as_of=as_of, runs_found=0, scored=[],
        already_recorded=0, unusable=[], items=_ordered(items), exemplar=statuses,
        history=frame, policy=policy, history_version=version, time_travel=True,
    )


def _judge(frame: pl.DataFrame, as_of: dt.date | None, policy: DriftPolicy,
           judge: frozenset[str]) -> tuple[dt.date | None, list[DriftItem],
                                           list[ExemplarStatus]]:
    """Drift of a history frame; ``as_of`` defaults to its newest run's day (deterministic)."""
    runs_frame = frame.filter(pl.col("row_kind") == "run")
    if as_of is None and runs_frame.height:
        as_of = max(ts.date() for ts in runs_frame["run_ts"].to_list())
    if as_of is None:
        return None, [], []
    items, statuses = detect_drift(frame, as_of, policy, judge)
    return as_of, items, statuses


def _ordered(items: list[DriftItem]) -> list[DriftItem]:
    return sorted(items, key=lambda i: (i.cluster, _KIND_ORDER.get(i.kind, 99),
                                        i.workload or "", i.run or ""))


def run_audit(
    root: str | Path,
    history: str | Path | None = None,
    *,
    assess: AssessFn | None = None,
    as_of: dt.date | None = None,
    policy: DriftPolicy | None = None,
    progress: ProgressFn | None = None,
    batch_runs: int = BATCH_RUNS,
    executor: ExecutorName = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    history_version: int | None = None,
    history_as_of: dt.datetime | None = None,
) -> AuditResult:
    """Score every run under ``root`` not yet in the history, record it, and judge drift.

    ``history`` is a folder or an object-store URI (default ``<root>/.cmax-history``).
    ``assess`` defaults to :func:`cmax.pipeline.assess` (with ``workers`` > 1 or Ray it must
    be a module-level function); ``as_of`` ("today" for Exemplar expiry and stale clusters)
    defaults to the newest run in the history, so the same history always gives the same
    answer. ``workers`` None uses the machine's CPUs (local) or the Ray cluster's. Results
    are recorded in the runs' order whichever executor scored them.
    """
    root_path = Path(root)
    store = HistoryStore(history if history is not None else root_path / HISTORY_DIRNAME)
    pol = policy or DriftPolicy.load()
    if history_version is not None or history_as_of is not None:
        return _travel(root_path, store, history_version, history_as_of, as_of, pol)
    if executor == "ray":
        require_ray()
    store.exists()  # a history that is a file, or an unreachable URI: say so before scoring
    store.migrate_parquet_v1()
    runs, unusable = discover_runs(root_path, exclude=store.local_path)
    if not runs and not unusable:
        raise HistoryError("no runs found", file=root_path,
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
    outcomes = score_runs(pending, score_fn, executor=executor, workers=workers,
                          ray_address=ray_address)
    # SIGTERM/SIGINT unwind the scoring (SystemExit): workers, Ray and temp folders go too
    with cleanup_on_signals(), contextlib.closing(outcomes):
        try:
            for index, (run, outcome) in enumerate(outcomes, start=1):
                if progress is not None:
                    progress(index, len(pending), run)
                refused = outcome if isinstance(outcome, Unusable) else misfiled(run, outcome)
                if refused is not None:
                    unusable.append(refused)
                    continue
                assert isinstance(outcome, Scorecard)
                batch.append((run, rows_for_run(run, outcome)))
                if len(batch) >= batch_runs:
                    scored += store.append(batch)
                    batch = []
        except (KeyboardInterrupt, SystemExit) as stop:
            # what is scored is kept: one more commit, then the stop goes on (a signal's
            # SystemExit as it was, carrying the count as a note; a bare Ctrl-C as
            # AuditInterrupted)
            scored += store.append(batch)
            interrupted = AuditInterrupted(len(scored), len(pending))
            if isinstance(stop, SystemExit):
                stop.add_note(str(interrupted))
                raise
            raise interrupted from None
    scored += store.append(batch)
    frame = store.read()
    # the runs judged are the pass's new ones; a pass that recorded nothing judges what the
    # last recording pass added, so a rerun reports the same standing (it listed 6 drift
    # items the first time and 2 the next: only the newest run was judged again)
    version = store.version()
    judged = (frozenset(r.run_key for r in scored) if scored or version is None
              else _added_in(store, version, frame))
    as_of, items, statuses = _judge(frame, as_of, pol, judged)
    return AuditResult(
        root=root_path, history_path=store.location, as_of=as_of, runs_found=len(runs),
        scored=scored, already_recorded=len(runs) - len(pending),
        unusable=sorted(unusable, key=lambda u: str(u.path)), items=_ordered(changed + items),
        exemplar=statuses, history=frame, policy=pol, history_version=store.version(),
        notes=tuple(store.notes),
    )
