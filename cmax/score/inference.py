"""Serving throughput against the public per-GPU references (``reference/inference.csv``).

Like with like only: the provider's output tokens/s per GPU is compared with a reference row
of the same model, GPU, precision and input/output length, and only when the provider's
result ran as the reference did (offline: no request-rate or concurrency cap, the queue kept
full); a point of a latency sweep is shown, never rated against a maximum-throughput figure.
Of several offline results in one file (``--append-result``) the best is rated, as the
reference reports the best configuration it found.

A pass is earned: the verdict is ``pass`` only when the ratio reaches the performance bar
*and* the result file itself states the GPU count the ratio divides by; vLLM records none, so
a vLLM result's per-GPU figure rests on the manifest and is held at ``unverified``. A result
with an error finding (its numbers contradict themselves, requests failed) is ``invalid``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from cmax.case import Case
from cmax.evidence import entry_rows
from cmax.findings import Finding
from cmax.manifest import InferenceSpec
from cmax.price.tokens import usd_per_million_tokens
from cmax.reference.view import RefView
from cmax.scorecard import InferenceResult


def gpus_basis(rows: pl.DataFrame, spec: InferenceSpec) -> str:
    """Whether the file states the GPU count the manifest declares."""
    stated = {int(g) for g in rows["gpus"].drop_nulls().to_list()}
    if not stated:
        return "declared"
    return "corroborated" if stated == {spec.gpus} else "contradicted"


def inference_results(case: Case, findings: Sequence[Finding], ref: RefView, bar: float,
                      usd_per_gpu_hour: float | None) -> list[InferenceResult]:
    """One result per ``[[inference]]`` entry, in manifest order."""
    manifest = case.manifest
    errors = {f.file for f in findings if f.severity == "error" and f.rule.startswith(
        "inference.")}
    out: list[InferenceResult] = []
    for i, spec in enumerate(manifest.inference):
        rows = entry_rows(case.tables["inference"], i)
        out.append(_result(f"inference[{i}]", spec, rows, manifest.system.gpu, ref, bar,
                           usd_per_gpu_hour, errors))
    return out


def _result(entry: str, spec: InferenceSpec, rows: pl.DataFrame, gpu: str, ref: RefView,
            bar: float, usd_per_gpu_hour: float | None,
            errors: set[str | None]) -> InferenceResult:
    gpu_id = ref.gpu_id(gpu) or gpu
    basis = gpus_basis(rows, spec) if rows.height else "declared"
    offline = rows.filter(pl.col("request_rate").is_null() & pl.col("concurrency").is_null())
    rated = offline if offline.height else rows
    best: dict[str, Any] | None = None
    if rated.height:
        best = rated.sort("output_tok_s", descending=True, nulls_last=True).row(0, named=True)
    source = str(rows["source_file"][0]) if rows.height else spec.result
    fields: dict[str, Any] = dict(
        entry=entry, tool=str(rows["tool"][0]) if rows.height else "unknown",
        source_file=source, model=spec.model, precision=spec.precision, gpu=gpu_id,
        gpus=spec.gpus, gpus_basis=basis, input_len=spec.input_len,
        output_len=spec.output_len, results=rows.height, offline=bool(offline.height))
    notes: list[str] = []
    if best is None or best.get("output_tok_s") is None:
        notes.append("no result with an output throughput was read")
        return InferenceResult(**fields, notes=notes)
    per_gpu = float(best["output_tok_s"]) / spec.gpus
    fields.update(output_tok_s=float(best["output_tok_s"]), output_tok_s_per_gpu=per_gpu,
                  slo=_slo(spec, best))
    if usd_per_gpu_hour:
        fields["usd_per_million_output_tokens"] = usd_per_million_tokens(usd_per_gpu_hour,
                                                                         per_gpu)
    row = ref.match_inference(spec.model, gpu_id, spec.precision, spec.input_len,
                              spec.output_len)
    ratio = None
    if row is not None:
        reference = float(row["output_tok_s_per_gpu"])
        ratio = per_gpu / reference
        fields.update(reference_tok_s_per_gpu=reference, reference_source=str(row["source"]),
                      reference_setup=f"{row['parallel']}, {row['software']}, {row['scenario']}",
                      ratio=ratio)
        if usd_per_gpu_hour:
            fields["usd_per_million_output_tokens_at_reference"] = usd_per_million_tokens(
                usd_per_gpu_hour, reference)
    if not offline.height:
        notes.append(
            "every result ran under a request-rate or concurrency cap: a point of a latency "
            "curve is not comparable with the reference's offline maximum throughput")
    if basis == "declared":
        notes.append(
            f"{fields['tool']} records no GPU count: the per-GPU figure divides by the "
            f"manifest's {spec.gpus} GPUs, a declaration; submit trtllm-bench's report (it "
            "states world_size) or the serving engine's log to earn a pass")
    verdict = _verdict(ratio, bool(offline.height), basis, bar, source in errors)
    return InferenceResult(**fields, verdict=verdict, notes=notes)


def _verdict(ratio: float | None, offline: bool, basis: str, bar: float,
             invalid: bool) -> str:
    if invalid or basis == "contradicted":
        return "invalid"
    if ratio is None:
        return "no_reference"
    if not offline:
        return "not_comparable"
    if ratio < bar:
        return "fail"
    return "pass" if basis == "corroborated" else "unverified"


def _slo(spec: InferenceSpec, best: dict[str, Any]) -> list[str]:
    """The latency SLOs the manifest states, checked on the rated result."""
    out: list[str] = []
    for name, limit, column in (("TTFT p99", spec.ttft_p99_ms, "ttft_p99_ms"),
                                ("TPOT p99", spec.tpot_p99_ms, "tpot_p99_ms")):
        if limit is None:
            continue
        value = best.get(column)
        if value is None:
            out.append(f"{name} SLO {limit:g} ms: not measured by the result file")
        elif value <= limit:
            out.append(f"{name} {value:g} ms meets the {limit:g} ms SLO")
        else:
            out.append(f"{name} {value:g} ms misses the {limit:g} ms SLO")
    return out
