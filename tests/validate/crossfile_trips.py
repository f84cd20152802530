"""The cross-file rules' tripping cases on the honest bundle (merged into TRIPS by
test_validate_rules): each changes one file the way a provider playing the bundle would, and
real ingest reads the written bundle."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cmax.ingest.evidence import Evidence
from tests.validate.validate_fakes import HonestBundle, nccl_rows, nccl_text

Case = Callable[[HonestBundle, Path], Evidence]
START = 1789372800  # 2026-09-14 08:00 UTC, the honest runs' date


def power_json(hosts: list[str], *, gpus: int = 8, samples: int = 12, watts: float = 640.0,
               seed: int = 5, copy_from: int | None = None, load: bool = False,
               rejitter: float = 0.0, copies: dict[int, int] | None = None) -> str:
    """DCGM Exporter's DCGM_FI_DEV_POWER_USAGE as a Prometheus range query answers it
    (tests/data/ingest/power/dcgm_power_range.json), one series per GPU. ``load``: the GPUs
    follow the job's common load (a swing of +-90 W, a checkpoint dip of 250 W every 40
    samples) about their own offset (+-15 W), each with its own 25 W of noise; ``copy_from``:
    every GPU reads what that GPU of the first host reads, 3 W higher and with ``rejitter`` W
    of noise added when that is set (a re-jittered copy)."""
    rng = random.Random(seed)
    common = [90 * math.sin(i / 7) - (250 if i % 40 < 3 else 0) + rng.gauss(0, 30)
              if load else 0.0 for i in range(samples)]
    series = {}
    for h in hosts:
        for g in range(gpus):
            offset = rng.gauss(0, 15) if load else 0.0
            series[(h, g)] = [round(watts + offset + c + rng.gauss(0, 25), 1) for c in common]
    result = []
    for (h, g), values in series.items():
        if copy_from is not None:
            values = series[(hosts[0], copy_from)]
        elif copies and h == hosts[0] and g in copies:
            values = [round(v + 3 + rng.gauss(0, rejitter), 1)
                      for v in series[(hosts[0], copies[g])]]
        result.append({
            "metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "Hostname": h, "gpu": str(g),
                       "instance": f"{h}:9400", "job": "dcgm-exporter"},
            "values": [[START + 5 * i, f"{v}"] for i, v in enumerate(values)]})
    return json.dumps({"status": "success", "data": {"resultType": "matrix",
                                                     "result": result}}, indent=1)


def with_power(b: HonestBundle, *texts: str) -> None:
    """The honest bundle with [[power]] files holding ``texts``."""
    paths = [f"telemetry/power{i or ''}.json" for i in range(len(texts))]
    b.extra_files.update(zip(paths, texts, strict=True))
    b.manifest_extra["power"] = [{"path": p} for p in paths]


def _with_power(text: str, *more: str) -> Case:
    def case(b: HonestBundle, root: Path) -> Evidence:
        with_power(b, text, *more)
        return b.ingest(root)
    return case


def _foreign_sweep(b: HonestBundle, root: Path) -> Evidence:
    """A sweep of node-100..node-163 beside telemetry of node-000..node-007 (64 nodes)."""
    with_power(b, power_json([f"node-{i:03d}" for i in range(8)]))
    b.nccl_host_names = [f"node-{100 + i:03d}" for i in range(64)]
    return b.ingest(root)


def _known_sweep(b: HonestBundle, root: Path) -> Evidence:
    """Oracle's published two-node A100 sweep (tests/data/nccl/exec_cmd_2node.txt, copied
    verbatim from its OCI docs) submitted as a second [[nccl]] sweep of this cluster."""
    from tests.paths import DATA

    b.extra_files["nccl/two_node.txt"] = (DATA / "nccl" / "exec_cmd_2node.txt").read_text(
        encoding="utf-8")
    b.manifest_extra["nccl"] = [{"path": b.nccl_path}, {"path": "nccl/two_node.txt"}]
    return b.ingest(root)


def _copied_run(b: HonestBundle, root: Path) -> Evidence:
    """runs[0] submitted again with each step re-jittered by up to 10 ms."""
    first = b.runs[0]
    rng = random.Random(3)
    times = [round(t + rng.choice((-0.01, 0.0, 0.01)), 2) for t in first.times]
    b.runs.append(dataclasses.replace(first, times=times, spec={"log": "training/rerun.log"}))
    return b.ingest(root)


def _copied_sweep(b: HonestBundle, root: Path) -> Evidence:
    """The honest sweep again under another name, every time moved by 0.01 %."""
    rows = nccl_rows("nccl/again.txt")
    rows["time_us"] = [round(float(t) * 1.0001, 1) for t in rows["time_us"]]
    b.extra_files["nccl/again.txt"] = nccl_text(rows)
    b.manifest_extra["nccl"] = [{"path": b.nccl_path}, {"path": "nccl/again.txt"}]
    return b.ingest(root)


def sacct_text(jobs: list[tuple[str, str, int, int, str]]) -> str:
    """``sacct -P`` rows (tests/data/ingest/slurm/sacct_parsable.txt's shape): (job id, cluster,
    submit offset from START, elapsed seconds, node list)."""
    import datetime as dt

    def when(t: float) -> str:
        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")

    lines = ["JobID|JobIDRaw|JobName|Cluster|NodeList|State|Submit|Start|End|Elapsed"]
    for job_id, cluster, submit, elapsed, nodes in jobs:
        start = START + submit + 20
        lines.append(f"{job_id}|{job_id}|pretrain|{cluster}|{nodes}|COMPLETED|"
                     f"{when(START + submit)}|{when(start)}|{when(start + elapsed)}|"
                     f"{elapsed // 3600:02d}:{elapsed % 3600 // 60:02d}:{elapsed % 60:02d}")
    return "\n".join(lines) + "\n"


HONEST_JOBS = [("5001", "aurora", 0, 1300, "node-[000-063]"),
               ("5002", "aurora", 1400, 900, "node-[000-063]"),
               ("5003", "aurora", 2400, 950, "node-[000-063]")]


def with_jobs(jobs: list[tuple[str, str, int, int, str]],
              run_jobs: tuple[str, ...] = ("5001", "5002", "5003")) -> Case:
    """The honest bundle with an [[accounting]] sacct -P file and each [[runs]] entry naming
    its job."""
    def case(b: HonestBundle, root: Path) -> Evidence:
        for run, job in zip(b.runs, run_jobs, strict=False):
            run.spec["job_id"] = job
        b.extra_files["slurm/sacct.txt"] = sacct_text(jobs)
        b.manifest_extra["accounting"] = [{"path": "slurm/sacct.txt"}]
        return b.ingest(root)
    return case


def _stamped_beyond_job(b: HonestBundle, root: Path) -> Evidence:
    """runs[1]'s lines stamped 30 s apart (1,500 s) inside a 900 s job."""
    run = b.runs[1]
    run.extra_steps["wall_time_s"] = [float(START + 30 * i) for i in range(len(run.times))]
    return with_jobs(HONEST_JOBS)(b, root)


