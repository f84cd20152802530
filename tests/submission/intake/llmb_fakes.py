"""llmb-run packages in llmb-run's own formats, built small for tests.

- ``llmb-config_<jobid>.yaml``: the keys, order and value types of
  NVIDIA/exemplar-performance:cli/llmb-run/example_llmb_config.yaml@e249aa3 (job_info with the
  ``user`` login, workload_info, model_info, cluster_info, container_info.images in enroot's
  ``registry#image`` form, job_config), plus the job_config keys the writer at that commit adds
  (``strong_scaling``, ``mbridge_args``: cli/llmb-run/src/llmb_run/run_config.py
  ``create_llmb_config``).
- layout ``<workload>/experiments/<exp>/<exp>_<ts>/<exp>/`` with the config beside
  ``log-<exp>_<jobid>_<retry>.out`` (field-2026-11.md §1.2, from llama3.1/README.md@841f546).
- the archive: a ``tarfile`` ``w|`` stream into a level-5 ``zstandard`` compressor under one top
  folder ``llmb-archive-<ts>/`` (cli/llmb-run/src/llmb_run/archive.py@e249aa3
  ``create_tar_zst``), named ``llmb-archive_<version>_<ts>.tar.zst``.
- the logs are tests/data/ingest/megatron_bridge_llama3.1-70b.log (Megatron-Bridge's
  iteration lines, see tests/data/ingest).
- the job-history database (:func:`make_llmb_db`): SQLite table ``jobs`` with llmb-run's
  columns (research dgxc.md §3.3, as cmax/ingest/formats/llmb_sqlite.py reads them).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

from tests.paths import DATA

LOG = DATA / "ingest" / "megatron_bridge_llama3.1-70b.log"
LOGIN = "jdoe-private-login"
TIMESTAMP = "20261101T120000Z"
STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\]")  # Megatron-Bridge's line stamp


@dataclass
class Job:
    job_id: int = 3913022
    workload: str = "pretrain_llama3.1"
    model_name: str = "llama3.1"
    model_size: str = "70b"
    dtype: str = "fp8"
    scale: int = 64
    gpu_type: str = "h100"
    retries: tuple[int, ...] = (0,)
    proxy: bool = False
    profile_enabled: bool = False
    env_overrides: dict[str, str] = field(default_factory=dict)
    model_overrides: dict[str, int] = field(default_factory=dict)
    mbridge_args: tuple[str, ...] = ()
    launch_time: str = "2026-10-30T21:05:18.298517"
    image: str = "nvcr.io#nvidia/nemo:26.06.01"
    log: bytes | None = None  # the job's log, else the package's


def _mapping(values: dict[str, object]) -> str:
    if not values:
        return " {}"
    return "".join(f"\n    {k}: {v}" for k, v in values.items())


def config_text(job: Job) -> str:
    return f"""# This file is automatically created in the experiment's folder upon job launch
# It contains metadata about the job, workload, model, cluster, and container
job_info:
  job_id: '{job.job_id}'
  user: {LOGIN}
  launch_time: '{job.launch_time}'
workload_info:
  framework: megatron_bridge
  gsw_version: '26.08'
  fw_version: 26.06.01
  workload_type: pretrain
  synthetic_dataset: true
model_info:
  model_name: {job.model_name}
  model_size: {job.model_size}
  dtype: {job.dtype}
  scale: {job.scale}
  gpu_type: {job.gpu_type}
cluster_info:
  cluster_name: cluster-1
  gpus_per_node: 8
  llmb_install: /lustre/fsw/{LOGIN}/llmb
  llmb_repo: /lustre/fsw/{LOGIN}/repo
  slurm_account: account_name
  slurm_gpu_partition: slurm_partition
container_info:
  images:
  - {job.image}
job_config:
  profile_enabled: {str(job.profile_enabled).lower()}
  proxy: {str(job.proxy).lower()}
  env_overrides:{_mapping(dict(job.env_overrides))}
  model_overrides:{_mapping(dict(job.model_overrides))}
  strong_scaling: false
  mbridge_args:{"".join(f"{chr(10)}  - {a}" for a in job.mbridge_args) or " []"}
