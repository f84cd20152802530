"""Helpers for the history tests: Scorecards built directly and runs roots with a fake scorer.

A fake run folder holds a ``cmax.toml`` (so discovery accepts it) and a ``spec.json`` with
the numbers the fake ``assess`` turns into a Scorecard, so a test states each run's ratios,
tier, audit FAILs and SLA in one place and the real discovery, store and drift code run on it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from cmax.history.discover import RunRef, parse_run_timestamp
from cmax.history.store import frame_from_rows, rows_for_run
from cmax.judgement.bar import bar_verdict
from cmax.scorecard import (
    AuditCheck,
    AuditSummary,
    Baseline,
    ExemplarJudgement,
    Judgement,
    NetworkResult,
    ReliabilityResult,
    Scorecard,
    SlaResult,
    WorkloadResult,
)
from cmax.states import State

# (workload, precision, num_gpus, ratio, ci_low, ci_high) or with a 7th item: baseline id
WorkloadSpec = list[Any]

WITHHELD_BY = ["identity.precision", "sanity.too-good-to-be-true"]
"""The errors tests/sample_bundles.py fp8_run_declared_bf16 withholds its run's pass by."""


def fp8_70b(ratio: float) -> list[WorkloadSpec]:
    """One workload: Llama 3.1 70B FP8 on 512 GPUs at ``ratio``, its CI one point either side."""
    return [["llama3.1-70b", "fp8", 512, ratio, ratio - 0.01, ratio + 0.01]]


def make_card(
    *,
    cluster: str = "c1",
    provider: str = "Example Cloud",
    date: str = "2026-01-01",
    tier: str = "Gold",
    score: float = 80.0,
    exemplar_pass: bool = True,
    workloads: list[WorkloadSpec] | None = None,
    audit_fail: list[str] | None = None,
    audit_warning: list[str] | None = None,
    sla: tuple[Any, ...] | None = None,
    period: tuple[str, str] | None = None,
    incidents: list[tuple[str, int]] | None = None,
    network: list[tuple[str, int, float, float | None]] | None = None,
    release: str = "v25.08",
    withheld: dict[int, dict[str, str | None]] | None = None,
) -> Scorecard:
    """A Scorecard as the test states it. ``withheld``: workload index -> what its log states
    instead of the declaration ({"precision": "fp8"}, or {} where it agrees): that run carries
    :data:`WITHHELD_BY` and its judgement withholds its pass, as the judgement layer does for
    a run an error bears on."""
    results = []
    judgements = []
    held = {int(i): states for i, states in (withheld or {}).items()}
    for index, spec in enumerate(workloads or []):
        name, precision, gpus, ratio, lo, hi = spec[:6]
        baseline_id = spec[6] if len(spec) > 6 else f"{name}-{precision}-{gpus}"
        base_tokens = spec[7] if len(spec) > 7 else 1000.0
        errors = WITHHELD_BY if index in held else []
        results.append(WorkloadResult(
            workload=name, precision=precision, num_gpus=gpus, log=f"training/{name}.log",
            run_id=f"runs[{index}]", log_states=held.get(index, {}), validation_errors=errors,
            status="ok", steps_total=50, steps_in_window=10,
            tokens_per_s_per_gpu=ratio * base_tokens if ratio is not None else None,
            baseline=Baseline(baseline_id=baseline_id, release=release,
                              tokens_per_s_per_gpu=base_tokens, source="test"),
            ratio=ratio, ci_low=lo, ci_high=hi, bar=0.95,
            verdict="pass" if ratio is not None and lo is not None and lo >= 0.95 else "fail",
        ))
        if errors:
            judgements.append(Judgement(
                kind="training_run", id=f"runs[{index}]", label=name,
                state=State.CONTRADICTED, bar_state=State.NOT_EVALUATED,
                verdict=bar_verdict(results[-1].verdict, ratio, errors=True),
                reason="as the test's history states"))
    audit = None
    if audit_fail is not None:
        checks = [AuditCheck(check_id=c, category="security", criterion=c, status="FAIL")
                  for c in audit_fail]
        checks += [AuditCheck(check_id=c, category="gpu", criterion=c, status="WARNING")
                   for c in audit_warning or []]
        checks.append(AuditCheck(check_id="ok_check", category="gpu", criterion="x",
                                 status="PASS"))
        audit = AuditSummary(file="audit/audit.values.json", counts={}, checks=checks)
    reliability = None
    if period is not None:
        reliability = ReliabilityResult(
            period_start=dt.date.fromisoformat(period[0]),
            period_end=dt.date.fromisoformat(period[1]),
            gpus_in_service=512, gpu_days=512 * 30.0,
            unexpected_interruptions=sum(n for _, n in incidents or []),
            planned_interruptions=0, per_1000_gpu_days=1.0, mtbf_gpu_hours=None,
            reference_per_1000_gpu_days=1.0, reference_source="test", job_gpus=512,
            checkpoint_interval_min=30, restart_min=15, ettr=0.9, reference_ettr=0.9,
            goodput_ratio=1.0,
            incident_series=[(dt.date.fromisoformat(d), n) for d, n in incidents or []],
        )
    sla_result = None
    if sla is not None:
        # (contracted, measured, met, credit[, worst node-month, node-months below, of total])
        contracted, measured, met, credit = sla[:4]
        extra: dict[str, Any] = {}
        if len(sla) > 4:
            extra = {"worst_uptime_pct": sla[4], "node_months_below": sla[5],
                     "node_months": sla[6]}
        sla_result = SlaResult(contracted_uptime_pct=contracted, measured_uptime_pct=measured,
                               met=met, credit_pct=credit, downtime_node_hours=1.0,
                               node_hours=1000.0, **extra)
    nets = [
        NetworkResult(file="nccl/x.txt", collective=coll, ranks=nodes * 8, nodes=nodes,
                      large_message_bytes=1 << 33, busbw_gbps=busbw, max_busbw_gbps=busbw,
                      ratio=ratio, verdict="pass")
        for coll, nodes, busbw, ratio in network or []
    ]
    return Scorecard(
        cmax_version="0.1.0", reference_release=release, rubric="clustermax-2.0",
        provider=provider, cluster=cluster, gpu="h100-sxm", nodes=64, gpus_per_node=8,
        benchmark_date=dt.date.fromisoformat(date), tier=tier,
        score=score, exemplar=ExemplarJudgement(
            state=State.MET if exemplar_pass else State.NOT_MET, bar=0.95,
            reason="as the test's history states"), workloads=results,
        network=nets, reliability=reliability, sla=sla_result, audit=audit,
        judgements=judgements,
    )