def _edit_run(fn: Callable[[Any], None]) -> Case:
    def case(b: HonestBundle, root: Path) -> Evidence:
        fn(b.runs[0])
        return b.ingest(root)
    return case


def _no_warm_up(run: Any) -> None:
    run.times = [run.base_step, run.base_step, *run.times[2:]]


def _quiet(run: Any) -> None:
    """Steps printed to the millisecond, 0.04 % apart: above the low-variance error floor."""
    rng = random.Random(2)
    run.times = [*run.times[:2], *(round(run.base_step * (1 + rng.gauss(0, 0.0004)), 3)
                                   for _ in run.times[2:])]


def _formula(run: Any) -> None:
    run.loss = [round(12.0 - 0.1 * i, 3) for i in range(len(run.times))]


def _stamped(factor_before: float, factor_after: float) -> Callable[[Any], None]:
    """Stamps that advance by each step's printed time x the factor (iterations < 30, >= 30)."""
    def fn(run: Any) -> None:
        clock, stamps = float(START), []
        for i, t in enumerate(run.times):
            clock += t * (factor_before if i < 30 else factor_after)
            stamps.append(float(round(clock)))
        run.extra_steps["wall_time_s"] = stamps
    return fn


def _faster_rerun(b: HonestBundle, root: Path) -> Evidence:
    """The fp8 configuration run three times; one of them 12 % faster than the other two."""
    from tests.validate.validate_fakes import honest_times

    first = b.runs[1]
    for seed, scale, log in ((21, 1.0, "training/again.log"), (22, 0.88, "training/best.log")):
        b.runs.append(dataclasses.replace(
            first, seed=seed, times=honest_times(first.base_step * scale, seed),
            spec={"log": log}, row={}, extra_steps={}))
    return b.ingest(root)


