"""Runs of one configuration are one measurement repeated: the fastest must not stand alone.

A provider who ran a configuration several times can submit the best and rename the rest
away; when the bundle does hold several runs of one configuration (the same workload,
precision, GPU count, GPU and container), they are the cluster's own witness of its speed. A
run faster than the others' median by more than the perf-CI timing band is not that
configuration's speed on this cluster: it is held at ``unverified`` (the rule's declared
effect, applied by ``cmax/judgement/bearings.py``) until the others agree. A configuration is
rated on all its runs: the scorer pools them (docs/scoring.md, "Runs of one configuration").
A newer container is another configuration (it may be genuinely faster), so it is compared
with nothing here.
"""

from __future__ import annotations

from collections.abc import Iterator

from cmax.findings import Finding
from cmax.reading.coerce import as_float
from cmax.validate.context import Context, RunView, run_finding
from cmax.validate.registry import Rule, register
from cmax.validate.thresholds import TIMING_BAND, pct

register(Rule(
    "crossfile.runs-disagree", "warning", "One run of a configuration is faster than its others",
    "The bundle holds several runs of this configuration (workload, precision, GPU count, GPU "
    f"and container); this one's window is more than {pct(TIMING_BAND)} faster than the "
    "median of the others. Repeated runs of one configuration on one cluster agree within "
    "the timing band; the fastest alone is not the cluster's speed. It is held at "
    "unverified, and the configuration is rated on all its runs.",
    "Submit every run of the configuration unedited; if the cluster changed between runs "
    "(a firmware or container update), declare the runs as the configurations they are.",
    "NVIDIA Megatron-Bridge perf CI timing_threshold 0.05 (scripts/performance/utils/"
    "evaluate.py @ 4ab94dfad).",
    effect="unverified",
    subject="run",
))


def configuration(view: RunView) -> tuple[str, ...]:
    """The key runs of one configuration share."""
    return tuple(str(view.get(k) or "").lower() for k in
                 ("workload", "precision", "num_gpus", "gpu", "container"))


def _mean(view: RunView) -> float | None:
    window = view.measured(window=True)
    if window.is_empty():
        return None
    value = as_float(window["step_time_s"].mean())
    return value if value is not None and value > 0 else None


def check(ctx: Context) -> Iterator[Finding]:
    groups: dict[tuple[str, ...], list[tuple[RunView, float]]] = {}
    for view in ctx.runs:
        mean = _mean(view)
        if mean is not None:
            groups.setdefault(configuration(view), []).append((view, mean))
    for runs in groups.values():
        if len(runs) < 2:
            continue
        for view, mean in runs:
            others = sorted(m for v, m in runs if v is not view)
            mid = len(others) // 2
            median = others[mid] if len(others) % 2 else (others[mid - 1] + others[mid]) / 2
            if mean < median * (1 - TIMING_BAND):
                yield run_finding(
                    "crossfile.runs-disagree", view,
                    f"its window mean {mean:.3f} s is {1 - mean / median:.1%} faster than the "
                    f"median {median:.3f} s of the configuration's {len(others)} other run(s)")