def write_run(root: Path, cluster: str, run_dir: str, **spec: Any) -> Path:
    """A fake run bundle: cmax.toml plus the spec the fake scorer reads."""
    path = root / cluster / run_dir
    path.mkdir(parents=True, exist_ok=True)
    (path / "cmax.toml").write_text(f"# fake bundle for {cluster}/{run_dir}\n")
    (path / "spec.json").write_text(json.dumps({"cluster": cluster, **spec}, sort_keys=True))
    return path


def drifting_runs(root: Path, *, sla_missed: bool = False) -> Path:
    """A runs root the audit finds drift in: east's November run 10 % slower than October's and
    no longer validated for the Exemplar suite (with ``sla_missed``, its SLA missed too: 99.0 %
    uptime over October against 99.9 %, a 25 % credit), west one steady run."""
    write_run(root, "east", "20251001-000000", workloads=fp8_70b(1.0), exemplar_pass=True)
    sla: dict[str, Any] = ({"sla": [99.9, 99.0, False, 25.0],
                            "period": ["2025-10-01", "2025-10-31"]} if sla_missed else {})
    write_run(root, "east", "20251101-000000", workloads=fp8_70b(0.9), exemplar_pass=False,
              **sla)
    write_run(root, "west", "20251101-000000", workloads=fp8_70b(1.0))
    return root


def fake_assess(path: Path) -> Scorecard:
    """Stands in for cmax.pipeline.assess: reads spec.json; {"error": ...} raises CmaxError."""
    from cmax.errors import CmaxError

    spec = json.loads((Path(path) / "spec.json").read_text())
    if "error" in spec:
        raise CmaxError(spec["error"], file=Path(path) / "cmax.toml")
    for key in ("sla", "period"):
        if key in spec:
            spec[key] = tuple(spec[key])
    if "incidents" in spec:
        spec["incidents"] = [tuple(x) for x in spec["incidents"]]
    if "network" in spec:
        spec["network"] = [tuple(x) for x in spec["network"]]
    return make_card(**spec)


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes), to prove nothing changed."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# Llama 3.1 70B FP8 and BF16 on 512 GPUs, one above and one below the reference
FP8_BF16_70B: list[WorkloadSpec] = [["llama3.1-70b", "fp8", 512, 1.02, 1.01, 1.03],
                                    ["llama3.1-70b", "bf16", 512, 0.97, 0.96, 0.98]]


def run_ref(cluster: str, run_dir: str, digest: str = "d" * 64) -> RunRef:
    """A discovered run of ``cluster`` named ``run_dir`` (a run folder's time stamp)."""
    stamp = parse_run_timestamp(run_dir)
    assert stamp is not None
    return RunRef(cluster=cluster, run_dir=run_dir, timestamp=stamp, path=Path("/x"),
                  digest=digest)


def history_entry(cluster: str, run_dir: str, **card: Any
                  ) -> tuple[RunRef, list[dict[str, Any]]]:
    """A run and the history rows its card (FP8_BF16_70B, ``card`` overrides) is stored as."""
    run = run_ref(cluster, run_dir)
    return run, rows_for_run(run, make_card(cluster=cluster, workloads=FP8_BF16_70B, **card))


def write_v1_part(history: Path, cluster_folder: str, cluster: str,
                  entries: list[tuple[RunRef, list[dict[str, Any]]]]) -> Path:
    """A part file exactly as cmax 0.1's store wrote it (no cluster column, version "1")."""
    folder = history / cluster_folder
    folder.mkdir(parents=True, exist_ok=True)
    rows = [row for _, run_rows in entries for row in run_rows]
    frame = frame_from_rows(rows)
    part = folder / f"part-{'a1b2c3d4e5' * 2}.parquet"
    frame.write_parquet(part, metadata={"cmax_history_version": "1"})
    (history / ".lock").write_text("")
    return part
