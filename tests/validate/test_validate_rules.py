"""Every validation rule: a bundle that trips it, and an honest bundle that must not.

Each case starts from ``HonestBundle`` (three realistic NeMo 2 runs with warm-up, ~1 % jitter
and a brief stall, an nccl-tests sweep, three closed MLPerf llama31_405b results, a clean audit,
an incident log) and breaks exactly one thing in its files, or adds a file in its real format
(a serving result, GPU telemetry, Slurm accounting, monitoring answers); the Exemplar rules
trip on an llmb-run package. Real ingest reads them: no rule is tripped from Evidence built
by hand (what Evidence built in Python can break and no file can, cmax refuses with one error
before validation: tests/resolve/test_canonical.py).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cmax.findings import Finding
from cmax.ingest import ingest
from cmax.ingest.evidence import Evidence
from cmax.reference.mlperf import load_mlperf_reference
from cmax.submission.bundle import open_bundle
from cmax.validate import RULES, validate
from tests.fakes import FakeReference
from tests.ingest.monitoring.files import answer, sacctmgr_events, steps
from tests.paths import DATA, REFERENCE
from tests.submission.intake.llmb_fakes import Job, write_jobs
from tests.validate.crossfile_trips import CROSSFILE_TRIPS
from tests.validate.reliability_fakes import restarted_run
from tests.validate.validate_fakes import (
    MLPERF_SYSTEM,
    HonestBundle,
    RunFx,
    honest_times,
    mllog,
    mlperf_result,
    mlperf_system,
    nccl_rows,
    nccl_text,
)

Case = Callable[[HonestBundle, Path], Evidence]
MLPERF_REFERENCE = load_mlperf_reference(REFERENCE)


def _package(*, count: int = 5, change: Callable[[list[Job]], None] = lambda jobs: None,
             nodes: int | None = None) -> Case:
    """An llmb-run package (llmb-config and log per job, tests/submission/intake/llmb_fakes.py)
    of the first ``count`` runs of the H100 Exemplar suite at 512 GPUs, launched today, with
    ``change`` made to its jobs; opened as ``cmax validate`` opens it (its manifest drafted
    with a price, ``nodes``: a [system] of more nodes than the package's one scalable unit)."""
    from cmax.reference.exemplar import current_release
    from cmax.submission.intake.draft import Commercial

    def case(bundle: HonestBundle, root: Path) -> Evidence:
        today = dt.date.today().isoformat() + "T10:00:00"
        jobs = []
        for i, key in enumerate(current_release().suite("h100")[:count]):
            run, dtype = key.split(":")
            workload, size = run.rsplit("_", 1)
            jobs.append(Job(job_id=101 + i, workload=workload, model_size=size, dtype=dtype,
                            model_name=workload.removeprefix("pretrain_"), scale=512,
                            launch_time=today))
        change(jobs)
        extra: dict[str, Any] = {"system": {"nodes": nodes}} if nodes else {}
        with open_bundle(write_jobs(root / "package", jobs),
                         commercial=Commercial(quote=2.0, manifest=extra)) as opened:
            return ingest(opened)
    return case


def _launched(when: str) -> Callable[[list[Job]], None]:
    def fn(jobs: list[Job]) -> None:
        for job in jobs:
            job.launch_time = when
    return fn


def _job(i: int, **values: object) -> Callable[[list[Job]], None]:
    def fn(jobs: list[Job]) -> None:
        for key, value in values.items():
            setattr(jobs[i], key, value)
    return fn


def edit(fn: Callable[[HonestBundle], None]) -> Case:
    """A case that changes the bundle's files, which real ingest then reads: the evidence is
    what a user's ``cmax validate`` of those files sees."""
    def case(bundle: HonestBundle, root: Path) -> Evidence:
        fn(bundle)
        return bundle.ingest(root)
    return case


def replace_times(run: int, fn: Callable[[int, float], float]) -> Callable[[HonestBundle], None]:
    def edit_bundle(bundle: HonestBundle) -> None:
        r = bundle.runs[run]
        r.times = [round(fn(i, t), 2) for i, t in enumerate(r.times)]
    return edit_bundle


def _window_times(bundle: HonestBundle) -> None:
    r = bundle.runs[1]
    r.times = [t if not 35 <= i <= 44 else round(13.05 + 0.0001 * (i - 35), 4)
               for i, t in enumerate(r.times)]


def _stragglers(bundle: HonestBundle) -> None:
    r = bundle.runs[1]
    r.times = [round(t * 1.3, 2) if i > 5 and i % 6 == 0 else t for i, t in enumerate(r.times)]


def _results(**changes: str) -> Callable[[HonestBundle], None]:
    def fn(bundle: HonestBundle) -> None:
        files = bundle.results()
        files.update(changes)
        bundle.mlperf_files = files
    return fn


def _nccl(fn: Callable[[dict[str, list[object]]], None]) -> Callable[[HonestBundle], None]:
    def edit_bundle(bundle: HonestBundle) -> None:
        rows = nccl_rows(bundle.nccl_path or "")
        fn(rows)
        bundle.nccl = rows
    return edit_bundle


def _scale(col: str, factor: float) -> Callable[[dict[str, list[object]]], None]:
    def fn(rows: dict[str, list[object]]) -> None:
        rows[col][10] = round(float(rows[col][10]) * factor, 2)  # type: ignore[arg-type]
    return fn


def _algbw_only(rows: dict[str, list[object]]) -> None:
    rows["algbw_gbps"][10] = round(float(rows["algbw_gbps"][10]) * 1.2, 2)  # type: ignore[arg-type]
    rows["busbw_gbps"][10] = round(float(rows["algbw_gbps"][10]) * 2 * 511 / 512, 2)  # type: ignore[arg-type]


def _summary_csv(bundle: HonestBundle) -> None:
    """Run 0 submits DGXC's parse-script summary (one row: the window's mean step time and
    TFLOP/s) in place of its log."""
    run = bundle.runs[0]
    bundle.extra_files[run.log] = (
        "filename,status,time_mean_seconds,time_std_dev_seconds,tflops_per_gpu_mean,"
        "tflops_per_gpu_std_dev,max_iteration\n"
        "pretrain_llama3.1-405b_bf16_512_100.out,Success,19.900,0.100,545.00,5.00,49\n")


def _truncate(last: int, declared: int) -> Callable[[HonestBundle], None]:
    def fn(bundle: HonestBundle) -> None:
        r = bundle.runs[0]
        r.times = r.times[: last + 1]
        r.max_iteration = declared
    return fn


def _monitoring(files: dict[str, str], **spec: Any) -> Callable[[HonestBundle], None]:
    """The bundle holds monitoring ``files`` and cmax.toml names them under [monitoring]."""
    def fn(bundle: HonestBundle) -> None:
        bundle.extra_files.update(files)
        bundle.manifest_extra["monitoring"] = spec
    return fn


def _tflops(i: int, fn: Callable[[int, float], float]) -> Callable[[HonestBundle], None]:
    """Run ``i``'s log prints ``fn(step, honest value)`` as each step's TFLOPS_per_GPU."""
    def edit_bundle(bundle: HonestBundle) -> None:
        run = bundle.runs[i]
        run.tflops = [None if v is None else fn(k, v) for k, v in enumerate(run.tflops_values())]
    return edit_bundle


def _bundle(**values: object) -> Callable[[HonestBundle], None]:
    """The honest bundle with ``values`` in place of its own (fields of HonestBundle)."""
    def fn(bundle: HonestBundle) -> None:
        for key, value in values.items():
            setattr(bundle, key, value)
    return fn


def _no_stall(bundle: HonestBundle) -> None:
    for run in bundle.runs:
        run.times = honest_times(run.base_step, run.seed, stall_at=None)


def _attr(i: int, **values: object) -> Callable[[HonestBundle], None]:
    def fn(bundle: HonestBundle) -> None:
        for key, value in values.items():
            setattr(bundle.runs[i], key, value)
    return fn


def _maxtext(**values: object) -> Callable[[HonestBundle], None]:
    """Run 0 submits a MaxText log (a JAX job: no NeMo container declared) with ``values``."""
    return _attr(0, log_format="maxtext", container=None, **values)


def _row(i: int, **values: object) -> Callable[[HonestBundle], None]:
    def fn(bundle: HonestBundle) -> None:
        bundle.runs[i].row.update(values)
    return fn


def _audit(dotted: str, value: object) -> Callable[[HonestBundle], None]:
    """The audit JSON states ``value`` at ``audit_data.<dotted>`` (graded by ingest)."""
    def fn(bundle: HonestBundle) -> None:
        bundle.audit_values[dotted] = value
    return fn


def _system(**values: str) -> Callable[[HonestBundle], None]:
    def fn(bundle: HonestBundle) -> None:
        bundle.system.update(values)
    return fn


def _incident_row(**changes: object) -> Callable[[HonestBundle], None]:
    """The first incident (an xid 79 GPU fault on node-036) with ``changes``."""
    def fn(bundle: HonestBundle) -> None:
        rows = bundle.incident_rows()
        rows[0] = {**rows[0], **changes}
        bundle.incidents = rows
    return fn


def _unannounced(bundle: HonestBundle) -> None:
    rows = bundle.incident_rows()
    rows[1] = {**rows[1], "description": "firmware"}  # planned, but never said to be announced
    bundle.incidents = rows


_JULY, _OCTOBER = dt.datetime(2026, 7, 1, tzinfo=dt.UTC), dt.datetime(2026, 10, 1, tzinfo=dt.UTC)


def _up_answer(gap: tuple[dt.datetime, dt.datetime] | None = None) -> str:
    """node-020..023 up all period, hourly (node-021 unscraped in ``gap``)."""
    def up(n: int) -> Callable[[dt.datetime], float | None]:
        return lambda t: None if gap and n == 21 and gap[0] <= t < gap[1] else 1.0

    return answer([({"__name__": "up", "instance": f"node-0{n}:9100", "job": "node"},
                    steps(_JULY, _OCTOBER, 3600, up(n))) for n in range(20, 24)])


def _few_incidents(bundle: HonestBundle) -> None:
    bundle.gpus_in_service = 8192
    bundle.incidents = [r for r in bundle.incident_rows() if r["planned"]]


def _copy_run(bundle: HonestBundle) -> None:
    twin = RunFx("llama3.1-405b", "fp8", 13.05, 256, 8, 8, 2, 8, seed=12,
                 spec={"log": "training/llama3.1-405b_fp8_512_rerun.log"})
    bundle.runs.append(twin)


# the fabric the network rules judge against (the honest bundle declares no interconnect)
NETWORK = {("infiniband-ndr-8x400", "all_reduce", 64): {
    "busbw_gbps": 368.0, "message_bytes": 2 ** 33, "source": "test fabric bar"}}


def _diag(name: str) -> Callable[[HonestBundle], None]:
    """The [[nccl]] entry is a folder holding the sweep and a dcgmi diag JSON from tests/data."""
    def fn(bundle: HonestBundle) -> None:
        bundle.extra_files["nccl/" + name.rsplit("/", 1)[-1]] = (DATA / "nccl" / name).read_text()
        bundle.manifest_extra["nccl"] = [{"path": "nccl"}]
    return fn


def _second_sweep(bundle: HonestBundle) -> None:
    """A one-node sweep on node-064 beside the 64-node sweep: 65 hosts, 64 nodes claimed."""
    bundle.extra_files["nccl/b.txt"] = nccl_text(nccl_rows("nccl/b.txt", ranks=8, nodes=1),
                                                 hosts=["node-064"])
    bundle.manifest_extra["nccl"] = [{"path": bundle.nccl_path}, {"path": "nccl/b.txt"}]


def _slow_fabric(bundle: HonestBundle) -> None:
    bundle.system["interconnect"] = "infiniband-ndr-8x400"
    bundle.nccl = nccl_rows(bundle.nccl_path or "", peak=100.0)


def _twin_nccl(bundle: HonestBundle) -> None:
    bundle.manifest_extra["nccl"] = [{"path": "nccl/a.txt"}, {"path": "nccl/b.txt"}]
    bundle.nccl_path = "nccl/a.txt"
    bundle.extra_files = {"nccl/b.txt": "# nccl-tests all_reduce_perf (fixture)\n"}


def _not_converged(*which: int) -> Callable[[HonestBundle], None]:
    def fn(bundle: HonestBundle) -> None:
        bundle.mlperf_files = {f"result_{i}.txt": mlperf_result(100 + i, accuracy=5.9
                                                                if i in which else 5.5 - 0.01 * i)
                               for i in range(3)}
    return fn


def _no_rcp(bundle: HonestBundle) -> None:
    """A benchmark MLCommons has published no RCPs for in rounds v4.0-v6.0."""
    bundle.mlperf_path = "mlperf/qwen35_397b_grpo"
    _mlperf_runs(overrides={"submission_benchmark": "qwen35_397b_grpo"})(bundle)


def _mlperf_runs(**kwargs: Any) -> Callable[[HonestBundle], None]:
    def fn(bundle: HonestBundle) -> None:
        bundle.mlperf_files = {f"result_{i}.txt": mlperf_result(100 + i, **kwargs)
                               for i in range(3)}
    return fn


def _stamps(run: int, stretch: float) -> list[float]:
    """Wall-clock stamps of run ``run``'s step lines, each step taking ``stretch`` x its
    printed time (1.0: honest)."""
    out: list[float] = []
    clock = 1_777_600_000.0
    for t in HonestBundle().runs[run].times:
        clock += t * stretch
        out.append(round(clock))
    return out


def _served(**edits: object) -> Callable[[HonestBundle], None]:
    """An [[inference]] entry (Llama 3.3 70B FP8 on 2 GPUs, 1000/1000 tokens) and its
    trtllm-bench report (tests/data/inference: 3,000 requests at 4,290 output tok/s), with the
    report's ``section.field`` values ``edits``."""
    def fn(bundle: HonestBundle) -> None:
        report = json.loads((DATA / "inference" / "trtllm_bench_report_llama3.3-70b.json")
                            .read_text(encoding="utf-8"))
        for dotted, value in edits.items():
            section, _, key = dotted.partition(".")
            report[section][key] = value
        bundle.extra_files["serve.json"] = json.dumps(report, indent=1)
        bundle.manifest_extra["inference"] = [{
            "result": "serve.json", "model": "llama3.3-70b", "precision": "fp8", "gpus": 2,
            "input_len": 1000, "output_len": 1000}]
    return fn


_SERVE_ENTRY = {"model": "llama3.3-70b", "precision": "fp8", "gpus": 2, "input_len": 1000,
                "output_len": 1000}


def _result_file(name: str, text: str, **spec: Any) -> Callable[[HonestBundle], None]:
    """The bundle holds the serving result ``name`` and an [[inference]] entry rating it
    (Llama 3.3 70B FP8 on 2 GPUs, 1000/1000 tokens, with ``spec``'s changes)."""
    def fn(bundle: HonestBundle) -> None:
        bundle.extra_files[name] = text
        bundle.manifest_extra["inference"] = [{"result": name, **_SERVE_ENTRY, **spec}]
    return fn


def _vllm(drop: tuple[str, ...] = (), **values: Any) -> Callable[[HonestBundle], None]:
    """``vllm bench serve --save-result`` of Llama 3.3 70B FP8 (tests/data/inference: 3,000
    requests of 1000/1000 tokens in 689.7 s, 4,350 output tok/s, saved 2026-11-02 10:15 UTC)
    with ``values`` set and the keys ``drop`` left out."""
    data = json.loads((DATA / "inference" / "vllm_bench_serve_llama3.3-70b.json")
                      .read_text(encoding="utf-8"))
    data.update(values)
    return _result_file("serve/vllm.json", json.dumps({k: v for k, v in data.items()
                                                      if k not in drop}))


def _loadgen_summary(**lines: str) -> str:
    """tests/data/inference/mlperf/offline_mlperf_log_summary.txt (a real LoadGen Offline
    summary) with the value after each ``label :`` in ``lines`` replaced."""
    text = (DATA / "inference" / "mlperf" / "offline_mlperf_log_summary.txt").read_text(
        encoding="utf-8")
    out = []
    for line in text.splitlines():
        label = line.split(":", 1)[0].strip()
        out.append(f"{line.split(':', 1)[0]}: {lines[label]}" if label in lines else line)
    return "\n".join(out) + "\n"


#: a sa-bench ``benchmark.out`` (tests/data/inference/sa_bench_benchmark.out's lines, Llama 3.3
#: 70B FP8 at 1000/1000 tokens) whose only block at concurrency 64 had no warm-up run before it
_SA_BENCH_COLD = """\
Namespace(backend='vllm', base_url='http://localhost:8000', host='127.0.0.1', port=8000, \
endpoint='/v1/completions', dataset_name='random', model='nvidia/Llama-3.3-70B-Instruct-FP8', \
tokenizer=None, num_prompts=1024, random_input_len=1000, random_output_len=1000, \
random_range_ratio=1.0, request_rate=inf, max_concurrency=64, save_result=False)
Traffic request rate: inf
Burstiness factor: 1.0 (Poisson process)
Maximum request concurrency: 64
Starting main benchmark run...
============ Serving Benchmark Result ============
Successful requests:                     1024
Benchmark duration (s):                  306.84
Total input tokens:                      1024000
Total generated tokens:                  1024000
Request throughput (req/s):              3.34
Output token throughput (tok/s):         3337.24
Total Token throughput (tok/s):          6674.48
---------------Time to First Token----------------
Mean TTFT (ms):                          1067.53
Median TTFT (ms):                        800.17
P99 TTFT (ms):                           5839.15
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          17.53
Median TPOT (ms):                        17.39
P99 TPOT (ms):                           20.62
==================================================
"""


def _busy_telemetry(bundle: HonestBundle) -> None:
    """nvidia-smi power of serve-01 (tests/data/ingest/power/gpu-node-01.csv's columns): 4
    GPUs at ~600 W every 10 s through the vLLM run, whose entry declares 2 GPUs."""
    end = dt.datetime(2026, 11, 2, 10, 15, tzinfo=dt.UTC)
    rng = random.Random(4)
    rows = ["timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], "
            "clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]"]
    for s in range(-690, 1, 10):
        when = end + dt.timedelta(seconds=s)
        rows += [f"{when:%Y/%m/%d %H:%M:%S}.{250 + g:03d}, {g}, {rng.gauss(600, 20):.2f} W, 60, "
                 "1980, 2619, 100, 45" for g in range(4)]
    _vllm()(bundle)
    bundle.extra_files["telemetry/serve-01.csv"] = "\n".join(rows) + "\n"
    bundle.manifest_extra["power"] = [{"path": "telemetry/serve-01.csv"}]


TRIPS: dict[str, Case] = {
    # schema
    # a TorchTitan log prints tokens/s, no step time; without its "Training starts ...
    # global batch size" line or a GBS in the manifest no step time can be derived
    "schema.missing-value": edit(_attr(0, log_format="torchtitan", spec={"gbs": None})),
    "schema.negative-iteration": edit(_maxtext(iterations=[-1, *range(1, 50)])),
    "schema.unknown-precision": edit(_attr(2, precision="fp7")),
    "schema.parser-note": edit(_attr(0, cut_tail=True)),
    # completeness
    # the job was killed while printing its first step line: a NeMo 2 log with no step
    "completeness.no-steps": edit(_attr(0, times=[], cut_tail=True)),
    # the log skips iterations 38-40 of the window
    "completeness.window-missing": edit(_attr(
        0, iterations=[i for i in range(50) if not 38 <= i <= 40],
        times=honest_times(19.86, 11)[:47])),
    "completeness.run-unfinished": edit(_truncate(46, 49)),
    "completeness.short-run": edit(_truncate(45, 45)),
    "completeness.summary-only": edit(_summary_csv),
    "completeness.empty-evidence": edit(lambda b: setattr(b, "drop_rows", ("nccl",))),
    "completeness.empty-incident-log": edit(lambda b: setattr(b, "drop_rows", ("incidents",))),
    "completeness.no-rateable-evidence": edit(_bundle(runs=[], nccl_path=None, mlperf_path=None,
                                                      audit_path=None)),
    # comparability
    "comparability.no-baseline": edit(_attr(0, workload="llama3.1-70b")),
    "comparability.precision-mismatch": edit(_attr(0, precision="nvfp4")),
    "comparability.scale-mismatch": edit(_attr(0, num_gpus=256, gbs=128)),
    "comparability.config-mismatch": edit(_attr(0, gbs=512)),
    "comparability.config-unverified": edit(_attr(0, vp=None)),
    "comparability.container-differs": edit(_attr(0, container="nvcr.io/nvidia/nemo:26.04.01")),
    "comparability.proxy-baseline": edit(_attr(2, precision="bf16", num_gpus=256, pp=4)),
    "comparability.baseline-erratum": edit(_attr(2, precision="bf16", num_gpus=256, pp=4)),
    # numeric sanity
    "sanity.non-finite": edit(replace_times(0, lambda i, t: math.nan if i == 40 else t)),
    "sanity.non-positive-time": edit(replace_times(0, lambda i, t: 0.0 if i == 40 else t)),
    "sanity.nan-grad-norm": edit(_attr(0, grad_norm=[0.4] * 40 + [math.nan] + [0.4] * 9)),
    "sanity.nan-loss": edit(_attr(0, loss=[10.0] * 40 + [math.nan] + [10.0] * 9)),
    "sanity.tflops-above-peak": edit(_tflops(0, lambda i, v: 2500.0 if i == 40 else v)),
    "sanity.throughput-above-peak": edit(_attr(0, times=honest_times(7.9, 11))),
    "sanity.tflops-zero": edit(_attr(0, tflops=[0.0] * 50)),
    "sanity.unexpected-improvement": edit(_attr(0, times=honest_times(18.6, 11))),
    "sanity.too-good-to-be-true": edit(_attr(0, times=honest_times(17.4, 11))),
    "sanity.nccl-wrong-results": edit(_nccl(lambda rows: rows["wrong"].__setitem__(4, 3))),
    # internal consistency
    "consistency.tflops-vs-step-time": edit(_tflops(0, lambda i, v: v * 1.3)),
    # a MaxText log printing tokens/s 10 % above what its step times give
    "consistency.tokens-vs-step-time": edit(_maxtext(tokens_scale=1.1)),
    "consistency.recipe-config-assumed": edit(_attr(0, vp=None)),
    "consistency.gpu-count": edit(_attr(0, num_gpus=1024, gbs=512)),
    "consistency.partial-nodes": edit(_bundle(gpus_per_node=6, nodes=100, gpus_in_service=600)),
    "consistency.parallel-layout": edit(_attr(0, tp=3)),
    "consistency.manifest-vs-log": edit(_row(0, gbs=512)),
    # a log spliced from two attempts: the second resumed from the checkpoint at iteration 25,
    # and its lines for 26-30 were cut, so its 25 is read after the first attempt's 29
    "consistency.iteration-sequence": edit(_attr(0, iterations=[*range(30), 25,
                                                                *range(31, 50)])),
    # the log's first attempt reached iteration 20; the run resumed from 12 (outside the window)
    "consistency.restarted-run": edit(_attr(0, earlier=list(range(21)), iterations=list(
        range(12, 62)), max_iteration=61)),
    # a resume from a checkpoint at iteration 40, inside the window 35-44
    "consistency.spliced-window": edit(_attr(0, earlier=list(range(46)), iterations=list(
        range(40, 90)), max_iteration=89)),
    "consistency.skipped-iterations": edit(_attr(0, megatron_skipped={41: 1})),
    "consistency.skipped-iterations-outside": edit(_attr(0, megatron_skipped={3: 1, 7: 1})),
    # a slow run (12 % slower) whose steps from iteration 25 on are a faster run's
    "statistics.speed-change": edit(_attr(0, times=[
        round(t * 1.12, 2) if 2 <= i < 25 else t
        for i, t in enumerate(honest_times(19.86, 11))])),
    "consistency.wall-clock": edit(_attr(0, extra_steps={"wall_time_s": _stamps(0, 1.2)})),
    "consistency.consumed-samples": edit(_attr(0, extra_steps={
        "consumed_samples": [128.0 * (i + 1) for i in range(50)]})),
    "consistency.single-step-window": edit(_attr(0, num_gpus=128, gbs=64, times=[
        *honest_times(19.5, 11)[:49], 18.6])),
    "consistency.nccl-busbw": edit(_nccl(_scale("busbw_gbps", 1.2))),
    "consistency.nccl-algbw": edit(_nccl(_algbw_only)),
    # MLPerf
    "mlperf.unreadable": edit(_results(**{"result_0.txt": mlperf_result(100) +
                                          ':::MLLOG {"key": "eval_accuracy", "value": \n'})),
    "mlperf.required-key": edit(_results(**{"result_0.txt": mlperf_result(
        100, drop=("eval_samples",))})),
    "mlperf.conflicting-key": edit(_results(**{"result_0.txt": mlperf_result(
        100, extra=(mllog("global_batch_size", 2304, 1.8e12),))})),
    "mlperf.duplicate-key": edit(_results(**{"result_0.txt": mlperf_result(
        100, extra=(mllog("submission_org", "Example Cloud", 1.8e12),))})),
    "mlperf.invalid-value": edit(_results(**{"result_0.txt": mlperf_result(
        100, overrides={"submission_division": "closedish"})})),
    "mlperf.hyperparameter": edit(_results(**{"result_0.txt": mlperf_result(
        100, overrides={"opt_adamw_beta_2": 0.99})})),
    "mlperf.init-budget": edit(_results(**{"result_0.txt": mlperf_result(100, init_minutes=45)})),
    "mlperf.event-order": edit(_results(**{"result_0.txt": mlperf_result(
        100, run_start_offset_ms=-60_000)})),
    "mlperf.run-not-converged": edit(_not_converged(1)),
    "mlperf.too-many-dropped": edit(_not_converged(1, 2)),
    "mlperf.run-count": edit(lambda b: setattr(b, "mlperf_files", {
        f"result_{i}.txt": mlperf_result(100 + i) for i in range(2)})),
    "mlperf.mixed-runs": edit(_results(**{"result_0.txt": mlperf_result(
        100, overrides={"global_batch_size": 2304, "opt_base_learning_rate": 1.6e-4})})),
    "mlperf.duplicate-seed": edit(_results(**{"result_1.txt": mlperf_result(
        101, overrides={"seed": 100})})),
    "mlperf.missing-seed": edit(_results(**{"result_0.txt": mlperf_result(100, drop=("seed",))})),
    "mlperf.no-rcp": edit(_no_rcp),
    "mlperf.rcp-fail": edit(_mlperf_runs(first_block=2)),  # converges at 184320 samples
    "mlperf.rcp-missing": edit(_mlperf_runs(overrides={  # no RCP above batch size 4608
        "global_batch_size": 9216, "opt_base_learning_rate": 6.4e-4})),
    "mlperf.rcp-scaling": edit(_mlperf_runs(first_block=4)),  # 276480 < RCP mean 313344
    # a hand-written factor where the RCPs give none (the honest runs converge at the mean)
    # the honest runs ran on 2025-10-09, 449 days before a benchmark dated 2027-01-01
    "mlperf.run-outside-period": edit(lambda b: b.manifest_extra.update(
        {"benchmark": {"date": dt.date(2027, 1, 1), "reference": "latest"}})),
    # NVIDIA's published v5.0 EOS-DFW 405B runs with submission_org edited to the provider's
    "mlperf.public-result": edit(lambda b: setattr(b, "mlperf_files", {
        p.name: p.read_text().replace('"NVIDIA"', '"Example Cloud"') for p in sorted(
            (DATA / "mlperf" / "v5.0" / "NVIDIA" / "results" / "eos-dfw_n64_ngc25.01_nemo"
             / "llama31_405b").glob("result_*.txt"))})),
    "mlperf.scaling-mismatch": edit(lambda b: setattr(b, "mlperf_files", {
        **HonestBundle().results(), "scaling.json": '{"scaling_factor": 0.8}'})),
    "mlperf.no-system": edit(lambda b: setattr(b, "skip_files", (MLPERF_SYSTEM,))),
    "mlperf.system-mismatch": edit(lambda b: b.extra_files.update({MLPERF_SYSTEM: json.dumps(
        mlperf_system(accelerator_model_name="NVIDIA B200-SXM-180GB"))})),
    "mlperf.platform-mismatch": edit(_results(**{"result_0.txt": mlperf_result(
        100, overrides={"submission_platform": "32xH100"})})),
    # statistical red flags
    "statistics.constant-step-times": edit(_attr(1, times=[13.0] * 50)),
    "statistics.low-variance": edit(_window_times),
    "statistics.window-outliers": edit(replace_times(1, lambda i, t: t * 1.5 if i in (36, 40)
                                                     else t)),
    "statistics.stragglers": edit(_stragglers),
    "statistics.stall": edit(lambda b: None),
    "statistics.drift": edit(replace_times(1, lambda i, t: t * (1 + 0.12 * i / 49))),
    "statistics.cherry-picked-window": edit(replace_times(1, lambda i, t: t * 0.9
                                                          if 35 <= i <= 44 else t)),
    "statistics.duplicate-log": edit(_copy_run),
    "statistics.too-few-incidents": edit(_few_incidents),
    # software floors
    "software.below-recipe-floor": edit(_system(driver="530.30.02")),
    "software.below-recommended": edit(_system(driver="550.54.15")),
    "software.driver-security-floor": edit(_system(driver="570.124.06")),
    "software.version-conflict": edit(_system(driver="580.95.05")),
    "software.unparseable-version": edit(_system(cuda="latest")),
    "software.versions-unknown": edit(_bundle(system={}, audit_path=None)),
    # ClusterMAX audit
    "audit.security-fail": edit(_audit("securityVersions.nvidiaDriver.status", "fail")),
    "audit.fail": edit(_audit("healthChecks.nhcInstalled", False)),
    "audit.warnings": edit(_audit("software.cudaVisibleDevicesStatus", "unknown")),
    "audit.cluster-mismatch": edit(lambda b: setattr(b, "audit_cluster", "other-h100-west")),
    # ACS reported off while its own count says every bridge has it on
    "audit.inconsistent": edit(_audit("gpus.pcieAcs", {"enabled": False, "enabledCount": 16,
                                                     "totalBridges": 16})),
    "audit.partial": edit(lambda b: setattr(b, "audit_nodes", 2)),
    # network fabric
    "network.socket-fallback": edit(lambda b: setattr(b, "nccl_info", ("Using network Socket",))),
    "network.below-fabric": edit(_slow_fabric),
    # incident log and fleet
    "reliability.incident-outside-period": edit(_incident_row(
        start=dt.datetime(2026, 10, 3, 1, 0, tzinfo=dt.UTC),
        end=dt.datetime(2026, 10, 3, 2, 0, tzinfo=dt.UTC))),
    "reliability.fault-labelled-planned": edit(_incident_row(planned=True)),
    "reliability.incident-without-time": edit(_incident_row(end=None)),
    "reliability.nodes-outside-cluster": edit(lambda b: setattr(b, "nccl_host_names", [
        f"gpu{i:04d}" for i in range(64)])),
    "reliability.fleet-beyond-evidence": edit(lambda b: setattr(b, "gpus_in_service", 100_000)),
    "reliability.partial-period": edit(lambda b: setattr(b, "incidents", [
        r for r in b.incident_rows() if r["start"].month == 7])),
    # the incident log against the training logs' own clocks and the benchmark's dates
    "reliability.planned-without-announcement": edit(_unannounced),
    "reliability.restart-not-in-log": edit(restarted_run()),
    "reliability.outage-ends-before-resume": edit(restarted_run(logged=(5, 30))),
    "reliability.period-away-from-evidence": edit(lambda b: b.manifest_extra.update(
        {"benchmark": {"date": dt.date(2026, 12, 20), "reference": "latest"}})),
    # the incident log against the buyer's monitoring (tests/ingest/monitoring/ has the live ones)
    "reliability.outage-not-in-log": edit(_monitoring({"slurm.txt": sacctmgr_events([(
        "node-020", "2026-08-03T10:00:00", "2026-08-03T16:00:00", "DOWN", "not responding")])},
        slurm_events="slurm.txt")),
    "reliability.outage-ended-early-in-log": edit(_monitoring({"slurm.txt": sacctmgr_events([(
        "node-036", "2026-07-04T11:00:00", "2026-07-04T14:00:00", "DRAIN", "xid 79")])},
        slurm_events="slurm.txt")),
    "reliability.xid-not-in-log": edit(_monitoring(
        {"up.json": _up_answer(), "xid.json": answer([(
            {"__name__": "DCGM_FI_DEV_XID_ERRORS", "Hostname": "node-021", "gpu": "3"},
            steps(_JULY, _OCTOBER, 3600, lambda t: 48.0 if t.day > 20 and t.month == 8 else 0))])},
        up_answer="up.json", xid_answer="xid.json")),
    "reliability.monitoring-outside-cluster": edit(_monitoring({"slurm.txt": sacctmgr_events([(
        "eos[0040-0043]", "2026-08-03T10:00:00", "2026-08-03T10:30:00", "DOWN", "reboot")])},
        slurm_events="slurm.txt")),
    "reliability.monitoring-gaps": edit(_monitoring(
        {"up.json": _up_answer(gap=(dt.datetime(2026, 8, 1, tzinfo=dt.UTC),
                                    dt.datetime(2026, 8, 9, tzinfo=dt.UTC)))},
        up_answer="up.json")),
    "reliability.monitoring-not-assessed": edit(_monitoring({"up.json": answer([])},
                                                           up_answer="up.json")),
    # MLPerf results that are not the provider's own
    "mlperf.foreign-submitter": edit(lambda b: b.manifest_extra.update(
        provider={"name": "NVIDIA", "cluster": b.cluster})),
    "mlperf.cited-context": edit(lambda b: b.manifest_extra.update(
        mlperf=[{"path": b.mlperf_path, "cited": True}])),
    # the slowest run replaced by a copy of the fastest with a new seed
    "mlperf.cloned-run": edit(lambda b: setattr(b, "mlperf_files", {
        **b.results(), "result_2.txt": mlperf_result(100, overrides={"seed": 102})})),
    "network.hosts-outside-cluster": edit(lambda b: setattr(b, "nccl_host_names", [
        "eos0001", "eos0002", *(f"node-{i:03d}" for i in range(2, 64))])),
    # two sweeps whose hosts together are more than the nodes claimed (one file alone is
    # identity.node-count's)
    "network.hosts-beyond-claim": edit(_second_sweep),
    "network.diag-not-evaluated": edit(_diag("dcgm3/gpu-node-03.json")),
    "network.diag-configuration": edit(_diag("dcgm/gpu-node-05.json")),
    # claims vs evidence
    "identity.gpu": edit(lambda b: setattr(b, "nccl_gpu", "NVIDIA H200")),
    "identity.gpu-count": edit(_attr(0, world=64)),
    "identity.node-count": edit(lambda b: setattr(b, "nccl", nccl_rows(b.nccl_path or "",
                                                                         nodes=128))),
    "identity.precision": edit(_attr(0, header_extra=["fp8: hybrid"])),
    "identity.model": edit(_attr(0, experiment="pretrain_grok1-314b_fp8_512")),
    "identity.shared-evidence": edit(lambda b: b.runs[1].spec.update(log=b.runs[0].log)),
    # the 405B bf16 run's log runs at the fp8 baseline's speed (fp8 declared bf16)
    "identity.arithmetic": edit(_attr(0, times=honest_times(13.05, 11))),
    # the log's argument dump: an 8B network's hidden size under the 405B claim
    "identity.architecture": edit(_attr(0, header_extra=["hidden_size: 4096"])),
    # the run declares a newer NeMo container than its baseline (25.04.01) was measured with
    "identity.baseline-software": edit(_attr(0, container="nvcr.io/nvidia/nemo:25.09")),
    "identity.software": edit(_attr(0, header_extra=["Using image nvcr.io#nvidia/nemo:24.09"])),
    # serving benchmarks
    "inference.throughput-arithmetic": edit(_served(
        **{"performance.system_output_throughput_tok_s": 5200.0})),
    "inference.failed-requests": edit(_vllm(completed=2880, failed=120,
                                            total_input_tokens=2_880_000,
                                            total_output_tokens=2_880_000,
                                            duration=2_880_000 / 4350)),
    # 64 requests in flight at 40 ms per token give at most 1,600 tok/s, the file says 4,350
    "inference.per-user-beyond-total": edit(_vllm(max_concurrency=64, mean_tpot_ms=40.0)),
    # 4 GPUs drawing 600 W through the run of a result declared on 2
    "inference.gpus-beyond-declared": edit(_busy_telemetry),
    # 64 requests in flight at 200 ms TTFT + 999 x 10 ms give 6,281 tok/s, the file 4,350
    "inference.littles-law": edit(_vllm(max_concurrency=64, mean_tpot_ms=10.0,
                                        mean_ttft_ms=200.0)),
    "inference.percentiles-disordered": edit(_vllm(p99_tpot_ms=300.0)),
    # an H100 MLPerf Offline llama2-70b result at twice the best available H100 system's
    # tokens/s per GPU (3,902.47)
    "inference.beyond-reference": edit(_result_file(
        "mlperf/mlperf_log_summary.txt", _loadgen_summary(**{
            "Tokens per second": "15609.88", "Samples per second": "51.8601"}),
        model="llama2-70b", output_len=301)),
    "inference.lengths-mismatch": edit(_served(**{"request_info.avg_output_length": 500.0,
                                                  "performance.total_latency_ms": 1.5e9 / 4290})),
    "inference.gpu-count-contradicted": edit(_served(**{"world_info.world_size": 4})),
    "inference.gpu-contradicted": edit(_served(**{"machine.name": "NVIDIA H200"})),
    "inference.model-contradicted": edit(_served(**{"engine.model": "openai/gpt-oss-120b"})),
    "inference.tool-invalid": edit(_result_file(
        "mlperf/mlperf_log_summary.txt", _loadgen_summary(**{
            "Result is": "INVALID", "Min duration satisfied": "NO"}),
        model="llama2-70b", gpus=8, output_len=301)),
    "inference.no-warmup": edit(_result_file("serve/benchmark.out", _SA_BENCH_COLD)),
    "inference.temperature-not-fixed": edit(_vllm(drop=("temperature",))),
    "exemplar.suite-incomplete": _package(count=3),
    "exemplar.off-scale": _package(change=_job(0, scale=256)),
    "exemplar.recipe-release-mixed": _package(change=_job(1, image="nvcr.io#nvidia/nemo:26.04.01")),
    "exemplar.expired": _package(change=_launched("2025-01-05T08:00:00")),
    # the price and suite are there; the SLA and incident log are not (an llmb-run package
    # holds neither)
    "exemplar.left-out": _package(),
    "exemplar.units-missing": _package(nodes=128),
}

# Rules an honest bundle does fire by design (info), each with its own clean variant.
INHERENT: dict[str, Case] = {
    "mlperf.no-rcp": edit(lambda b: setattr(b, "mlperf_path", None)),
    "statistics.stall": edit(_no_stall),
}


TRIPS.update(CROSSFILE_TRIPS)


def tripped(case: Case, tmp_path: Path) -> tuple[list[Finding], bool]:
    """The findings of ``case``'s evidence, and whether that evidence was built by hand."""
    bundle = HonestBundle()
    evidence = case(bundle, tmp_path)
    return (validate(evidence, FakeReference(network=NETWORK, mlperf_table=MLPERF_REFERENCE)),
            bundle.built_by_hand)


def run_case(case: Case, tmp_path: Path) -> list[Finding]:
    return tripped(case, tmp_path)[0]


def fired(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings}


def test_every_rule_has_a_tripping_case() -> None:
    assert set(TRIPS) == set(RULES)


@pytest.mark.parametrize("rule_id", sorted(TRIPS))
def test_rule_trips(rule_id: str, tmp_path: Path) -> None:
    """The rule fires from files real ingest reads: a rule no file can reach is no rule (a
    guard on Evidence built in Python is an error at the API boundary instead)."""
    findings, by_hand = tripped(TRIPS[rule_id], tmp_path)
    hits = [f for f in findings if f.rule == rule_id]
    assert hits, f"{rule_id} did not fire; got {sorted(fired(findings))}"
    assert not by_hand, (f"{rule_id}'s case builds its evidence by hand: write files (an edit "
                         "case)")
    rule = RULES[rule_id]
    for f in hits:
        assert f.severity == rule.severity
        assert f.message and f.fix


@pytest.fixture(scope="session")
def honest_findings(tmp_path_factory: pytest.TempPathFactory) -> list[Finding]:
    """The honest bundle written and ingested once per test run: the clean case every rule
    is checked against."""
    return validate(HonestBundle().ingest(tmp_path_factory.mktemp("honest")), FakeReference())


@pytest.mark.parametrize("rule_id", sorted(set(RULES) - set(INHERENT)))
def test_honest_bundle_does_not_trip(rule_id: str, honest_findings: list[Finding]) -> None:
    assert rule_id not in fired(honest_findings)


@pytest.mark.parametrize("rule_id", sorted(INHERENT))
def test_inherent_info_rules_have_clean_variants(rule_id: str, tmp_path: Path) -> None:
    assert rule_id not in fired(run_case(INHERENT[rule_id], tmp_path))


def test_honest_bundle_findings_are_info_only(honest_findings: list[Finding]) -> None:
    assert {f.severity for f in honest_findings} <= {"info"}
    assert fired(honest_findings) == {"mlperf.no-rcp", "statistics.stall"}


@pytest.mark.parametrize(("stated", "hit"), [
    ({}, False), ({"is_multinode": False, "tp": 24}, False),
    ({"num_prefill_gpu": 4, "num_decode_gpu": 20}, True)])
def test_a_stated_prefill_decode_split_must_match_the_declared_one(
        stated: dict[str, Any], hit: bool, tmp_path: Path) -> None:
    """The manifest declares 8 prefill + 16 decode GPUs for InferenceX's disaggregated
    DeepSeek-R1 row (tests/data/inference/inferencex_agg_gb200_disagg.json, which states that
    split); a row stating the same split, or none (an aggregated row on 24 GPUs), raises
    nothing; a row stating another split is the GPU-count contradiction."""
    data = json.loads((DATA / "inference" / "inferencex_agg_gb200_disagg.json")
                      .read_text(encoding="utf-8"))
    case = edit(_result_file("serve/agg.json", json.dumps({**data, **stated}),
                             model="deepseek-r1", precision="fp4", gpus=24, prefill_gpus=8,
                             decode_gpus=16, input_len=8192, output_len=1024))
    found = [f for f in run_case(case, tmp_path) if f.rule == "inference.gpu-count-contradicted"]
    assert bool(found) == hit, [f.message for f in found]
    if hit:
        assert "4 prefill + 20 decode GPUs, the manifest 8 + 16" in found[0].message
