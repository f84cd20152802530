"""Scoring: evidence + findings + reference + rubric -> Scorecard.

Modules, one question each: ``performance`` (training throughput ratio with a bootstrap CI),
``network`` (nccl-tests bus bandwidth), ``mlperf`` (olympic time to train), ``reliability``
(interruption rate, MTBF, ETTR, SLA uptime and credits), ``rating`` (ClusterMAX categories,
gates, tier), ``rubric`` (the file every weight and threshold comes from), ``verdicts``
(which results count for the price and the tier; scorecard models only).

The stage's names load on first use, so report code that reads finished scorecards can import
``cmax.score.verdicts`` without the scoring stack (NumPy, Polars, the case).
"""

from __future__ import annotations

import typing

if typing.TYPE_CHECKING:
    from cmax.score.core import score
    from cmax.score.rubric import Rubric, load_rubric

__all__ = ["Rubric", "load_rubric", "score"]

from cmax._stage import lazy_names as _lazy_names

__getattr__ = _lazy_names(__name__, {"score": "core", "Rubric": "rubric",
                                     "load_rubric": "rubric"})

# `cmax.score(...)` calls the stage function: see cmax/_stage.py
from cmax._stage import make_callable as _make_callable

_make_callable(__name__)
