"""Drift: what changed on each cluster since its earlier audit runs, and what is expiring.

Every run is judged against its own predecessors: each cluster's *newest* run (on or before
``as_of``) always, and every run that a pass has just recorded (``judge``), so a backlog of a
year's runs arriving at once has each month compared with the month before, not only the last
one. A re-run that records nothing new reports the newest runs' state again, so the same
history always gives the same answer. The trend report shows the full past.

The thresholds live in one place, ``reference/drift.toml`` (:meth:`DriftPolicy.load`), with
their sources; nothing here repeats them.

Rules (every item names the runs and the numbers it compares):

Only a workload ratio that counts enters a comparison, a best or an Exemplar lapse: the
history records, per run, whether its judgement lets the ratio count (``counted``, the price's
rule ``cmax.score.verdicts.rated``: a run withheld by an error, or unverified, does not),
and nothing here decides it again. A run whose log states another identity than declared is
its own series (``log_states`` in its key), never a point of the declared one.

* **Regression** of a workload (or nccl-tests result) against the previous run that measured
  it, and against the cluster's own best: the median run of its best three consecutive runs
  (the single best of many noisy runs overstates what a cluster sustains; with fewer than
  three earlier runs, the best run). When both fire,
  "vs best" is kept only if the previous run was itself already below the best.
  A drop counts only beyond noise, of two kinds:

  - within a run: with 95% confidence intervals on both sides, the newer interval lies wholly
    below the older one; without intervals (nccl-tests, no reference) the drop is at least
    ``tolerance_pct``, 5% by default: the step-timing threshold of NVIDIA's Megatron-Bridge
    performance CI (``scripts/performance/utils/evaluate.py``, ``--timing_threshold 0.05``);
  - between runs: once a cluster has ``noise_min_runs`` earlier runs of the workload, the drop
    is also at least ``noise_sigmas`` (3, the same CI's ``--outlier_threshold``) times the
    cluster's own run-to-run σ, because per-step intervals do not see run-to-run variation.

  Drops under ``min_change_pct`` (1%) never count. Ratios are compared when both runs were
  judged against the same baseline row; otherwise tokens/s/GPU is compared (the interval
  scaled with it), because a new reference release moves the ratio without the cluster
  changing.
* **Not counted**: a workload of a run whose ratio does not count (withheld by an error, or
  unverified) is compared with nothing, and says so: ``not_counted``, naming its verdict, the
  errors on its evidence and the last run whose ratio of the declared workload counts. A
  problem, so ``--fail-on drift`` fails on it: the newest evidence stopped earning its figure,
  and silence would read as "nothing changed".
* **Tier change**: a run vs the run before it. Down is a problem, up is information.
* **New audit FAIL**: ClusterMAX checks that FAIL in a run and did not in the previous run
  that carried an audit. On a cluster's first audited run its FAILs are ``audit_fail``: present
  from the start, never labelled new.
* **Exemplar validity**: an NVIDIA Exemplar validation is valid for 12 months
  (``Exemplar_validation.md``, dgxc-benchmarking v26.02+). Counted from the newest passing run;
  ``expiring`` within ``expiry_warning_days`` of ``as_of``, ``expired`` after. A later run that
  measured training workloads whose ratio counts and does not meet the suite (a run below the
  bar, or one whose pass its evidence withholds) ends it (``lapsed``): a
  validation says what the cluster does now, and the cluster's own newer evidence says
  otherwise.
* **SLA breach**: a run's SLA was not met: a node-month (the SLA is per node, per month)
  below the contracted uptime. ``after`` is the worst node-month's uptime.
* **Audits stopped arriving**: a cluster's newest run is more than ``stale_after_days``
  before ``as_of``; its drift verdicts describe an old state.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as dt
import functools
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import polars as pl
from pydantic import BaseModel, ConfigDict

from cmax.errors import HistoryError
from cmax.reading.tomlfile import REINSTALL, read_toml
from cmax.resources import data_dir
from cmax.score.verdicts import withheld_label
from cmax.scorecard import TIERS
from cmax.states import verdict_label

TIER_ORDER: tuple[str, ...] = TIERS  # best first (declared once, in cmax.scorecard)

DriftKind = Literal[
    "regression_vs_previous", "regression_vs_best", "tier_down", "tier_up", "new_audit_fail",
    "audit_fail",
    "exemplar_expiring", "exemplar_expired", "exemplar_lapsed", "sla_breach",
    "evidence_changed", "audits_stopped", "not_counted",
]
PROBLEM_KINDS: frozenset[str] = frozenset(get_args(DriftKind)) - {"tier_up"}

WorkloadKey = tuple[str, str, str, int, str]
"""row_kind, workload, precision, num_gpus as declared, and what the run's log states instead
(``precision=fp8``; empty where the log agrees)."""


POLICY_FILE = "drift.toml"


@dataclass(frozen=True)
class DriftPolicy:
    """The thresholds of the drift rules; values and sources in ``reference/drift.toml``.

    No defaults here on purpose: a second copy of a threshold in code drifts from the file
    the documentation cites. Build one with :meth:`load`, change one with :meth:`with_`.
    """

    min_change_pct: float
    tolerance_pct: float
    noise_sigmas: float
    noise_min_runs: int
    exemplar_valid_months: int
    expiry_warning_days: int
    stale_after_days: int

    @classmethod
    def load(cls, path: Path | None = None) -> DriftPolicy:
        """The policy in ``path`` (default: the shipped ``reference/drift.toml``)."""
        if path is None:
            return _shipped_policy()
        return _read_policy(path, "check the --drift-policy path")

    def with_(self, **changes: Any) -> DriftPolicy:
        """This policy with some thresholds changed (CLI options, tests)."""
        return dataclasses.replace(self, **changes)


def _read_policy(path: Path, missing_fix: str) -> DriftPolicy:
    data = read_toml(path, what="drift policy", missing_fix=missing_fix, error=HistoryError)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(DriftPolicy):
        want = int if f.type in ("int", int) else float
        value: Any = data.get(f.name)
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
        if not ok or (want is int and not isinstance(value, int)):
            raise HistoryError(f"drift policy key {f.name!r} is "
                            f"{'missing' if value is None else repr(value)}", file=path,
                            field=f.name, expected=f"a non-negative {want.__name__}",
                            fix=f"set {f.name} = <number> (see the shipped {POLICY_FILE})")
        values[f.name] = float(value) if want is float else value
    unknown = sorted(set(data) - set(values))
    if unknown:
        raise HistoryError(f"drift policy has unknown key {unknown[0]!r}", file=path,
                        field=unknown[0], expected=", ".join(sorted(values)),
                        fix="remove it or correct its spelling")
    return DriftPolicy(**values)


@functools.cache
def _shipped_policy() -> DriftPolicy:
    return _read_policy(data_dir("reference") / POLICY_FILE, REINSTALL)


class DriftItem(BaseModel):
    """One thing an auditor must look at (or, for ``tier_up``, may like to know)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cluster: str
    kind: DriftKind
    workload: str | None = None
    before: float | str | None = None
    after: float | str | None = None
    change_pct: float | None = None
    metric: str | None = None
    run: str | None = None
    compared_with: str | None = None
    noise_pct: float | None = None
    period: str | None = None
    credit_pct: float | None = None
    severity: Literal["problem", "info"] = "problem"
    message: str


