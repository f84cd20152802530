"""Realistic Scorecard objects for tests, built directly (no bundle, no pipeline).

The default card is an H100 provider close to NVIDIA's reference: Llama 3.1 70B FP8 and BF16
at 512 GPUs (reference step times 10.76 s / 14.80 s from the DGXC v25.02 release), an
all_reduce sweep from 8 B to 16 GiB over 64 nodes, a quarter of incidents, an SLA that was
just missed, a ClusterMAX audit with a few FAILs and price advice with its reasoning. Other
builders give a weak provider (for leaderboards), a card with every optional section missing
and a card full of hostile text. Numbers are computed here the way the pipeline would, so a
test can recompute them by hand. Other test modules may import this file; treat it as
read-only outside the render tests.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
from typing import Any

from cmax.findings import Finding, count_findings
from cmax.judgement.exemplar import judge_exemplar
from cmax.scorecard import (
    AuditCheck,
    AuditSummary,
    Baseline,
    CategoryScore,
    EvidenceFileRef,
    Gate,
    InferenceResult,
    MlperfResult,
    NetworkResult,
    PriceAdvice,
    ReliabilityResult,
    Scorecard,
    SlaResult,
    TierThreshold,
    WorkloadEconomics,
    WorkloadResult,
)

REFERENCE_RELEASE = "2026.10.0"
BASELINE_SOURCE = "NVIDIA/dgxc-benchmarking llama3.1/README_70b.md @ v25.02"
GIB = 1 << 30

# (key, category, criterion, status, observed, minimum): shaped like the 59 checks a ClusterMAX
# Slurm audit grades (research: example_audit.expected_report.json), with two extra FAILs.
AUDIT_ROWS: tuple[tuple[str, str, str, str, str | None, str | None], ...] = (
    ("access.slurmCommandsOk", "access", "slurm-commands", "PASS", None, None),
    ("access.sshToComputeNodes", "access", "ssh-between-nodes", "PASS", None, None),
    ("access.userManagement", "access", "user-management", "PASS", None, None),
    ("access.externalIdp.detected", "access", "external-idp", "WARNING", "none", "OIDC or SAML"),
    ("access.sudoAvailable", "access", "sudo-available", "WARNING", "CONFIG", None),
    ("bmc-ipmi", "isolation", "security-bmc-ipmi", "PASS", "exposed=false", None),
    ("nvlink-boundary", "isolation", "security-nvlink-boundary", "PASS", "attested", None),
    ("pcie-passthrough", "isolation", "security-pcie-passthrough", "WARNING", "unverified", None),
    ("ufm-profile", "isolation", "ufm-secured-bare-metal-cloud", "WARNING", "manual", None),
    ("security.januscape.status", "isolation", "security-januscape", "PASS", None, None),
    ("security.guestKernel.newerInstalled", "isolation", "guest-kernel-current", "PASS", None,
     None),
    ("containers.dockerOnWorkers", "containers", "docker-workers", "PASS", None, None),
    ("containers.enroot", "containers", "enroot", "PASS", "3.5.0", None),
    ("containers.nvidiaContainerToolkit", "containers", "container-toolkit", "PASS", None, None),
    ("containers.singularity", "containers", "singularity", "FAIL", "MISSING", "installed"),
    ("containers.pyxisRuntimeWorks", "orchestration", "pyxis", "PASS", None, None),
    ("gpus.gdrcopy.installed", "hardware", "gdrcopy", "PASS", "2.4.1", None),
    ("gpus.gpuDirectRdmaPath", "hardware", "gpudirect-rdma", "PASS", "dma_buf", None),
    ("gpus.pcieAcs.enabled", "hardware", "pcie-acs", "PASS", "disabled", "disabled"),
    ("gpu_controls.vboost.allowed", "hardware", "vboost-control", "PASS", None, None),
    ("arm_smmu_virtualization.status", "hardware", "arm-smmu-cmdqv", "SKIPPED", "n/a", None),
    ("healthChecks.dcgmInstalled", "health", "dcgm-healthchecks", "PASS", "3.3.9", None),
    ("healthChecks.nhcInstalled", "health", "healthcheck-program", "FAIL", "MISSING", "installed"),
    ("healthChecks.monitoringStack.dcgmExporter", "health", "monitoring-stack", "PASS", None, None),
    ("networking.hcaNamingValid", "networking", "hca-naming", "PASS", None, None),
    ("networking.ncclAutoConfig", "networking", "nccl-autoconfig", "PASS", None, None),
    ("nccl_ib_qps.status", "networking", "nccl-ib-qps-entropy", "WARNING", "1", ">= 2"),
    ("nccl_topo_file.status", "networking", "nccl-topo-file-container", "SKIPPED", "n/a", None),
    ("securityVersions.nvidiaDriver.status", "versions", "security-nvidia-driver", "PASS",
     "570.172.08", "570.172.08"),
    ("securityVersions.nvidiaContainerToolkit.status", "versions",
     "security-nvidia-container-toolkit", "FAIL", "1.17.3", "1.17.8"),
    ("securityVersions.runc.status", "versions", "security-runc", "PASS", "1.2.6", "1.2.6"),
    ("securityVersions.docker.status", "versions", "security-docker", "WARNING", "CONFIG", None),
    ("slurm.accounting.sacctAvailable", "orchestration", "sacct-accounting", "PASS", None, None),
    ("software.nccl.installed", "software", "nccl-installed", "PASS", "2.23.4", None),
    ("software.ncu.profilingEnabled", "software", "ncu-profiling", "PASS", None, None),
    ("software.perf.perfEventParanoid", "software", "perf-access", "WARNING", "4", "<= 2"),
    ("storage.rwxStatus", "storage", "csi-rwx", "SKIPPED", "n/a for slurm", None),
)

BAR = 0.95
"""The shipped rubric's [performance] bar, which every workload here is judged against."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def step_series(
    mean_step_s: float, *, steps: int = 50, seed: int = 0, jitter: float = 0.006
) -> list[tuple[int, float]]:
    """A NeMo-like run: slow first steps (JIT, prefetch), then steady with small noise."""
    rng = random.Random(seed)
    series: list[tuple[int, float]] = []
    for it in range(1, steps + 1):
        warm = 1.0 + 2.2 * math.exp(-(it - 1) / 1.6)
        value = mean_step_s * warm * (1.0 + rng.gauss(0.0, jitter))
        if it == 23:  # one checkpoint-save hiccup, as real logs show
            value *= 1.18
        series.append((it, round(value, 4)))
    return series


