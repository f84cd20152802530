"""What one monitoring source witnessed, per node: the shape every reader produces.

A witness covers one period (the ``[reliability]`` period) and says, per node, when the node
was down, when it was up but with fewer GPUs than it should have (degraded), when the source
saw nothing at all (unwitnessed: a scrape gap, no event history), and the GPU Xid errors it
recorded. Spans are half-open ``[start, end)`` in UTC and never overlap within one list.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Span = tuple[dt.datetime, dt.datetime]
SourceKind = Literal["prometheus", "slurm", "kubernetes"]


def merge_spans(spans: Iterable[Span]) -> tuple[Span, ...]:
    """Sorted, non-overlapping spans covering the same time (touching spans joined)."""
    merged: list[Span] = []
    for a, b in sorted(spans):
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return tuple(merged)


def span_hours(spans: Iterable[Span], lo: dt.datetime, hi: dt.datetime) -> float:
    """Hours of ``spans`` inside ``[lo, hi)``."""
    total = 0.0
    for a, b in spans:
        s, e = max(a, lo), min(b, hi)
        if e > s:
            total += (e - s).total_seconds() / 3600.0
    return total


def subtract_spans(spans: Iterable[Span], minus: Iterable[Span]) -> tuple[Span, ...]:
    """``spans`` with the time of ``minus`` removed."""
    cut = merge_spans(minus)
    out: list[Span] = []
    for a, b in merge_spans(spans):
        cur = a
        for c, d in cut:
            if d <= cur or c >= b:
                continue
            if c > cur:
                out.append((cur, c))
            cur = max(cur, d)
            if cur >= b:
                break
        if cur < b:
            out.append((cur, b))
    return tuple(out)


@dataclass(frozen=True)
class XidEvent:
    """A GPU Xid error the monitoring recorded (DCGM exporter ``DCGM_FI_DEV_XID_ERRORS``)."""

    at: dt.datetime
    code: int
    gpu: str


@dataclass(frozen=True)
class NodeWitness:
    """One node as one source saw it over the witness's period."""

    host: str
    """the host name (the instance label mapped by ``[monitoring] instance_regex``)"""
    label: str
    """the label value the source names the node by (``gpu-017:9100``)"""
    down: tuple[Span, ...] = ()
    unwitnessed: tuple[Span, ...] = ()
    degraded: tuple[Span, ...] = ()
    """up, but fewer GPUs reporting than the system's gpus_per_node"""
    xid: tuple[XidEvent, ...] = ()
    reasons: tuple[tuple[Span, str], ...] = ()
    """the reason the source gives for a down span, where it gives one (Slurm, Kubernetes)"""


@dataclass(frozen=True)
class Witness:
    """What one monitoring source says about the period ``[start, end)``."""

    kind: SourceKind
    source: str
    """where it was read: the Prometheus URL or the bundle-relative file"""
    start: dt.datetime
    end: dt.datetime
    resolution_s: float | None
    """the accounting's step (Prometheus); None for event histories, exact to the second"""
    nodes: tuple[NodeWitness, ...]
    queries: tuple[str, ...] = ()
    gaps_rule: str = ""
    """how time the source did not witness is treated, in one sentence"""
    gpu_faults_assessed: bool = False
    """the source reports GPU counts per node, so degraded spans are meaningful"""
    sha256: str | None = None
    """of the answers read (saved file or live), so a report pins what it read"""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset(n.host for n in self.nodes)

    def node(self, host: str) -> NodeWitness | None:
        return next((n for n in self.nodes if n.host == host), None)
