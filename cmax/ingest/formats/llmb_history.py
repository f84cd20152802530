"""The llmb-run job-history database (SQLite table ``jobs``, DGXC v26.05+).

Recognised by the SQLite magic plus a ``jobs`` table with llmb-run's columns; a run picks its
job by precision, GPU count and workload (see :mod:`cmax.ingest.llmb_sqlite`). A summary: it
fills ``runs.reported_*``, never step rows.
"""

from __future__ import annotations

from typing import Any

from cmax.coerce import as_float
from cmax.facts import Fact
from cmax.ingest import llmb_sqlite
from cmax.ingest.formats import Probe, RunFormat, RunPart, RunRequest, register
from cmax.ingest.llmb_sqlite import Job


class LlmbSqlite(RunFormat[list[Job]]):
    id = "llmb-sqlite"
    title = "llmb-run job history (SQLite)"
    tool = "llmb-run (DGXC Benchmarking v26.05+), its `jobs` table"
    sample = "(built by tests/ingest/test_ingest_formats.py: make_llmb_db)"
    priority = 100

    def sniff(self, probe: Probe) -> bool:
        if not probe.is_sqlite:
            return False
        if llmb_sqlite.has_jobs_table(probe.path):
            return True
        probe.why.append("an SQLite database without an llmb-run `jobs` table")
        return False

    def parse(self, probe: Probe) -> list[Job]:
        return llmb_sqlite.read_jobs(probe.path)

    def summarise(self, parsed: list[Job], probe: Probe) -> dict[str, Any]:
        return llmb_sqlite.summary(parsed)

    def facts(self, parsed: list[Job]) -> tuple[Fact, ...]:
        return llmb_sqlite.job_facts(parsed)

    def read_run(self, parsed: list[Job], request: RunRequest) -> RunPart:
        spec = request.spec
        job, notes = llmb_sqlite.select_job(
            parsed, workload=spec.workload, precision=spec.precision, num_gpus=spec.num_gpus,
            selector=spec.experiment, file=request.path, field=request.key)
        row = dict(request.declared)
        row.update(status=job.status,
                   reported_step_time_s=as_float(job.row.get("train_step_time_seconds")),
                   reported_tflops_per_gpu=as_float(job.row.get("tflops_per_gpu")))
        return RunPart(row=row, notes=[f"llmb-run job {job.label}; no per-step data", *notes])


register(LlmbSqlite())
