"""nccl-tests JSON output (``-J file.json``, format version 3, nccl-tests v2.17+).

Recognised by its shape (``version``, ``config``, ``results`` and ``nccl_version`` or
``average_bus_bandwidth``); read by :mod:`cmax.ingest.nccl_json` (NETWORK), which also turns
per-process times into node-health rows (see :mod:`cmax.ingest.network_files`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from cmax.facts import Fact
from cmax.ingest import nccl, nccl_json
from cmax.ingest.formats import NcclFormat, Probe, register
from cmax.ingest.nccl import NcclTest

Parsed = tuple[list[NcclTest], pl.DataFrame]


class NcclTestsJson(NcclFormat[Parsed]):
    id = "nccl-tests-json"
    title = "nccl-tests output (JSON)"
    tool = "NVIDIA nccl-tests `-J` (src/util.cu, JSON_FILE_VERSION 3)"
    sample = "nccl/all_reduce_2node.json"
    priority = 85
    json_shape = staticmethod(nccl_json.is_nccl_json)

    def parse(self, probe: Probe) -> Parsed:
        return nccl_json.parse_nccl_json(probe.path)

    def summarise(self, parsed: Parsed, probe: Probe) -> dict[str, Any]:
        return dict(nccl_json.json_summary(probe.path))

    def facts(self, parsed: Parsed) -> tuple[Fact, ...]:
        return nccl_json.json_facts(parsed[0], Path())

    def frame(self, parsed: Parsed, *, run_id: str, source_file: str,
              path: Path) -> pl.DataFrame:
        return nccl.nccl_frame(parsed[0], run_id=run_id, source_file=source_file, path=path)

    def node_health(self, parsed: Parsed, *, source_file: str) -> pl.DataFrame:
        return parsed[1].with_columns(pl.lit(source_file).alias("source_file"))


register(NcclTestsJson())
