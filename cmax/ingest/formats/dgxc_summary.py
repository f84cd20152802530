"""DGXC Benchmarking parse-script summaries (CSV and JSON) of llmb-run experiments.

The parse script writes one row per experiment with the mean step time and TFLOP/s over its
window (research dgxc.md §3.2); a manifest run picks its row by ``experiment``. These are
summaries: they fill ``runs.reported_*`` and never step rows.
"""

from __future__ import annotations

from typing import Any

from cmax.facts import Fact
from cmax.ingest import dgxc_parse
from cmax.ingest.dgxc_parse import Experiment
from cmax.ingest.formats import Probe, RunFormat, RunPart, RunRequest, register


class _DgxcSummary(RunFormat[list[Experiment]]):
    def summarise(self, parsed: list[Experiment], probe: Probe) -> dict[str, Any]:
        return dgxc_parse.summary(parsed, self.id)

    def facts(self, parsed: list[Experiment]) -> tuple[Fact, ...]:
        return dgxc_parse.experiment_facts(parsed)

    def read_run(self, parsed: list[Experiment], request: RunRequest) -> RunPart:
        exp = dgxc_parse.select(parsed, request.spec.experiment, file=request.path,
                                field=request.key)
        row = dict(request.declared)
        row.update(framework=request.spec.framework or exp.framework, status=exp.status,
                   max_iteration=exp.max_iteration, reported_step_time_s=exp.time_mean_s,
                   reported_tflops_per_gpu=exp.tflops_mean)
        return RunPart(row=row, notes=[f"summary row {exp.name!r} ({exp.raw_status}); "
                                       "no per-step data"])


class DgxcCsv(_DgxcSummary):
    id = "dgxc-csv"
    title = "DGXC parse-script CSV"
    tool = ("DGXC Benchmarking parse script (`filename,status,time_mean_seconds|ms,...` "
            "header; NeMo 2 in seconds, Megatron-Bridge in ms)")
    sample = "ingest/dgxc_parse_nemo2.csv"
    priority = 50

    def sniff(self, probe: Probe) -> bool:
        return dgxc_parse.looks_like_csv(probe.first_line)

    def parse(self, probe: Probe) -> list[Experiment]:
        return dgxc_parse.parse_csv(probe.path)


class DgxcJson(_DgxcSummary):
    id = "dgxc-json"
    title = "DGXC parse-script JSON"
    tool = 'DGXC Benchmarking parse script JSON (`{"analysis": ..., "results": [...]}`)'
    sample = "ingest/dgxc_parse_nemo2.json"
    priority = 80
    json_shape = staticmethod(dgxc_parse.is_dgxc_json)

    def parse(self, probe: Probe) -> list[Experiment]:
        return dgxc_parse.experiments_from_json(probe.require_json("a DGXC parse-script JSON"),
                                                probe.path)


register(DgxcCsv())
register(DgxcJson())
