"""``ingest(bundle)`` end to end: a bundle holding one file of every family fills every table;
a declared file that is missing, of the wrong kind or unparseable names the manifest key."""

from __future__ import annotations

import hashlib
import math
import shutil
import tarfile
from pathlib import Path

import polars as pl
import pytest

from cmax.errors import CmaxError, EvidenceFormatError
from cmax.ingest import ingest
from cmax.ingest.evidence import (
    AUDIT_SCHEMA,
    INCIDENTS_SCHEMA,
    MLPERF_SCHEMA,
    NCCL_SCHEMA,
    RUNS_SCHEMA,
    STEPS_SCHEMA,
)
from cmax.resolve.case import resolve
from cmax.submission.bundle import open_bundle
from tests.fakes import FakeReference, manifest_text, reliability_toml
from tests.paths import DATA
from tests.submission.intake.llmb_fakes import make_llmb_db

DATA = DATA / "ingest"

MANIFEST = manifest_text("""
[[runs]]
workload = "Llama3.1-8B"
precision = "FP8"
num_gpus = 8
log = "training/nemo2.log"
seq_len = 8192

[[runs]]
workload = "llama3.1-70b"
precision = "fp8"
num_gpus = 64
log = "training/megatron.log"
gbs = 256

[[runs]]
workload = "deepseek-v3"
precision = "bf16"
num_gpus = 256
log = "training/torchtitan.log"

[[runs]]
workload = "llama3.1-70b"
precision = "fp8"
num_gpus = 64
log = "summaries/dgxc.csv"
experiment = "llama3.1_70b"

[[runs]]
workload = "llama3.1-70b"
precision = "fp8"
num_gpus = 512
log = "summaries/llmb.db"

[[runs]]
workload = "llama3.1-8b"
precision = "fp8"
num_gpus = 8
log = "training/retries"

[[nccl]]
path = "nccl/all_reduce.txt"

[[nccl]]
path = "nccl/more"

[[mlperf]]
path = "mlperf/results/example_h100_64x8/llama31_405b"

[audit]
path = "audit/audit.values.json"
""" + reliability_toml(), interconnect=None)