def workload(
    *,
    precision: str,
    ref_step_s: float,
    ref_tokens: float,
    ref_mfu: float,
    step_s: float,
    ci_half: float,
    container: str,
    seed: int,
    name: str = "llama3.1-70b",
    num_gpus: int = 512,
    bar: float = 0.95,
) -> WorkloadResult:
    ratio = ref_step_s / step_s
    low, high = ratio - ci_half, ratio + ci_half
    verdict = "pass" if low >= bar else "fail" if high < bar else "inconclusive"
    log = f"training/{name}_{precision}_{num_gpus}.log"
    return WorkloadResult(
        workload=name,
        precision=precision,
        num_gpus=num_gpus,
        log=log,
        framework="NeMo 2.0",
        status="completed",
        steps_total=50,
        window=(35, 44),
        steps_in_window=10,
        mean_step_time_s=step_s,
        tokens_per_s_per_gpu=round(ref_tokens * ratio, 1),
        model_tflops_per_gpu=None,
        mfu_pct=round(ref_mfu * ratio, 2),
        baseline=Baseline(
            baseline_id=f"h100-{name}-{precision}-{num_gpus}-v25.02",
            release=REFERENCE_RELEASE,
            step_time_s=ref_step_s,
            tokens_per_s_per_gpu=ref_tokens,
            mfu_pct=ref_mfu,
            gbs=1024,
            seq_len=8192,
            container=container,
            source=BASELINE_SOURCE,
        ),
        ratio=round(ratio, 4),
        ci_low=round(low, 4),
        ci_high=round(high, 4),
        verdict=verdict,
        bar=bar,
        notes=["steady-state window: iterations 35-44 as the v25.02 recipe averages"],
        step_series=step_series(step_s, seed=seed),
    )


