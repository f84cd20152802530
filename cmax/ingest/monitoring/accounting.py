"""Step-resolution accounting: a range answer read as spans of up, down and unwitnessed time.

The period ``[start, end)`` is cut into steps of the answer's resolution; the point Prometheus
returns at step ``t`` stands for ``[t, t + step)``. A step whose value is 0 is down, one whose
value is 1 (or more) is up, and a step with no point is *unwitnessed*: Prometheus had no
sample within its lookback (5 minutes unless ``--query.lookback-delta`` says otherwise), so
the monitoring says nothing about it. Unwitnessed time is neither up nor down; it is reported
per node, and a node-month with more than :data:`MAX_UNWITNESSED` of its time unwitnessed is
not assessed from the monitoring. An outage is therefore measured to within one step at each
end (the points are the samples the lookback finds at each step), and one shorter than the
lookback may be read as the sample before it.

Several series naming one host (two jobs scraping it) are read together: a step is down when
any of them is 0.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from cmax.ingest.monitoring.prometheus import Series
from cmax.ingest.monitoring.witness import NodeWitness, Span, XidEvent

UTC = dt.UTC

MAX_UNWITNESSED = 0.10
"""Share of a node-month the monitoring may leave unwitnessed and still be the witness of it:
beyond it, a month that is one tenth blind cannot show the provider met a 99.x % SLA."""

HOST_LABELS = ("node", "Hostname", "instance")
"""The label a series names its node by, first present wins: kube-state-metrics ``node``, DCGM
exporter ``Hostname``, node exporter ``instance`` (``gpu-017:9100``)."""

LOOKBACK_S = 300.0
"""Prometheus's default ``--query.lookback-delta`` (5m): a gap shorter than this is invisible."""


def infer_step(series: Sequence[Series]) -> float | None:
    """The most common spacing of a saved answer's points (its query's ``step``)."""
    gaps: Counter[float] = Counter()
    for s in series:
        times = [t for t, _ in s.points]
        gaps.update(round(b - a, 3) for a, b in itertools.pairwise(times) if b > a)
    return gaps.most_common(1)[0][0] if gaps else None


def host_of(series: Series, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """(host, label value) of a series: the first :data:`HOST_LABELS` label present, mapped by
    ``[monitoring] instance_regex`` (its ``host`` group, else group 1, else the match)."""
    for name in HOST_LABELS:
        value = series.label(name)
        if value:
            m = pattern.search(value)
            if m is None:
                return None
            groups = m.groupdict()
            host = groups.get("host") or (m.group(1) if m.re.groups else m.group(0))
            return (host.strip().lower(), value) if host else None
    return None


class Grid:
    """The period's steps."""

    def __init__(self, start: dt.datetime, end: dt.datetime, step_s: float) -> None:
        self.start, self.end, self.step_s = start, end, step_s
        self.t0 = start.timestamp()
        self.n = max(1, math.ceil((end - start).total_seconds() / step_s))

    def index(self, times: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        return np.floor((times - self.t0) / self.step_s + 1e-9).astype(np.int64)

    def values(self, series: Iterable[Series], combine: str) -> npt.NDArray[np.float64]:
        """One value per step (NaN where no point), several series combined by min or sum."""
        out = np.full(self.n, np.nan)
        for s in series:
            if not s.points:
                continue
            arr = np.asarray(s.points, dtype=np.float64)
            idx = self.index(arr[:, 0])
            keep = (idx >= 0) & (idx < self.n)
            idx, vals = idx[keep], arr[keep, 1]
            cur = out[idx]
            if combine == "min":
                out[idx] = np.where(np.isnan(cur), vals, np.fmin(cur, vals))
            else:
                out[idx] = np.where(np.isnan(cur), vals, cur + vals)
        return out

    def spans(self, mask: npt.NDArray[np.bool_]) -> tuple[Span, ...]:
        """The runs of True steps as time spans, the last cut to the period's end."""
        if not mask.any():
            return ()
        padded = np.concatenate(([False], mask, [False])).astype(np.int8)
        edges = np.flatnonzero(np.diff(padded))
        out = []
        for a, b in zip(edges[0::2], edges[1::2], strict=True):
            lo = self.start + dt.timedelta(seconds=float(a) * self.step_s)
            hi = min(self.end, self.start + dt.timedelta(seconds=float(b) * self.step_s))
            out.append((lo, hi))
        return tuple(out)

    def time(self, k: int) -> dt.datetime:
        return self.start + dt.timedelta(seconds=k * self.step_s)


def _by_host(series: Iterable[Series], pattern: re.Pattern[str]
             ) -> tuple[dict[str, list[Series]], dict[str, str], list[str]]:
    hosts: dict[str, list[Series]] = {}
    labels: dict[str, str] = {}
    unmapped: list[str] = []
    for s in series:
        found = host_of(s, pattern)
        if found is None:
            unmapped.append(next((s.label(n) for n in HOST_LABELS if s.label(n)), "(no label)")
                            or "(no label)")
            continue
        host, label = found
        hosts.setdefault(host, []).append(s)
        labels.setdefault(host, label)
    return hosts, labels, unmapped


def xid_events(series: Sequence[Series], grid: Grid) -> list[XidEvent]:
    """Xid errors of DCGM exporter's ``DCGM_FI_DEV_XID_ERRORS`` (the last Xid a GPU raised):
    each change of the value to a non-zero code inside the period. A code already showing at
    the first point may be older than the period and is not counted."""
    events = []
    for s in series:
        gpu = s.label("gpu") or s.label("UUID") or "?"
        prev: float | None = None
        for t, v in s.points:
            inside = grid.t0 <= t < grid.end.timestamp()
            if inside and prev is not None and v != prev and v > 0:
                events.append(XidEvent(dt.datetime.fromtimestamp(t, UTC), int(v), gpu))
            prev = v
    return sorted(events, key=lambda e: (e.at, e.gpu))


def account(up: Sequence[Series], grid: Grid, pattern: re.Pattern[str], *,
            gpus: Sequence[Series] = (), gpus_per_node: int | None = None,
            xid: Sequence[Series] = ()) -> tuple[tuple[NodeWitness, ...], list[str]]:
    """Per host: down, unwitnessed and degraded spans and Xid events; and the label values
    ``instance_regex`` does not map to a host."""
    hosts, labels, unmapped = _by_host(up, pattern)
    gpu_hosts, _, _ = _by_host(gpus, pattern)
    xid_hosts, _, _ = _by_host(xid, pattern)
    nodes = []
    for host in sorted(hosts):
        vals = grid.values(hosts[host], "min")
        seen = ~np.isnan(vals)
        down = seen & (vals < 0.5)
        degraded: tuple[Span, ...] = ()
        if gpus_per_node and host in gpu_hosts:
            count = grid.values(gpu_hosts[host], "sum")
            degraded = grid.spans(seen & ~down & ~np.isnan(count) & (count < gpus_per_node))
        nodes.append(NodeWitness(
            host=host, label=labels[host], down=grid.spans(down), unwitnessed=grid.spans(~seen),
            degraded=degraded, xid=tuple(xid_events(xid_hosts.get(host, []), grid))))
    return tuple(nodes), unmapped
