"""MLPerf Training compliance: the checks MLCommons' own tools apply, restated.

An MLPerf result is only a result if its log passes the compliance checker (required keys,
pinned hyperparameters, an init budget, a reached quality target), the package holds exactly
the required number of runs (olympic scoring drops the best and the worst; at most one run may
fail), the seeds differ, and the runs converge no faster than MLCommons' reference convergence
points (RCPs) allow. The rules follow ``mlcommons/logging`` (compliance_checker rulesets,
result_summarizer, package_checker, seed checker, rcp_checker); facts, not code, are reused.

Every check reads the MLPerf sets ingest parsed (``case.mlperf_sets``: events with their line
numbers, runs, system JSON, scaling factor); no file is opened here. The RCP data comes from
the reference release (``reference/mlperf_rcp.json``, copied from the mlperf-logging package).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cmax.findings import Finding
from cmax.ingest.formats.mlperf import (
    REQUIRED_RUNS,
    ROUND_BENCHMARKS,
    convergence_point,
    olympic_drop,
    relative_path,
)
from cmax.reference.gpus import gpu_family
from cmax.reference.mlperf import rcp_check
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import MLPERF_PERIOD_DAYS

if TYPE_CHECKING:
    from cmax.ingest.formats.mlperf import MlperfRun, MlperfSet
    from cmax.reference.mlperf import MlperfReference
    from cmax.submission.manifest import MlperfSpec

_SRC = "mlcommons/logging compliance_checker"

register(Rule(
    "mlperf.unreadable", "error", "An MLLOG line cannot be parsed",
    "MLCommons' parser fails the whole result file on any `:::MLLOG` line that is not valid JSON "
    "or lacks a numeric time_ms.",
    "Submit the log exactly as mllog wrote it (no truncated or hand-edited lines).",
    f"{_SRC}/mlp_parser.",
))
register(Rule(
    "mlperf.required-key", "error", "A required MLLOG key is missing",
    "The compliance checker requires submission_org/platform/division/benchmark, cache_clear, "
    "init_start/init_stop, run_start/run_stop (with a status), block or epoch events, "
    "train_samples, eval_samples, eval_accuracy, and each benchmark's hyperparameter keys.",
    "Log every required key with mllog (see the benchmark's reference implementation).",
    f"{_SRC}/training_6.0.0/common.yaml and closed_<benchmark>.yaml.",
))
register(Rule(
    "mlperf.conflicting-key", "error", "An exactly-once key has different values",
    "A key that must appear once appears several times with different values: the log mixes "
    "runs or configurations.",
    "Submit one log per run, written once (no append-mode relaunches).",
    "mlcommons/logging#14: identical repeats warn, different repeats fail.",
))
register(Rule(
    "mlperf.duplicate-key", "warning", "An exactly-once key is repeated",
    "A key that must appear once is repeated with the same value, typically a relaunch that "
    "appended to the same log file.",
    "Write each run to a fresh log file.",
    "mlcommons/logging#14; AMD-AGI/Primus PR #1071 (append-mode logs).",
))
register(Rule(
    "mlperf.invalid-value", "error", "A submission key has an invalid value",
    "submission_division must be closed or open, submission_org and submission_platform must be "
    "non-empty, the benchmark must be a known one and gradient_accumulation_steps > 0.",
    "Correct the value logged by the submission.",
    f"{_SRC}/training_6.0.0/common.yaml, closed_common.yaml.",
))
register(Rule(
    "mlperf.hyperparameter", "error", "A pinned hyperparameter differs (closed division)",
    "The closed division pins the sequence length, optimizer and its constants, evaluation size "
    "and learning-rate rules per benchmark; a different value makes the result open-division "
    "at best.",
    "Use the reference hyperparameters, or submit in the open division.",
    f"{_SRC} closed_llama31_8b (5.1.0), closed_llama31_405b / closed_deepseekv3_671b (6.0.0), "
    "closed_llama2_70b_lora (4.0.0), closed_gpt3 (3.0.0).",
))
register(Rule(
    "mlperf.init-budget", "error", "Initialisation took longer than allowed",
    "Untimed initialisation (compilation, warm-up) must end within 30 minutes of the first "
    "init_start in the closed division and 240 minutes in the open division.",
    "Reduce untimed setup work, or move it into the timed region.",
    f"{_SRC}/training_6.0.0/common.yaml (init_stop check).",
))
register(Rule(
    "mlperf.event-order", "error", "Run events are out of order",
    "run_start must follow init_stop and run_stop must follow run_start, and every event "
    "logged between them must be timed between them (an event after run_stop timed before "
    "it, or a block or evaluation outside the run, is a run_stop or run_start edited to "
    "shorten the run); otherwise the time-to-train (run_stop - run_start) is meaningless.",
    "Submit the unedited log.",
    f"{_SRC}/training_6.0.0/common.yaml; in 123 public result files (tests/data, samples) no "
    "event is timed outside its run by more than the 1 s tolerance.",
    effect="not_independent",
))
register(Rule(
    "mlperf.run-not-converged", "warning", "A run did not reach the quality target",
    "The run stopped without status success or without an eval_accuracy meeting the target; "
    "MLPerf scores it as infinitely slow (it becomes the dropped run).",
    "Nothing to fix if it is the only one; otherwise re-run.",
    "mlcommons/logging result_summarizer; mlcommons/training_policies#361.",
))
register(Rule(
    "mlperf.too-many-dropped", "error", "More failed runs than MLPerf allows",
    "Olympic scoring drops the fastest and the slowest run; at most one run (four for unet3d) "
    "may fail. With more, the summarizer prints \"results NOT correct\".",
    "Re-run until enough runs converge.",
    "mlcommons/logging result_summarizer and package_checker.",
))
register(Rule(
    "mlperf.run-count", "error", "Wrong number of runs for the benchmark",
    "The package checker requires exactly the benchmark's number of result files (10 for "
    "llama31_8b and llama2_70b_lora, 3 for llama31_405b, gpt3, deepseekv3_671b, 5 for "
    "resnet, 40 for unet3d, ...); a selection of runs is a cherry-pick.",
    "Submit every run, and exactly the required number.",
    "mlcommons/logging benchmark_meta.py, package_checker.py.",
))
register(Rule(
    "mlperf.mixed-runs", "error", "Result files of one package differ in benchmark or batch size",
    "All runs of a result must be the same benchmark at the same global batch size (the RCP "
    "checker fails otherwise).",
    "Put each benchmark / batch size in its own folder.",
    "mlcommons/logging rcp_checker.py fail cases.",
))
register(Rule(
    "mlperf.duplicate-seed", "error", "Two runs logged the same seed",
    "Runs must be independent; the seed checker rejects two runs with the same seed.",
    "Use a distinct seed per run.",
    "mlcommons/logging seed_checker.",
    effect="not_independent",
))
register(Rule(
    "mlperf.missing-seed", "warning", "A closed-division run logged no seed",
    "Seed logging is mandatory for closed submissions (the seed checker needs an integer seed "
    "per run).",
    "Log the seed with mllog (key `seed`).",
    "mlcommons/training_policies#546.",
))
register(Rule(
    "mlperf.rcp-fail", "error", "Runs converge faster than the RCPs allow",
    "The runs' mean epochs (or samples) to converge, olympic style, is below the fastest mean "
    "MLCommons' reference convergence points allow at this batch size (a one-sided t-test at "
    "5 %): the summarizer marks the result RCP Fail and the review committee does not accept it "
    "as is.",
    "Re-run with the reference hyperparameters, or submit the missing RCPs to MLCommons.",
    "mlcommons/logging rcp_checker.py (check_directory, pruned RCPs, as result_summarizer "
    "runs it).",
))
register(Rule(
    "mlperf.rcp-missing", "warning", "No RCP covers this batch size",
    "MLCommons' RCPs do not bracket the result's global batch size (or none exist for the "
    "benchmark in this round): the summarizer reports \"Missing RCP\" and convergence "
    "speed cannot be checked.",
    "Use a batch size with RCPs, or submit RCPs for it to MLCommons.",
    "mlcommons/logging rcp_checker.py check_directory.",
))
register(Rule(
    "mlperf.rcp-scaling", "warning", "The RCP normalisation factor is not applied",
    "The runs converge faster than the RCP mean (within the allowed speed-up); MLCommons then "
    "multiplies the time by RCP mean / submission mean, written to scaling.json. Without that "
    "file (or with a different factor) the score is lower than the official one.",
    "Ship scaling.json as the MLCommons review wrote it.",
    "mlcommons/logging rcp_checker.py (_eval_submission_record, _set_results_scaling); "
    "result_summarizer._get_scaling_factor.",
))
register(Rule(
    "mlperf.scaling-mismatch", "error",
    "scaling.json disagrees with the factor the RCPs give",
    "The review committee writes scaling.json with the factor rcp_checker derives from the "
    "runs and the RCPs (RCP mean / submission mean when the runs converge faster than the RCP "
    "mean, else no scaling: 1.0); the factor only ever lengthens the time. A scaling.json with "
    "another factor, or one below 1, was written by hand and shortens or misstates the score.",
    "Ship scaling.json as the MLCommons review wrote it, or none when the runs need no scaling.",
    "mlcommons/logging rcp_checker.py (_set_results_scaling writes RCP mean / submission mean "
    "only when above 1); result_summarizer._get_scaling_factor.",
))
register(Rule(
    "mlperf.public-result", "error",
    "The runs repeat a published MLPerf result of another submitter",
    "cmax ships the run-by-run times to train of NVIDIA's published MLPerf Training results "
    "(reference/mlperf_nvidia.csv, from mlcommons/training_results_v4.0-v5.1). Times to train "
    "are logged to the millisecond; three runs repeating a published result's is that result "
    "relabelled (submission_org and the system JSON edited), whatever its files now say.",
    "Submit the provider's own runs, or mark the entry `cited = true` to show the public result "
    "as context.",
    "mlcommons/training_results_v4.0-v5.1 (reference/mlperf_nvidia.csv run_minutes)",
))
register(Rule(
    "mlperf.run-outside-period", "error",
    "An MLPerf run is dated outside the benchmark period",
    "Each MLLOG event carries the epoch time it was logged; the runs of a result rated for this "
    "benchmark must have run within the 12 months before the manifest's [benchmark] date, not "
    "after it. A run from an earlier round (a public result relabelled, or the cluster's old "
    "hardware) says nothing about the cluster now.",
    "Re-run the benchmark on the cluster, correct [benchmark] date, or mark the entry "
    "`cited = true` to show it as context.",
    f"{MLPERF_PERIOD_DAYS} days (thresholds.MLPERF_PERIOD_DAYS)",
))
register(Rule(
    "mlperf.no-rcp", "info", "Convergence not checked against MLCommons RCPs",
    "The reference release carries no RCP data for this ruleset and benchmark, so convergence "
    "speed is not checked.",
    "Run mlcommons/logging's package_checker on the submission.",
))
register(Rule(
    "mlperf.no-system", "warning", "No system description for an MLPerf result",
    "Without systems/<system>.json the GPU count and accelerator are unknown: the result cannot "
    "be matched to NVIDIA's reference or checked against the manifest.",
    "Include the submission's systems/<system>.json (the MLCommons results layout).",
    "MLPerf submission rules: every result names a system description.",
))
register(Rule(
    "mlperf.foreign-submitter", "error", "Another submitter's MLPerf result",
    "The result's submitter (system JSON `submitter`, MLLOG `submission_org`) is not the "
    "provider the manifest rates: NVIDIA's own Eos result, or another cloud's, says nothing "
    "about this provider's cluster. It is not rated.",
    "Submit the provider's own result, or mark the entry `cited = true` in [[mlperf]] to show "
    "it as context (never rated).",
    "MLCommons results are published per submitter (mlcommons/training_results_v*: "
    "<submitter>/systems, <submitter>/results)",
    effect="not_rated",
))
register(Rule(
    "mlperf.cited-context", "info", "A cited MLPerf result, shown and not rated",
    "The [[mlperf]] entry is marked `cited = true`: another submitter's result included as "
    "context. The scorecard shows it and rates nothing from it.",
    "Nothing to fix; remove `cited` only for the provider's own results.",
    effect="not_rated",
))
register(Rule(
    "mlperf.cloned-run", "error", "Two runs of a package are copies of each other",
    "Two result files of one package log the same event stream (every key and value but the "
    "seed), or the same event times relative to their own start: one run was copied and "
    "edited (a slow run replaced by a shifted copy of a fast one). Independent runs never "
    "repeat each other's evaluation accuracies or timings.",
    "Submit each run's own log as mllog wrote it.",
    "mlcommons/logging result_summarizer (olympic scoring of independent runs) and seed "
    "checker (runs must differ)",
    effect="not_independent",
))
register(Rule(
    "mlperf.system-mismatch", "error", "The system JSON contradicts the manifest",
    "The MLPerf system description names another accelerator, or another number of "
    "accelerators per node, than the manifest's [system]: the result is not of this cluster. "
    "It is shown and not rated (as is a result on more nodes or GPUs than [system] claims, "
    "identity.node-count and identity.gpu-count).",
    "Rate the cluster the MLPerf result ran on, or correct [system].",
    "mlperf system_desc_checker fields accelerator_model_name, accelerators_per_node.",
    effect="other_system",
))
register(Rule(
    "mlperf.platform-mismatch", "error", "A run's submission_platform contradicts the system JSON",
    "MLPerf runs log their platform as '<nodes>x<system>' (submission_platform "
    "'64xND_H200_v5', '128xNVIDIA GB200'); a run whose node count is not the system JSON's "
    "number_of_nodes comes from another system, or one of the two files was edited. The "
    "result is shown and not rated.",
    "Ship the system JSON the runs were submitted with, unedited.",
    "mlcommons/logging submission_platform; in every public package under tests/data the "
    "prefix equals number_of_nodes (NVIDIA Eos, Tyche, Carina, Theia, Nyx; Azure; Oracle; "
    "Lambda).",
    effect="other_system",
))


@dataclass(frozen=True)
class BenchSpec:
    """What the closed division pins per benchmark (run counts and quality targets live in
    :mod:`cmax.ingest.formats.mlperf`, which scores the runs)."""

    pinned: dict[str, Any] = field(default_factory=dict)
    derived: dict[str, Callable[[dict[str, Any]], float | None]] = field(default_factory=dict)


_ADAMW = {"opt_name": "adamw", "opt_learning_rate_decay_schedule": "cosine with linear warmup",
          "opt_adamw_beta_1": 0.9, "opt_adamw_beta_2": 0.95, "opt_adamw_weight_decay": 0.1,
          "opt_gradient_clip_norm": 1.0}


def _gbs(values: dict[str, Any]) -> float | None:
    gbs = values.get("global_batch_size")
    return float(gbs) if isinstance(gbs, int | float) and gbs > 0 else None


def _lr_405b(values: dict[str, Any]) -> float | None:
    gbs = _gbs(values)
    return None if gbs is None else gbs * 8e-5 / 1152


def _lr_dsv3(values: dict[str, Any]) -> float | None:
    gbs = _gbs(values)
    return None if gbs is None else 2.4e-5 * math.sqrt(gbs / 16384)


def _decay_dsv3(values: dict[str, Any]) -> float | None:
    steps, warm = values.get("max_steps"), values.get("opt_learning_rate_warmup_steps")
    if isinstance(steps, int | float) and isinstance(warm, int | float):
        return float(steps - warm)
    return None


BENCHMARKS: dict[str, BenchSpec] = {
    **{name: BenchSpec() for name in REQUIRED_RUNS},
    "llama31_8b": BenchSpec(pinned={**_ADAMW, "max_sequence_length": 8192,
                                    "opt_adamw_epsilon": 1e-05, "eval_samples": 1024}),
    "llama31_405b": BenchSpec(pinned={**_ADAMW, "max_sequence_length": 8192,
                                      "opt_adamw_epsilon": 1e-05, "eval_samples": 5760,
                                      "init_checkpoint_step": 0},
                              derived={"opt_base_learning_rate": _lr_405b}),
    "llama2_70b_lora": BenchSpec(pinned={"lora_rank": 16}),
    "deepseekv3_671b": BenchSpec(pinned={**_ADAMW, "max_sequence_length": 4096,
                                         "opt_adamw_epsilon": 1e-08, "eval_samples": 1024,
                                         "max_steps": 12000,
                                         "opt_learning_rate_warmup_steps": 4},
                                 derived={"opt_base_learning_rate": _lr_dsv3,
                                          "opt_learning_rate_decay_steps": _decay_dsv3}),
    "gpt3": BenchSpec(pinned={"max_sequence_length": 2048, "opt_name": "adam",
                              "opt_learning_rate_decay_schedule": "cosine with linear warmup",
                              "opt_adam_beta_1": 0.9, "opt_adam_beta_2": 0.95,
                              "opt_adam_epsilon": 1e-08, "opt_gradient_clip_norm": 1.0}),
}
_ALIASES = {"deepseek_v3_671b": "deepseekv3_671b", "deepseek_v3": "deepseekv3_671b"}

EXACTLY_ONE = ("submission_org", "submission_platform", "submission_division",
               "submission_benchmark", "init_stop", "run_start", "run_stop", "train_samples",
               "eval_samples")
AT_LEAST_ONE = ("cache_clear", "init_start", "eval_accuracy")
BENCH_EXACTLY_ONE = ("global_batch_size", "opt_base_learning_rate",
                     "gradient_accumulation_steps")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-12)
    return bool(a == b)


def _keys(log: MlperfRun, bench: BenchSpec | None, closed: bool) -> Iterator[Finding]:
    missing = [k for k in EXACTLY_ONE + AT_LEAST_ONE if not log.all(k)]
    if not log.all("block_start") and not log.all("epoch_start"):
        missing.append("block_start or epoch_start")
    extra: tuple[str, ...] = BENCH_EXACTLY_ONE
    if bench is not None and closed:
        extra += tuple(bench.pinned) + tuple(bench.derived)
    missing += [k for k in dict.fromkeys(extra) if not log.all(k)]
    stop = log.first("run_stop")
    if stop is not None and "status" not in stop.metadata:
        missing.append("run_stop metadata.status")
    if missing:
        yield finding("mlperf.required-key", "missing: " + ", ".join(missing), file=log.file)
    once = set(EXACTLY_ONE) | set(extra)
    for key in sorted(once):
        events = log.all(key)
        if len(events) < 2:
            continue
        if all(_same(e.value, events[0].value) for e in events[1:]):
            yield finding("mlperf.duplicate-key", f"{key} appears {len(events)} times "
                          "with the same value", file=log.file, line=events[1].line)
        else:
            values = ", ".join(repr(e.value) for e in events[:4])
            yield finding("mlperf.conflicting-key", f"{key} appears {len(events)} times with "
                          f"different values ({values})", file=log.file, line=events[1].line)


def _values(log: MlperfRun, bench_name: str, bench: BenchSpec | None,
            closed: bool) -> Iterator[Finding]:
    def bad(key: str, message: str) -> Finding:
        event = log.first(key)
        return finding("mlperf.invalid-value", message, file=log.file,
                       line=event.line if event else None)

    values = log.values()
    division = values.get("submission_division")
    if division is not None and division not in ("closed", "open"):
        yield bad("submission_division", f"submission_division {division!r} is not closed/open")
    for key in ("submission_org", "submission_platform"):
        if key in values and not str(values[key] or "").strip():
            yield bad(key, f"{key} is empty")
    if bench_name and bench is None:
        yield bad("submission_benchmark", f"submission_benchmark {bench_name!r} is not a known "
                  "MLPerf Training benchmark")
    gas = values.get("gradient_accumulation_steps")
    if closed and isinstance(gas, int | float) and gas <= 0:
        yield bad("gradient_accumulation_steps", f"gradient_accumulation_steps = {gas}")
    if bench is None or not closed:
        return
    for key, expected in bench.pinned.items():
        if key in values and not _same(values[key], expected):
            event = log.first(key)
            yield finding("mlperf.hyperparameter", f"{key} = {values[key]!r}, the closed "
                          f"{bench_name} rules pin {expected!r}", file=log.file,
                          line=event.line if event else None)
    for key, rule in bench.derived.items():
        expected_value = rule(values)
        if key in values and expected_value is not None and not _same(values[key],
                                                                       expected_value):
            event = log.first(key)
            yield finding("mlperf.hyperparameter", f"{key} = {values[key]!r}, the closed "
                          f"{bench_name} rules require {expected_value:.6g} for this batch size",
                          file=log.file, line=event.line if event else None)


_CLOCK_SKEW_MS = 1000.0
"""Ranks' clocks may differ slightly; an event timed outside its run by more is an edit."""


