"""Who wrote each kind of evidence: the authorship a witness carries, declared per format.

A figure is only as independent as the hand that wrote it. The provider writes its training
logs, nccl-tests sweeps, DCGM diagnostics, incident log, telemetry and manifest; a figure
resting on those alone is *provider-attested*, however consistent it looks. Scheduler
accounting (Slurm's ``sacct``), the buyer's own monitoring (Prometheus, Slurm node events,
Kubernetes node events) and a result MLCommons published are not the provider's word: a
witness of theirs makes a figure *independently witnessed*. A ClusterMAX audit file is not
among them: its collector is an open CLI the provider can run itself, and the file names no
auditor.

Authorship is data (:data:`FORMAT_AUTHORS`, one entry per registered format id, checked by
``tests/judgement/test_witnesses.py`` so a new format is placed deliberately); nothing decides
it from a file's name or content.
"""

from __future__ import annotations

from collections.abc import Sequence

from cmax.scorecard import Witness
from cmax.states import Author

FORMAT_AUTHORS: dict[str, Author] = {
    # training logs and run summaries the provider's jobs printed
    "nemo1": "provider", "nemo2": "provider", "megatron": "provider", "maxtext": "provider",
    "paxml": "provider", "torchtitan": "provider", "dgxc-json": "provider",
    "dgxc-csv": "provider",
    # llmb-run's job database: written by the launcher the provider ran on its own cluster
    "llmb-sqlite": "provider",
    # the provider's sweeps and diagnostics
    "nccl-tests": "provider", "nccl-tests-json": "provider", "dcgm-diag": "provider",
    # MLPerf logs and system description as the provider submits them (a result MLCommons
    # published is cited as such in the manifest: MANIFEST_CITED)
    "mlperf": "provider", "mlperf-system-json": "provider",
    # serving benchmarks the provider ran
    "vllm-bench-serve": "provider", "sglang-bench-serving": "provider",
    "trtllm-bench": "provider", "aiperf-json": "provider", "aiperf-csv": "provider",
    "inferencex-agg": "provider", "sa-bench": "provider",
    "mlperf-inference-summary": "provider", "mlperf-inference-result-summary": "provider",
    # storage benchmarks the provider ran
    "fio": "provider", "mlperf-storage": "provider",
    # the provider's incident log and its GPU telemetry
    "incidents-json": "provider", "incidents-csv": "provider",
    "nvidia-smi-power": "provider", "dcgm-exporter-power": "provider",
    # the ClusterMAX audit as submitted: the collector's raw JSON (SemiAnalysisAI/ClusterMAX
    # `cmax audit`), an open CLI the provider can run on its own cluster and edit after; the
    # file records no auditor, so it is the provider's word like the other files
    "clustermax-audit": "provider",
    # the scheduler's accounting: the job's start and end as Slurm recorded them
    "sacct-json": "scheduler", "sacct-parsable": "scheduler",
}

MONITORING_AUTHOR: Author = "buyer"
"""The monitoring sources read at ingest (``cmax/ingest/monitoring/``) are the buyer's."""

MANIFEST_CITED: Author = "mlcommons"
"""An ``[[mlperf]]`` entry with ``cited = true``: another submitter's result as MLCommons
published it."""


def author_of(kind: str) -> Author:
    """The author of a file of format ``kind``; a format without an entry is the provider's
    (the weaker claim, never an independence the data does not state)."""
    return FORMAT_AUTHORS.get(kind, "provider")


def cited(witnesses: Sequence[Witness]) -> bool:
    """Whether a result is cited, not submitted: every witness of it is another submitter's
    result as MLCommons published it (``[[mlperf]] cited = true``). A cited result is
    context: shown, never rated, and it makes the bundle no MLPerf bundle."""
    return bool(witnesses) and all(w.author == MANIFEST_CITED for w in witnesses)