"""


def slower_log(factor: float) -> bytes:
    """LOG as the same job would print it running ``factor`` times slower: every step time
    (both lines, kept to the log's 0.1 s), TFLOP/s and every stamp's distance from the first
    stamp scaled alike."""
    text = LOG.read_text(encoding="utf-8")
    first = dt.datetime.fromisoformat(STAMP.findall(text)[0])

    def stamp(m: re.Match[str]) -> str:
        at = first + (dt.datetime.fromisoformat(m[1]) - first) * factor
        return f"[{at.replace(microsecond=0).isoformat(sep=' ')}]"

    text = STAMP.sub(stamp, text)
    text = re.sub(r"(elapsed time per iteration \(ms\): )([\d.]+)",
                  lambda m: f"{m[1]}{round(float(m[2]) * factor, -2):.1f}", text)
    text = re.sub(r"(Step Time : )([\d.]+)s GPU utilization: ([\d.]+)",
                  lambda m: f"{m[1]}{round(float(m[2]) * factor, 1):.2f}s GPU utilization: "
                            f"{float(m[3]) / factor:.1f}", text)
    return text.encode()


def experiment_dir(root: Path, job: Job) -> Path:
    exp = f"{job.workload}_{job.model_size}_{job.dtype}_gpus{job.scale}"
    return root / job.workload / "experiments" / exp / f"{exp}_1761858318" / exp


def write_jobs(root: Path, jobs: list[Job], *, log: bytes | None = None) -> Path:
    """The experiments of ``jobs`` under ``root`` (a workloads folder or an archive top)."""
    default = LOG.read_bytes() if log is None else log
    for job in jobs:
        data = default if job.log is None else job.log
        folder = experiment_dir(root, job)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"llmb-config_{job.job_id}.yaml").write_text(config_text(job))
        exp = folder.name
        for retry in job.retries:
            (folder / f"log-{exp}_{job.job_id}_{retry}.out").write_bytes(
                data if retry == job.retries[-1] else b"0: srun: error: node failure\n")
        (folder / f"sbatch_{exp}.out").write_text(f"Submitted batch job {job.job_id}\n")
    return root


def install(root: Path, jobs: list[Job]) -> Path:
    """An $LLMB_INSTALL: workloads/ plus the job database llmb-run keeps in .llmb/."""
    write_jobs(root / "workloads", jobs)
    (root / ".llmb").mkdir(parents=True)
    (root / ".llmb" / "jobs.sqlite3").write_bytes(b"SQLite format 3\x00")
    return root


def archive(path: Path, jobs: list[Job], *, staging: Path,
            links: dict[str, str] | None = None, log: bytes | None = None) -> Path:
    """What ``llmb-run archive`` writes for an install holding ``jobs``; ``links``: symbolic
    links made in the experiments tree first (path under the workloads folder -> link text).
    The members are chosen as archive.py@e249aa3 ``build_archive_file_list`` chooses them:
    ``os.walk`` without following links, every file plus every linked folder, each added on
    its own (``recursive=False``) with ``dereference=False``, so a link is stored as a link."""
    write_jobs(staging, jobs, log=log)
    for where, text in (links or {}).items():
        (staging / where).parent.mkdir(parents=True, exist_ok=True)
        (staging / where).symlink_to(text)
    entries: list[Path] = []
    for folder, dirs, files in os.walk(staging, followlinks=False):
        linked = [d for d in dirs if (Path(folder) / d).is_symlink()]
        entries += [Path(folder) / name for name in (*files, *linked)]
    top = f"llmb-archive-{TIMESTAMP}"
    compressor = zstandard.ZstdCompressor(level=5)
    with path.open("wb") as raw, compressor.stream_writer(raw) as stream, \
            tarfile.open(fileobj=stream, mode="w|", dereference=False) as tar:
        root_info = tarfile.TarInfo(name=f"{top}/")
        root_info.type = tarfile.DIRTYPE
        root_info.mode = 0o755
        tar.addfile(root_info)
        for source in sorted(entries, key=lambda p: p.relative_to(staging).as_posix()):
            tar.add(source, arcname=f"{top}/{source.relative_to(staging).as_posix()}",
                    recursive=False)
    return path


def make_llmb_db(path: Path) -> Path:
    """An llmb-run job-history database with the documented ``jobs`` columns."""
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE jobs (job_id TEXT, workload_key TEXT, model_size TEXT, dtype TEXT, "
        "scale INTEGER, profile_enabled INTEGER, slurm_state TEXT, elapsed TEXT, "
        "node_list TEXT, train_step_time_seconds REAL, tflops_per_gpu REAL, "
        "tokens_per_sec_per_gpu REAL, perf_parse_status TEXT)")
    rows = [
        ("1001", "pretrain_llama3.1", "70b", "fp8", 512, 0, "FAILED", "00:10:00", "n[1-64]",
         None, None, None, "incomplete"),
        ("1017", "pretrain_llama3.1", "70b", "fp8", 512, 0, "COMPLETED", "00:21:00",
         "n[1-64]", 10.21, 722.4, None, "success"),
        ("1002", "pretrain_llama3.1", "70b", "bf16", 512, 0, "COMPLETED", "00:30:00",
         "n[1-64]", 15.1, 488.0, None, "success"),
        ("1003", "pretrain_nemotronh", "56b", "fp8", 512, 0, "COMPLETED", "00:30:00",
         "n[1-64]", None, None, None, "no_log"),
    ]
    con.executemany("INSERT INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    con.commit()
    con.close()
    return path