def nccl_series(peak_gbps: float, half_bytes: float) -> list[tuple[int, float]]:
    """all_reduce bus bandwidth from 8 B to 16 GiB: latency-bound, then saturating."""
    out = []
    size = 8
    while size <= 16 * GIB:
        out.append((size, round(peak_gbps * size / (size + half_bytes), 2)))
        size *= 2
    return out


def network(nodes: int = 64, peak: float = 366.0) -> NetworkResult:
    series = nccl_series(peak, 48 * (1 << 20))
    large = series[-1][1]
    return NetworkResult(
        file=f"nccl/all_reduce_{nodes}n.txt",
        collective="all_reduce",
        ranks=nodes * 8,
        nodes=nodes,
        large_message_bytes=16 * GIB,
        busbw_gbps=large,
        max_busbw_gbps=max(b for _, b in series),
        reference_busbw_gbps=368.0,
        reference_source="8 x 46 GB/s per 400G NIC (derived from NVIDIA/nccl-tests#290)",
        ratio=round(large / 368.0, 4),
        verdict="pass" if large / 368.0 >= 0.95 else "fail",
        series=series,
    )


def incidents(
    start: dt.date, days: int, total: int, seed: int = 1
) -> list[tuple[dt.date, int]]:
    rng = random.Random(seed)
    counts = [0] * days
    for _ in range(total):
        counts[rng.randrange(days)] += 1
    return [(start + dt.timedelta(days=i), c) for i, c in enumerate(counts)]


def reliability(unexpected: int = 160, planned: int = 4) -> ReliabilityResult:
    start, end = dt.date(2026, 7, 1), dt.date(2026, 9, 30)
    days = (end - start).days + 1
    gpus = 4096
    gpu_days = float(gpus * days)
    per_1000 = unexpected / gpu_days * 1000
    ref_per_1000 = 419 / (16384 * 54) * 1000  # Llama 3 paper: 419 in 54 days on 16,384 GPUs
    mtbf = gpu_days * 24 / unexpected if unexpected else None

    def ettr(rate_per_1000_gpu_days: float) -> float:
        failures_per_hour = 512 * rate_per_1000_gpu_days / 1000 / 24
        return 1 - failures_per_hour * (15 + 15) / 60

    provider, ref = ettr(per_1000), ettr(ref_per_1000)
    return ReliabilityResult(
        period_start=start,
        period_end=end,
        gpus_in_service=gpus,
        gpu_days=gpu_days,
        unexpected_interruptions=unexpected,
        planned_interruptions=planned,
        per_1000_gpu_days=round(per_1000, 4),
        mtbf_gpu_hours=round(mtbf, 0) if mtbf else None,
        reference_per_1000_gpu_days=round(ref_per_1000, 4),
        reference_source="Llama 3 paper (arXiv:2407.21783) Table 5: 419 in 54 days, 16,384 GPUs",
        ratio_vs_reference=round(per_1000 / ref_per_1000, 4),
        job_gpus=512,
        checkpoint_interval_min=30.0,
        restart_min=15.0,
        ettr=round(provider, 5),
        reference_ettr=round(ref, 5),
        goodput_ratio=round(provider / ref, 5),
        incident_series=incidents(start, days, unexpected),
    )


def audit() -> AuditSummary:
    checks = [
        AuditCheck(check_id=k, category=c, criterion=cr, status=s, observed=o, minimum=m)
        for k, c, cr, s, o, m in AUDIT_ROWS
    ]
    counts = {s: sum(1 for ch in checks if ch.status == s)
              for s in ("PASS", "WARNING", "FAIL", "SKIPPED")}
    return AuditSummary(
        file="audit/audit.values.json", cluster="example-h100-a", counts=counts, checks=checks
    )


