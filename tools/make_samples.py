"""Generate the sample bundles that ship with cmax (``samples/``) for ``cmax demo``.

Three invented H100 providers of clearly different quality, each a complete bundle in the real
evidence formats (NeMo 2 training logs as DGXC v25.05 recipes print them, nccl-tests stdout,
ClusterMAX ``audit.values.json``, an incident CSV):

* Aurora Compute: at the EOS reference (step times within ~1 %), strong fabric, few incidents.
* Borealis Cloud: ~10 % slower steps, weaker networking, more incidents.
* Cinder GPU: near-reference steps but failing audit checks (a weak Kubernetes cluster) and
  many incidents.

and one invented GB200 NVL72 provider beside them, so ``cmax demo`` compares GPU generations
on $ per million training tokens:

* Zenith Racks: 8 GB200 NVL72 racks, 16 of each rack's 18 compute trays in the job (512 GPUs),
  steps ~1.5 % slower than NVIDIA's GB200 reference, an in-rack (MNNVL) all_reduce at 99 % of
  a published full-rack run and a cross-rack one at the 4 x 400 Gb/s network's rate, more
  interruptions per GPU than the H100 fleets (a younger platform) and no ClusterMAX audit
  (none published for a GB200 cluster: the examples are H100 ones).

and one serving provider, Halcyon Serve: two H200 nodes rated on serving results only
(``trtllm-bench --report_json`` offline runs of GPT-OSS-120B and Llama 3.3 70B FP8 at
1,024/1,024 tokens within 3 % of TensorRT-LLM's published per-GPU figures, a ``vllm bench
serve`` concurrency sweep, an incident log).

The reference step times are DGXC v25.05.x "Expected Performance" numbers (H100: Llama 3.1
405B BF16/FP8 and Grok-1 314B FP8 at 512 GPUs; GB200: Llama 3.1 405B BF16 9.508 s and FP8
6.244 s at 512 GPUs, NVIDIA/dgxc-benchmarking llama3.1/README.md @ v25.05..v25.05.05, the rows
``dgxc-v25.05-llama3.1-405b-gb200-*-512`` of reference/baselines.csv); the per-sample FLOPs
constants are the ones the DGXC READMEs print. The in-rack all_reduce scales the rows of the
72-GPU GB200 NVL72 run in coreweave/nccl-tests pull request #43 (834.57 GB/s at 8 GiB); the
cross-rack one sits just under the derived 184 GB/s per-tray network bar
(reference/network.toml ``gb200-ib-ndr-4x400-ring``). Deterministic: the same script gives the
same bytes. Run from the repo root: ``python tools/make_samples.py`` (the two audit examples
are read from tests/data/ingest).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "samples"
AUDITS = ROOT / "tests" / "data" / "ingest"  # the two example ClusterMAX audits

NUM_GPUS = 512
NODES = 64


@dataclass(frozen=True)
class Workload:
    workload: str
    precision: str
    ref_step_s: float
    gbs: int
    seq_len: int
    flops_per_sample: float
    tp: int
    pp: int
    cp: int
    vp: int
    ep: int | None
    container: str


WORKLOADS = [
    Workload("llama3.1-405b", "bf16", 19.810, 256, 8192, 2.17e16, 8, 8, 2, 8, None,
             "nvcr.io/nvidia/nemo:25.04.01"),
    Workload("llama3.1-405b", "fp8", 13.020, 256, 8192, 2.17e16, 8, 8, 2, 8, None,
             "nvcr.io/nvidia/nemo:25.04.01"),
    Workload("grok1-314b", "fp8", 13.433, 1024, 8192, 4.27e15, 4, 8, 2, 8, 8,
             "nvcr.io/nvidia/nemo:25.04.00"),
]


@dataclass(frozen=True)
class Provider:
    slug: str
    name: str
    cluster: str
    region: str
    speed: float          # provider step time = reference / speed
    jitter: float         # relative std of step times
    nccl_peak: float      # asymptotic all_reduce busbw, GB/s
    unexpected: int       # unexpected interruptions in the quarter
    planned: int
    mean_outage_h: float
    max_outage_h: float   # hot spares: Aurora swaps a failed node within its SLA allowance
    price: float
    audit: str
    declarations: dict[str, bool]
    seed: int


PROVIDERS = [
    Provider("aurora-compute", "Aurora Compute", "aurora-h100-east", "us-east-1",
             1.004, 0.008, 372.0, 14, 3, 0.4, 0.7, 2.45, "example_audit.values.json",
             {"soc2_type2": True, "iso27001": True, "tenant_network_isolation": True,
              "vulnerability_patch_process": True, "self_service_provisioning": True,
              "published_burn_in": True, "no_egress_fees": True, "managed_slurm": True,
              "sso_idp": True, "parallel_filesystem": True, "object_storage": True,
              "local_nvme_cache": True, "acs_disabled": True, "gpudirect_rdma": True,
              "sharp": True, "nccl_monitoring": True, "24x7_support": True,
              "support_response_15min": True, "passive_health_checks": True,
              "active_health_checks": True, "grafana_dashboards": True, "dcgm_metrics": True,
              "custom_alerts": True, "flexible_terms": True, "no_billing_during_outage": True,
              "contract_extension": True, "nvidia_ncp": True, "schedmd_partner": True,
              "on_demand": True, "capacity_blocks": True, "current_skus": True}, 11),
    Provider("borealis-cloud", "Borealis Cloud", "borealis-h100-b", "eu-north-1",
             0.900, 0.015, 298.0, 27, 4, 3.0, 48.0, 2.25, "example_audit.values.json",
             {"soc2_type2": True, "iso27001": False, "tenant_network_isolation": True,
              "self_service_provisioning": True, "managed_slurm": True,
              "parallel_filesystem": True, "object_storage": True, "acs_disabled": True,
              "gpudirect_rdma": True, "24x7_support": True, "passive_health_checks": True,
              "dcgm_metrics": True, "flexible_terms": True, "on_demand": True,
              "current_skus": True}, 22),
    Provider("cinder-gpu", "Cinder GPU", "cinder-h100-k8s", "us-central",
             0.985, 0.020, 355.0, 96, 9, 5.0, 72.0, 1.95, "example_audit_weak.values.json",
             {"soc2_type2": False, "iso27001": False, "managed_kubernetes": True,
              "object_storage": True, "on_demand": True}, 33),
]


# --- the GB200 NVL72 sample -------------------------------------------------------------------

GB200_WORKLOADS = [  # DGXC v25.05 GB200 recipe: TP4 PP8 CP2 VP8, GBS 256, MBS 1
    Workload("llama3.1-405b", "bf16", 9.508, 256, 8192, 2.17e16, 4, 8, 2, 8, None,
             "nvcr.io/nvidia/nemo:25.04.01"),
    Workload("llama3.1-405b", "fp8", 6.244, 256, 8192, 2.17e16, 4, 8, 2, 8, None,
             "nvcr.io/nvidia/nemo:25.04.01"),
]
RACKS = 8
TRAYS_IN_JOB = 16     # of 18 per rack: two spare trays per rack, as NVL72 operators keep
TRAYS_PER_RACK = 18
GPUS_PER_TRAY = 4
# coreweave/nccl-tests PR #43, a full GB200 NVL72 rack (72 ranks): out-of-place and in-place
# busbw at 512 MiB .. 8 GiB as published
NVL72_RACK_BUSBW = [(536870912, 586.06, 576.74), (1073741824, 681.17, 724.06),
                    (2147483648, 757.78, 773.62), (4294967296, 839.16, 835.32),
                    (8589934592, 834.57, 846.82)]

GB200 = Provider(
    "zenith-nvl72", "Zenith Racks", "zenith-gb200", "us-south-1",
    0.985, 0.010, 181.0, 41, 4, 2.0, 30.0, 4.20, "",
    {"soc2_type2": True, "tenant_network_isolation": True, "self_service_provisioning": True,
     "managed_slurm": True, "parallel_filesystem": True, "object_storage": True,
     "gpudirect_rdma": True, "24x7_support": True, "passive_health_checks": True,
     "active_health_checks": True, "dcgm_metrics": True, "nvidia_ncp": True,
     "capacity_blocks": True, "current_skus": True}, 44)


def tray_host(p: Provider, rack: int, tray: int) -> str:
    """Rack and tray in the host name, as NVL72 operators name them (cmax reads the rack)."""
    return f"{p.cluster}-rack{rack:02d}-tray{tray:02d}"


def gb200_nccl_header(command: str, min_bytes: int, max_bytes: int) -> list[str]:
    return [
        f"root@{GB200.cluster}-login-0:~# {command}",
        "# nccl-tests version 2.17.6 nccl-headers=22703 nccl-library=22703",
        "# Collective test starting: all_reduce_perf",
        f"# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: 2(factor) "
        "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]


def gb200_device_lines(p: Provider, hosts: list[str]) -> list[str]:
    lines = []
    for rank in range(len(hosts) * GPUS_PER_TRAY):
        host, dev = hosts[rank // GPUS_PER_TRAY], rank % GPUS_PER_TRAY
        lines.append(f"#  Rank {rank:3d} Group  0 Pid {14000 + rank:6d} on {host} device  {dev} "
                     f"[{0x0001 + 8 * (dev // 2):04x}:01:00] NVIDIA GB200")
    return lines


def gb200_table(rows: list[tuple[int, float, float]], ranks: int) -> list[str]:
    """Data rows from target busbw per half, with algbw and time by nccl-tests' arithmetic."""
    factor = 2 * (ranks - 1) / ranks
    out = [
        "#",
        "#                                                              out-of-place"
        "                       in-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
        "      (us)  (GB/s)  (GB/s)",
    ]
    total = 0.0
    for size, out_bus, in_bus in rows:
        cells = []
        for bus in (out_bus, in_bus):
            alg = bus / factor
            cells.append(f"{size / alg / 1e3:8.1f} {alg:7.2f} {bus:7.2f}      0")
        total += out_bus
        out.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  " + "  ".join(cells))
    out += ["# Out of bounds values : 0 OK",
            f"# Avg bus bandwidth    : {total / len(rows):.3f}", "#"]
    return out