def _outside_run(log: MlperfRun) -> Iterator[Finding]:
    """Events logged inside the run (between run_start and run_stop) but timed outside it, or
    logged after run_stop but timed before it: the start or the stop time was edited."""
    run_start, run_stop = log.first("run_start"), log.first("run_stop")
    if run_start is None or run_stop is None or run_stop.line < run_start.line:
        return
    lo, hi = run_start.time_ms - _CLOCK_SKEW_MS, run_stop.time_ms + _CLOCK_SKEW_MS
    for event in log.events:
        inside = run_start.line < event.line < run_stop.line
        if inside and not lo <= event.time_ms <= hi:
            yield finding("mlperf.event-order", f"{event.key} is logged between run_start "
                          f"(line {run_start.line}) and run_stop (line {run_stop.line}) but "
                          f"timed {event.time_ms:.0f} ms, outside {run_start.time_ms:.0f}-"
                          f"{run_stop.time_ms:.0f}: the run's start or stop time was edited",
                          file=log.file, line=event.line)
            return
        if event.line > run_stop.line and event.time_ms < run_stop.time_ms - _CLOCK_SKEW_MS:
            yield finding("mlperf.event-order", f"{event.key} is logged after run_stop (line "
                          f"{run_stop.line}) but timed {event.time_ms:.0f} ms, before its "
                          f"{run_stop.time_ms:.0f}: the run's stop time was edited",
                          file=log.file, line=event.line)
            return