def findings() -> list[Finding]:
    return [
        Finding(rule="audit.security_version", severity="error",
                file="audit/audit.values.json", line=None,
                message="nvidia-container-toolkit 1.17.3 is below the security minimum 1.17.8 "
                        "(NVIDIAScape, CVE-2025-23266)",
                fix="Upgrade nvidia-container-toolkit to 1.17.8 or newer on every node."),
        Finding(rule="perf.ci_straddles_bar", severity="warning",
                file="training/llama3.1-70b_bf16_512.log", line=None,
                message="Llama 3.1 70B BF16 at 512 GPUs: the 95% CI 94.2%-95.3% of reference "
                        "straddles the 95% bar, so the run neither passes nor fails",
                fix="Re-run with more steps in the steady-state window to narrow the interval."),
        Finding(rule="sla.uptime_below_contract", severity="warning", file="incidents.csv",
                line=None,
                message="Measured node uptime 99.86% is below the contracted 99.9%: "
                        "a 10% service credit is owed",
                fix="Claim the credit for the period; keep the incident log as evidence."),
        Finding(rule="run.container_differs", severity="warning",
                file="training/llama3.1-70b_fp8_512.log", line=12,
                message="container nvcr.io/nvidia/nemo:25.02.01 differs from the reference "
                        "container nvcr.io/nvidia/nemo:24.12",
                fix="Re-run with the reference container, or treat the comparison as approximate."),
        Finding(rule="audit.health_checks", severity="warning", file="audit/audit.values.json",
                line=None, message="No node health-check program (NHC) is installed",
                fix="Install and schedule NHC or an equivalent in the Slurm prolog/epilog."),
        Finding(rule="declaration.unverified", severity="info", file="cmax.toml", line=31,
                message="soc2_type2 = true is self-declared and was not verified",
                fix="Attach the SOC 2 Type II bridge letter to the bundle."),
    ]


def categories() -> list[CategoryScore]:
    rows = [
        ("Performance", 92.0, 30.0, True, ["training/llama3.1-70b_fp8_512.log",
                                           "training/llama3.1-70b_bf16_512.log"],
         ["perf.ratio_to_score"]),
        ("Networking", 96.0, 15.0, True, ["nccl/all_reduce_64n.txt"], ["net.busbw_ratio"]),
        ("Reliability", 84.0, 20.0, True, ["incidents.csv"], ["rel.rate_vs_llama3"]),
        ("Security & compliance", 70.0, 20.0, False, ["cmax.toml", "audit/audit.values.json"],
         ["sec.declarations", "sec.audit_security_checks"]),
        ("Configuration", 82.0, 15.0, True, ["audit/audit.values.json"], ["cfg.audit_pass_share"]),
    ]
    return [CategoryScore(name=n, score=s, weight=w, verified=v, evidence=e, rules=r)
            for n, s, w, v, e, r in rows]


def gates() -> list[Gate]:
    return [
        Gate(name="modern GPU (H100 or newer)", passed=True, status="passed", cap="Underperforming",
             reason="h100-sxm"),
        Gate(name="SOC 2 Type II or ISO 27001", passed=True, status="passed", cap="Underperforming",
             reason="declared in cmax.toml (unverified)"),
        Gate(name="PCIe ACS disabled on GPU-NIC switches", passed=True, status="passed",
             cap="Underperforming", reason="audit gpus.pcieAcs.enabled PASS"),
        Gate(name="GPUDirect RDMA enabled", passed=True, status="passed", cap="Underperforming",
             reason="audit gpus.gpuDirectRdmaPath PASS"),
        Gate(name="container runtime security minimum", passed=False, status="failed", cap="Silver",
             reason="nvidia-container-toolkit 1.17.3 < 1.17.8"),
    ]


