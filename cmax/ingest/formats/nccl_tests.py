"""nccl-tests text output (``all_reduce_perf`` and friends), as printed or as pasted.

Recognised by the header nccl-tests prints (``# nThread N nGpus M``), the table header
(``#  size  count  type``) or the closing ``# Avg bus bandwidth :``; pasted copies lose the
``#`` or gain ``[1,0]<stdout>:`` / srun prefixes, so the markers allow for both (NVIDIA/
nccl-tests ``src/common.cu``). Parsed by :mod:`cmax.ingest.nccl`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl

from cmax.facts import Fact
from cmax.ingest import nccl
from cmax.ingest.formats import Marker, NcclFormat, Probe, register
from cmax.ingest.nccl import NcclTest


class NcclTests(NcclFormat[list[NcclTest]]):
    id = "nccl-tests"
    title = "nccl-tests output (text)"
    tool = "NVIDIA nccl-tests (`all_reduce_perf -b 8 -e 16G -f 2 -g 1`, ...) stdout"
    sample = "ingest/nccl/all_reduce_1node.txt"
    priority = 90
    markers = (
        Marker(b"nThread", re.compile(r"^[^\n]{0,40}?\bnThread\s+\d+\s+nGpus\s+\d+", re.M)),
        Marker(b"Avg bus bandwidth", re.compile(r"#?\s*Avg bus bandwidth\s*:")),
        Marker(b"count", re.compile(r"^\s*#?\s+size\s+count\s+type\b", re.M)),
    )

    def parse(self, probe: Probe) -> list[NcclTest]:
        return nccl.parse_nccl_tests(probe.path)

    def summarise(self, parsed: list[NcclTest], probe: Probe) -> dict[str, Any]:
        return nccl.nccl_summary(parsed, probe.path)

    def facts(self, parsed: list[NcclTest]) -> tuple[Fact, ...]:
        return nccl.nccl_facts(parsed)

    def frame(self, parsed: list[NcclTest], *, run_id: str, source_file: str,
              path: Path) -> pl.DataFrame:
        return nccl.nccl_frame(parsed, run_id=run_id, source_file=source_file, path=path)


register(NcclTests())
