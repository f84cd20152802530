"""A serving result against a reference *curve*: throughput per GPU at the interactivity the
provider measured.

InferenceX publishes, per model, GPU, precision and input/output length, a curve of output
tokens/s per GPU against interactivity (tokens/s per user, 1000 ÷ TPOT in ms) swept by
concurrency. Throughput rises as interactivity falls, so a peak throughput taken at a low
interactivity says nothing about a point served at a high one. A provider's sweep point is
therefore compared with the reference *interpolated at that point's own interactivity*
(linearly between the two reference points that bracket it), never peak against peak; a point
outside the reference's measured range is shown and not compared (no extrapolation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CurvePoint:
    """One point of a throughput-vs-interactivity curve."""

    interactivity: float
    """output tokens/s per user (1000 ÷ mean TPOT in ms)"""
    tok_s_per_gpu: float
    """output tokens/s per GPU"""


def interactivity(tpot_ms: float | None) -> float | None:
    """Tokens/s per user from a time per output token in ms (InferenceX's ``intvty``)."""
    if tpot_ms is None or not math.isfinite(tpot_ms) or tpot_ms <= 0:
        return None
    return 1000.0 / tpot_ms


def interpolate(curve: Sequence[CurvePoint], at: float) -> float | None:
    """The reference's output tokens/s per GPU at interactivity ``at``: linear between the two
    reference points that bracket it; None outside the measured range or on an empty curve.
    Points at the same interactivity are averaged (a reference may repeat a configuration)."""
    merged: dict[float, list[float]] = {}
    for p in curve:
        merged.setdefault(p.interactivity, []).append(p.tok_s_per_gpu)
    xs = sorted(merged)
    if not xs or not xs[0] <= at <= xs[-1]:
        return None
    ys = [sum(merged[x]) / len(merged[x]) for x in xs]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys, strict=True), zip(xs[1:], ys[1:], strict=True),
                                  strict=False):
        if x0 <= at <= x1:
            return y0 + (y1 - y0) * (at - x0) / (x1 - x0)
    return ys[0]  # a single-point curve, measured exactly at ``at``