def price(workloads: list[WorkloadResult], goodput: float, credit_pct: float) -> PriceAdvice:
    quoted, gpus, months = 2.10, 4096, 12
    ratios = [w.ratio for w in workloads if w.ratio is not None]
    throughput = round(math.prod(ratios) ** (1 / len(ratios)), 4) if ratios else None
    hours = months * 730.0
    term_cost = quoted * gpus * hours
    parity = round(quoted * (throughput or 1.0) * min(goodput, 1.0), 4)
    recommended = round(parity * (1 - 0.02), 2)  # 2% for the security gate until fixed
    loss = term_cost * (1 - min(goodput, 1.0) * (throughput or 1.0))
    credit = quoted * gpus * 730.0 * credit_pct / 100
    econ = []
    for w in workloads:
        tps = w.tokens_per_s_per_gpu
        ref_tps = w.baseline.tokens_per_s_per_gpu if w.baseline else None
        econ.append(WorkloadEconomics(
            workload=w.workload, precision=w.precision, num_gpus=w.num_gpus,
            tokens_per_s_per_gpu=tps,
            usd_per_million_tokens=round(quoted / (tps * 3600) * 1e6, 4) if tps else None,
            reference_usd_per_million_tokens=(
                round(quoted / (ref_tps * 3600) * 1e6, 4) if ref_tps else None),
            joules_per_token=round(700 * 1.3 / tps, 4) if tps else None,
        ))
    return PriceAdvice(
        quoted_usd_per_gpu_hour=quoted,
        throughput_ratio=throughput,
        goodput_ratio=goodput,
        parity_usd_per_gpu_hour=parity,
        ask_usd_per_gpu_hour=recommended,
        adjustment_pct=round((recommended / quoted - 1) * 100, 2),
        usd_per_reference_gpu_hour=(round(quoted / (throughput * min(goodput, 1.0)), 4)
                                    if throughput else None),
        term_months=months,
        contract_gpus=gpus,
        term_cost_usd=round(term_cost, 2),
        goodput_loss_usd=round(loss, 2),
        sla_credit_usd=round(credit, 2),
        effective_term_cost_usd=round(term_cost + loss, 2),  # credits are never subtracted
        workloads=econ,
        reasoning=[
            f"Measured throughput is {throughput:.1%} of NVIDIA's reference (geometric mean of "
            f"{len(ratios)} workloads), so each GPU-hour delivers that share of a reference "
            "GPU-hour.",
            f"Expected goodput for a 512-GPU job is {goodput:.2%} of the reference cluster's "
            "(interruption rate vs the Llama 3 paper, 30 min checkpoints, 15 min restart).",
            f"Parity price = ${quoted:.2f} x {throughput:.4f} x {min(goodput, 1.0):.4f} "
            f"= ${parity:.2f} per GPU-hour.",
            "Ask for a further 2% until nvidia-container-toolkit meets the security minimum "
            "(hard gate failed, tier capped at Silver).",
            f"The SLA was missed last quarter: {credit_pct:g}% credit on one month's bill is owed "
            "under the contract's credit table.",
        ],
    )


THRESHOLDS = [TierThreshold(tier=t, min_score=m)
              for t, m in (("Platinum", 90.0), ("Gold", 80.0), ("Silver", 68.0), ("Bronze", 55.0))]
"""The shipped rubric's tier thresholds (reference/rubric.toml [tiers])."""


def serving_result(ratio: float = 0.97, verdict: str = "pass") -> InferenceResult:
    """One offline trtllm-bench result: Llama 3.3 70B FP8 on 2 H100, 1000/1000 tokens, at
    ``ratio`` of the public per-GPU reference (2,000 output tok/s per GPU at 1.0)."""
    return InferenceResult(entry="inference[0]", tool="trtllm-bench", source_file="r.json",
                           model="llama3.3-70b", precision="fp8", gpu="h100-sxm",
                           input_len=1000, output_len=1000, gpus=2, gpus_basis="corroborated",
                           results=1, offline=True, output_tok_s=2000.0 * ratio, ratio=ratio,
                           comparison="offline", verdict=verdict)


