"""Scoring: evidence + findings + reference + rubric -> Scorecard.

Modules, one question each: ``performance`` (training throughput ratio with a bootstrap CI),
``network`` (nccl-tests bus bandwidth), ``mlperf`` (olympic time to train), ``reliability``
(interruption rate, MTBF, ETTR, SLA uptime and credits), ``rating`` (ClusterMAX categories,
gates, tier), ``rubric`` (the file every weight and threshold comes from).
"""

from __future__ import annotations

from cmax.score.core import score
from cmax.score.rubric import Rubric, load_rubric

__all__ = ["Rubric", "load_rubric", "score"]

# `cmax.score(...)` calls the stage function: see cmax/_stage.py
from cmax._stage import make_callable as _make_callable

_make_callable(__name__)
