"""MLPerf Training results: a ``result_*.txt`` MLLOG file and the system description JSON.

A result file is recognised by ``:::MLLOG {`` lines (mlcommons/logging); it embeds the
framework's own log, so its marker has the highest priority of all text formats. Folders of
results (benchmark, system, submitter) are read by :mod:`cmax.ingest.mlperf` as trees, not
file by file. The system description (``systems/<system>.json``) is recognised by its keys.
"""

from __future__ import annotations

import re
from typing import Any

from cmax.ingest import mlperf
from cmax.ingest.formats import Format, Marker, Probe, Role, register
from cmax.ingest.mlperf import MlperfRun


class MlperfResult(Format[MlperfRun]):
    id = "mlperf"
    title = "MLPerf Training result file"
    tool = "MLCommons MLPerf Training reference and submitter code (`:::MLLOG {...}` lines)"
    sample = "ingest/mlperf/results/example_h100_64x8/llama31_405b/result_0.txt"
    role: Role = "mlperf"
    priority = 100
    markers = (Marker(b":::MLLOG", re.compile(re.escape(mlperf.TOKEN) + r"\s*\{")),)

    def parse(self, probe: Probe) -> MlperfRun:
        return mlperf.parse_result_file(probe.path)

    def summarise(self, parsed: MlperfRun, probe: Probe) -> dict[str, Any]:
        # the tree reader summarises a lone file the way it does a folder (system, notes)
        return mlperf.inspect_tree(probe.path)


class MlperfSystemJson(Format[dict[str, Any]]):
    id = "mlperf-system-json"
    title = "MLPerf system description"
    tool = "MLPerf submission `systems/<system>.json` (checked by MLCommons system_desc_checker)"
    sample = "ingest/mlperf/systems/example_h100_64x8.json"
    role: Role = "mlperf-system"
    priority = 70
    json_shape = staticmethod(mlperf.is_system_json)

    def parse(self, probe: Probe) -> dict[str, Any]:
        return dict(mlperf.load_system_json(probe.path))

    def summarise(self, parsed: dict[str, Any], probe: Probe) -> dict[str, Any]:
        return dict(mlperf.system_summary(parsed))


register(MlperfResult())
register(MlperfSystemJson())