def gb200_rack_nccl(p: Provider) -> str:
    """A full NVL72 rack (18 trays, 72 GPUs) over MNNVL, at 99 % of the published run, with
    NCCL's MNNVL line per rank (one fabric UUID and clique: one NVLink domain)."""
    hosts = [tray_host(p, 1, t) for t in range(1, TRAYS_PER_RACK + 1)]
    ranks = len(hosts) * GPUS_PER_TRAY
    lines = gb200_nccl_header(f"srun --mpi=pmix -N {len(hosts)} --ntasks-per-node=4 "
                              "/opt/nccl-tests/build/all_reduce_perf -b 512M -e 8G -f 2 -g 1",
                              536870912, 8589934592)
    lines += gb200_device_lines(p, hosts)
    lines.append("NCCL version 2.27.3+cuda12.9")
    for rank in range(ranks):
        host, dev = hosts[rank // GPUS_PER_TRAY], rank % GPUS_PER_TRAY
        lines.append(f"{host}:{14000 + rank}:{14100 + rank} [{dev}] NCCL INFO MNNVL busId "
                     f"0x{0x801000 + 0x100000 * (dev % 2) + 0x8000000 * (dev // 2):x} "
                     "fabric UUID 5a1f0c3e9b7d2a64.1c8e4f7a2b3d9e05 cliqueId 0x7ffe state 3 "
                     "healthMask 0xff")
    rows = [(size, round(o * 0.99, 2), round(i * 0.99, 2)) for size, o, i in NVL72_RACK_BUSBW]
    return "\n".join(lines + gb200_table(rows, ranks)) + "\n"


def gb200_fabric_nccl(p: Provider) -> str:
    """The job's 512 GPUs across 8 racks: collectives cross the 4 x 400 Gb/s network, so the
    large-message busbw rises to the provider's network rate (~181 GB/s at 8 GiB)."""
    hosts = [tray_host(p, r, t) for r in range(1, RACKS + 1) for t in range(1, TRAYS_IN_JOB + 1)]
    ranks = len(hosts) * GPUS_PER_TRAY
    lines = gb200_nccl_header(f"srun --mpi=pmix -N {len(hosts)} --ntasks-per-node=4 "
                              "/opt/nccl-tests/build/all_reduce_perf -b 512M -e 8G -f 2 -g 1",
                              536870912, 8589934592)
    lines += gb200_device_lines(p, hosts)
    lines.append("NCCL version 2.27.3+cuda12.9")
    rows = []
    size = 536870912
    while size <= 8589934592:
        bus = p.nccl_peak * size / (size + 96 * 1024 * 1024)
        rows.append((size, round(bus, 2), round(bus * 0.997, 2)))
        size *= 2
    return "\n".join(lines + gb200_table(rows, ranks)) + "\n"


def gb200_manifest(p: Provider) -> str:
    return f"""# Sample bundle shipped with cmax (invented provider, realistic evidence): GB200.
# 8 racks x 18 compute trays x 4 GPUs; the training job ran on 16 trays of each rack (512 GPUs),
# the in-rack all_reduce on all 18 trays of rack 1. No ClusterMAX audit (none published for GB200).
[provider]
name = "{p.name}"
cluster = "{p.cluster}"
region = "{p.region}"

[system]
gpu = "gb200"
nodes = {RACKS * TRAYS_PER_RACK}
gpus_per_node = {GPUS_PER_TRAY}
interconnect = "infiniband-ndr-4x400"

[benchmark]
date = 2026-09-14
reference = "latest"

{runs_toml(GB200_WORKLOADS)}
[[nccl]]
path = "nccl/all_reduce_perf_nvl72_rack01.txt"

[[nccl]]
path = "nccl/all_reduce_perf_{RACKS}racks.txt"

# Storage: the checkpoints the bf16 run saved (NeMo 2 "Global Checkpoint Save" lines) and an
# MLPerf Storage v3.0 checkpointing run of the same model on the cluster's file system.
[[storage]]
result = "training/llama3.1-405b_bf16_{NUM_GPUS}.log"
model = "llama3.1-405b"
gpus = {NUM_GPUS}

[[storage]]
result = "{GB200_STORAGE_SUMMARY}"
{terms_toml(p, RACKS * TRAYS_PER_RACK * GPUS_PER_TRAY, 99.5)}"""


# Zenith's checkpoint evidence: the blocking save of each NeMo 2 checkpoint of the bf16 405B
# run (s, at iterations 24 and 49) and an MLPerf Storage v3.0 llama3-405b checkpointing run at
# the closed division's 512 processes (save and load GiB/s): below the v3.0 medians (156 GiB/s,
# 0.305 GiB/s per GPU), as a parallel file system sized for training data rather than 5 TiB
# bursts would be.
GB200_SAVES_S = ((24, 40.214), (49, 39.587))
GB200_STORAGE_SUMMARY = ("storage/mlperf_storage_v3.0/checkpointing/llama3-405b/"
                         "20260912_101500/summary.json")


def with_checkpoints(log: str, saves: tuple[tuple[int, float], ...]) -> str:
    """A NeMo 2 log with the checkpoint lines NeMo prints after an async save's blocking part
    (``Global Checkpoint Save``, NVIDIA/dgxc-benchmarking recipe READMEs) after the given
    iterations."""
    out = []
    for line in log.splitlines():
        out.append(line)
        for it, seconds in saves:
            if line.startswith(f"Training epoch 0, iteration {it}/"):
                after = 20 * it  # seconds since 08:00:00, the log's start
                clock = f"08:{after // 60:02d}:{after % 60:02d}"
                out.append(f"[NeMo I 2026-09-14 {clock} nemo_logging:393] Global Checkpoint "
                           f"Save : Rank: 0 : Iteration: {it} : Start time: "
                           f"{1789372800 + after}.151s : Save duration: {seconds:.3f}s")
                out.append(f"[NeMo I 2026-09-14 {clock} nemo_logging:393] Scheduled async "
                           f"checkpoint save for /results/checkpoints/step={it}.ckpt")
    return "\n".join(out) + "\n"


def mlperf_storage_checkpointing(save_gib_s: float, load_gib_s: float, size_gib: float,
                                 processes: int, hosts: int) -> str:
    """A DLIO ``summary.json`` of an mlpstorage checkpointing run, with the keys and layout of
    the published v3.0 results (mlcommons/storage_results_v3.0 @ 068d91f): per-rank arrays
    filled on the first entry only, as DLIO fills them when a host runs several processes."""
    host_mem_kib = 898_822_144  # a GB200 compute tray's two Grace CPUs, MemTotal as printed
    data = {
        "start": "2026-09-12T10:15:41.208331", "num_accelerators": processes,
        "num_hosts": hosts, "hostname": "zenith-gb200-rack01-tray01",
        "metric": {
            "save_checkpoint_io_mean_GB_per_second": save_gib_s,
            "save_checkpoint_io_stdev_GB_per_second": round(save_gib_s * 0.021, 6),
            "save_checkpoint_duration_mean_seconds": round(size_gib / save_gib_s, 7),
            "save_checkpoint_duration_stdev_seconds": round(size_gib / save_gib_s * 0.021, 6),
            "load_checkpoint_io_mean_GB_per_second": load_gib_s,
            "load_checkpoint_io_stdev_GB_per_second": round(load_gib_s * 0.017, 6),
            "load_checkpoint_duration_mean_seconds": round(size_gib / load_gib_s, 7),
            "load_checkpoint_duration_stdev_seconds": round(size_gib / load_gib_s * 0.017, 6),
            "checkpoint_size_GB": size_gib},
        "num_files_train": 8, "num_files_eval": 0, "num_samples_per_file": 1,
        "host_cpu_count": [144 * processes // hosts] + [0] * (hosts - 1),
        "host_processor_name": "aarch64", "potential_caching": [1] + [0] * (hosts - 1),
        "host_cpuinfo": {"CPU implementer": "0x41", "CPU part": "0xd4f"},
        "host_meminfo": {"MemTotal": f"{host_mem_kib} kB", "MemFree": "781240320 kB",
                         "MemAvailable": "850114560 kB"},
        "host_memory_GB": [host_mem_kib / 1024**2 * processes / hosts] + [0.0] * (hosts - 1),
        "data_size_per_host_GB": 0.0, "epochs": 0, "end": "2026-09-12T10:41:03.517902"}
    return json.dumps(data, indent=4)


def write_gb200(p: Provider, out: Path) -> None:
    rng = random.Random(p.seed)
    root = out / p.slug
    (root / "training").mkdir(parents=True)
    (root / "nccl").mkdir()
    (root / "cmax.toml").write_text(gb200_manifest(p))
    for w in GB200_WORKLOADS:
        log = nemo2_log(p, w, rng)
        if w.precision == "bf16":
            log = with_checkpoints(log, GB200_SAVES_S)
        (root / "training" / f"{w.workload}_{w.precision}_{NUM_GPUS}.log").write_text(log)
    summary = root / GB200_STORAGE_SUMMARY
    summary.parent.mkdir(parents=True)
    summary.write_text(mlperf_storage_checkpointing(131.42, 204.87, 5288.0, NUM_GPUS, 64))
    (root / "nccl" / "all_reduce_perf_nvl72_rack01.txt").write_text(gb200_rack_nccl(p))
    (root / "nccl" / f"all_reduce_perf_{RACKS}racks.txt").write_text(gb200_fabric_nccl(p))
    hosts = [tray_host(p, r, t) for r in range(1, RACKS + 1)
             for t in range(1, TRAYS_PER_RACK + 1)]
    (root / "incidents.csv").write_text(incidents_csv(p, rng, hosts=hosts, gpus_per_node=4))


@dataclass(frozen=True)
class Offline:
    """One offline maximum-throughput trtllm-bench run (no concurrency cap), as the TensorRT-LLM
    perf overview measures its reference rows."""

    model: str            # the manifest's model id
    hf_model: str         # the checkpoint trtllm-bench names in its report
    tp: int
    ep: int
    reference_tok_s_per_gpu: float  # reference/inference.csv, H200 FP8, 1024/1024
    speed: float          # provider / reference


@dataclass(frozen=True)
class Serving:
    """An invented serving provider: H200 nodes rated on serving results only."""

    slug: str
    name: str
    cluster: str
    region: str
    nodes: int
    offline: tuple[Offline, ...]
    unexpected: int
    planned: int
    mean_outage_h: float
    max_outage_h: float
    price: float
    declarations: dict[str, bool]
    seed: int


# TensorRT-LLM perf overview (NVIDIA/TensorRT-LLM docs/source/developer-guide/perf-overview.md
# @ 03e27c7): H200 FP8, 1024/1024, output tok/s per GPU: GPT-OSS-120B TP1 6,798; Llama 3.3 70B
# TP2 2,582. Halcyon serves both within 3 % of them.
HALCYON = Serving(
    "halcyon-serve", "Halcyon Serve", "halcyon-h200-serve", "us-west-2", 2,
    (Offline("gpt-oss-120b", "openai/gpt-oss-120b", 1, 1, 6798.0, 0.973),
     Offline("llama3.3-70b", "nvidia/Llama-3.3-70B-Instruct-FP8", 2, 1, 2582.0, 0.972)),
    4, 2, 0.6, 1.5, 3.40,
    {"soc2_type2": True, "tenant_network_isolation": True, "self_service_provisioning": True,
     "object_storage": True, "local_nvme_cache": True, "24x7_support": True,
     "passive_health_checks": True, "dcgm_metrics": True, "on_demand": True,
     "current_skus": True}, 44)

#: an SGLang concurrency sweep of DeepSeek-R1-0528 FP8 on one 8-GPU H200 node, run with
#: InferenceX's harness (agg_bmk.json rows): (max concurrency, mean TTFT s, share of the
#: reference). InferenceX's official H200 DeepSeek-R1 FP8 1k/1k curve (reference 2026.11.6,
#: SemiAnalysisAI/InferenceX-app cypress/fixtures/api/benchmarks.json @ 528c414) spans 29.4-102.8
#: tok/s per user; the four lowest concurrencies sit on it at 94.6-96.8 % of the curve, the two
#: highest below its measured range (shown, not compared). Each point's mean TPOT is solved so
#: that Little's law (concurrency x output length / (TTFT + 1,023 x TPOT)) gives that share.
SWEEP = [(4, 0.118, 0.968), (8, 0.142, 0.957), (16, 0.19, 0.946), (32, 0.27, 0.951),
         (64, 0.43, None), (128, 0.81, None)]
#: mean TPOT (s) of the points beyond the curve's range, and the mean GPU power of each point
SWEEP_BEYOND_TPOT = {64: 0.0368, 128: 0.0462}
SWEEP_WATTS = {4: 452.3, 8: 498.7, 16: 547.1, 32: 589.4, 64: 621.8, 128: 648.2}
#: InferenceX's official H200 DeepSeek-R1 FP8 1k/1k front: (interactivity, output tok/s/GPU)
H200_DSR1_FRONT = [(29.376515860854752, 224.6462741124043),
                   (85.40484930636329, 82.37151486488753),
                   (102.77569507341812, 49.173854925265026)]
SWEEP_LEN = 1024


def trtllm_report(o: Offline, rng: random.Random) -> str:
    """``trtllm-bench throughput --report_json``: the sections and keys of
    ``get_statistics_dict()`` (NVIDIA/TensorRT-LLM tensorrt_llm/bench/dataclasses/reporting.py
    @ 0249976), non-streaming, 3,000 requests of 1,024/1,024 tokens."""
    requests, length = 3000, SWEEP_LEN
    per_gpu = round(o.reference_tok_s_per_gpu * o.speed * (1 + rng.uniform(-0.002, 0.002)), 1)
    system = round(per_gpu * o.tp, 1)
    total_ms = requests * length / system * 1000.0
    avg_latency = round(total_ms * 0.62, 1)
    data = {
        "engine": {"model": o.hf_model, "model_path": None, "engine_dir": None,
                   "version": "1.1.0", "backend": "Pytorch", "dtype": "bfloat16",
                   "kv_cache_dtype": "FP8", "quantization": "FP8"},
        "machine": {"name": "NVIDIA H200", "memory": 139.8, "memory_clock": 3201},
        "world_info": {"tp_size": o.tp, "pp_size": 1, "ep_size": o.ep, "world_size": o.tp,
                       "max_batch_size": 2048, "max_num_tokens": 8192,
                       "scheduling_policy": "GUARANTEED_NO_EVICT",
                       "kv_cache_percentage": 0.95, "issue_rate": 1.2e14},
        "request_info": {"num_requests": requests,
                         "avg_num_concurrent_requests": round(requests * 0.61, 1),
                         "avg_input_length": float(length), "avg_output_length": float(length)},
        "performance": {
            "total_latency_ms": total_ms, "avg_request_latency_ms": avg_latency,
            "request_throughput_req_s": round(system / length, 4),
            "system_output_throughput_tok_s": system,
            "system_total_throughput_tok_s": round(2 * system, 1),
            "output_throughput_per_user_tok_s": round(length / (avg_latency / 1000), 2),
            "output_throughput_per_gpu_tok_s": per_gpu,
            "request_latency_percentiles_ms": {
                "p50": round(avg_latency * 0.998, 1), "p90": round(total_ms * 0.87, 1),
                "p95": round(total_ms * 0.92, 1), "p99": round(total_ms * 0.985, 1),
                "minimum": round(total_ms * 0.17, 1), "maximum": round(total_ms * 0.998, 1),
                "average": avg_latency}},
        "dataset": {"avg_isl": length, "avg_osl": length, "num_requests": requests,
                    "max_isl": length, "max_osl": length},
    }
    return json.dumps(data, indent=4) + "\n"


def _front_at(x: float) -> float | None:
    for (x0, y0), (x1, y1) in itertools.pairwise(H200_DSR1_FRONT):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


def _sweep_tpot(conc: int, ttft: float, share: float | None) -> float:
    """The mean TPOT (s) at which Little's law puts the point at ``share`` of the front."""
    if share is None:
        return SWEEP_BEYOND_TPOT[conc]
    lo, hi = 1 / H200_DSR1_FRONT[-1][0], 1 / H200_DSR1_FRONT[0][0]
    for _ in range(200):
        mid = (lo + hi) / 2
        per_gpu = conc * SWEEP_LEN / (ttft + (SWEEP_LEN - 1) * mid) / 8
        front = _front_at(1 / mid)
        if front is not None and per_gpu > share * front:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def inferencex_sweep() -> str:
    """InferenceX ``agg_bmk.json`` rows as ``utils/process_result.py`` of
    SemiAnalysisAI/InferenceX @ 843c625 writes single-node rows (the key order of
    tests/data/inference/inferencex_agg_bmk_h200.json): latencies in seconds, each TPOT key
    with its ``*_intvty``, per-GPU throughputs over the 8 GPUs, and the power keys of
    ``utils/aggregate_power.py``."""
    rows = []
    for conc, ttft, share in SWEEP:
        tpot = _sweep_tpot(conc, ttft, share)
        per_gpu = conc * SWEEP_LEN / (ttft + (SWEEP_LEN - 1) * tpot) / 8
        e2el = ttft + (SWEEP_LEN - 1) * tpot
        row: dict[str, object] = {
            "hw": "h200", "conc": conc, "image": "lmsysorg/sglang:v0.5.12-cu130",
            "model": "deepseek-ai/DeepSeek-R1-0528", "infmax_model_prefix": "dsr1",
            "framework": "sglang", "precision": "fp8", "spec_decoding": "none", "disagg": False,
            "recipe_fingerprint": "9c2e41d07ab3f165", "isl": SWEEP_LEN, "osl": SWEEP_LEN,
            "is_multinode": False, "tp": 8, "pp": 1, "dcp_size": 1, "pcp_size": 1, "ep": 1,
            "dp_attention": "false",
            "tput_per_gpu": round(2 * per_gpu + 0.35 * conc / 8, 5),
            "output_tput_per_gpu": round(per_gpu, 4),
            "input_tput_per_gpu": round(per_gpu + 0.35 * conc / 8, 5)}
        for name, mean, median in (("ttft", ttft, ttft * 0.97),):
            row.update({f"mean_{name}": round(mean, 4), f"median_{name}": round(median, 4),
                        f"std_{name}": round(mean * 0.12, 4), f"p90_{name}": round(mean * 1.2, 4),
                        f"p99_{name}": round(mean * 1.45, 4),
                        f"p99.9_{name}": round(mean * 1.7, 4)})
        for key, value in (("mean", tpot), ("median", tpot * 0.97), ("std", tpot * 0.12),
                           ("p90", tpot * 1.2), ("p99", tpot * 1.45), ("p99.9", tpot * 1.7)):
            row[f"{key}_tpot"] = round(value, 6)
            row[f"{key}_intvty"] = 1 / round(value, 6)
        for key, factor in (("mean", 0.99), ("median", 0.9603), ("std", 0.118), ("p90", 1.19),
                            ("p99", 1.44), ("p99.9", 1.69)):
            row[f"{key}_itl"] = round(tpot * factor, 6)
        for key, factor in (("mean", 1.0), ("median", 0.97), ("std", 0.12), ("p90", 1.2),
                            ("p99", 1.45), ("p99.9", 1.7)):
            row[f"{key}_e2el"] = round(e2el * factor, 4)
        watts = SWEEP_WATTS[conc]
        row.update({"power_metric_schema_version": 2, "power_valid": 1, "avg_power_w": watts,
                    "avg_total_gpu_power_w": round(watts * 8, 1),
                    "joules_per_output_token": round(watts / per_gpu, 6)})
        rows.append(row)
    return json.dumps(rows, indent=2) + "\n"


def serving_manifest(p: Serving) -> str:
    entries = []
    for o in p.offline:
        entries.append(
            "[[inference]]\n"
            f'result = "serving/trtllm_{o.model}_fp8_1k1k.json"\nmodel = "{o.model}"\n'
            f'precision = "fp8"\ngpus = {o.tp}\ninput_len = {SWEEP_LEN}\n'
            f'output_len = {SWEEP_LEN}\nframework = "tensorrt-llm"\nversion = "1.1.0"\n')
    entries.append(
        "[[inference]]\n"
        'result = "serving/inferencex_dsr1_fp8_1k1k_agg_bmk.json"\n'
        'model = "deepseek-r1-0528"\n'
        f'precision = "fp8"\ngpus = 8\ninput_len = {SWEEP_LEN}\noutput_len = {SWEEP_LEN}\n'
        'framework = "sglang"\nversion = "0.5.12"\nttft_p99_ms = 2000.0\ntpot_p99_ms = 50.0\n')
    gpus = p.nodes * 8
    return f"""# Sample bundle shipped with cmax (invented provider, realistic evidence): an H200
# serving cluster rated on serving results against TensorRT-LLM's published per-GPU figures
# and, for its DeepSeek-R1 sweep, InferenceX's official H200 curve at each point's interactivity.
[provider]
name = "{p.name}"
cluster = "{p.cluster}"
region = "{p.region}"

[system]
gpu = "h200"
nodes = {p.nodes}
gpus_per_node = 8

[benchmark]
date = 2026-09-15
reference = "latest"

{chr(10).join(entries)}{terms_toml(p, gpus, 99.9)}"""


def write_serving(p: Serving, out: Path) -> None:
    rng = random.Random(p.seed)
    root = out / p.slug
    (root / "serving").mkdir(parents=True)
    (root / "cmax.toml").write_text(serving_manifest(p))
    for o in p.offline:
        (root / "serving" / f"trtllm_{o.model}_fp8_1k1k.json").write_text(trtllm_report(o, rng))
    (root / "serving" / "inferencex_dsr1_fp8_1k1k_agg_bmk.json").write_text(inferencex_sweep())
    hosts = [f"{p.cluster}-{n:03d}" for n in range(p.nodes)]
    (root / "incidents.csv").write_text(incidents_csv(p, rng, hosts=hosts))


def nemo2_log(p: Provider, w: Workload, rng: random.Random) -> str:
    """A NeMo 2 log as the DGXC v25.05 recipes print it: 50 steps, iteration n/49."""
    # the job's own statements about itself, as NeMo's exp_manager and Lightning's distributed
    # set-up print them: the experiment folder (model, precision, scale) and the world size
    lines = [
        f"[NeMo I 2026-09-14 08:00:00 nemo_logging:393] Experiments will be logged at "
        f"/results/pretrain_{w.workload}_{w.precision}_{NUM_GPUS}",
        f"Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/{NUM_GPUS}",
    ]
    base = w.ref_step_s / p.speed
    loss = 12.2
    consumed = 0
    for it in range(50):
        factor = 1.0 + rng.gauss(0.0, p.jitter)
        if it == 0:
            factor = 3.4 + rng.random() * 0.4     # compilation and allocation
        elif it < 4:
            factor = 1.08 + rng.random() * 0.05   # warm-up
        elif it == 23:
            factor = 1.06                         # a brief stall
        step = round(base * factor, 3 if base * factor < 10 else 2)
        tflops = w.flops_per_sample * w.gbs / step / NUM_GPUS / 1e12
        consumed += w.gbs
        loss = max(2.0, loss - 0.09 - rng.random() * 0.02)
        lines.append(
            f"Training epoch 0, iteration {it}/49 | lr: {3e-4 * (it + 1) / 50:.4g} | "
            f"global_batch_size: {w.gbs} | global_step: {it} | peak_memory_usage: 73014444032 | "
            f"memory_allocated: 51539607552 | reduced_train_loss: {loss:.3f} | "
            f"train_step_timing in s: {step} | TFLOPS_per_GPU: {tflops:.3e} | "
            f"consumed_samples: {consumed}"
        )
    lines.append("[NeMo I 2026-09-14 08:20:00 nemo_logging:393] Training finished")
    return "\n".join(lines) + "\n"


def nccl_output(p: Provider, rng: random.Random) -> str:
    """nccl-tests all_reduce_perf across the cluster, 8 B to 16 GiB, factor 2."""
    ranks = NUM_GPUS
    lines = [
        "# nccl-tests version 2.17.6 nccl-headers=22707 nccl-library=22707",
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for rank in range(ranks):
        node, dev = divmod(rank, 8)
        lines.append(
            f"#  Rank {rank:3d} Group  0 Pid {100000 + rank:7d} on {p.cluster}-{node:03d} device "
            f" {dev} [0000:{0x19 + dev * 0x10:02x}:00] NVIDIA H100 80GB HBM3"
        )
    lines += [
        "#",
        "#                                                              out-of-place"
        "                       in-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
        "      (us)  (GB/s)  (GB/s)",
    ]
    size = 8
    bus_factor = 2 * (ranks - 1) / ranks
    busbws = []
    while size <= 17179869184:
        latency_us = 60.0 + 0.9 * (ranks / 64)
        row = []
        for _ in range(2):
            busbw_target = p.nccl_peak * size / (size + 48 * 1024 * 1024)
            t_bw = size * bus_factor / (busbw_target * 1e3) if busbw_target > 0 else 0.0
            t = (latency_us + t_bw) * (1 + rng.gauss(0, 0.004))
            algbw = size / t / 1e3
            busbw = algbw * bus_factor
            row.append((t, algbw, busbw))
        busbws.append(row[0][2])
        (t1, a1, b1), (t2, a2, b2) = row
        lines.append(
            f"{size:12d}  {size // 4:12d}     float     sum      -1  {t1:8.1f} {a1:7.2f} {b1:7.2f}"
            f"      0  {t2:8.1f} {a2:7.2f} {b2:7.2f}      0"
        )
        size *= 2
    lines += [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):.3f}",
        "#",
    ]
    return "\n".join(lines) + "\n"


CATEGORIES = [
    ("Faulty GPU", 30), ("GPU HBM3 Memory", 17), ("Software Bug", 13),
    ("Network Switch/Cable", 8), ("Host Maintenance", 8), ("GPU SRAM Memory", 5),
    ("GPU System Processor", 4), ("NIC", 2), ("NCCL Watchdog Timeouts", 2),
]


def incidents_csv(p: Provider | Serving, rng: random.Random, *, hosts: list[str] | None = None,
                  gpus_per_node: int = 8) -> str:
    """Interruptions over 2026-07-01..2026-09-30 (92 days)."""
    import datetime as dt

    start = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
    rows = []
    names = [c for c, _ in CATEGORIES]
    weights = [w for _, w in CATEGORIES]
    for i in range(p.unexpected):
        at = start + dt.timedelta(seconds=rng.randrange(0, 92 * 86400 - 86400))
        hours = min(p.max_outage_h, max(0.2, rng.expovariate(1 / p.mean_outage_h)))
        dur = dt.timedelta(hours=hours)
        cat = rng.choices(names, weights)[0]
        node = (f"{p.cluster}-{rng.randrange(NODES):03d}" if hosts is None
                else hosts[rng.randrange(len(hosts))])
        gpu = str(rng.randrange(gpus_per_node)) if "GPU" in cat else ""
        rows.append((at, at + dur, node, gpu, cat, "false", f"unplanned interruption #{i + 1}"))
    for i in range(p.planned):
        at = start + dt.timedelta(days=7 + 10 * i, hours=2)
        node = (f"{p.cluster}-{rng.randrange(NODES):03d}" if hosts is None
                else hosts[rng.randrange(len(hosts))])
        rows.append((at, at + dt.timedelta(hours=4), node, "", "Host Maintenance", "true",
                     "scheduled firmware update (announced 7 days ahead)"))
    rows.sort()
    out = ["start,end,node,gpu,category,planned,description"]
    for a, b, node, gpu, cat, planned, desc in rows:
        out.append(f"{a:%Y-%m-%dT%H:%M:%SZ},{b:%Y-%m-%dT%H:%M:%SZ},{node},{gpu},{cat},{planned},"
                   f"{desc}")
    return "\n".join(out) + "\n"


def audit_json(p: Provider) -> str:
    data = json.loads((AUDITS / p.audit).read_text())
    text = json.dumps(data, indent=2)
    for old in ("example-h100-a", "example-h100-b"):
        text = text.replace(old, p.cluster)
    # The Slurm example's hosts become the sample cluster's: its first compute node is the one
    # the training logs and nccl sweep name (``<cluster>-000``), so the audit witnesses the same
    # cluster as the other files; the login, controller and second node keep their role names.
    # (Cinder's Kubernetes example keeps its own node names: the audit's k8s cluster.)
    text = text.replace("h100a-gpu-001", f"{p.cluster}-000").replace("h100a-", f"{p.cluster}-")
    data = json.loads(text)
    return json.dumps(data, indent=2) + "\n"


def runs_toml(workloads: list[Workload]) -> str:
    runs = []
    for w in workloads:
        runs.append(
            "[[runs]]\n"
            f'workload = "{w.workload}"\nprecision = "{w.precision}"\nnum_gpus = {NUM_GPUS}\n'
            f'log = "training/{w.workload}_{w.precision}_{NUM_GPUS}.log"\n'
            f"seq_len = {w.seq_len}\ngbs = {w.gbs}\nmbs = 1\ntp = {w.tp}\npp = {w.pp}\n"
            f"cp = {w.cp}\nvp = {w.vp}\n"
            + (f"ep = {w.ep}\n" if w.ep else "")
            + f'framework = "nemo2"\ncontainer = "{w.container}"\n'
        )
    return "\n".join(runs)


def terms_toml(p: Provider | Serving, gpus_in_service: int, uptime: float) -> str:
    """[reliability], [sla], [pricing] and [declarations]."""
    decl = "\n".join(f"{k} = {'true' if v else 'false'}" for k, v in p.declarations.items())
    return f"""
[reliability]
incidents = "incidents.csv"
period_start = 2026-07-01
period_end = 2026-09-30
gpus_in_service = {gpus_in_service}

[sla]
uptime_pct = {uptime}
credits = [[{uptime}, 10], [99.0, 25], [95.0, 100]]

[pricing]
usd_per_gpu_hour = {p.price}
term_months = 12

[declarations]
{decl}
"""


def manifest(p: Provider) -> str:
    return f"""# Sample bundle shipped with cmax (invented provider, realistic evidence).
[provider]
name = "{p.name}"
cluster = "{p.cluster}"
region = "{p.region}"

[system]
gpu = "h100-sxm"
nodes = {NODES}
gpus_per_node = 8
interconnect = "infiniband-ndr-8x400"

[benchmark]
date = 2026-09-14
reference = "latest"

{runs_toml(WORKLOADS)}
[[nccl]]
path = "nccl/all_reduce_perf_{NODES}n.txt"

[audit]
path = "audit/audit.values.json"
{terms_toml(p, NUM_GPUS, 99.9)}"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the sample bundles, replacing the folder.")
    parser.add_argument("--out", type=Path, default=OUT,
                        help="where to write them (default: the repository's samples/)")
    out: Path = parser.parse_args(argv).out
    if out.exists():
        shutil.rmtree(out)
    for p in PROVIDERS:
        rng = random.Random(p.seed)
        root = out / p.slug
        (root / "training").mkdir(parents=True)
        (root / "nccl").mkdir()
        (root / "audit").mkdir()
        (root / "cmax.toml").write_text(manifest(p))
        for w in WORKLOADS:
            (root / "training" / f"{w.workload}_{w.precision}_{NUM_GPUS}.log").write_text(
                nemo2_log(p, w, rng))
        (root / "nccl" / f"all_reduce_perf_{NODES}n.txt").write_text(nccl_output(p, rng))
        (root / "audit" / "audit.values.json").write_text(audit_json(p))
        (root / "incidents.csv").write_text(incidents_csv(p, rng))
    write_gb200(GB200, out)
    write_serving(HALCYON, out)
    print(f"wrote {len(PROVIDERS) + 2} bundles to {out}")


if __name__ == "__main__":
    main()