def _timing(log: MlperfRun, closed: bool) -> Iterator[Finding]:
    starts = log.all("init_start")
    stop = log.first("init_stop")
    if starts and stop is not None:
        budget_min = 30 if closed else 240
        took = (stop.time_ms - min(e.time_ms for e in starts)) / 60_000
        if took >= budget_min:
            yield finding("mlperf.init-budget", f"init took {took:.1f} min, the "
                          f"{'closed' if closed else 'open'} division allows {budget_min}",
                          file=log.file, line=stop.line)
    run_start, run_stop = log.first("run_start"), log.first("run_stop")
    if run_start is not None and stop is not None and run_start.time_ms < stop.time_ms:
        yield finding("mlperf.event-order", "run_start is logged before init_stop",
                      file=log.file, line=run_start.line)
    if run_start is not None and run_stop is not None and run_stop.time_ms < run_start.time_ms:
        yield finding("mlperf.event-order", "run_stop is logged before run_start",
                      file=log.file, line=run_stop.line)
        return
    yield from _outside_run(log)


def _group(s: MlperfSet) -> Iterator[Finding]:
    label, logs = s.label, s.runs
    benches = {str(log.values().get("submission_benchmark") or "") for log in logs}
    gbs = {repr(log.values().get("global_batch_size")) for log in logs}
    if len(benches) > 1 or len(gbs) > 1:
        yield finding("mlperf.mixed-runs", f"{label}: benchmarks {sorted(benches)}, global batch "
                      f"sizes {sorted(gbs)}", file=label)
        return
    name = _ALIASES.get(next(iter(benches)), next(iter(benches)))
    dropped: list[str] = []
    for log in logs:
        if log.status != "success":  # ingest decided it, as the summarizer would
            dropped.append(log.file)
            yield finding("mlperf.run-not-converged", log.problem or log.status, file=log.file)
    required = REQUIRED_RUNS.get(name)
    if required is not None:
        if len(logs) != required:
            yield finding("mlperf.run-count", f"{label}: {len(logs)} result file(s); {name} "
                          f"requires exactly {required}", file=label)
        if len(dropped) > olympic_drop(name):
            yield finding("mlperf.too-many-dropped", f"{label}: {len(dropped)} of {len(logs)} "
                          f"runs failed; at most {olympic_drop(name)} may", file=label)
    closed = all(log.values().get("submission_division") == "closed" for log in logs)
    seeds: dict[str, str] = {}
    for log in logs:
        seed_events = log.all("seed")
        if not seed_events and closed:
            yield finding("mlperf.missing-seed", "no seed logged", file=log.file)
        for event in seed_events[:1]:
            key = repr(event.value)
            if key in seeds:
                yield finding("mlperf.duplicate-seed", f"seed {event.value} is also used by "
                              f"{seeds[key]}", file=log.file, line=event.line)
            else:
                seeds[key] = log.file