def _known_log(run: Any) -> None:
    """runs[0] printing the step times of a log cmax ships as another cluster's (re-jittered by
    10 ms)."""
    from cmax.reference.known_logs import load_known_logs
    from tests.paths import REFERENCE

    entry = next(e for e in load_known_logs(REFERENCE).logs if e.cluster != HonestBundle.cluster)
    by_it = dict(zip(entry.iteration, entry.step_time_s, strict=True))
    rng = random.Random(9)
    run.times = [round(by_it[i] + rng.choice((-0.01, 0.01)), 2) if i in by_it else t
                 for i, t in enumerate(run.times)]


CROSSFILE_TRIPS: dict[str, Case] = {
    "crossfile.hosts-of-another-cluster": _foreign_sweep,
    "crossfile.copied-run": _copied_run,
    "crossfile.copied-sweep": _copied_sweep,
    "crossfile.copied-telemetry": _with_power(power_json(["node-000"], copy_from=3)),
    # the fp8 run prints ~700 s of steps; its job held the allocation 500 s
    "crossfile.job-shorter-than-steps": with_jobs([*HONEST_JOBS[:1],
                                                   ("5002", "aurora", 1400, 500, "node-[000-063]"),
                                                   *HONEST_JOBS[2:]]),
    "crossfile.job-shorter-than-log": _stamped_beyond_job,
    "crossfile.job-not-witnessed": with_jobs(HONEST_JOBS, ("5001", "5002", "5999")),
    # the bf16 run's job renumbered above the others: its id is the highest, its submit first
    "crossfile.job-order": with_jobs([("5009", "aurora", 0, 1300, "node-[000-063]"),
                                      *HONEST_JOBS[1:]], ("5009", "5002", "5003")),
    "consistency.stamps-shorter-than-steps": _edit_run(_stamped(0.8, 0.8)),
    # steps outside the window printed 30 % shorter than the clock shows
    "consistency.run-wall-clock": _edit_run(_stamped(1.3, 1.0)),
    "crossfile.runs-disagree": _faster_rerun,
    "crossfile.known-log": _edit_run(_known_log),
    "crossfile.known-sweep": _known_sweep,
    "fabrication.no-warm-up": _edit_run(_no_warm_up),
    "fabrication.low-jitter": _edit_run(_quiet),
    "fabrication.formula-loss": _edit_run(_formula),
    "crossfile.job-of-another-cluster": with_jobs([*HONEST_JOBS[:2],
                                                   ("5003", "aurora-b", 2400, 950,
                                                    "node-[000-063]")]),
}


def honest_power() -> Any:
    """An honest telemetry file of node-000..node-007 (the sweep's first hosts)."""
    return power_json([f"node-{i:03d}" for i in range(8)])
