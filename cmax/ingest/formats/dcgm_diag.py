"""DCGM diagnostics JSON (``dcgmi diag -r N -j``): per-node GPU health.

Recognised by its top-level ``DCGM GPU Diagnostic`` (or ``DCGM Diagnostic``) object with
``test_categories``; read into node-health rows by :mod:`cmax.ingest.dcgm` (NETWORK).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from cmax.ingest import dcgm
from cmax.ingest.formats import NodeHealthFormat, Probe, register


class DcgmDiag(NodeHealthFormat[pl.DataFrame]):
    id = "dcgm-diag"
    title = "DCGM diagnostics (JSON)"
    tool = "NVIDIA DCGM `dcgmi diag -r 3 -j` on one node"
    sample = "nccl/dcgm/node-a.json"
    priority = 84
    json_shape = staticmethod(dcgm.is_dcgm_diag)

    def sniff(self, probe: Probe) -> bool:
        if super().sniff(probe):
            return True
        # the document after a line of text dcgmi printed first (not JSON as a whole)
        return probe.head_text[:1] != "{" and dcgm.looks_like_dcgm_diag(probe.head_text)

    def parse(self, probe: Probe) -> pl.DataFrame:
        return dcgm.parse_dcgm(probe.path)

    def summarise(self, parsed: pl.DataFrame, probe: Probe) -> dict[str, Any]:
        return dict(dcgm.dcgm_summary(probe.path))

    def node_health(self, parsed: pl.DataFrame, *, source_file: str) -> pl.DataFrame:
        return parsed.with_columns(pl.lit(source_file).alias("source_file"))


register(DcgmDiag())