def _rcp(s: MlperfSet, table: MlperfReference | None) -> Iterator[Finding]:
    """Convergence against MLCommons' RCPs, as the summarizer's rcp_checker decides it."""
    label = s.label
    rounds = [r for r, names in ROUND_BENCHMARKS.items() if s.benchmark in names]
    round_ = s.round or (rounds[-1] if rounds else None)
    rcps = None if table is None or round_ is None else table.rcp(f"{round_}.0", s.benchmark)
    if rcps is None:
        where = ("the reference release carries no MLPerf RCP data" if table is None
                 else f"no RCPs for {s.benchmark} in training {round_ or '(unknown round)'}")
        yield finding("mlperf.no-rcp", f"{label}: {where}; convergence speed not checked",
                      file=label)
        yield from _shortening(s)
        return
    gbs = s.runs[0].values().get("global_batch_size") if s.runs else None
    if isinstance(gbs, bool) or not isinstance(gbs, int | float):
        return  # mlperf.required-key reports the missing global_batch_size
    points = [convergence_point(r, s.benchmark) for r in s.runs]
    outcome = rcp_check(rcps, float(gbs), points)
    assumed = "" if s.round else f" (round not in the path; checked against v{round_})"
    if outcome.passed is None:
        yield from _shortening(s)
        return
    if not outcome.passed:
        rule = "mlperf.rcp-missing" if "Missing" in outcome.message or "Cannot find" in \
            outcome.message else "mlperf.rcp-fail"
        if outcome.message == "Insufficient convergence":
            return  # mlperf.too-many-dropped says it
        detail = ""
        if outcome.submission_mean is not None and outcome.minimum_mean is not None:
            detail = (f": mean {outcome.submission_mean:.6g} to converge, the RCP at batch "
                      f"size {gbs:g} allows no less than {outcome.minimum_mean:.6g} (RCP mean "
                      f"{outcome.reference_mean:.6g})")
        yield finding(rule, f"{label}: {outcome.message}{detail}{assumed} [{rcps.source}]",
                      file=label)
        return
    want = outcome.norm_factor
    expected = want if want > 1.0 else 1.0
    if s.scaling_file is not None and not math.isclose(expected, s.scaling_factor,
                                                       rel_tol=SCALING_TOLERANCE):
        yield finding("mlperf.scaling-mismatch",
                      f"{label}: scaling.json says {s.scaling_factor:.6g}, the RCPs give "
                      f"{expected:.6g} (runs converge in {outcome.submission_mean:.6g} on "
                      f"average, RCP mean {outcome.reference_mean:.6g}){assumed}; the score "
                      "uses the file's factor, so it is not the official one",
                      file=label)
        return
    if want > 1.0 and not math.isclose(want, s.scaling_factor, rel_tol=1e-6):
        have = (f"scaling.json says {s.scaling_factor:.6g}" if s.scaling_file is not None
                else "there is no scaling.json")
        yield finding("mlperf.rcp-scaling", f"{label}: runs converge in "
                      f"{outcome.submission_mean:.6g} on average, faster than the RCP mean "
                      f"{outcome.reference_mean:.6g}; "
                      f"MLCommons scales the time by {want:.6g}, but {have}{assumed}",
                      file=label)