def build_bundle(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cmax.toml").write_text(MANIFEST)
    files = {
        "training/nemo2.log": "nemo2_llama3.1-8b_fp8.log",
        "training/megatron.log": "megatron_bridge_llama3.1-70b.log",
        "training/torchtitan.log": "torchtitan_deepseek-v3.log",
        "summaries/dgxc.csv": "dgxc_parse_nemo2.csv",
        "nccl/all_reduce.txt": "nccl/all_reduce_1node.txt",
        "nccl/more/a.txt": "nccl/all_gather_2node.txt",
        "nccl/more/b.txt": "nccl/old_format.txt",
        "audit/audit.values.json": "example_audit.values.json",
        "incidents.csv": "incidents.csv",
    }
    for dest, src in files.items():
        (root / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / src, root / dest)
    shutil.copytree(DATA / "mlperf", root / "mlperf")
    make_llmb_db(root / "summaries" / "llmb.db")
    retries = root / "training" / "retries"
    retries.mkdir()
    full = (DATA / "nemo2_llama3.1-8b_fp8.log").read_bytes()
    (retries / "log-pretrain_llama3.1_8b_77_0.out").write_bytes(full[:2000])
    (retries / "log-pretrain_llama3.1_8b_77_1.out").write_bytes(full)
    return root


@pytest.fixture(scope="module")
def evidence(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = build_bundle(tmp_path_factory.mktemp("bundle") / "b")
    with open_bundle(root) as bundle:
        yield ingest(bundle)


def test_tables_have_canonical_schemas(evidence) -> None:  # type: ignore[no-untyped-def]
    assert evidence.runs.schema == pl.Schema(RUNS_SCHEMA)
    assert evidence.steps.schema == pl.Schema(STEPS_SCHEMA)
    assert evidence.nccl.schema == pl.Schema(NCCL_SCHEMA)
    assert evidence.mlperf.schema == pl.Schema(MLPERF_SCHEMA)
    assert evidence.audit_checks.schema == pl.Schema(AUDIT_SCHEMA)
    assert evidence.incidents.schema == pl.Schema(INCIDENTS_SCHEMA)


def test_runs_table(evidence) -> None:  # type: ignore[no-untyped-def]
    runs = {r["run_id"]: r for r in evidence.runs.iter_rows(named=True)}
    assert list(runs) == [f"runs[{i}]" for i in range(6)]
    nemo = runs["runs[0]"]
    # the table holds what the log states: the declared identity is the claims ledger's
    # (tests/resolve/test_run_identity.py), never a column here
    assert not {"workload", "model", "gpu", "num_gpus", "precision", "container"} & set(nemo)
    assert nemo["framework"] == "nemo2" and nemo["status"] == "success"
    assert nemo["max_iteration"] == 49 and nemo["gbs"] == 128  # gbs from the log
    assert nemo["seq_len"] is None  # only cmax.toml states it (8192)
    mb = runs["runs[1]"]
    # what the log prints (GBS 128, against the manifest's 256: a contradiction the claims
    # ledger and consistency.manifest-vs-log hold, never written over the log's value)
    assert mb["gbs"] == 128 and mb["tp"] == 4 and mb["pp"] == 8
    assert mb["framework"] == "megatron-bridge" and mb["source_file"] == "training/megatron.log"
    dgxc = runs["runs[3]"]
    assert dgxc["status"] == "incomplete" and dgxc["reported_step_time_s"] is None
    # the parallel config its experiment's name states (..._tp4_pp8_cp1_vp5_mbs1_gbs128_...)
    assert (dgxc["gbs"], dgxc["tp"], dgxc["pp"], dgxc["vp"]) == (128, 4, 8, 5)
    assert dgxc["max_iteration"] == 30
    llmb = runs["runs[4]"]
    assert llmb["status"] == "success" and llmb["reported_step_time_s"] == 10.21
    assert llmb["reported_tflops_per_gpu"] == 722.4 and "superseded" in llmb["notes"]
    retry = runs["runs[5]"]
    assert retry["source_file"] == "training/retries/log-pretrain_llama3.1_8b_77_1.out"
    assert "highest retry" in retry["notes"]


def test_steps_table(evidence) -> None:  # type: ignore[no-untyped-def]
    steps = evidence.steps
    assert steps.group_by("run_id").len().sort("run_id").rows() == [
        ("runs[0]", 50), ("runs[1]", 50), ("runs[2]", 60), ("runs[5]", 50)]
    first = steps.filter(pl.col("run_id") == "runs[0]").row(0, named=True)
    assert (first["iteration"], first["step_time_s"], first["line"]) == (0, 30.0, 4)
    assert first["source_file"] == "training/nemo2.log"
    titan = steps.filter(pl.col("run_id") == "runs[2]")
    # TorchTitan prints tokens/s/GPU and no step time: the table holds what the log prints
    assert titan["step_time_s"].null_count() == 60 and titan["tokens_per_s_per_gpu"][5] == 1842
    # the case derives it: no gbs/seq_len in this run's manifest entry, the log's "Training
    # starts" line gives them (the log's), the GPU count is the manifest's 256 (declared)
    run = resolve(evidence, FakeReference()).run("runs[2]")
    assert run is not None and run.step_time_derived is not None
    assert run.steps["step_time_s"][5] == pytest.approx(2048 * 4096 / 256 / 1842)
    assert not any(math.isnan(v) for v in run.steps["step_time_s"].to_list())
    derived = run.step_time_derived
    assert (derived.gbs.value, derived.gbs.status, derived.seq_len.value) == (
        2048, "corroborated", 4096)
    assert (derived.num_gpus.value, derived.num_gpus.status) == (256, "declared")
    assert derived.declared() == ["GPU count"]


def test_other_tables(evidence) -> None:  # type: ignore[no-untyped-def]
    nccl = evidence.nccl
    assert sorted(nccl["run_id"].unique().to_list()) == ["nccl[0]", "nccl[1]"]
    assert nccl.filter(pl.col("run_id") == "nccl[1]")["collective"].unique().sort().to_list() == [
        "all_gather", "all_reduce"]
    mlperf = evidence.mlperf
    assert mlperf["run_id"].to_list() == ["result_0.txt", "result_1.txt", "result_2.txt"]
    assert mlperf["status"].to_list() == ["success", "failed", "success"]
    assert mlperf["num_gpus"].unique().to_list() == [512]  # systems/example_h100_64x8.json
    assert mlperf["time_to_train_min"][0] == pytest.approx(100.0)
    assert evidence.audit_cluster == "example-h100-a"
    counts = dict(evidence.audit_checks.group_by("status").len().rows())
    assert counts == {"PASS": 41, "WARNING": 8, "FAIL": 2, "SKIPPED": 8}
    assert set(evidence.audit_checks["category"].unique()) <= {
        "access", "security", "gpu-stack", "profiling", "monitoring", "networking",
        "software", "containers", "health", "storage", "scheduler"}
    assert evidence.incidents.height == 4 and evidence.incidents["line"].to_list() == [2, 3, 4, 5]


def test_evidence_files(evidence) -> None:  # type: ignore[no-untyped-def]
    files = {f.path: f for f in evidence.files}
    assert "training/nemo2.log" in files and files["training/nemo2.log"].kind == "nemo2"
    data = (DATA / "nemo2_llama3.1-8b_fp8.log").read_bytes()
    assert files["training/nemo2.log"].sha256 == hashlib.sha256(data).hexdigest()
    assert files["training/nemo2.log"].size_bytes == len(data)
    assert "mlperf/systems/example_h100_64x8.json" in files
    assert "training/retries/log-pretrain_llama3.1_8b_77_0.out" not in files
    assert files["summaries/llmb.db"].kind == "llmb-sqlite"
    assert len(files) == len(set(files))


def test_evidence_files_carry_identity_facts(evidence) -> None:  # type: ignore[no-untyped-def]
    """Each format's facts reach EvidenceFile.facts, so no later stage reopens the file."""
    files = {f.path: f for f in evidence.files}

    def facts(path: str, kind: str) -> list[str]:
        return [f.value for f in files[path].facts if f.kind == kind]

    audit = "audit/audit.values.json"
    assert facts(audit, "cluster") == ["example-h100-a"]
    assert facts(audit, "gpu") == ["NVIDIA-H100-80GB-HBM3", "H100"]
    assert facts(audit, "node_count") == ["16"]
    assert facts(audit, "host") == ["h100a-gpu-001"]  # the worker the collector read
    assert facts(audit, "service_host") == ["h100a-login-01"]  # where it ran: no compute host
    assert facts("incidents.csv", "host") == ["node-017", "node-002", "node-040", "node-033"]
    assert [f.line for f in files["incidents.csv"].facts][:2] == [2, 3]
    dgxc = "summaries/dgxc.csv"
    assert facts(dgxc, "precision") == ["fp8", "fp8"]
    assert facts(dgxc, "gpu_count") == ["8", "64"]
    assert facts(dgxc, "model")[0] == "llama3.1_8b"
    assert "tp4" not in facts(dgxc, "parallel") and "tp=4" in facts(dgxc, "parallel")
    llmb = files["summaries/llmb.db"].facts
    assert {f.kind for f in llmb} >= {"experiment", "precision", "gpu_count"}
    assert all(f.where and f.where.startswith("jobs row") for f in llmb)


def test_evidence_files_carry_line_counts(evidence) -> None:  # type: ignore[no-untyped-def]
    files = {f.path: f for f in evidence.files}
    for path, src in (("incidents.csv", "incidents.csv"),
                      ("audit/audit.values.json", "example_audit.values.json"),
                      ("summaries/dgxc.csv", "dgxc_parse_nemo2.csv"),
                      ("nccl/all_reduce.txt", "nccl/all_reduce_1node.txt")):
        assert files[path].line_count == len((DATA / src).read_text().splitlines()), path
    assert files["summaries/llmb.db"].line_count is None  # binary
    mlperf = [f for f in evidence.files if f.kind == "mlperf"]
    assert mlperf and all(f.line_count for f in mlperf)


def test_wrong_format_for_key_keeps_class_and_fix(tmp_path: Path) -> None:
    root = _minimal(tmp_path, '[[runs]]\nworkload="a"\nprecision="fp8"\nnum_gpus=8\n'
                              'log="x.log"\n')
    (root / "x.log").write_text("just some words\n")
    with open_bundle(root) as bundle, pytest.raises(EvidenceFormatError) as info:
        ingest(bundle)
    assert info.value.field == "runs[0].log" and info.value.file == "x.log"
    assert info.value.fix is not None and "`cmax docs formats`" in info.value.fix
    assert info.value.expected == "a training log or DGXC/llmb-run summary"


def test_archive_bundle_ingests_the_same(tmp_path: Path) -> None:
    root = build_bundle(tmp_path / "bundle")
    archive = tmp_path / "bundle.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="bundle")
    with open_bundle(archive) as bundle:
        ev = ingest(bundle)
    assert ev.steps.height == 210 and ev.runs.height == 6
    assert ev.runs["source_file"][0] == "training/nemo2.log"


def _minimal(tmp_path: Path, body: str) -> Path:
    head = MANIFEST.split("[[runs]]")[0]
    (tmp_path / "cmax.toml").write_text(head + body)
    return tmp_path


@pytest.mark.parametrize(("body", "files", "field", "message"), [
    ('[[runs]]\nworkload="a"\nprecision="fp8"\nnum_gpus=8\nlog="missing.log"\n', {},
     "runs[0].log", "not in the bundle"),
    ('[[runs]]\nworkload="a"\nprecision="fp8"\nnum_gpus=8\nlog="x.log"\n',
     {"x.log": "incidents.csv"}, "runs[0].log", "not a training log"),
    ('[[runs]]\nworkload="a"\nprecision="fp8"\nnum_gpus=8\nlog="x.log"\n',
     {"x.log": None}, "runs[0].log", "unrecognised evidence format"),
    ('[[nccl]]\npath="n.txt"\n', {"n.txt": "nemo2_llama3.1-8b_fp8.log"}, "nccl[0].path",
     "not nccl-tests"),
    ('[audit]\npath="a.json"\n', {"a.json": "example_audit.expected_report.json"},
     "audit.path", "no known shape"),
    ('[reliability]\nincidents="i.csv"\nperiod_start=2026-07-01\nperiod_end=2026-09-30\n'
     'gpus_in_service=512\n', {"i.csv": "BAD"}, "reliability.incidents", "planned"),
    ('[[runs]]\nworkload="a"\nprecision="fp8"\nnum_gpus=8\nlog="s.csv"\n',
     {"s.csv": "dgxc_parse_nemo2.csv"}, "runs[0].log", "holds 2 experiments"),
])
def test_declared_file_errors_name_key_and_file(
        tmp_path: Path, body: str, files: dict[str, str | None], field: str, message: str) -> None:
    root = _minimal(tmp_path, body)
    for name, src in files.items():
        if src is None:
            (root / name).write_text("just some words\n")
        elif src == "BAD":
            (root / name).write_text("start,end,node,gpu,category,planned\n"
                                     "2026-07-01T00:00Z,,n1,0,GPU,sometimes\n")
        else:
            shutil.copy(DATA / src, root / name)
    with open_bundle(root) as bundle, pytest.raises(CmaxError) as info:
        ingest(bundle)
    err = info.value
    assert err.field is not None and err.field.startswith(field)
    assert message in err.one_line()
    if files:
        assert err.file is not None and Path(err.file).name == next(iter(files))


def test_a_declaration_against_the_summary_stays_in_the_ledger(tmp_path: Path) -> None:
    """cmax.toml declares gbs 256 for a DGXC summary whose experiment's name says gbs128: the
    runs table holds 128, the ledger the contradicted declaration, and validation says so."""
    from cmax.pipeline import load

    (tmp_path / "summaries").mkdir()
    shutil.copy(DATA / "dgxc_parse_nemo2.csv", tmp_path / "summaries" / "dgxc.csv")
    (tmp_path / "cmax.toml").write_text(manifest_text("""
[[runs]]
workload = "llama3.1-8b"
precision = "fp8"
num_gpus = 8
log = "summaries/dgxc.csv"
experiment = "llama3.1_8b"
gbs = 256
"""), encoding="utf-8")
    with load(tmp_path) as loaded:
        row = loaded.case.runs.row(0, named=True)
        claim = loaded.case.claims.get("runs[0]", "gbs")
        rules = {f.rule for f in loaded.findings}
    assert row["gbs"] == 128
    assert claim is not None and claim.value == "256" and claim.status == "contradicted"
    assert "consistency.manifest-vs-log" in rules
