"""The Exemplar suite judged once: met, not met or not evaluated, with the runs that decide it.

NVIDIA's Exemplar Cloud asks for more than 95% of the reference throughput on every workload
of a suite (dgxc-benchmarking Exemplar_validation.md). cmax rates a workload (a workload,
precision and GPU count with a reference) on *every* run of it the bundle submits, not on the
one the provider chose:

- **not met** when a run of it fails (its whole range below the bar), or when its runs pool
  below the bar (the geometric mean of every measured run's ratio, a run held at
  ``unverified`` included: a lucky 1.02 among two 0.85s is a 0.91 cluster);
- **not met** when a run of it was measured against the bar and not shown below it, but an
  error bears on it (its pass is withheld: a contested run never drops out of the suite and
  leaves the workload to its other runs);
- **met** when, short of that, a run of it passes (its whole range above the bar): a noisy
  run whose range reaches the bar, or one held at ``unverified``, does not sink an earned pass;
- **not met** when its runs were measured but none shows the bar exceeded (inconclusive);
- **not evaluated** when none of its runs could be judged against the bar (``unverified``: the
  log does not state what it ran; or not comparable with its reference).

The suite is not met when any workload is, else not evaluated when any workload is, else met;
with no run compared against a reference there is no suite, and it is not evaluated. One
failing run therefore means not met, everywhere the suite is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import geometric_mean

from cmax.judgement.bar import bar_verdict
from cmax.judgement.labels import identity_label
from cmax.scorecard import (
    ExemplarJudgement,
    SuiteRun,
    SuiteWorkload,
    WorkloadResult,
)
from cmax.states import MEASURED_VERDICTS, State

_MEASURED: tuple[str, ...] = (*MEASURED_VERDICTS, "withheld")
"""A run's verdict at the bar when it was measured against its reference (a withheld run's
pass is contested, its speed was measured)."""


def pooled_ratio(runs: Sequence[SuiteRun]) -> float | None:
    """The geometric mean ratio of a workload's measured runs (a run held at unverified
    included: it was measured), or None when fewer than two carry one."""
    ratios = [r.ratio for r in runs if r.ratio is not None and r.ratio > 0
              and r.verdict in _MEASURED]
    return geometric_mean(ratios) if len(ratios) >= 2 else None


def _workload_state(runs: Sequence[SuiteRun], bar: float) -> State:
    verdicts = {r.verdict for r in runs}
    pooled = pooled_ratio(runs)
    if "fail" in verdicts or (pooled is not None and pooled < bar):
        return State.NOT_MET
    if "withheld" in verdicts:
        return State.NOT_MET
    if "pass" in verdicts:
        return State.MET
    if "inconclusive" in verdicts:
        return State.NOT_MET
    return State.NOT_EVALUATED


_Labels = Mapping[tuple[str | None, str], str]
"""Each run's :func:`identity_label`, by its run id and log."""


def _key(r: SuiteRun) -> tuple[str | None, str]:
    return r.run_id, r.log


def _label(w: SuiteWorkload, labels: _Labels) -> str:
    """A workload as its runs' logs state it (:func:`identity_label`) when they all state the
    same, else as declared (each run whose log contradicts it is then named by its label)."""
    named = {labels[_key(r)] for r in w.runs}
    return named.pop() if len(named) == 1 else f"{w.workload} {w.precision} {w.num_gpus} GPUs"


def _runs_text(w: SuiteWorkload, bar: float, labels: _Labels) -> str:
    """The runs of a workload that is not met or not evaluated, each named by its log when
    the workload has several (and by what its log states where that is not the workload's
    label), and what its runs pool to when that is below the bar."""
    shown = [r for r in w.runs if r.verdict != "pass"] or w.runs
    named = len(w.runs) > 1
    label = _label(w, labels)
    text = ", ".join((f"{r.log} " if named else "")
                     + (f"[{labels[_key(r)]}] " if labels[_key(r)] != label else "")
                     + (f"{r.ratio:.3f} " if r.ratio is not None else "")
                     + (f"withheld by {', '.join(r.withheld_by)} (not passing: a log the "
                        "error does not name would earn it)" if r.verdict == "withheld"
                        else r.verdict.replace("_", " "))
                     for r in shown)
    pooled = pooled_ratio(w.runs)
    if pooled is not None and pooled < bar:
        text += f"; its {len(w.runs)} runs pool to {pooled:.3f}"
    return text


def judge_exemplar(results: Sequence[WorkloadResult], bar: float) -> ExemplarJudgement:
    """The suite's one judgement from every training run's result (runs without a
    reference are outside the suite)."""
    groups: dict[tuple[str, str, int], list[SuiteRun]] = {}
    labels = {(r.run_id, r.log): identity_label(r) for r in results}
    for r in results:
        if r.verdict == "no_reference":
            continue
        # withheld by the one rule its judgement's verdict comes from; otherwise the run's
        # own verdict, which says why one was not compared (not comparable, no reference)
        held = bar_verdict(r.verdict, r.ratio, errors=bool(r.validation_errors)) == "withheld"
        groups.setdefault((r.workload, r.precision, r.num_gpus), []).append(SuiteRun(
            workload=r.workload, precision=r.precision, num_gpus=r.num_gpus, log=r.log,
            run_id=r.run_id, ratio=r.ratio, verdict="withheld" if held else r.verdict,
            withheld_by=r.validation_errors if held else []))
    workloads = [SuiteWorkload(workload=w, precision=p, num_gpus=n,
                               state=_workload_state(runs, bar), runs=runs)
                 for (w, p, n), runs in sorted(groups.items())]
    at = f"> {bar:.0%} of reference"
    if not workloads:
        return ExemplarJudgement(
            state=State.NOT_EVALUATED, bar=bar, workloads=[],
            reason=("no training runs were submitted" if not results else
                    "no training run was compared with a reference")
            + ", so there is no suite to judge")
    not_met = [w for w in workloads if w.state is State.NOT_MET]
    unjudged = [w for w in workloads if w.state is State.NOT_EVALUATED]
    met = len(workloads) - len(not_met) - len(unjudged)
    count = f"{met} of {len(workloads)} suite workloads meet the bar ({at}) on all their runs"
    if not_met:
        return ExemplarJudgement(
            state=State.NOT_MET, bar=bar, workloads=workloads,
            reason=f"{count}; not met: " + "; ".join(
                f"{_label(w, labels)} ({_runs_text(w, bar, labels)})" for w in not_met))
    if unjudged:
        return ExemplarJudgement(
            state=State.NOT_EVALUATED, bar=bar, workloads=workloads,
            reason=f"{count}; not evaluated: " + "; ".join(
                f"{_label(w, labels)} ({_runs_text(w, bar, labels)})" for w in unjudged)
            + " (a pass must be earned by a log that states what it ran and is comparable "
              "with its reference)")
    return ExemplarJudgement(
        state=State.MET, bar=bar, workloads=workloads,
        reason=f"all {len(workloads)} suite workloads meet the bar ({at}) on all their runs")
