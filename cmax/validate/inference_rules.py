"""Serving benchmark results: a result's numbers must agree with each other and with the
manifest entry that rates them.

What a serving tool prints is cross-examined like a training log: tokens over duration must
give the throughput it reports, per-user speed times concurrency bounds the total, the
requests must have succeeded, the lengths must be the workload declared, and whatever the file
states about the GPU, its count and the model must agree with the manifest. A result with an
error here is not rated (its verdict is ``invalid``, cmax/score/inference.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cmax.claims import gpu_family
from cmax.evidence import entry_rows
from cmax.findings import Finding
from cmax.manifest import InferenceSpec
from cmax.reference.inference import model_names
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import (
    INFERENCE_ARITHMETIC_TOLERANCE,
    INFERENCE_FAILED_SHARE,
    INFERENCE_LENGTH_TOLERANCE,
    INFERENCE_PER_USER_SLACK,
)

SOURCE = "vllm-project/vllm vllm/benchmarks/serve.py @ 009e6d4; NVIDIA/TensorRT-LLM " \
         "tensorrt_llm/bench/dataclasses/reporting.py @ 0249976"

register(Rule(
    "inference.throughput-arithmetic", "error",
    "The result's throughput is not its tokens over its duration",
    "Both tools compute output throughput as total output tokens / benchmark duration and write "
    "all three; a throughput the file's own totals do not give was edited.",
    "Submit the result file exactly as the benchmark wrote it.",
    f"{INFERENCE_ARITHMETIC_TOLERANCE:.0%} (thresholds.INFERENCE_ARITHMETIC_TOLERANCE); "
    + SOURCE,
))
register(Rule(
    "inference.failed-requests", "error", "Requests failed during the benchmark",
    "A serving benchmark whose requests failed measured a cluster that dropped work; its "
    "throughput counts only what succeeded and flatters it.",
    "Fix the serving deployment and re-run until every request completes.",
    f"more than {INFERENCE_FAILED_SHARE:.0%} failed (thresholds.INFERENCE_FAILED_SHARE)",
))
register(Rule(
    "inference.per-user-beyond-total", "error",
    "The output rate exceeds what the concurrency and per-user speed allow",
    "With C requests in flight and a mean time per output token T, the system emits at most "
    "C x 1000 / T tokens/s; more than that cannot have been measured.",
    "Submit the unedited result file.",
    f"{INFERENCE_PER_USER_SLACK:.0%} slack (thresholds.INFERENCE_PER_USER_SLACK)",
))
register(Rule(
    "inference.lengths-mismatch", "error",
    "The requests are not the input/output lengths the manifest rates",
    "The reference is measured at fixed input and output lengths; a run with shorter prompts "
    "or answers serves more tokens per second and is another workload.",
    "Run the benchmark at the declared lengths (vLLM --random-input-len/--random-output-len, "
    "trtllm prepare_dataset with stdev 0) or declare the lengths it ran.",
    f"{INFERENCE_LENGTH_TOLERANCE:.0%} (thresholds.INFERENCE_LENGTH_TOLERANCE)",
))
register(Rule(
    "inference.gpu-count-contradicted", "error",
    "The result file states another GPU count than the manifest",
    "The per-GPU throughput divides by the manifest's GPU count; the result file itself says "
    "how many GPUs served, and the two must agree.",
    "Correct `gpus` of the [[inference]] entry to the count the benchmark ran on.",
))
register(Rule(
    "inference.gpu-contradicted", "error", "The result file names another GPU",
    "The reference row is chosen by the manifest's GPU; a result measured on another GPU is "
    "compared with the wrong reference.",
    "Submit the result measured on the cluster's own GPUs, or correct [system] gpu.",
))
register(Rule(
    "inference.model-contradicted", "error", "The result file served another model",
    "The file names a model that the reference knows under another id than the one the "
    "manifest rates it as.",
    "Correct `model` of the [[inference]] entry, or submit the result of the declared model.",
))
register(Rule(
    "inference.temperature-not-fixed", "warning", "The sampling temperature was not fixed",
    "vLLM's client no longer forces greedy decoding; with the server's default temperature the "
    "output lengths and speeds vary between runs, so runs are comparable only with an explicit "
    "temperature.",
    "Re-run with `--temperature 0` (or record the temperature with --metadata).",
    "research field-2026-11.md §3.3",
))


def _where(row: dict[str, Any]) -> dict[str, Any]:
    return {"file": row["source_file"], "line": row["line"], "run_id": row["run_id"]}


def _row_checks(row: dict[str, Any], spec: InferenceSpec) -> Iterator[Finding]:
    tokens, duration, rate = row["output_tokens"], row["duration_s"], row["output_tok_s"]
    if tokens and duration and rate and duration > 0 and rate > 0:
        implied = tokens / duration
        if abs(implied / rate - 1) > INFERENCE_ARITHMETIC_TOLERANCE:
            yield finding("inference.throughput-arithmetic",
                          f"{tokens} output tokens in {duration:g} s is {implied:,.1f} tok/s, "
                          f"the file reports {rate:,.1f}", **_where(row))
    done, failed = row["completed"] or 0, row["failed"] or 0
    if failed and failed / (done + failed) > INFERENCE_FAILED_SHARE:
        yield finding("inference.failed-requests",
                      f"{failed} of {done + failed} requests failed", **_where(row))
    conc, tpot = row["concurrency"], row["tpot_mean_ms"]
    if conc and tpot and rate and tpot > 0:
        ceiling = conc * 1000.0 / tpot
        if rate > ceiling * (1 + INFERENCE_PER_USER_SLACK):
            yield finding("inference.per-user-beyond-total",
                          f"{rate:,.1f} output tok/s from {conc:g} concurrent requests at a "
                          f"mean TPOT of {tpot:g} ms (at most {ceiling:,.1f} tok/s)",
                          **_where(row))
    if done:
        for column, declared in (("input_tokens", spec.input_len),
                                 ("output_tokens", spec.output_len)):
            total = row[column]
            if total is None:
                continue
            mean = total / done
            if abs(mean / declared - 1) > INFERENCE_LENGTH_TOLERANCE:
                which = column.split("_")[0]
                yield finding("inference.lengths-mismatch",
                              f"{mean:,.0f} {which} tokens per request, the manifest rates "
                              f"{declared}", **_where(row))
    if row["gpus"] is not None and row["gpus"] != spec.gpus:
        yield finding("inference.gpu-count-contradicted",
                      f"the file states {row['gpus']} GPUs, the manifest {spec.gpus}",
                      **_where(row))
    if row["tool"] == "vllm-bench-serve" and row["temperature"] is None:
        yield finding("inference.temperature-not-fixed",
                      "the result records no sampling temperature", **_where(row))


def _identity(ctx: Context, row: dict[str, Any], spec: InferenceSpec) -> Iterator[Finding]:
    named = row["gpu_name"]
    if named:
        stated, claimed = gpu_family(str(named)), gpu_family(ctx.manifest.system.gpu)
        if stated and claimed and stated != claimed:
            yield finding("inference.gpu-contradicted",
                          f"the file names {named!r} ({stated}), the manifest "
                          f"{ctx.manifest.system.gpu!r} ({claimed})", **_where(row))
    model = str(row["model"] or "").strip().lower()
    if not model:
        return
    table = ctx.ref.reference_inference()
    claimed_rows = [r for r in table if spec.model.lower() in model_names(r)]
    stated_rows = [r for r in table if model in model_names(r)]
    if claimed_rows and stated_rows and not {r["model"] for r in claimed_rows} & {
            r["model"] for r in stated_rows}:
        yield finding("inference.model-contradicted",
                      f"the file served {row['model']!r} ({stated_rows[0]['model']}), the "
                      f"manifest rates {spec.model!r}", **_where(row))


def check(ctx: Context) -> Iterator[Finding]:
    for i, spec in enumerate(ctx.manifest.inference):
        for row in entry_rows(ctx.tables["inference"], i).iter_rows(named=True):
            yield from _row_checks(row, spec)
            yield from _identity(ctx, row, spec)
