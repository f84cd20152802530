"""Ingest: every evidence format the field produces, read into the canonical tables.

``ingest(bundle)`` reads what a bundle's manifest declares; ``detect_format(path)`` tells one
file's format from its content; ``inspect_file(path)`` summarises one file for ``cmax inspect``.
One module per format family: nemo, megatron, jax_logs (MaxText, PaxML), torchtitan,
dgxc_parse, llmb_sqlite, mlperf, nccl, clustermax_audit, incidents; textlines holds the
streaming reader and the rules shared by training logs.
"""

from __future__ import annotations

from cmax.ingest.assemble import ingest
from cmax.ingest.detect import FORMATS, detect_format
from cmax.ingest.summary import inspect_file

__all__ = ["FORMATS", "detect_format", "ingest", "inspect_file"]

# `cmax.ingest(bundle)` calls the stage function: see cmax/_stage.py
from cmax._stage import make_callable as _make_callable

_make_callable(__name__)
