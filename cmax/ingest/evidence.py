"""Evidence: the canonical Polars tables every parser fills and every later stage reads.

Parsers differ wildly in what they read; downstream code must not care. Each table has a fixed
schema (below) and every row keeps the file and line it came from, so a finding or a report
figure can always point back at the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from cmax.ingest.facts import Fact
from cmax.recipes.columns import RECIPE_SCHEMA

if TYPE_CHECKING:
    from cmax.ingest.formats.mlperf import MlperfSet
    from cmax.ingest.monitoring.witness import Witness
    from cmax.submission.intake.facts import PackageFacts

    # the models (pydantic) are not needed to read a log
    from cmax.submission.manifest import Manifest

RUNS_SCHEMA: dict[str, pl.DataType] = {
    # What the run's log (and the llmb-config beside it) states, null where it is silent. The
    # run's identity (workload, GPU, GPU count, precision, framework, container, job id) as
    # declared and checked is the claims ledger's, read from the resolved run
    # (cmax.resolve.runs.IDENTITY); what the file says of it is in its EvidenceFile's facts.
    "run_id": pl.String(),
    # the cmax.toml [[runs]] entry the row was read for (runs[entry]), set by ingest: the run's
    # declarations are that entry's, whatever its id or log path reads
    "entry": pl.Int64(),
    **RECIPE_SCHEMA,  # as the log or the DGXC experiment's name prints it
    "framework": pl.String(),  # the framework the log's format or lines name
    "source_file": pl.String(),
    "status": pl.String(),
    "max_iteration": pl.Int64(),
    # summary-only sources (DGXC parse-script CSV/JSON, llmb-run SQLite) carry the parser's mean
    # over its window instead of per-step rows; null for per-step logs.
    "reported_step_time_s": pl.Float64(),
    "reported_tflops_per_gpu": pl.Float64(),
    "restarts": pl.Int64(),  # restarts seen inside the log (later attempt wins per iteration)
    "resumed_at": pl.String(),  # the iteration each restart resumed from, comma-separated
    # Megatron's "number of skipped iterations" (optimizer steps skipped): total, and the
    # iterations whose line reports some (comma-separated, the first 20)
    "skipped_iterations": pl.Int64(),
    "skipped_at": pl.String(),
    "notes": pl.String(),  # "; "-joined parser notes a reviewer should see
    # the scheduler's job id the file states: the llmb-run job picked, else the log's file
    # name (llmb-run log-<exp>_<jobid>_<retry>.out, Slurm slurm-<jobid>.out)
    "job_id": pl.String(),
}

STEPS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "iteration": pl.Int64(),
    "step_time_s": pl.Float64(),
    "tflops_per_gpu": pl.Float64(),
    "loss": pl.Float64(),
    "grad_norm": pl.Float64(),
    "tokens_per_s_per_gpu": pl.Float64(),  # as printed (TorchTitan tps, MaxText Tokens/s/device)
    "consumed_samples": pl.Float64(),  # samples trained so far, as printed (Megatron, NeMo 2)
    # measured GPU energy per step and GPU, and the power it implies (Megatron --log-energy:
    # NVML energy counter over the log interval / iterations / world size; cmax.ingest.energy)
    "energy_j_per_gpu": pl.Float64(),
    "power_w_per_gpu": pl.Float64(),
    # the wall-clock stamp printed on the step line (UTC epoch seconds; cmax.ingest.linespec)
    "wall_time_s": pl.Float64(),
    "source_file": pl.String(),
    # 32-bit, as Polars numbers a scanned file's lines: a long run has millions of steps, and
    # the number every reader gets from its line scan is kept as it comes, never widened
    "line": pl.UInt32(),
}

NCCL_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "collective": pl.String(),
    "ranks": pl.Int64(),
    "nodes": pl.Int64(),
    "size_bytes": pl.Int64(),
    "dtype": pl.String(),
    "time_us": pl.Float64(),
    "algbw_gbps": pl.Float64(),
    "busbw_gbps": pl.Float64(),
    "wrong": pl.Int64(),
    "in_place": pl.Boolean(),
    "source_file": pl.String(),
    "line": pl.Int64(),
    "block": pl.Int64(),  # which test block of its file (several runs may be concatenated)
    "hosts": pl.String(),  # sorted ","-joined host names of a complete device list, else null
    # NVLink domains (NVL72 racks) the run's hosts span, from NCCL's MNNVL lines or rack host
    # names (cmax.ingest.formats._nccl_domains); null when that is not known
    "nvlink_domains": pl.Int64(),
}

# Per-node health evidence: a dcgmi diag result per GPU test, or a node's per-process
# collective time from nccl-tests JSON; read by cmax.score.nodes to name suspect nodes.
NODE_HEALTH_SCHEMA: dict[str, pl.DataType] = {
    "node": pl.String(),
    "gpus": pl.Int64(),
    "check": pl.String(),  # "dcgmi diag: memory", "nccl per-process time", ...
    "status": pl.String(),  # pass / warn / fail / skip
    "value": pl.Float64(),  # the measured figure, when the check has one
    "median": pl.Float64(),  # the healthy median it was compared with
    "detail": pl.String(),
    "source_file": pl.String(),
    "line": pl.Int64(),
}

INCIDENTS_SCHEMA: dict[str, pl.DataType] = {
    "start": pl.Datetime("us", "UTC"),
    "end": pl.Datetime("us", "UTC"),
    "node": pl.String(),
    "gpu": pl.String(),
    "category": pl.String(),
    "planned": pl.Boolean(),
    "description": pl.String(),
    "source_file": pl.String(),
    "line": pl.Int64(),
}

AUDIT_SCHEMA: dict[str, pl.DataType] = {
    "check_id": pl.String(),
    "category": pl.String(),
    "criterion": pl.String(),
    "status": pl.String(),
    "observed": pl.String(),
    "minimum": pl.String(),
    "evidence": pl.String(),
    "source_file": pl.String(),
}

MLPERF_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "benchmark": pl.String(),
    "submitter": pl.String(),
    "system": pl.String(),
    "division": pl.String(),
    "status": pl.String(),
    "run_start_ms": pl.Int64(),
    "run_stop_ms": pl.Int64(),
    "time_to_train_min": pl.Float64(),
    "num_gpus": pl.Int64(),
    "source_file": pl.String(),
}


POWER_SCHEMA: dict[str, pl.DataType] = {
    "host": pl.String(),  # the host the telemetry file is of (nvidia-smi names none: the file's)
    "gpu": pl.Int64(),  # the GPU index on that host
    "time_s": pl.Float64(),  # UTC epoch seconds of the sample's stamp
    "power_w": pl.Float64(),  # null: the tool printed no reading ([N/A])
    "source_file": pl.String(),
    "line": pl.Int64(),
}


JOBS_SCHEMA: dict[str, pl.DataType] = {
    "job_id": pl.String(),  # 4242, or 4242_7 (array task) / 4242+0 (het component) as printed
    "name": pl.String(),
    "cluster": pl.String(),  # Slurm's ClusterName
    "state": pl.String(),
    "submit_s": pl.Float64(),  # UTC epoch seconds (sacct -P dates read as UTC)
    "start_s": pl.Float64(),
    "end_s": pl.Float64(),
    "elapsed_s": pl.Float64(),  # the allocation's wall time, as the scheduler counted it
    "nodes": pl.String(),  # the expanded host list, comma-separated
    "source_file": pl.String(),
    "line": pl.Int64(),  # null for JSON and SQLite
}
"""Scheduler accounting (``sacct``, llmb-run's job database): each job's clock and hosts, a
witness the training log does not write (cmax.validate.clocks)."""


INFERENCE_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),  # inference[i] (#k for the k-th result of an --append-result file)
    "entry": pl.Int64(),  # the cmax.toml [[inference]] entry the row was read for
    "tool": pl.String(),  # the format id that read it (vllm-bench-serve, trtllm-bench, ...)
    "model": pl.String(),  # as the result file names it
    "precision": pl.String(),  # as the result file names it, when it does
    "gpu_name": pl.String(),  # as the result file names it, when it does (trtllm-bench)
    "gpus": pl.Int64(),  # GPUs the result file says served it, when it does
    "concurrency": pl.Float64(),  # max concurrency (null: unbounded, offline)
    "request_rate": pl.Float64(),  # requests/s the client offered (null: as fast as possible)
    "duration_s": pl.Float64(),
    "completed": pl.Int64(),
    "failed": pl.Int64(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "output_tok_s": pl.Float64(),  # whole-system output tokens/s, as the tool computed it
    "total_tok_s": pl.Float64(),
    "output_tok_s_per_gpu_reported": pl.Float64(),  # the tool's own per-GPU figure
    "samples_per_s": pl.Float64(),  # completed samples (queries) per second (MLPerf)
    "ttft_p99_ms": pl.Float64(),
    "tpot_p99_ms": pl.Float64(),
    "tpot_mean_ms": pl.Float64(),
    "tpot_median_ms": pl.Float64(),
    "ttft_mean_ms": pl.Float64(),
    "ttft_median_ms": pl.Float64(),
    "temperature": pl.Float64(),  # sampling temperature the client fixed (null: server default)
    "interactivity_tok_s_user": pl.Float64(),  # mean output tok/s per request, as the tool states
    "input_len": pl.Int64(),  # input tokens per request the file states (asked for, or each had)
    "output_len": pl.Int64(),  # output tokens per request the file states (asked for, or each had)
    "prefill_gpus": pl.Int64(),  # disaggregated serving: the prefill GPUs the file states
    "decode_gpus": pl.Int64(),  # disaggregated serving: the decode GPUs the file states
    "scenario": pl.String(),  # the tool's scenario (MLPerf Offline/Server/Interactive, ...)
    "latency_ms": pl.Float64(),  # a latency scenario's result (MLPerf SingleStream/MultiStream)
    "latency_percentile": pl.Float64(),  # ... and the percentile it is (90, 99)
    "tool_valid": pl.Boolean(),  # the tool's own verdict (AIPerf submission_valid, MLPerf VALID)
    "tool_invalid_reason": pl.String(),  # why the tool called it invalid, as it says
    "warmup_requests": pl.Int64(),  # requests the tool sent before measuring (null: not stated)
    "j_per_output_token": pl.Float64(),  # measured energy the tool states, where it states it
    "power_w_per_gpu": pl.Float64(),  # mean GPU power the tool's own telemetry measured (AIPerf)
    "power_gpus": pl.Int64(),  # GPUs that telemetry read
    "started_s": pl.Float64(),  # UTC epoch seconds the measured run began, as the file says
    "ended_s": pl.Float64(),  # ... and ended (host clocks without a zone are read as UTC)
    "source_file": pl.String(),
    "line": pl.Int64(),  # line of the result object in the file (1 for a single document)
}
"""Serving benchmark results: one row per result (a vLLM ``--append-result`` file holds
several). What a tool does not record (vLLM: no GPU type or count; AIPerf's CSV: its load) is
null here: the manifest's ``[[inference]]`` entry declares it, and the case holds that
declaration in the claims ledger (cmax.resolve.entry_claims; the GPU count's basis in
cmax.score.inference)."""


STORAGE_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),  # storage[i] (#k for the k-th row of one file)
    "entry": pl.Int64(),  # the cmax.toml [[storage]] entry the row was read for (storage[entry])
    "tool": pl.String(),  # the format id that read it (mlperf-storage, fio, or the log's format)
    "tool_version": pl.String(),  # MLPerf Storage round (v1.0, v3.0), fio-3.33, ...
    "benchmark": pl.String(),  # training | checkpointing | fio | checkpoint-log
    "workload": pl.String(),  # unet3d, resnet50, cosmoflow, llama3-405b, a fio group, ...
    "direction": pl.String(),  # read | write | save | load | finalize
    "accelerator": pl.String(),  # the accelerator MLPerf Storage emulated (h100, a100, b200)
    "accelerators": pl.Int64(),  # emulated accelerators (MLPerf Storage) or the run's GPUs
    "hosts": pl.Int64(),  # client hosts
    "samples_per_s": pl.Float64(),
    "mib_per_s": pl.Float64(),  # MiB/s (MLPerf Storage's *_MB_per_second; fio's aggregate)
    "gib_per_s": pl.Float64(),  # GiB/s (MLPerf Storage's *_GB_per_second)
    "au_pct": pl.Float64(),  # accelerator utilisation, mean over epochs
    "au_min_pct": pl.Float64(),  # the lowest epoch's
    "au_threshold_pct": pl.Float64(),  # the workload's bar (90 / 90 / 70)
    "au_pass": pl.Boolean(),  # the tool's own verdict (train_au_meet_expectation)
    "duration_s": pl.Float64(),  # a save / load (mean over a run's checkpoints, or one event)
    "size_gib": pl.Float64(),  # checkpoint size as the file states it
    "host_mem_gib": pl.Float64(),  # one client host's MemTotal
    "dataset_gib": pl.Float64(),  # the dataset over all client hosts
    "caching": pl.Boolean(),  # the tool flagged potential page-cache hits on some host
    "iteration": pl.Int64(),  # the training iteration a checkpoint event belongs to
    "lat_mean_us": pl.Float64(),  # fio completion latency, mean, in microseconds
    "source_file": pl.String(),
    "line": pl.Int64(),
}
"""Storage measurements: one row per workload and direction of an MLPerf Storage summary or a
fio group, one per checkpoint event of a training log. Units are fixed here (MiB/s, GiB/s,
GiB, seconds, microseconds) whatever the tool printed."""


@dataclass(frozen=True)
class Table:
    """One canonical evidence table, declared once: its schema, the manifest key that names
    the files feeding it, the format role a file needs to feed it, and what an empty file is.

    Ingest, the case (``Case.tables``), the manifest's list of declared files, completeness,
    the format registry's role check and docs/formats.md all read these declarations (see
    docs/architecture.md, "Adding a format for a new table").
    """

    #: the attribute on :class:`Evidence` and the key of ``Case.tables``
    name: str
    schema: dict[str, pl.DataType]
    #: the manifest section whose entries name the files (``runs``, ``audit``, ...) and the
    #: entry's field holding the path; None: filled beside another table's files
    section: str | None
    field: str | None
    #: the format roles whose files fill this table
    roles: tuple[str, ...]
    #: what a file under the key must hold, for errors and docs
    what: str
    #: the completeness rule a declared file that gives this table no row raises (None: the
    #: table's own rules judge it, as the runs' do)
    empty: str | None = None
    #: the key may name a folder (its rows' ``source_file`` lie under it)
    folder: bool = False
    #: the section is an array of tables (``[[runs]]``), each entry naming a file
    many: bool = False

    def key(self, index: int | None = None) -> str:
        """The manifest key of an entry (``runs[0].log``, ``audit.path``; ``runs[].log``
        without an index)."""
        where = f"{self.section}[{'' if index is None else index}]" if self.many else self.section
        return f"{where}.{self.field}"


TABLES: tuple[Table, ...] = (
    Table("runs", RUNS_SCHEMA, "runs", "log", ("run",),
          "a training log or DGXC/llmb-run summary", many=True),
    Table("steps", STEPS_SCHEMA, None, None, ("run",), "per-step rows of a training log"),
    Table("nccl", NCCL_SCHEMA, "nccl", "path", ("nccl",),
          "nccl-tests output (or a folder of it, with dcgmi diag results)",
          "completeness.empty-evidence", folder=True, many=True),
    Table("node_health", NODE_HEALTH_SCHEMA, None, None, ("node-health", "nccl"),
          "per-node health rows (dcgmi diag, nccl-tests JSON per-process times)"),
    Table("mlperf", MLPERF_SCHEMA, "mlperf", "path", ("mlperf",),
          "an MLPerf result_*.txt or results folder", "completeness.empty-evidence",
          folder=True, many=True),
    Table("audit_checks", AUDIT_SCHEMA, "audit", "path", ("audit",),
          "a ClusterMAX audit.values.json", "completeness.empty-evidence"),
    Table("inference", INFERENCE_SCHEMA, "inference", "result", ("inference",),
          "a serving benchmark result (vllm bench serve --save-result JSON, SGLang "
          "bench_serving JSONL, trtllm-bench --report_json, AIPerf profile export JSON/CSV, "
          "InferenceX agg rows, sa-bench benchmark.out, MLPerf Inference mlperf_log_summary.txt)",
          "completeness.empty-evidence", many=True),
    Table("incidents", INCIDENTS_SCHEMA, "reliability", "incidents", ("incidents",),
          "an incident log", "completeness.empty-incident-log"),
    Table("storage", STORAGE_SCHEMA, "storage", "result", ("storage", "run"),
          "storage evidence (an MLPerf Storage summary.json, fio --output-format=json, or a "
          "training log with checkpoint save lines)", "completeness.empty-evidence", many=True),
    Table("power", POWER_SCHEMA, "power", "path", ("power",),
          "GPU power telemetry (nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv, "
          "or a Prometheus range query of DCGM Exporter's DCGM_FI_DEV_POWER_USAGE)",
          "completeness.empty-evidence", many=True),
    Table("jobs", JOBS_SCHEMA, "accounting", "path", ("accounting",),
          "Slurm accounting of the runs' jobs (sacct --json, or sacct -P/-p with JobID, Start, "
          "End or Elapsed)", "completeness.empty-evidence", many=True),
)
"""Every canonical table, in ingest order."""


def table_named(name: str) -> Table:
    """The declaration of table ``name``."""
    return next(t for t in TABLES if t.name == name)


def declared_files(manifest: Manifest) -> list[tuple[str, str]]:
    """(manifest key, relative path) for every file ``manifest`` points at, in the order of
    the table declarations (:data:`TABLES`): the tables say which manifest keys name files,
    so the manifest model needs no list of its own."""
    files: list[tuple[str, str]] = []
    for table in TABLES:
        if table.section is None or table.field is None:
            continue
        entries = getattr(manifest, table.section)
        if table.many:
            files += [(table.key(i), getattr(e, table.field)) for i, e in enumerate(entries)]
        elif entries is not None:
            files.append((table.key(), getattr(entries, table.field)))
    return files


def table_of_key(key: str) -> Table | None:
    """The table a manifest key (``nccl[2].path``) feeds, or None."""
    section = key.split(".", 1)[0].split("[", 1)[0]
    return next((t for t in TABLES if t.section == section), None)


def entry_rows(inference: pl.DataFrame, index: int) -> pl.DataFrame:
    """The inference table's rows of ``[[inference]]`` entry ``index`` (their ``entry``, which
    ingest writes: every result of an ``--append-result`` file is the entry's)."""
    return inference.filter(pl.col("entry") == index)


def stated_splits(rows: pl.DataFrame) -> set[tuple[int | None, int]]:
    """The (prefill, decode) GPU splits inference ``rows`` state (disaggregated serving)."""
    return {(p, d) for p, d in zip(rows["prefill_gpus"].to_list(), rows["decode_gpus"].to_list(),
                                   strict=True) if d is not None}


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """An empty table with the canonical schema."""
    return pl.DataFrame(schema=schema)


def conform(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Add missing columns as nulls, cast, and order columns as the canonical schema says."""
    if frame.width == 0:
        # a literal in select() on a column-less frame would broadcast to one row
        return pl.DataFrame(
            {name: pl.Series(name, [None] * frame.height, dtype=dtype)
             for name, dtype in schema.items()}
        )
    cols = [
        (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in schema.items()
    ]
    return frame.select(cols)


@dataclass
class Evidence:
    """Everything ingested from one bundle."""

    manifest: Manifest
    root: Path
    source: Path
    runs: pl.DataFrame = field(default_factory=lambda: empty(RUNS_SCHEMA))
    steps: pl.DataFrame = field(default_factory=lambda: empty(STEPS_SCHEMA))
    nccl: pl.DataFrame = field(default_factory=lambda: empty(NCCL_SCHEMA))
    incidents: pl.DataFrame = field(default_factory=lambda: empty(INCIDENTS_SCHEMA))
    audit_checks: pl.DataFrame = field(default_factory=lambda: empty(AUDIT_SCHEMA))
    mlperf: pl.DataFrame = field(default_factory=lambda: empty(MLPERF_SCHEMA))
    node_health: pl.DataFrame = field(default_factory=lambda: empty(NODE_HEALTH_SCHEMA))
    inference: pl.DataFrame = field(default_factory=lambda: empty(INFERENCE_SCHEMA))
    power: pl.DataFrame = field(default_factory=lambda: empty(POWER_SCHEMA))
    storage: pl.DataFrame = field(default_factory=lambda: empty(STORAGE_SCHEMA))
    jobs: pl.DataFrame = field(default_factory=lambda: empty(JOBS_SCHEMA))
    audit_cluster: str | None = None
    # MLPerf benchmark folders as cmax.ingest.formats.mlperf parsed and scored them (events, runs,
    # system JSON, scaling factor, official score): validate and score read these, never the files
    mlperf_sets: list[MlperfSet] = field(default_factory=list)
    files: list[EvidenceFile] = field(default_factory=list)
    # an llmb-run package's suite keys, recipe releases and notes (cmax.submission.intake), else
    # None
    package: PackageFacts | None = None
    # the buyer's monitoring ([monitoring]) over the reliability period (cmax.ingest.monitoring)
    monitoring: tuple[Witness, ...] = ()


@dataclass(frozen=True)
class EvidenceFile:
    """A file that went into the rating, with its digest so a report pins exactly what it read.

    ``kind`` is the format id the content was detected as; ``facts`` are the identity
    statements the file makes about itself (GPU names, hosts, world size, precision and model
    strings, ...: see :mod:`cmax.ingest.facts`), recorded by the parser while it read the file so
    that
    no later stage has to open it again; ``line_count`` is the number of lines read (None for
    binary formats).
    """

    path: str
    kind: str
    sha256: str
    size_bytes: int
    facts: tuple[Fact, ...] = ()
    line_count: int | None = None