#: relative slack between scaling.json and the RCP factor: the review writes the factor to
#: full float precision from the same numbers (all shipped test sets agree to 1e-9)
SCALING_TOLERANCE = 1e-4


def _shortening(s: MlperfSet) -> Iterator[Finding]:
    """Without RCPs to derive the factor, a scaling.json below 1 still contradicts them: the
    review only ever lengthens the time."""
    if s.scaling_file is not None and s.scaling_factor < 1.0:
        yield finding("mlperf.scaling-mismatch",
                      f"{s.label}: scaling.json says {s.scaling_factor:.6g}, below 1: it "
                      "shortens the time, which no RCP scaling does", file=s.label)


def _published(ctx: Context, s: MlperfSet, table: MlperfReference | None) -> Iterator[Finding]:
    """The set's runs against the fingerprint index of published results."""
    spec = spec_of(ctx, s)
    if table is None or (spec is not None and spec.cited):
        return
    minutes = [m for m in (r.minutes for r in s.runs) if m is not None]
    found = table.published_copy(s.benchmark, minutes)
    if found is None:
        return
    row, hits = found
    if same_org(row.submitter, ctx.manifest.provider.name):
        return  # the submitter's own published result
    yield finding("mlperf.public-result",
                  f"{s.label}: {hits} of its {len(minutes)} runs repeat, to the millisecond, "
                  f"the published {row.describe()} ({row.source})", file=s.label)