def make_scorecard(**overrides: Any) -> Scorecard:
    """The near-reference H100 provider (Gold before gates, capped at Silver)."""
    fp8 = workload(precision="fp8", ref_step_s=10.76, ref_tokens=1522.3, ref_mfu=37.00,
                   step_s=10.95, ci_half=0.0034, container="nvcr.io/nvidia/nemo:24.12", seed=8)
    bf16 = workload(precision="bf16", ref_step_s=14.80, ref_tokens=1107.0, ref_mfu=53.84,
                    step_s=15.62, ci_half=0.0055, container="nvcr.io/nvidia/nemo:24.12", seed=16)
    rel = reliability()
    sla = SlaResult(contracted_uptime_pct=99.9, measured_uptime_pct=99.86, met=False,
                    credit_pct=10.0, downtime_node_hours=203.49, node_hours=64 * 92 * 24.0)
    found = findings()
    evidence = [
        ("cmax.toml", "manifest"),
        ("training/llama3.1-70b_fp8_512.log", "nemo2-log"),
        ("training/llama3.1-70b_bf16_512.log", "nemo2-log"),
        ("nccl/all_reduce_64n.txt", "nccl-tests"),
        ("mlperf/llama31_8b/result_0.txt", "mlperf-mllog"),
        ("audit/audit.values.json", "clustermax-audit"),
        ("incidents.csv", "incidents"),
    ]
    card = Scorecard(
        cmax_version="0.1.0",
        reference_release=REFERENCE_RELEASE,
        rubric="cmax-default-2026.10",
        provider="Example Cloud",
        cluster="example-h100-a",
        region="us-east-1",
        gpu="h100-sxm",
        nodes=64,
        gpus_per_node=8,
        interconnect="infiniband-ndr-8x400",
        benchmark_date=dt.date(2026, 10, 1),
        tier="Silver",
        score=85.3,
        score_tier="Gold",
        tier_thresholds=THRESHOLDS,
        exemplar=judge_exemplar([fp8, bf16], BAR),
        workloads=[fp8, bf16],
        network=[network()],
        mlperf=[MlperfResult(benchmark="llama31_8b", submitter="Example Cloud",
                             system="example-h100-a 8xH100", runs=10, score_min=31.42,
                             reference_min=30.88,
                             reference_source="MLPerf Training v5.0 closed, NVIDIA 8xH100",
                             ratio=round(30.88 / 31.42, 4), verdict="pass")],
        reliability=rel,
        sla=sla,
        audit=audit(),
        categories=categories(),
        gates=gates(),
        findings=found,
        finding_counts=count_findings(found),
        evidence_files=[EvidenceFileRef(path=p, kind=k, sha256=_sha(p), size_bytes=1000 + 37 * i)
                        for i, (p, k) in enumerate(evidence)],
        price=price([fp8, bf16], rel.goodput_ratio, sla.credit_pct),
    )
    return with_overrides(card, overrides)


def with_overrides(card: Scorecard, overrides: dict[str, Any]) -> Scorecard:
    """The card with ``overrides``; new workloads are judged for the Exemplar suite again,
    as score does, unless the override gives the judgement."""
    if "workloads" in overrides and "exemplar" not in overrides:
        overrides = {**overrides, "exemplar": judge_exemplar(overrides["workloads"], BAR)}
    return card.model_copy(update=overrides) if overrides else card


def make_weak_scorecard(**overrides: Any) -> Scorecard:
    """A smaller RoCE provider well below reference: fails the Exemplar bar, Underperforming."""
    fp8 = workload(precision="fp8", ref_step_s=10.76, ref_tokens=1522.3, ref_mfu=37.00,
                   step_s=12.40, ci_half=0.008, container="nvcr.io/nvidia/nemo:24.12", seed=3)
    net = network(nodes=16, peak=181.0)
    rel = reliability(unexpected=610, planned=20)
    found = findings()[:2]
    card = make_scorecard(
        provider="Budget GPU Co",
        cluster="bgc-h100-roce-1",
        region="eu-north-1",
        nodes=16,
        interconnect="roce-8x200",
        tier="Underperforming",
        score=58.1,
        score_tier="Bronze",
        workloads=[fp8],
        network=[net],
        mlperf=[],
        reliability=rel,
        sla=SlaResult(contracted_uptime_pct=99.0, measured_uptime_pct=98.2, met=False,
                      credit_pct=25.0, downtime_node_hours=282.62, node_hours=16 * 92 * 24.0),
        gates=[Gate(name="SOC 2 Type II or ISO 27001", passed=False, status="failed",
                    cap="Underperforming", reason="no attestation declared")],
        findings=found,
        finding_counts=count_findings(found),
        price=price([fp8], rel.goodput_ratio, 25.0),
    )
    return with_overrides(card, overrides)


