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

import polars as pl

from cmax.findings import Finding
from cmax.ingest.energy import LOADED_MIN_TDP_SHARE
from cmax.ingest.evidence import entry_rows
from cmax.reference.gpus import gpu_family
from cmax.reference.inference import model_names
from cmax.reference.view import optional_lookup
from cmax.submission.manifest import InferenceSpec
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import (
    INFERENCE_ARITHMETIC_TOLERANCE,
    INFERENCE_FAILED_SHARE,
    INFERENCE_LENGTH_TOLERANCE,
    INFERENCE_LITTLE_SLACK,
    INFERENCE_PER_USER_SLACK,
    INFERENCE_TOO_GOOD,
)

SOURCE = "vllm-project/vllm vllm/benchmarks/serve.py @ 009e6d4; NVIDIA/TensorRT-LLM " \
         "tensorrt_llm/bench/dataclasses/reporting.py @ 0249976; sgl-project/sglang " \
         "python/sglang/benchmark/metrics.py @ 6e48df3; ai-dynamo/aiperf metrics exporters"

register(Rule(
    "inference.throughput-arithmetic", "error",
    "The result's throughput is not its tokens over its duration",
    "Every serving tool computes output throughput as total output tokens / benchmark duration "
    "(and total throughput as input + output tokens over it) and writes them all; a tool's "
    "per-GPU figure is its output rate over the GPUs it states. A throughput the file's own "
    "totals do not give was edited.",
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
    "With C requests in flight and a mean time per output token T (or a per-user speed of U "
    "tokens/s, the interactivity InferenceX and AIPerf state), the system emits at most "
    "C x 1000 / T (C x U) tokens/s; more than that cannot have been measured.",
    "Submit the unedited result file.",
    f"{INFERENCE_PER_USER_SLACK:.0%} slack (thresholds.INFERENCE_PER_USER_SLACK)",
))
register(Rule(
    "inference.littles-law", "error",
    "The output rate is far below what the concurrency and the stated latencies give",
    "Little's law: with C requests in flight, each taking mean TTFT + (output length - 1) x "
    "mean TPOT, a closed-loop client completes C x output length / that many tokens/s. A total "
    "well below it means the latencies (and the interactivity they place the result at) were "
    "edited down, or the concurrency was never sustained.",
    "Submit the unedited result file of a run that kept its concurrency.",
    f"{INFERENCE_LITTLE_SLACK:.0%} below (thresholds.INFERENCE_LITTLE_SLACK)",
))
register(Rule(
    "inference.percentiles-disordered", "error",
    "A p99 latency is below the median or the mean of the same latency",
    "The 99th percentile of a distribution is never below its median, and above the mean "
    "unless nearly every request is at the mean; a p99 TTFT or TPOT below either was edited, "
    "typically to meet a latency SLO the run missed.",
    "Submit the result file exactly as the benchmark wrote it.",
))
register(Rule(
    "inference.beyond-reference", "error",
    "The result is faster per GPU than the best published reference by more than the "
    "references' own spread",
    "The offline reference is the best configuration TensorRT-LLM found and an MLPerf row the "
    "best available system of its scenario; honest systems of one GPU lie within 1.57x of each "
    "other. A result far beyond the best was measured on a faster GPU (a B200 result declared "
    "H200 rates 2-4x) or is not this workload. Not applied on an InferenceX curve: its "
    "speculative-decoding rows run several times above the curve's front, so a curve is no "
    "ceiling.",
    "Correct [system] gpu to the GPU that ran it, or submit the result measured on this one.",
    f"{INFERENCE_TOO_GOOD:g}x (thresholds.INFERENCE_TOO_GOOD)",
))
register(Rule(
    "inference.gpus-beyond-declared", "error",
    "Power telemetry shows more GPUs working during the result than the entry declares",
    "The per-GPU rate divides by the [[inference]] entry's GPUs. The [[power]] telemetry "
    "samples every GPU of its hosts: during the result's run (its own start and end) a GPU "
    "drawing a quarter of its TDP or more is serving, an idle one draws far less. More such "
    "GPUs than the entry (and any entry whose run overlaps it) declares means the per-GPU rate "
    "divides by too few GPUs.",
    "Correct `gpus` of the [[inference]] entry to the GPUs that served, or submit telemetry of "
    "the serving hosts only.",
    "busy at cmax.ingest.energy.LOADED_MIN_TDP_SHARE (25 %) of the GPU's TDP (reference/gpus.toml)",
))
register(Rule(
    "inference.lengths-mismatch", "error",
    "The requests are not the input/output lengths the manifest rates",
    "The reference is measured at fixed input and output lengths; a run with shorter prompts "
    "or answers serves more tokens per second and is another workload.",
    "Run the benchmark at the declared lengths (vLLM --random-input-len/--random-output-len, "
    "trtllm prepare_dataset with stdev 0, InferenceX ISL/OSL) or declare the lengths it ran "
    "(an MLPerf run: the tokens per sample it served).",
    f"{INFERENCE_LENGTH_TOLERANCE:.0%} (thresholds.INFERENCE_LENGTH_TOLERANCE)",
))
register(Rule(
    "inference.gpu-count-contradicted", "error",
    "The result file states another GPU count (or prefill/decode split) than the manifest",
    "The per-GPU throughput divides by the manifest's GPU count (by its decode GPUs when "
    "serving is disaggregated); the result file itself says how many GPUs served, and the two "
    "must agree.",
    "Correct `gpus` (and `prefill_gpus`/`decode_gpus`) of the [[inference]] entry to what the "
    "benchmark ran on.",
))
register(Rule(
    "inference.gpu-contradicted", "error", "The result file names another GPU",
    "The reference row is chosen by the manifest's GPU; a result measured on another GPU "
    "would be compared with the wrong reference, so it is compared with none: shown, not "
    "comparable, and no gate counts it as passing.",
    "Submit the result measured on the cluster's own GPUs, or correct [system] gpu.",
    effect="not_comparable",
))
register(Rule(
    "inference.model-contradicted", "error", "The result file served another model",
    "The file names a model that the reference knows under another id than the one the "
    "manifest rates it as. The declared model's reference is of another workload, so the "
    "result is compared with none: shown, not comparable, and no gate counts it as passing.",
    "Correct `model` of the [[inference]] entry, or submit the result of the declared model.",
    effect="not_comparable",
))
register(Rule(
    "inference.tool-invalid", "error", "The benchmark tool itself declared the result invalid",
    "AIPerf stamps a run submission_valid: false when it broke its scenario's locked rules, "
    "overflowed the context on more than 1% of requests or was cancelled; MLPerf's LoadGen "
    "prints 'Result is : INVALID' when a run missed its latency, duration or query constraints. "
    "A result its own tool rejects is no evidence of serving speed.",
    "Fix what the tool names (its reason is quoted) and re-run until it reports the run valid.",
    "ai-dynamo/aiperf docs/benchmark-modes/semianalysis-agentx-faq.md @ 01a4d17; "
    "mlcommons/inference loadgen/results.cc @ b66003e",
))
register(Rule(
    "inference.no-warmup", "warning", "No warm-up preceded the measured requests",
    "The first requests to a serving engine pay for CUDA-graph capture, JIT and an empty KV "
    "cache; the Exemplar agentic-inference recipes run a warm-up block per concurrency before "
    "the measured one, and AIPerf and InferenceX's client send warm-up requests. A result that "
    "states none measured cold starts with the serving.",
    "Run the benchmark's warm-up first (sa-bench's warm-up block, aiperf --warmup-request-count, "
    "vllm bench serve --num-warmups) and submit the output with both.",
    "NVIDIA/exemplar-performance agenticInference/inference_short/README.md @ e249aa3",
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


def _off(stated: float, implied: float) -> bool:
    return abs(implied / stated - 1) > INFERENCE_ARITHMETIC_TOLERANCE


def _arithmetic(row: dict[str, Any]) -> Iterator[str]:
    """What the result's own numbers contradict: the rates its totals give, and the per-GPU
    figure its GPU count gives."""
    tokens, duration, rate = row["output_tokens"], row["duration_s"], row["output_tok_s"]
    if tokens and duration and rate and duration > 0 and rate > 0 and _off(rate,
                                                                           tokens / duration):
        yield (f"{tokens} output tokens in {duration:g} s is {tokens / duration:,.1f} tok/s, "
               f"the file reports {rate:,.1f}")
    inputs, total = row["input_tokens"], row["total_tok_s"]
    if (tokens and inputs and duration and total and duration > 0 and total > 0
            and _off(total, (inputs + tokens) / duration)):
        yield (f"{inputs} input + {tokens} output tokens in {duration:g} s is "
               f"{(inputs + tokens) / duration:,.1f} tok/s, the file reports {total:,.1f}")
    per_gpu, gpus = row["output_tok_s_per_gpu_reported"], row["decode_gpus"] or row["gpus"]
    if per_gpu and gpus and rate and per_gpu > 0 and _off(per_gpu, rate / gpus):
        yield (f"{rate:,.1f} output tok/s over the {gpus} GPUs it states is "
               f"{rate / gpus:,.1f} per GPU, the file reports {per_gpu:,.1f}")


def _per_user_ceiling(row: dict[str, Any]) -> tuple[float, str] | None:
    """The most output tok/s the concurrency allows at the stated per-user speed, and how."""
    conc, tpot, speed = row["concurrency"], row["tpot_mean_ms"], row["interactivity_tok_s_user"]
    if not conc:
        return None
    if tpot and tpot > 0:
        return conc * 1000.0 / tpot, f"a mean TPOT of {tpot:g} ms"
    if speed and speed > 0:
        return conc * speed, f"{speed:g} tok/s per user"
    return None


def _little(row: dict[str, Any], spec: InferenceSpec) -> tuple[float, str] | None:
    """The output rate Little's law gives from the concurrency and the mean latencies (TTFT:
    mean, else median, else p99, each at most the mean a p99 bounds from above), and how."""
    conc, tpot = row["concurrency"], row["tpot_mean_ms"]
    ttft = next((row[c] for c in ("ttft_mean_ms", "ttft_median_ms", "ttft_p99_ms")
                 if row[c] is not None), None)
    length = row["output_len"] or spec.output_len
    if not conc or not tpot or tpot <= 0 or ttft is None or ttft < 0 or length < 2:
        return None
    seconds = (ttft + (length - 1) * tpot) / 1000.0
    return conc * length / seconds, (f"{conc:g} requests in flight x {length} tokens over "
                                     f"{ttft:,.1f} ms TTFT + {length - 1} x {tpot:g} ms TPOT")


def _disordered(row: dict[str, Any]) -> Iterator[str]:
    for name in ("ttft", "tpot"):
        p99 = row[f"{name}_p99_ms"]
        if p99 is None:
            continue
        for which in ("median", "mean"):
            other = row[f"{name}_{which}_ms"]
            if other is not None and p99 < other * (1 - INFERENCE_ARITHMETIC_TOLERANCE):
                yield f"p99 {name.upper()} {p99:,.3f} ms is below its {which} {other:,.3f} ms"


def _beyond_reference(ctx: Context, row: dict[str, Any],
                      spec: InferenceSpec) -> tuple[float, float, str] | None:
    """(per-GPU rate, reference per-GPU rate, which reference) when the result is beyond the
    best published reference of its setup by more than :data:`INFERENCE_TOO_GOOD`."""
    rate = row["output_tok_s"]
    if not rate or rate <= 0:
        return None
    gpu = ctx.manifest.system.gpu
    if str(row["tool"]).startswith("mlperf-inference") and row["scenario"]:
        found = ctx.ref.match_mlperf_inference(spec.model, gpu, str(row["scenario"]))
        kind = f"the best available MLPerf {row['scenario']} system"
    elif row["request_rate"] is None and row["concurrency"] is None:
        found = ctx.ref.match_inference(spec.model, gpu, spec.precision, spec.input_len,
                                        spec.output_len)
        kind = "the offline maximum"
    else:
        return None
    if found is None:
        return None
    # both kinds of reference divide by every GPU serving (neither is disaggregated)
    per_gpu = rate / spec.gpus
    reference = float(found["output_tok_s_per_gpu"])
    return (per_gpu, reference, kind) if per_gpu > reference * INFERENCE_TOO_GOOD else None


def _lengths(row: dict[str, Any], spec: InferenceSpec) -> Iterator[str]:
    """Per-request lengths the file gives (stated: asked for, or every request's alike; else
    its totals over its requests; an MLPerf run's tokens per sample) that are not the
    manifest's."""
    done = row["completed"]
    for which, stated, total, declared in (
            ("input", row["input_len"], row["input_tokens"], spec.input_len),
            ("output", row["output_len"], row["output_tokens"], spec.output_len)):
        if stated is not None and stated != declared:
            yield f"the file states {stated} {which} tokens per request, the manifest rates " \
                  f"{declared}"
        elif done and total is not None and abs(total / done / declared - 1) > \
                INFERENCE_LENGTH_TOLERANCE:
            yield f"{total / done:,.0f} {which} tokens per request, the manifest rates {declared}"
    rate, samples = row["output_tok_s"], row["samples_per_s"]
    if not done and rate and samples and abs(rate / samples / spec.output_len - 1) > \
            INFERENCE_LENGTH_TOLERANCE:
        yield (f"{rate:,.1f} tok/s over {samples:g} samples/s is {rate / samples:,.0f} output "
               f"tokens per sample, the manifest rates {spec.output_len}")


def _row_checks(row: dict[str, Any], spec: InferenceSpec) -> Iterator[Finding]:
    for message in _arithmetic(row):
        yield finding("inference.throughput-arithmetic", message, **_where(row))
    done, failed = row["completed"] or 0, row["failed"] or 0
    if failed and failed / (done + failed) > INFERENCE_FAILED_SHARE:
        yield finding("inference.failed-requests",
                      f"{failed} of {done + failed} requests failed", **_where(row))
    rate, ceiling = row["output_tok_s"], _per_user_ceiling(row)
    if rate and ceiling is not None and rate > ceiling[0] * (1 + INFERENCE_PER_USER_SLACK):
        yield finding("inference.per-user-beyond-total",
                      f"{rate:,.1f} output tok/s from {row['concurrency']:g} concurrent requests "
                      f"at {ceiling[1]} (at most {ceiling[0]:,.1f} tok/s)", **_where(row))
    little = _little(row, spec)
    if rate and little is not None and rate < little[0] * (1 - INFERENCE_LITTLE_SLACK):
        yield finding("inference.littles-law",
                      f"{rate:,.1f} output tok/s, where {little[1]} give "
                      f"{little[0]:,.1f} tok/s", **_where(row))
    for message in _disordered(row):
        yield finding("inference.percentiles-disordered", message, **_where(row))
    for message in _lengths(row, spec):
        yield finding("inference.lengths-mismatch", message, **_where(row))
    if row["tool_valid"] is False:
        yield finding("inference.tool-invalid",
                      f"{row['tool']} marks the result invalid: "
                      f"{row['tool_invalid_reason'] or 'no reason given'}", **_where(row))
    if row["warmup_requests"] == 0:
        measured = f"{row['completed']} measured" if row["completed"] else "measured"
        yield finding("inference.no-warmup",
                      f"the file states no warm-up requests before the {measured} requests",
                      **_where(row))
    if row["gpus"] is not None and row["gpus"] != spec.gpus:
        yield finding("inference.gpu-count-contradicted",
                      f"the file states {row['gpus']} GPUs, the manifest {spec.gpus}",
                      **_where(row))
    stated = (row["prefill_gpus"], row["decode_gpus"])
    if (spec.decode_gpus is not None and row["decode_gpus"] is not None
            and stated != (spec.prefill_gpus, spec.decode_gpus)):
        yield finding("inference.gpu-count-contradicted",
                      f"the file states {stated[0]} prefill + {stated[1]} decode GPUs, the "
                      f"manifest {spec.prefill_gpus} + {spec.decode_gpus}", **_where(row))
    if row["tool"] == "vllm-bench-serve" and row["temperature"] is None:
        yield finding("inference.temperature-not-fixed",
                      "the result records no sampling temperature", **_where(row))


def _identity(ctx: Context, row: dict[str, Any], spec: InferenceSpec) -> Iterator[Finding]:
    if (beyond := _beyond_reference(ctx, row, spec)) is not None:
        per_gpu, reference, kind = beyond
        yield finding("inference.beyond-reference",
                      f"{per_gpu:,.1f} output tok/s per GPU is {per_gpu / reference:.2f}x "
                      f"{kind} on {ctx.manifest.system.gpu} ({reference:,.1f}); the references "
                      f"of one GPU lie within {INFERENCE_TOO_GOOD:g}x", **_where(row))
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


def _busy_gpus(ctx: Context, start: float, end: float) -> tuple[int, float] | None:
    """GPUs (host, index) whose mean power inside [start, end] is a loaded GPU's, and the
    threshold in W; None without telemetry in the span or a TDP for the GPU."""
    power = ctx.tables.get("power")
    if power is None or power.is_empty():
        return None
    spec = optional_lookup(lambda: ctx.ref.reference.gpu(ctx.manifest.system.gpu))
    tdp = getattr(spec, "tdp_w", None)
    if not isinstance(tdp, int | float) or tdp <= 0:
        return None
    inside = power.filter(pl.col("time_s").is_between(start, end)
                          & pl.col("power_w").is_finite())
    if inside.is_empty():
        return None
    threshold = LOADED_MIN_TDP_SHARE * float(tdp)
    means = inside.group_by("host", "gpu").agg(pl.col("power_w").mean())
    return means.filter(pl.col("power_w") >= threshold).height, threshold


def _spans(ctx: Context) -> list[tuple[int, float, float, int]]:
    """(entry, start, end, declared GPUs) of every result that dates its own run."""
    out = []
    for i, spec in enumerate(ctx.manifest.inference):
        for row in entry_rows(ctx.tables["inference"], i).iter_rows(named=True):
            if row["started_s"] is not None and row["ended_s"] is not None:
                out.append((i, float(row["started_s"]), float(row["ended_s"]), spec.gpus))
    return out


def _telemetry(ctx: Context) -> Iterator[Finding]:
    spans = _spans(ctx)
    for i, start, end, gpus in spans:
        busy = _busy_gpus(ctx, start, end)
        if busy is None:
            continue
        # entries whose runs overlap this one may have used the other GPUs (one each)
        allowed = gpus + sum(g for j, s, e, g in spans if j != i and s < end and e > start)
        if busy[0] > allowed:
            spec = ctx.manifest.inference[i]
            yield finding("inference.gpus-beyond-declared",
                          f"{busy[0]} GPUs drew {busy[1]:g} W (a quarter of the TDP) or more "
                          f"during the run, the entry declares {gpus}"
                          + (f" ({allowed} with the runs overlapping it)" if allowed != gpus
                             else ""), file=spec.result)
            return


def check(ctx: Context) -> Iterator[Finding]:
    served = ctx.case.with_declared("inference")  # a load only the entry states, declared
    for i, spec in enumerate(ctx.manifest.inference):
        for row in entry_rows(served, i).iter_rows(named=True):
            yield from _row_checks(row, spec)
            yield from _identity(ctx, row, spec)
    yield from _telemetry(ctx)