def _period(ctx: Context, s: MlperfSet) -> Iterator[Finding]:
    """The first run of the set dated outside [benchmark date - period, benchmark date + 1]."""
    spec = spec_of(ctx, s)
    if spec is not None and spec.cited:
        return
    day = ctx.manifest.benchmark.date
    first, last = day - dt.timedelta(days=MLPERF_PERIOD_DAYS), day + dt.timedelta(days=1)
    for log in s.runs:
        if log.run_start_ms is None:
            continue
        ran = dt.datetime.fromtimestamp(log.run_start_ms / 1000, tz=dt.UTC).date()
        if not first <= ran <= last:
            when = "after" if ran > last else f"more than {MLPERF_PERIOD_DAYS} days before"
            event = log.first("run_start")
            yield finding("mlperf.run-outside-period",
                          f"{s.label}: run_start {ran.isoformat()} is {when} the [benchmark] "
                          f"date {day.isoformat()}", file=log.file,
                          line=None if event is None else event.line)
            return


def _system(ctx: Context, s: MlperfSet) -> Iterator[Finding]:
    """The system JSON against the manifest's [system] claims."""
    if s.system is None:
        yield finding("mlperf.no-system", f"{s.label}: no systems/<system>.json found for "
                      f"system folder {s.system_folder!r}", file=s.label)
        return
    system = ctx.manifest.system
    rel = relative_path(s.system.path, ctx.evidence.root)
    if not s.system.official:
        where = "inside the benchmark folder" if s.system.path.parent == s.folder else (
            "beside the results")
        yield finding("mlperf.no-system", f"{s.label}: the system JSON {rel} is {where}, not "
                      "under systems/<system>.json; the accelerator rated is the "
                      f"manifest's [system] gpu {system.gpu!r}, as declared", file=rel)
    accel = s.system.get("accelerator_model_name")
    have, want = gpu_family(accel), gpu_family(system.gpu)
    if have and want and have != want:
        yield finding("mlperf.system-mismatch", f"accelerator_model_name {accel!r} is not the "
                      f"manifest's [system] gpu {system.gpu!r}", file=rel,
                      line=s.system.lines.get("accelerator_model_name"))
    per_node = s.system.get("accelerators_per_node")
    if per_node and per_node.strip().isdigit() and int(per_node) != system.gpus_per_node:
        yield finding("mlperf.system-mismatch", f"accelerators_per_node {per_node} but the "
                      f"manifest's [system] has gpus_per_node = {system.gpus_per_node}",
                      file=rel, line=s.system.lines.get("accelerators_per_node"))
    # more nodes or GPUs than [system] claims is identity.node-count / gpu-count's to say
    nodes = _count(s.system.get("number_of_nodes"))
    if nodes is not None:
        yield from _platforms(s, nodes, rel)


