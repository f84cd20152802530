"""Generate the sample bundles that ship with cmax (``samples/``) for ``cmax demo``.

Three invented H100 providers of clearly different quality, each a complete bundle in the real
evidence formats (NeMo 2 training logs as DGXC v25.05 recipes print them, nccl-tests stdout,
ClusterMAX ``audit.values.json``, an incident CSV):

* Aurora Compute: at the EOS reference (step times within ~1 %), strong fabric, few incidents.
* Borealis Cloud: ~10 % slower steps, weaker networking, more incidents.
* Cinder GPU: near-reference steps but failing audit checks (a weak Kubernetes cluster) and
  many incidents.

The reference step times are DGXC v25.05.x H100 "Expected Performance" numbers (Llama 3.1 405B
BF16/FP8 and Grok-1 314B FP8 at 512 GPUs); the per-sample FLOPs constants are the ones the DGXC
READMEs print. Deterministic: the same script gives the same bytes. Run from the repo root:
``python tools/make_samples.py`` (it needs ../shared/research for the two audit examples).
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "samples"
RESEARCH = ROOT.parent / "shared" / "research"

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


def incidents_csv(p: Provider, rng: random.Random) -> str:
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
        node = f"{p.cluster}-{rng.randrange(NODES):03d}"
        gpu = str(rng.randrange(8)) if "GPU" in cat else ""
        rows.append((at, at + dur, node, gpu, cat, "false", f"unplanned interruption #{i + 1}"))
    for i in range(p.planned):
        at = start + dt.timedelta(days=7 + 10 * i, hours=2)
        node = f"{p.cluster}-{rng.randrange(NODES):03d}"
        rows.append((at, at + dt.timedelta(hours=4), node, "", "Host Maintenance", "true",
                     "scheduled firmware update (announced 7 days ahead)"))
    rows.sort()
    out = ["start,end,node,gpu,category,planned,description"]
    for a, b, node, gpu, cat, planned, desc in rows:
        out.append(f"{a:%Y-%m-%dT%H:%M:%SZ},{b:%Y-%m-%dT%H:%M:%SZ},{node},{gpu},{cat},{planned},"
                   f"{desc}")
    return "\n".join(out) + "\n"


def audit_json(p: Provider) -> str:
    data = json.loads((RESEARCH / p.audit).read_text())
    text = json.dumps(data, indent=2)
    for old in ("example-h100-a", "example-h100-b"):
        text = text.replace(old, p.cluster)
    data = json.loads(text)
    return json.dumps(data, indent=2) + "\n"


def manifest(p: Provider) -> str:
    runs = []
    for w in WORKLOADS:
        runs.append(
            "[[runs]]\n"
            f'workload = "{w.workload}"\nprecision = "{w.precision}"\nnum_gpus = {NUM_GPUS}\n'
            f'log = "training/{w.workload}_{w.precision}_{NUM_GPUS}.log"\n'
            f"seq_len = {w.seq_len}\ngbs = {w.gbs}\nmbs = 1\ntp = {w.tp}\npp = {w.pp}\n"
            f"cp = {w.cp}\nvp = {w.vp}\n"
            + (f"ep = {w.ep}\n" if w.ep else "")
            + f'framework = "nemo2"\ncontainer = "{w.container}"\n'
        )
    decl = "\n".join(f"{k} = {'true' if v else 'false'}" for k, v in p.declarations.items())
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

{chr(10).join(runs)}
[[nccl]]
path = "nccl/all_reduce_perf_{NODES}n.txt"

[audit]
path = "audit/audit.values.json"

[reliability]
incidents = "incidents.csv"
period_start = 2026-07-01
period_end = 2026-09-30
gpus_in_service = {NUM_GPUS}

[sla]
uptime_pct = 99.9
credits = [[99.9, 10], [99.0, 25], [95.0, 100]]

[pricing]
usd_per_gpu_hour = {p.price}
term_months = 12

[declarations]
{decl}
"""


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    for p in PROVIDERS:
        rng = random.Random(p.seed)
        root = OUT / p.slug
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
    print(f"wrote {len(PROVIDERS)} bundles to {OUT}")


if __name__ == "__main__":
    main()
