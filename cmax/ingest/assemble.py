"""``ingest``: read every file a bundle's manifest declares into the canonical tables.

The manifest says what each file is for (``runs[i].log``, ``nccl[i].path``, ...); the content
says what format it is in (the registry, :mod:`cmax.ingest.formats`). A file whose format's
role does not fit its key, or that does not parse, stops the ingest with an error naming the
key and the file: a rating built on a silently skipped log would be wrong in the provider's
favour or against it, and nobody would know. Nothing here knows a particular format: each
format turns its parsed file into rows through its role's method (``read_run``, ``frame``,
``checks``), so adding a format never touches this module. MLPerf result *folders* are trees,
read by :func:`cmax.ingest.formats.mlperf.read_tree`; ``[[nccl]]`` entries (files or folders of
nccl-tests and dcgmi output) by :mod:`cmax.ingest.network_files`.

Every file read is recorded once as an :class:`~cmax.ingest.evidence.EvidenceFile` with its digest,
format, line count and the identity facts its format recorded, so later stages never reopen it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceFormatError, ManifestError
from cmax.ingest import llmb_config
from cmax.ingest.evidence import (
    AUDIT_SCHEMA,
    INCIDENTS_SCHEMA,
    INFERENCE_SCHEMA,
    JOBS_SCHEMA,
    MLPERF_SCHEMA,
    NCCL_SCHEMA,
    NODE_HEALTH_SCHEMA,
    POWER_SCHEMA,
    RUNS_SCHEMA,
    STEPS_SCHEMA,
    STORAGE_SCHEMA,
    Evidence,
    conform,
    table_named,
)
from cmax.ingest.formats import (
    AccountingFormat,
    AuditFormat,
    IncidentFormat,
    InferenceFormat,
    PowerFormat,
    RunFormat,
    RunRequest,
    StorageFormat,
    identify,
    mlperf,
    recorded_facts,
)
from cmax.ingest.formats.llmb_sqlite import LlmbSqlite
from cmax.ingest.formats.llmb_sqlite import jobs_frame as llmb_jobs_frame
from cmax.ingest.network_files import network_files
from cmax.ingest.reader import BundleReader
from cmax.ingest.textlines import CONFIG_KEYS, table
from cmax.ingest.training import job_of_log, pick_log
from cmax.submission.bundle import Bundle
from cmax.submission.manifest import RunSpec, StorageSpec


def ingest(bundle: Bundle) -> Evidence:
    """Every declared file of ``bundle`` as canonical tables (see cmax.ingest.evidence)."""
    reader = BundleReader(bundle)
    manifest = bundle.manifest
    evidence = Evidence(manifest=manifest, root=bundle.root, source=bundle.source,
                        package=bundle.package)

    run_rows: list[dict[str, Any]] = []
    step_frames: list[pl.DataFrame] = []
    job_frames: list[pl.DataFrame] = []  # llmb-run's job database, read as a run: its clocks
    for i, spec in enumerate(manifest.runs):
        key = f"runs[{i}].log"
        with reader.key(key):
            row, steps = _read_run(reader, i, spec, key, job_frames)
        run_rows.append(row)
        if steps is not None:
            step_frames.append(steps)
    if bundle.package is not None:  # an llmb-run package: its logs' node counts vs its scale
        llmb_config.refuse_short_logs(
            bundle.package, {row["entry"]: reader.files.get(str(row["source_file"]))
                             for row in run_rows}, manifest.system.gpus_per_node)
    evidence.runs = table(run_rows, RUNS_SCHEMA)
    evidence.steps = _concat(step_frames, STEPS_SCHEMA)

    nccl_frames = []
    health: list[pl.DataFrame] = []
    for i, nccl_spec in enumerate(manifest.nccl):
        key = f"nccl[{i}].path"
        with reader.key(key):
            frame, node_rows = network_files(reader, i, nccl_spec.path, key)
            nccl_frames.append(frame)
            health.append(node_rows)
    evidence.nccl = _concat(nccl_frames, NCCL_SCHEMA)
    evidence.node_health = _concat(health, NODE_HEALTH_SCHEMA)

    mlperf_frames = []
    for i, mlperf_spec in enumerate(manifest.mlperf):
        key = f"mlperf[{i}].path"
        with reader.key(key):
            mlperf_frames.append(_read_mlperf(reader, mlperf_spec.path, key,
                                              evidence.mlperf_sets, mlperf_spec.round))
    evidence.mlperf = _concat(mlperf_frames, MLPERF_SCHEMA)

    def served(fmt: Any, parsed: Any, rel: str, i: int) -> pl.DataFrame:
        if not fmt.records_load:
            _require_load(manifest.inference[i].concurrency, table_named("inference").key(i))
        frame: pl.DataFrame = fmt.frame(parsed, run_id=f"inference[{i}]", source_file=rel)
        return frame.with_columns(pl.lit(i, dtype=INFERENCE_SCHEMA["entry"]).alias("entry"))

    evidence.inference = _concat(_entries(
        reader, "inference", [spec.result for spec in manifest.inference], InferenceFormat,
        served), INFERENCE_SCHEMA)
    evidence.power = _concat(_entries(
        reader, "power", [spec.path for spec in manifest.power], PowerFormat,
        lambda fmt, parsed, rel, i: fmt.frame(parsed, source_file=rel)), POWER_SCHEMA)
    storage = []
    for i, storage_spec in enumerate(manifest.storage):
        key = table_named("storage").key(i)
        with reader.key(key):
            storage.append(_read_storage(reader, i, storage_spec, key))
    evidence.storage = _concat(storage, STORAGE_SCHEMA)
    evidence.jobs = _concat([*_entries(
        reader, "jobs", [spec.path for spec in manifest.accounting], AccountingFormat,
        lambda fmt, parsed, rel, i: fmt.frame(parsed, source_file=rel)), *job_frames],
        JOBS_SCHEMA)

    if manifest.audit is not None:
        with reader.key("audit.path"):
            path = reader.bundle.resolve(manifest.audit.path, field="audit.path")
            audit: AuditFormat[Any]
            audit, parsed, rel = reader.read(path, AuditFormat,
                                             table_named("audit_checks").what)
            records, evidence.audit_cluster = audit.checks(parsed, source_file=rel)
            evidence.audit_checks = table(records, AUDIT_SCHEMA)
    if manifest.reliability is not None:
        with reader.key("reliability.incidents"):
            path = reader.bundle.resolve(manifest.reliability.incidents,
                                         field="reliability.incidents")
            log: IncidentFormat[Any]
            log, parsed, rel = reader.read(path, IncidentFormat, table_named("incidents").what)
            evidence.incidents = conform(log.frame(parsed, source_file=rel), INCIDENTS_SCHEMA)
    if manifest.monitoring is not None:
        from cmax.ingest.monitoring.read import read_monitoring

        evidence.monitoring = read_monitoring(
            manifest, lambda rel, key: reader.bundle.resolve(rel, field=key))
    evidence.files = list(reader.files.values())
    return evidence


def _require_load(concurrency: int | None, key: str) -> None:
    """A result that records no load needs the concurrency its ``[[inference]]`` entry
    declares (the claims ledger holds it: cmax.resolve.entry_claims); without one it would
    read as an offline maximum."""
    if concurrency is None:
        entry = key.rsplit(".", 1)[0]
        raise ManifestError(f"{entry}: the result file records no concurrency or request rate",
                            field=f"{entry}.concurrency",
                            expected="the concurrency the benchmark ran at",
                            fix=f"add concurrency = N to {entry} in cmax.toml (aiperf "
                            "--concurrency), or submit profile_export_aiperf.json, which "
                            "records it")


def _concat(frames: list[pl.DataFrame], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    frames = [conform(f, schema) for f in frames]
    return pl.concat(frames, how="vertical") if frames else pl.DataFrame(schema=schema)


def _read_run(reader: BundleReader, i: int, spec: RunSpec, key: str,
              job_frames: list[pl.DataFrame]) -> tuple[dict[str, Any], pl.DataFrame | None]:
    bundle = reader.bundle
    declared = bundle.resolve(spec.log, field=key)
    path, notes = pick_log(declared)
    fmt: RunFormat[Any]
    fmt, parsed, rel = reader.read(path, RunFormat, table_named("runs").what)
    config = llmb_config.beside(path)
    if config is not None:  # llmb-run's record of the job, beside its log
        stated = llmb_config.config_facts(config, reader.rel(config))
        record = reader.files[rel]
        reader.files[rel] = dataclasses.replace(record, facts=(*record.facts, *stated))
    run_id = f"runs[{i}]"
    # what the log states, null where it is silent: the run's declared identity (workload,
    # GPU, scale, precision, framework, container, job id) is the resolved run's, from the
    # claims ledger (cmax.resolve.runs.IDENTITY), never a value of this table
    row: dict[str, Any] = {"run_id": run_id, "entry": i, "source_file": rel}
    request = RunRequest(spec=spec, run_id=run_id, source_file=rel, path=path, key=key,
                         declared={k: getattr(spec, k) for k in CONFIG_KEYS})
    part = fmt.read_run(parsed, request)
    row.update(part.row)
    row["job_id"] = row.get("job_id") or job_of_log(path.name)
    if isinstance(fmt, LlmbSqlite) and not any(
            f["source_file"][0] == rel for f in job_frames if f.height):
        job_frames.append(llmb_jobs_frame(parsed, rel))
    notes.extend(part.notes)
    row["notes"] = "; ".join(notes) if notes else None
    return row, part.steps


def _entries(reader: BundleReader, table: str, paths: list[str], role: type[Any],
             frame: Callable[[Any, Any, str, int], pl.DataFrame]) -> list[pl.DataFrame]:
    """The rows of every file an array-of-tables section names (``[[inference]] result``,
    ``[[power]] path``), each read under its manifest key with a format of ``role``."""
    frames = []
    for i, rel_path in enumerate(paths):
        key = table_named(table).key(i)
        with reader.key(key):
            path = reader.bundle.resolve(rel_path, field=key)
            fmt, parsed, rel = reader.read(path, role, table_named(table).what)
            frames.append(frame(fmt, parsed, rel, i))
    return frames


def _read_storage(reader: BundleReader, i: int, spec: StorageSpec, key: str) -> pl.DataFrame:
    """A ``[[storage]]`` entry's rows: a storage benchmark's result, or the checkpoint events
    of a training log (:mod:`cmax.ingest.checkpoints`), null where the file is silent (what the
    entry declares there is the claims ledger's: :mod:`cmax.resolve.entry_claims`)."""
    from cmax.ingest import checkpoints
    from cmax.ingest.textlines import head_facts

    path = reader.bundle.resolve(spec.result, field=key)
    what = table_named("storage").what
    try:
        fmt, probe = identify(path)
    except EvidenceFormatError as exc:
        raise exc.with_context(expected=what) from None
    run_id = f"storage[{i}]"
    if isinstance(fmt, RunFormat):  # a training log: its checkpoint lines
        # its identity facts (the world size the bandwidth per GPU is counted over): those of
        # its [[runs]] reading when it has one, else the head's, without a second full parse
        known = reader.files.get(reader.rel(probe.path))
        rel = reader.record(probe.path, fmt.id,
                            () if known is not None else tuple(head_facts(probe.path)))
        frame = conform(checkpoints.events(probe.path, run_id=run_id, source_file=rel,
                                           tool=fmt.id), STORAGE_SCHEMA)
    else:
        storage_fmt: StorageFormat[Any]
        storage_fmt, parsed, rel = reader.read(path, StorageFormat, what)
        frame = conform(storage_fmt.frame(parsed, run_id=run_id, source_file=rel),
                        STORAGE_SCHEMA)
    return frame.with_columns(pl.lit(i, dtype=STORAGE_SCHEMA["entry"]).alias("entry"))


def _read_mlperf(reader: BundleReader, relative: str, key: str,
                 sets_out: list[mlperf.MlperfSet], round_: str | None = None) -> pl.DataFrame:
    """An MLPerf result file or tree (benchmark, system, submitter folder), read once.

    The parsed sets go to ``sets_out`` (``Evidence.mlperf_sets``): validation and scoring read
    them instead of re-parsing the MLLOG lines.
    """
    bundle = reader.bundle
    target = bundle.resolve(relative, field=key)
    if not target.is_dir():
        fmt, _ = identify(target)
        if fmt.role == "mlperf-system":
            raise EvidenceFormatError(
                "is an MLPerf system description, which cmax reads with its results, not as an "
                "[[mlperf]] path", file=target, field=key,
                expected="a result_*.txt or a benchmark, system or submitter folder",
                fix="point path at the results (<org>, <org>/results/<system> or its "
                "<benchmark> folder); the system JSON under <org>/systems/ or beside the "
                "benchmark folder is found from there")
        if fmt.role != "mlperf":
            raise EvidenceFormatError(f"file holds {fmt.id}, not an MLPerf result file",
                                      file=target, expected="result_*.txt with :::MLLOG lines",
                                      fix="check the manifest points at the right file")
    sets = mlperf.read_tree(target, root=bundle.root, round_=round_)
    sets_out.extend(sets)
    display: dict[Path, str] = {}
    for s in sets:
        for run in s.runs:
            display[run.path] = reader.record(run.path, "mlperf", recorded_facts(run),
                                              line_count=getattr(run, "line_count", None))
        if s.system is not None:
            reader.record(s.system.path, "mlperf-system-json", recorded_facts(s.system))
    return table(mlperf.mlperf_rows(sets, display), MLPERF_SCHEMA)