_PLATFORM_NODES = re.compile(r"^\s*([0-9]+)\s*x", re.IGNORECASE)


def _count(value: str | None) -> int | None:
    text = (value or "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def _platforms(s: MlperfSet, nodes: int, rel: str) -> Iterator[Finding]:
    """Each run's ``submission_platform`` node prefix against the system JSON's nodes."""
    for log in s.runs:
        match = _PLATFORM_NODES.match(log.platform or "")
        if match is None or int(match.group(1)) == nodes:
            continue
        event = log.first("submission_platform")
        yield finding("mlperf.platform-mismatch", f"submission_platform {log.platform!r} "
                      f"states {int(match.group(1))} nodes, the system JSON {rel} "
                      f"number_of_nodes {nodes}: the run is not of that system, or one of "
                      "the two was edited", file=log.file,
                      line=None if event is None else event.line)
        return


_GENERIC = frozenset({"inc", "llc", "ltd", "corp", "corporation", "co", "gmbh", "the", "and",
                      "cloud", "clouds", "compute", "computing", "ai", "gpu", "gpus", "labs",
                      "technologies", "technology", "systems", "services", "company"})


def _tokens(name: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", name.lower()) if len(t) >= 3} - _GENERIC


def same_org(a: str, b: str) -> bool:
    """Whether two organisation names name the same company ("CoreWeave" and "CoreWeave,
    Inc."): equal once punctuation goes, or sharing a distinctive word."""
    squash = [re.sub(r"[^a-z0-9]", "", x.lower()) for x in (a, b)]
    return bool(squash[0]) and (squash[0] == squash[1] or bool(_tokens(a) & _tokens(b)))


def spec_of(ctx: Context, s: MlperfSet) -> MlperfSpec | None:
    """The [[mlperf]] entry a benchmark folder was read from."""
    root = ctx.evidence.root
    for spec in ctx.manifest.mlperf:
        target = root / spec.path
        if target == s.folder or target in s.folder.parents or s.folder in target.parents:
            return spec
    return None


def _submitters(s: MlperfSet) -> list[tuple[str, str, int | None]]:
    """(submitter, file, line) as the system JSON and each run state it; a run that logs a
    placeholder states none. With neither, the ``<org>`` results folder names it, as the
    MLCommons summarizer takes it."""
    out = []
    if s.system is not None and s.system.get("submitter"):
        out.append((str(s.system.get("submitter")), s.label, s.system.lines.get("submitter")))
    for log in s.runs:
        if log.submitter:
            event = next(iter(log.all("submission_org")), None)
            out.append((log.submitter, log.file, None if event is None else event.line))
    if not out and s.org_folder:
        out.append((s.org_folder, s.label, None))
    return out


def _ownership(ctx: Context, s: MlperfSet) -> Iterator[Finding]:
    spec = spec_of(ctx, s)
    if spec is not None and spec.cited:
        who = s.submitter or "another submitter"
        yield finding("mlperf.cited-context", f"{s.label}: {who}'s {s.benchmark} result, cited "
                      "as context ([[mlperf]] cited = true): shown, not rated", file=s.label)
        return
    provider = ctx.manifest.provider.name
    for name, file, line in _submitters(s):
        if not same_org(name, provider):
            yield finding("mlperf.foreign-submitter",
                          f"{s.label}: submitted by {name!r}, not by [provider] name "
                          f"{provider!r}; not rated", file=file, line=line)
            return


_CLONE_MIN_EVENTS = 8
"""Below this many events two short logs may coincide by chance (a failed run's stub)."""


def _signatures(log: MlperfRun) -> tuple[tuple[object, ...], tuple[float, ...]]:
    events = [e for e in log.events if e.key != "seed"]
    values = tuple((e.key, repr(e.value), repr(e.metadata)) for e in events)
    start = events[0].time_ms if events else 0.0
    times = tuple(round(float(e.time_ms) - float(start), 3) for e in events)
    return values, times


def _clones(s: MlperfSet) -> Iterator[Finding]:
    seen: dict[object, str] = {}
    for log in s.runs:
        if len(log.events) < _CLONE_MIN_EVENTS:
            continue
        values, times = _signatures(log)
        for what, sig in (("event stream (keys and values, seed aside)", values),
                          ("event times relative to the run's start", times)):
            other = seen.get((what, sig))
            if other is not None:
                yield finding("mlperf.cloned-run", f"{log.file} repeats the {what} of {other}: "
                              "a copied run", file=log.file)
                break
            seen[(what, sig)] = log.file


def _reference(ctx: Context) -> MlperfReference | None:
    return ctx.ref.reference.mlperf_reference()


def check(ctx: Context) -> Iterator[Finding]:
    sets: list[MlperfSet] = list(getattr(ctx.evidence, "mlperf_sets", ()))
    table = _reference(ctx) if sets else None
    for s in sets:
        for log in s.runs:
            for line, message in log.errors[:5]:
                yield finding("mlperf.unreadable", message, file=log.file, line=line or None)
            values = log.values()
            name = str(values.get("submission_benchmark") or "")
            bench = BENCHMARKS.get(_ALIASES.get(name, name))
            closed = values.get("submission_division") == "closed"
            yield from _keys(log, bench, closed)
            yield from _values(log, name, bench, closed)
            yield from _timing(log, closed)
        if s.runs:
            yield from _ownership(ctx, s)
            yield from _group(s)
            yield from _clones(s)
            yield from _system(ctx, s)
            yield from _rcp(s, table)
            yield from _period(ctx, s)
            yield from _published(ctx, s, table)