class ExemplarStatus(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cluster: str
    status: Literal["valid", "expiring", "expired", "lapsed", "never"]
    passed_run: str | None = None
    passed_on: dt.date | None = None
    expires_on: dt.date | None = None
    days_left: int | None = None
    ended_by: str | None = None  # the newer run that failed the bar ("lapsed")

    @property
    def until(self) -> str:
        """How long the validation holds, in words true on the audit's date: a lapsed or
        expired one is never shown as "valid until" a past day."""
        if self.expires_on is None:
            return "–"
        if self.status == "lapsed":
            return f"ended {self.expires_on} by failing run {self.ended_by}"
        if self.status == "expired":
            return f"expired {self.expires_on}"
        return f"valid until {self.expires_on}"


@dataclass(frozen=True)
class Point:
    """One workload or nccl-tests measurement of one run."""

    key: WorkloadKey
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    tokens: float | None
    baseline_id: str | None
    busbw: float | None
    counted: bool = True
    """whether its ratio counts (the run's judgement, recorded in the history)"""
    verdict: str | None = None
    errors: tuple[str, ...] | None = ()
    """the validation errors on its evidence (None: recorded before the history kept them)"""

    @property
    def label(self) -> str:
        return key_label(self.key)


def key_label(key: WorkloadKey) -> str:
    """A series' name: 'llama3.1-405b bf16 512 GPUs', with what the log states instead where
    it contradicts the declaration ('… (log states precision=fp8)'); an nccl-tests result's
    own name."""
    kind, workload, precision, gpus, stated = key
    if kind == "network":
        return workload
    return f"{workload} {precision} {gpus} GPUs" + (f" (log states {stated})" if stated else "")


@dataclass
class RunPoint:
    """One run of one cluster, as the history recorded it."""

    cluster: str
    run_dir: str
    ts: dt.datetime
    row: dict[str, Any]
    points: dict[WorkloadKey, Point] = field(default_factory=dict)

    @property
    def day(self) -> dt.date:
        return self.ts.date()


def timelines(history: pl.DataFrame, as_of: dt.date | None = None) -> dict[str, list[RunPoint]]:
    """cluster -> its runs in time order (only runs on or before ``as_of`` when given)."""
    out: dict[str, list[RunPoint]] = {}
    by_key: dict[str, RunPoint] = {}
    for row in history.filter(pl.col("row_kind") == "run").iter_rows(named=True):
        if as_of is not None and row["run_ts"].date() > as_of:
            continue
        run = RunPoint(row["cluster"], row["run_dir"], row["run_ts"], row)
        by_key[row["run_key"]] = run
        out.setdefault(run.cluster, []).append(run)
    for row in history.filter(pl.col("row_kind") != "run").iter_rows(named=True):
        parent = by_key.get(row["run_key"])
        if parent is None:
            continue
        key: WorkloadKey = (row["row_kind"], row["workload"], row["precision"] or "",
                            row["num_gpus"], row["log_states"] or "")
        parent.points.setdefault(key, Point(
            key=key, ratio=row["ratio"], ci_low=row["ci_low"], ci_high=row["ci_high"],
            tokens=row["tokens_per_s_per_gpu"], baseline_id=row["baseline_id"],
            busbw=row["busbw_gbps"], verdict=row["verdict"],
            errors=None if row["validation_errors"] is None else tuple(row["validation_errors"]),
            # nccl-tests rows are not judged one by one in the history: they count
            counted=row["row_kind"] != "workload" or bool(row["counted"])))
    for runs in out.values():
        runs.sort(key=lambda r: (r.ts, r.run_dir))
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class Measure:
    metric: str
    before: float
    after: float
    before_ci: tuple[float, float] | None
    after_ci: tuple[float, float] | None

    @property
    def change_pct(self) -> float:
        return (self.after - self.before) / self.before * 100.0


def _ci(p: Point, scale: float = 1.0) -> tuple[float, float] | None:
    if p.ci_low is None or p.ci_high is None:
        return None
    return p.ci_low * scale, p.ci_high * scale


def measure(before: Point, after: Point) -> Measure | None:
    """The quantity two runs can honestly be compared on, with intervals where known."""
    if before.key[0] == "network":
        if before.busbw and after.busbw:
            return Measure("busbw_gbps", before.busbw, after.busbw, None, None)
        return None
    if before.ratio and after.ratio and before.baseline_id == after.baseline_id:
        return Measure("ratio", before.ratio, after.ratio, _ci(before), _ci(after))
    if before.tokens and after.tokens:
        b_ci = _ci(before, before.tokens / before.ratio) if before.ratio else None
        a_ci = _ci(after, after.tokens / after.ratio) if after.ratio else None
        return Measure("tokens_per_s_per_gpu", before.tokens, after.tokens, b_ci, a_ci)
    return None


def run_to_run_sigma_pct(values: Sequence[float], min_runs: int = 3) -> float | None:
    """A cluster's own run-to-run noise (%) from its earlier runs, robust to one-off jumps.

    Successive relative changes d have sd √2·σ when runs vary independently by σ. Changes
    further than 5 robust sds (1.4826·MAD) from their median are dropped first: a past incident
    that recovered (two big jumps) is not noise. σ is then the plain sd of the rest over √2.
    """
    if len(values) < max(min_runs, 3):
        return None
    diffs = [(b - a) / a * 100.0 for a, b in itertools.pairwise(values) if a > 0]
    if len(diffs) < 2:
        return None
    mid = statistics.median(diffs)
    robust_sd = 1.4826 * statistics.median(abs(d - mid) for d in diffs)
    kept = [d for d in diffs if abs(d - mid) <= 5.0 * robust_sd] if robust_sd > 0 else diffs
    if len(kept) < 2:
        return 0.0
    return statistics.stdev(kept) / math.sqrt(2.0)


def is_regression(m: Measure, policy: DriftPolicy, sigma_pct: float | None = None) -> bool:
    """A drop beyond noise (see the module docstring for the rule and its sources)."""
    if m.before <= 0 or m.after >= m.before:
        return False
    drop_pct = -m.change_pct
    between = policy.noise_sigmas * sigma_pct if sigma_pct is not None else 0.0
    if m.before_ci is not None and m.after_ci is not None:
        return (m.after_ci[1] < m.before_ci[0]
                and drop_pct >= max(policy.min_change_pct, between))
    return drop_pct >= max(policy.tolerance_pct, between)


def _strength(p: Point) -> float:
    """What "best" means for a point: throughput when known, else the ratio or bandwidth."""
    return p.busbw or p.tokens or p.ratio or 0.0


def _fmt(value: float, metric: str) -> str:
    return f"{value:.3f}" if metric == "ratio" else f"{value:,.1f}"


def _regression_item(cluster: str, kind: DriftKind, point: Point, m: Measure,
                     run: RunPoint, other: RunPoint, sigma_pct: float | None) -> DriftItem:
    ci_note = ""
    if m.before_ci and m.after_ci:
        ci_note = (f"; 95% CI {_fmt(m.after_ci[0], m.metric)}–{_fmt(m.after_ci[1], m.metric)} "
                   f"lies below {_fmt(m.before_ci[0], m.metric)}–"
                   f"{_fmt(m.before_ci[1], m.metric)}")
    if sigma_pct is not None:
        ci_note += f"; run-to-run noise σ {sigma_pct:.1f}%"
    against = ("previous run" if kind == "regression_vs_previous"
               else "best sustained run")
    return DriftItem(
        cluster=cluster, kind=kind, workload=point.label, before=m.before, after=m.after,
        change_pct=round(m.change_pct, 2), metric=m.metric, run=run.run_dir,
        compared_with=other.run_dir,
        noise_pct=round(sigma_pct, 3) if sigma_pct is not None else None,
        message=(f"{point.label}: {m.metric} {_fmt(m.after, m.metric)} in run {run.run_dir} vs "
                 f"{_fmt(m.before, m.metric)} in {against} {other.run_dir} "
                 f"({m.change_pct:+.1f}%){ci_note}"),
    )


def best_sustained(history: Sequence[tuple[RunPoint, Point]],
                   window: int = 3) -> tuple[RunPoint, Point]:
    """The cluster's own best: the median run of its best window of consecutive runs.

    The single best of many noisy runs sits above what the cluster really sustains (the
    maximum of n draws), so "best" is the highest median of ``window`` consecutive runs;
    with fewer runs than that, simply the best run.
    """
    if len(history) < window:
        return max(history, key=lambda rp: (_strength(rp[1]), rp[0].ts))
    size = window
    best: tuple[float, int, tuple[RunPoint, Point]] | None = None
    for start in range(len(history) - size + 1):
        chunk = sorted(history[start:start + size], key=lambda rp: _strength(rp[1]))
        median = chunk[(size - 1) // 2]
        key = (_strength(median[1]), start)
        if best is None or key > best[:2]:
            best = (key[0], key[1], median)
    assert best is not None
    return best[2]


def _workload_drift(cluster: str, runs: list[RunPoint], policy: DriftPolicy) -> list[DriftItem]:
    """Regressions of ``runs[-1]`` against the runs before it."""
    latest, earlier = runs[-1], runs[:-1]
    items: list[DriftItem] = []
    for key in sorted(latest.points):
        point = latest.points[key]
        if not point.counted:
            continue
        history = [(r, r.points[key]) for r in earlier
                   if key in r.points and r.points[key].counted]
        if not history:
            continue
        sigma = run_to_run_sigma_pct([_strength(p) for _, p in history], policy.noise_min_runs)
        prev_run, prev = history[-1]
        m = measure(prev, point)
        vs_previous = m is not None and is_regression(m, policy, sigma)
        if m is not None and vs_previous:
            items.append(_regression_item(cluster, "regression_vs_previous", point, m,
                                          latest, prev_run, sigma))
        best_run, best = best_sustained(history)
        if best_run is prev_run:
            continue
        if vs_previous:  # say "vs best" too only if the previous run was already below it
            m_prev = measure(best, prev)
            if m_prev is None or not is_regression(m_prev, policy, sigma):
                continue
        m = measure(best, point)
        if m is not None and is_regression(m, policy, sigma):
            items.append(_regression_item(cluster, "regression_vs_best", point, m,
                                          latest, best_run, sigma))
    return items


def _standing(point: Point) -> str:
    """Why a point's ratio does not count, in the words its verdict reads everywhere else:
    'withheld (identity.precision, sanity.too-good-to-be-true)', 'not verified'."""
    errors = list(point.errors or ())
    if point.verdict == "withheld":
        if point.errors is None:
            return "withheld (its errors were not recorded)"
        return withheld_label(errors)
    why = verdict_label(point.verdict or "not recorded")
    return f"{why}; errors: {', '.join(errors)}" if errors else why


def _uncounted_drift(cluster: str, runs: list[RunPoint]) -> list[DriftItem]:
    """Workloads of ``runs[-1]`` whose ratio does not count, so nothing compared them.

    A buyer watching drift must not read silence as "nothing changed": the provider's newest
    evidence of the workload stopped earning its figure. A problem, so ``--fail-on drift``
    fails on it. ``compared_with`` names the last run whose ratio of the declared workload
    counts (a log that states another identity is a series of its own and is compared with
    nothing, but the declared series is the one the buyer watched): the same run where it
    also holds a counted run of it, else the last earlier one.
    """
    latest, earlier = runs[-1], runs[:-1]
    items: list[DriftItem] = []
    for key in sorted(latest.points):
        point = latest.points[key]
        if key[0] != "workload" or point.counted:
            continue
        declared = key[:4]
        # the run itself may hold a counted run of the declared workload (an honest bf16 run
        # beside an fp8 log declared bf16): the buyer's series then did count in it
        last = next(((r, p) for r in [latest, *reversed(earlier)]
                     for k, p in sorted(r.points.items())
                     if k[:4] == declared and p.counted), None)
        standing = _standing(point)
        measured = (f"its ratio {point.ratio:.3f} does not count" if point.ratio is not None
                    else "it has no ratio that counts")
        of = f" of {key_label((*declared, ''))}" if key[4] else ""
        since = f"no earlier run{of or ' of it'} counts"
        if last is not None:
            ratio = _fmt(last[1].ratio, "ratio") if last[1].ratio else "–"
            if last[0] is latest:
                since = f"the same run's ratio{of} counts ({ratio})"
            else:
                day = "" if last[0].run_dir == str(last[0].day) else f"{last[0].day}, "
                since = (f"the last run whose ratio{of} counts is {last[0].run_dir} "
                         f"({day}ratio {ratio})")
        items.append(DriftItem(
            cluster=cluster, kind="not_counted", workload=point.label,
            before=last[1].ratio if last is not None else None, after=standing,
            metric="ratio", run=latest.run_dir,
            compared_with=last[0].run_dir if last is not None else None,
            message=f"{point.label}: run {latest.run_dir} is {standing}: {measured}, so it "
                    f"was not compared; {since}",
        ))
    return items


def _tier_drift(cluster: str, runs: list[RunPoint]) -> list[DriftItem]:
    """Tier of ``runs[-1]`` against the run before it."""
    if len(runs) < 2:
        return []
    prev, latest = runs[-2], runs[-1]
    before, after = prev.row["tier"], latest.row["tier"]
    if before == after or before not in TIER_ORDER or after not in TIER_ORDER:
        return []
    down = TIER_ORDER.index(after) > TIER_ORDER.index(before)
    return [DriftItem(
        cluster=cluster, kind="tier_down" if down else "tier_up", before=before, after=after,
        metric="tier", run=latest.run_dir, compared_with=prev.run_dir,
        severity="problem" if down else "info",
        message=f"tier {'fell' if down else 'rose'} from {before} to {after} "
                f"since {prev.run_dir}",
    )]


def _audit_drift(cluster: str, runs: list[RunPoint]) -> list[DriftItem]:
    latest = runs[-1]
    fails = latest.row["audit_fail"]
    if fails is None:
        return []
    prev = next((r for r in reversed(runs[:-1]) if r.row["audit_fail"] is not None), None)
    before = set(prev.row["audit_fail"]) if prev is not None else set()
    # "new" only against an earlier audit: on the first audited run a FAIL is present from
    # the start, not new
    since = (f"new since {prev.run_dir}" if prev is not None
             else "present since the first audited run")
    kind: DriftKind = "new_audit_fail" if prev is not None else "audit_fail"
    return [
        DriftItem(
            cluster=cluster, kind=kind, workload=check, before=None, after="FAIL",
            metric="audit_check", run=latest.run_dir,
            compared_with=prev.run_dir if prev is not None else None,
            message=f"ClusterMAX check {check} FAILs ({since})",
        )
        for check in sorted(set(fails) - before)
    ]


def add_months(day: dt.date, months: int) -> dt.date:
    """Calendar months later; the 29th-31st fall back to the month's last day."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _fails_the_bar(run: RunPoint) -> bool:
    """The run measured training workloads and did not pass the Exemplar bar.

    A run without a training workload whose ratio counts (a network-only or audit-only
    re-check, or one whose only runs are withheld or unverified) says nothing the bar can be
    held to, so it neither renews nor ends a validation.
    """
    return run.row["exemplar_pass"] is False and any(
        key[0] == "workload" and point.counted for key, point in run.points.items())


def exemplar_status(cluster: str, runs: list[RunPoint], as_of: dt.date,
                    policy: DriftPolicy) -> ExemplarStatus:
    """Validity of the newest passing Exemplar run, counted from the day it ran.

    It ends early, on the day of a later run that fails the bar: "valid until" must never be
    printed for a cluster whose own newer evidence is below it.
    """
    passed = [r for r in runs if r.row["exemplar_pass"]]
    if not passed:
        return ExemplarStatus(cluster=cluster, status="never")
    last = passed[-1]
    expires = add_months(last.day, policy.exemplar_valid_months)
    failed = next((r for r in runs if r.ts > last.ts and _fails_the_bar(r)), None)
    if failed is not None and failed.day < expires:
        return ExemplarStatus(cluster=cluster, status="lapsed", passed_run=last.run_dir,
                              passed_on=last.day, expires_on=failed.day,
                              days_left=(failed.day - as_of).days, ended_by=failed.run_dir)
    days_left = (expires - as_of).days
    status: Literal["valid", "expiring", "expired"] = "valid"
    if days_left <= 0:
        status = "expired"
    elif days_left <= policy.expiry_warning_days:
        status = "expiring"
    return ExemplarStatus(cluster=cluster, status=status, passed_run=last.run_dir,
                          passed_on=last.day, expires_on=expires, days_left=days_left)


def _exemplar_drift(status: ExemplarStatus) -> list[DriftItem]:
    if status.status == "lapsed" and status.expires_on is not None:
        return [DriftItem(
            cluster=status.cluster, kind="exemplar_lapsed", before=str(status.passed_on),
            after=status.expires_on.isoformat(), metric="exemplar_valid_until",
            run=status.ended_by, compared_with=status.passed_run,
            message=f"Exemplar validity from passing run {status.passed_run} ended on "
                    f"{status.expires_on.isoformat()}: the newer run {status.ended_by} does "
                    "not meet the Exemplar suite (a run below the bar, or one whose pass its "
                    "evidence withholds); fix it and re-run the Exemplar suite",
        )]
    if status.status not in ("expiring", "expired") or status.expires_on is None:
        return []
    kind: DriftKind = "exemplar_expired" if status.status == "expired" else "exemplar_expiring"
    when = (f"expired on {status.expires_on.isoformat()}" if status.status == "expired"
            else f"expires on {status.expires_on.isoformat()} ({status.days_left} days)")
    return [DriftItem(
        cluster=status.cluster, kind=kind, before=str(status.passed_on),
        after=status.expires_on.isoformat(), metric="exemplar_valid_until",
        run=status.passed_run,
        message=f"Exemplar validity from passing run {status.passed_run} {when}; "
                "re-run the Exemplar suite",
    )]


def _sla_drift(cluster: str, runs: list[RunPoint]) -> list[DriftItem]:
    """The SLA of ``runs[-1]``."""
    latest = runs[-1].row
    if latest["sla_met"] is not False:
        return []
    contracted = latest["sla_contracted_pct"]
    worst = latest["sla_worst_pct"]
    observed = worst if worst is not None else latest["sla_measured_pct"]
    period = None
    if latest["period_start"] is not None and latest["period_end"] is not None:
        period = f"{latest['period_start']}–{latest['period_end']}"
    during = f" in {period}" if period else ""
    if latest["sla_node_months"]:
        what = (f"{latest['sla_node_months_below']} of {latest['sla_node_months']} node-months "
                f"below the contracted {contracted:g}% uptime{during} (worst {observed:.3f}%, "
                f"average {latest['sla_measured_pct']:.3f}%)")
    else:
        what = f"uptime {observed:.3f}% below the contracted {contracted:g}%{during}"
    nodes = latest.get("sla_nodes_in_breach") or []
    if nodes:
        what += f"; nodes in breach: {', '.join(nodes[:6])}" + (
            f" and {len(nodes) - 6} more" if len(nodes) > 6 else "")
    if latest.get("sla_witness"):
        what += f"; witness: {latest['sla_witness']}"
        if latest.get("sla_unlogged_outages"):
            what += (f" ({latest['sla_unlogged_outages']} outage(s) the monitoring shows are "
                     "not in the incident log)")
    credit = latest["sla_credit_pct"]
    return [DriftItem(
        cluster=cluster, kind="sla_breach", before=contracted, after=observed,
        change_pct=round((observed - contracted) / contracted * 100.0, 4),
        metric="worst_node_month_uptime_pct" if worst is not None else "uptime_pct",
        run=runs[-1].run_dir, period=period, credit_pct=credit,
        message=what + (f"; {credit:g}% credit owed" if credit else ""),
    )]


def _stale_drift(cluster: str, runs: list[RunPoint], as_of: dt.date,
                policy: DriftPolicy) -> list[DriftItem]:
    latest = runs[-1]
    idle = (as_of - latest.day).days
    if idle <= policy.stale_after_days:
        return []
    return [DriftItem(
        cluster=cluster, kind="audits_stopped", before=latest.day.isoformat(),
        after=as_of.isoformat(), metric="days_since_last_run", run=latest.run_dir,
        message=f"no run since {latest.run_dir} ({idle} days before {as_of.isoformat()}; "
                f"audits are expected at least every {policy.stale_after_days} days): "
                "its verdicts describe an old state",
    )]


def judge_run(cluster: str, runs: list[RunPoint], policy: DriftPolicy) -> list[DriftItem]:
    """Everything ``runs[-1]`` changed against the runs before it."""
    return (_workload_drift(cluster, runs, policy) + _uncounted_drift(cluster, runs)
            + _tier_drift(cluster, runs)
            + _audit_drift(cluster, runs) + _sla_drift(cluster, runs))


def detect_drift(history: pl.DataFrame, as_of: dt.date, policy: DriftPolicy | None = None,
                 judge: frozenset[str] | set[str] | None = None,
                 ) -> tuple[list[DriftItem], list[ExemplarStatus]]:
    """Drift items and each cluster's Exemplar status.

    Judged: each cluster's newest run, and every run whose ``run_key`` is in ``judge`` (the
    runs a pass has just recorded), each against the runs before it.
    """
    pol = policy or DriftPolicy.load()
    items: list[DriftItem] = []
    statuses: list[ExemplarStatus] = []
    for cluster, runs in timelines(history, as_of).items():
        status = exemplar_status(cluster, runs, as_of, pol)
        statuses.append(status)
        breaches: dict[tuple[object, object], DriftItem] = {}
        for index, run in enumerate(runs):
            if index == len(runs) - 1 or (judge is not None and run.row["run_key"] in judge):
                for item in judge_run(cluster, runs[:index + 1], pol):
                    if item.kind == "sla_breach":
                        # one breach per measured period, however many runs carry it: the
                        # newest run's reading of that period stands
                        breaches[(run.row["period_start"], run.row["period_end"])] = item
                    else:
                        items.append(item)
        items += breaches.values()
        items += _exemplar_drift(status)
        items += _stale_drift(cluster, runs, as_of, pol)
    return items, statuses