def make_strong_scorecard(**overrides: Any) -> Scorecard:
    """A provider at reference on every workload: Exemplar pass, Gold."""
    fp8 = workload(precision="fp8", ref_step_s=10.76, ref_tokens=1522.3, ref_mfu=37.00,
                   step_s=10.71, ci_half=0.003, container="nvcr.io/nvidia/nemo:24.12", seed=5)
    bf16 = workload(precision="bf16", ref_step_s=14.80, ref_tokens=1107.0, ref_mfu=53.84,
                    step_s=14.86, ci_half=0.003, container="nvcr.io/nvidia/nemo:24.12", seed=6)
    rel = reliability(unexpected=120)
    card = make_scorecard(
        provider="Northwind Compute",
        cluster="nw-h100-ib-2",
        tier="Gold",
        score=87.7,
        score_tier="Gold",
        workloads=[fp8, bf16],
        reliability=rel,
        sla=SlaResult(contracted_uptime_pct=99.9, measured_uptime_pct=99.95, met=True,
                      credit_pct=0.0, downtime_node_hours=70.66, node_hours=64 * 92 * 24.0),
        gates=gates()[:4],
        price=price([fp8, bf16], rel.goodput_ratio, 0.0),
    )
    return with_overrides(card, overrides)


def make_minimal_scorecard(**overrides: Any) -> Scorecard:
    """Only the required fields: every optional section is missing or empty."""
    card = Scorecard(
        cmax_version="0.1.0",
        reference_release=REFERENCE_RELEASE,
        rubric="cmax-default-2026.10",
        provider="Bare Metal Ltd",
        cluster="bm-1",
        gpu="h100-sxm",
        nodes=2,
        gpus_per_node=8,
        benchmark_date=dt.date(2026, 9, 15),
        tier="Bronze",
        score=40.0,
        tier_thresholds=THRESHOLDS,
        exemplar=judge_exemplar([], BAR),
    )
    return with_overrides(card, overrides)


HOSTILE_PROVIDER = '<script>alert(1)</script>'
HOSTILE_CLUSTER = '<img src="file:///etc/passwd">'


def make_hostile_scorecard() -> Scorecard:
    """Bundle-controlled text that tries to run script, fetch files and break the layout."""
    long_path = "evidence/" + "very_long_directory_name_without_breaks_" * 8 + "run.log"
    card = make_scorecard(provider=HOSTILE_PROVIDER, cluster=HOSTILE_CLUSTER)
    bad_finding = Finding(
        rule="x<b>bold</b>", severity="error", file=long_path, line=3,
        message='<link rel="attachment" href="file:///etc/passwd"> and '
                '<style>@import url("https://example.invalid/x.css");</style> $\\alpha$',
        fix="</td></tr></table><h1>injected</h1>",
    )
    found = [bad_finding, *card.findings]
    wl = card.workloads[0].model_copy(
        update={"workload": "<svg onload=alert(1)>", "log": long_path})
    return card.model_copy(update={
        "findings": found,
        "finding_counts": count_findings(found),
        "workloads": [wl, *card.workloads[1:]],
        "evidence_files": [
            *card.evidence_files,
            EvidenceFileRef(path=long_path, kind="<i>log</i>", sha256=_sha(long_path),
                            size_bytes=123456789),
        ],
    })
