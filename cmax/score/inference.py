"""Serving throughput against the public per-GPU references (``reference/inference.csv``).

Like with like only: the provider's output tokens/s per GPU is compared with a reference row
of the same model, GPU, precision and input/output length, and only when the provider's
result ran as the reference did (offline: no request-rate or concurrency cap, the queue kept
full); a point of a latency sweep is shown, never rated against a maximum-throughput figure.
Of several offline results in one file (``--append-result``) the best is rated, as the
reference reports the best configuration it found.

A pass is earned: the verdict is ``pass`` only when the ratio is above the performance bar
(``cmax/judgement/bar.py``, as for training) *and* the result file itself states the GPU count
the ratio divides by; vLLM records none, so a vLLM result's per-GPU figure rests on the
manifest and is held at ``unverified``. A result
with an error finding (its numbers contradict themselves, requests failed) is ``invalid``
unless it is wholly below its bar, when it fails. A result whose file states another model or
GPU than its entry declares (a finding of effect ``not_comparable``) is compared with no
reference at all: the declared reference is of something else, so neither a ratio nor a fail
against it is true; it reads ``not_comparable`` with the contradiction named, and its
judgement withholds it (``cmax/judgement/bar.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from cmax.findings import Finding
from cmax.ingest.energy import telemetry_energy
from cmax.ingest.evidence import entry_rows, stated_splits
from cmax.ingest.formats.mlperf_inference import LATENCY_SCENARIOS
from cmax.judgement.bar import against_bar, point_against_bar
from cmax.judgement.bearings import Bearings
from cmax.reference.view import RefView
from cmax.resolve.case import Case
from cmax.score.rubric import PerformanceRules
from cmax.score.serving_curve import CurvePoint, interactivity, interpolate
from cmax.score.stats import bootstrap_ci, geometric_mean
from cmax.score.verdicts import serving_rated
from cmax.scorecard import Bearing, InferenceResult, ReferenceCurvePoint, ServingPoint
from cmax.submission.manifest import InferenceSpec
from cmax.throughput import usd_per_million_tokens


def gpus_basis(rows: pl.DataFrame, spec: InferenceSpec) -> str:
    """Whether the file states the GPU count the manifest declares, and the prefill/decode
    split when the manifest declares one (output per GPU is counted over the decode GPUs)."""
    stated = {int(g) for g in rows["gpus"].drop_nulls().to_list()}
    if not stated:
        return "declared"
    if stated != {spec.gpus}:
        return "contradicted"
    if spec.decode_gpus is None:
        return "corroborated"
    split = stated_splits(rows)
    if not split:
        return "declared"
    return "corroborated" if split == {(spec.prefill_gpus, spec.decode_gpus)} else "contradicted"


def inference_results(case: Case, findings: Bearings | Sequence[Finding], ref: RefView,
                      rules: PerformanceRules,
                      usd_per_gpu_hour: float | None) -> list[InferenceResult]:
    """One result per ``[[inference]]`` entry, in manifest order; a result whose file an
    error names is invalid (its evidence failed validation)."""
    manifest = case.manifest
    bearings = Bearings.of(findings)
    errors: set[str | None] = set(bearings.files_with_errors())
    out: list[InferenceResult] = []
    served = case.with_declared("inference")  # a load only the entry states, declared
    for i, spec in enumerate(manifest.inference):
        rows = entry_rows(served, i)
        entry = f"inference[{i}]"
        files = rows["source_file"].drop_nulls().unique().to_list() if rows.height else []
        blocking = [b for b in bearings.on(run_id=entry, files=[spec.result, *files])
                    if b.effect == "not_comparable"]
        out.append(_result(entry, spec, rows, manifest.system.gpu, ref, rules,
                           usd_per_gpu_hour, errors, case.tables["power"], blocking))
    return out


def _capped(row: dict[str, Any]) -> bool:
    return row.get("request_rate") is not None or row.get("concurrency") is not None


def _points(rows: pl.DataFrame, spec: InferenceSpec,
            curve: Sequence[CurvePoint]) -> list[ServingPoint]:
    """Every result with an output rate, in file order; a capped one is placed on the reference
    curve at its own interactivity."""
    out: list[ServingPoint] = []
    for row in rows.iter_rows(named=True):
        if row["output_tok_s"] is None:
            continue
        per_gpu = _per_gpu(row, spec)
        x = _interactivity(row)
        at = interpolate(curve, x) if x is not None and _capped(row) else None
        out.append(ServingPoint(
            concurrency=row["concurrency"], request_rate=row["request_rate"],
            interactivity=_round(x), output_tok_s_per_gpu=round(per_gpu, 4),
            reference_tok_s_per_gpu=_round(at),
            ratio=_round(per_gpu / at) if at else None, slo_met=_slo_met(spec, row)))
    return out


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def _result(entry: str, spec: InferenceSpec, rows: pl.DataFrame, gpu: str, ref: RefView,
            rules: PerformanceRules, usd_per_gpu_hour: float | None,
            errors: set[str | None], power: pl.DataFrame,
            blocking: Sequence[Bearing] = ()) -> InferenceResult:
    gpu_id = ref.gpu_id(gpu) or gpu
    basis = gpus_basis(rows, spec) if rows.height else "declared"
    offline = rows.filter(pl.col("request_rate").is_null() & pl.col("concurrency").is_null())
    # a result of another model or GPU than declared meets no reference of the declared one
    curve_rows = [] if blocking else ref.inference_curve(
        spec.model, gpu_id, spec.precision, spec.input_len, spec.output_len)
    curve = [CurvePoint(float(r["interactivity_tok_s_user"]), float(r["output_tok_s_per_gpu"]))
             for r in curve_rows]
    points = _points(rows, spec, curve)
    source = str(rows["source_file"][0]) if rows.height else spec.result
    fields: dict[str, Any] = dict(
        entry=entry, tool=str(rows["tool"][0]) if rows.height else "unknown",
        source_file=source, model=spec.model, precision=spec.precision, gpu=gpu_id,
        gpus=spec.gpus, gpus_basis=basis, input_len=spec.input_len,
        output_len=spec.output_len, results=rows.height, offline=bool(offline.height),
        comparison="none", points=points, reference_curve=[
            ReferenceCurvePoint(interactivity=p.interactivity, output_tok_s_per_gpu=p.tok_s_per_gpu)
            for p in sorted(curve, key=lambda p: p.interactivity)])
    notes: list[str] = []
    if blocking:
        return _not_comparable(fields, rows, spec, blocking)
    scenario = _mlperf_scenario(rows)
    if scenario is not None and scenario.lower() in LATENCY_SCENARIOS:
        notes.extend(_latency_notes(rows))
        return InferenceResult(**fields, notes=notes)
    scenario_row = ref.match_mlperf_inference(spec.model, gpu_id, scenario) if scenario else None
    on_curve = [p for p in points if p.ratio is not None]
    row = ref.match_inference(spec.model, gpu_id, spec.precision, spec.input_len,
                              spec.output_len)
    best: dict[str, Any] | None = None
    if scenario_row is not None and rows.height:
        best = rows.sort("output_tok_s", descending=True, nulls_last=True).row(0, named=True)
    elif offline.height:
        best = offline.sort("output_tok_s", descending=True, nulls_last=True).row(0, named=True)
    elif rows.height:
        best = _fastest(list(rows.iter_rows(named=True)), spec)
    if best is None or best.get("output_tok_s") is None:
        notes.append("no result with an output throughput was read")
        return InferenceResult(**fields, notes=notes)
    ci: tuple[float, float] | None = None
    reference: float | None = None
    ratio: float | None = None
    if scenario_row is not None:
        # MLPerf against MLPerf: the scenario fixes the latency bounds (TTFT and TPOT p99), so
        # both ran at the same floor of tokens/s per user
        reference = float(scenario_row["output_tok_s_per_gpu"])
        ratio = _per_gpu(best, spec) / reference
        fields.update(comparison="scenario", reference_source=str(scenario_row["source"]),
                      reference_setup=_setup(scenario_row))
        notes.append(
            f"MLPerf Inference {scenario}: compared with the published {scenario} result of the "
            "same model on the same GPU (closed division, available system); the scenario sets "
            "the latency bounds, so both ran at the same tokens/s per user. Per GPU = system "
            "tokens/s ÷ GPUs on both sides (not an MLPerf metric)")
    elif on_curve and not (offline.height and row is not None):
        # a latency sweep against the curve: each point at its own interactivity
        ratio = geometric_mean([p.ratio for p in on_curve if p.ratio])
        best = _best_capped(rows, on_curve, spec)
        fields.update(comparison="curve", reference_source=_curve_source(curve_rows),
                      reference_setup=_setup(curve_rows[0]))
        ci = _ci([p.ratio for p in on_curve if p.ratio], rules)
        outside = len([p for p in points if _capped_point(p)]) - len(on_curve)
        notes.append(
            f"{len(on_curve)} sweep point(s) compared with the reference curve interpolated at "
            f"each point's own interactivity (as the tool states it, else 1000 / mean TPOT); "
            "ratio = geometric mean"
            + (f"; {outside} point(s) outside the curve's measured interactivity range shown, "
               "not compared" if outside else ""))
        reference = _per_gpu(best, spec) / _ratio_at(best, on_curve, spec)
    elif row is not None:
        # a capped point against an offline maximum would compare different latencies: the
        # reference is shown, no ratio is drawn
        reference = float(row["output_tok_s_per_gpu"])
        ratio = _per_gpu(best, spec) / reference if offline.height else None
        fields.update(comparison="offline" if offline.height else "none",
                      reference_source=str(row["source"]), reference_setup=_setup(row))
    else:
        ratio = None
    per_gpu = _per_gpu(best, spec)
    fields.update(output_tok_s=float(best["output_tok_s"]), output_tok_s_per_gpu=per_gpu,
                  interactivity=_round(_interactivity(best)),
                  slo=_slo(spec, best), reference_tok_s_per_gpu=reference,
                  ratio=ratio, ci_low=_round(ci[0]) if ci else None,
                  ci_high=_round(ci[1]) if ci else None,
                  joules_per_output_token=_joules(best, spec, power, notes))
    if fields["comparison"] == "none" and not offline.height:
        notes.append(
            "every result ran under a request-rate or concurrency cap: a point of a latency "
            "curve is not comparable with the reference's offline maximum throughput"
            + ("" if curve else ", and the reference publishes no throughput-vs-interactivity "
               "curve for this setup"))
    if basis == "declared" and rows["gpus"].drop_nulls().is_empty():
        notes.append(
            f"{fields['tool']} records no GPU count: the per-GPU figure divides by the "
            f"manifest's {spec.gpus} GPUs, a declaration; submit trtllm-bench's report (it "
            "states world_size) or the serving engine's log to earn a pass")
    elif basis == "declared":
        notes.append(
            f"{fields['tool']} records no prefill/decode split: the per-GPU figure divides by "
            f"the manifest's {spec.decode_gpus} decode GPUs, a declaration; submit a result "
            "that states the split (InferenceX's num_prefill_gpu/num_decode_gpu) to earn a pass")
    verdict = _verdict(ratio, ci, fields["comparison"], basis, rules.bar, source in errors,
                       reference is not None)
    if ci is not None:
        notes.append(f"{rules.confidence:.0%} percentile bootstrap CI {ci[0]:.4f}-{ci[1]:.4f} "
                     f"over {len(on_curve)} sweep points; pass needs the whole interval above "
                     f"{rules.bar:.0%} of reference")
    elif fields["comparison"] == "curve":
        notes.append(f"fewer than {MIN_CURVE_POINTS} points on the curve: verdict from the point "
                     "estimate, no confidence interval")
    return _priced(InferenceResult(**fields, verdict=verdict, notes=notes),
                   _money(best, spec, reference, usd_per_gpu_hour))


def _priced(result: InferenceResult, money: dict[str, float]) -> InferenceResult:
    """The result with its $ per million tokens, priced only as the price's throughput ratio
    counts it (:func:`cmax.score.verdicts.serving_rated`: compared like with like on a GPU
    count its own file states, no error withholding it). A withheld, unverified or unrated
    result's measured rate would price tokens the evidence has not earned (a report declared
    over 1 GPU where it states 2 read $0.139 per million output tokens, half its true cost),
    so its own $ figures are None and its row says why; the reference's, at reference speed,
    stay (they are the reference's cost, not the result's)."""
    if serving_rated(result):
        return result.model_copy(update={**money, "priced": True})
    return result.model_copy(update={k: v for k, v in money.items() if k.endswith("_at_reference")})


def _mlperf_scenario(rows: pl.DataFrame) -> str | None:
    """The LoadGen scenario of an MLPerf Inference result (None for other tools)."""
    if not rows.height or not str(rows["tool"][0]).startswith("mlperf-inference"):
        return None
    named = rows["scenario"].drop_nulls()
    return str(named[0]) if named.len() else None


def _latency_notes(rows: pl.DataFrame) -> list[str]:
    """What a SingleStream or MultiStream result says: its percentile latency, unrated."""
    row = rows.row(0, named=True)
    latency, pct = row.get("latency_ms"), row.get("latency_percentile")
    shown = (f"{pct:g}th percentile latency {latency:,.6g} ms" if latency is not None
             and pct is not None else "a percentile latency")
    return [f"latency scenario: not rated against a throughput reference (MLPerf Inference "
            f"{row['scenario']}, {shown}; the release publishes no latency reference)"]


#: sweep points on the reference curve below which no interval is drawn: a bootstrap over
#: fewer resamples only the same two values
MIN_CURVE_POINTS = 3


def _capped_point(p: ServingPoint) -> bool:
    return p.concurrency is not None or p.request_rate is not None


def _ci(ratios: Sequence[float], rules: PerformanceRules) -> tuple[float, float] | None:
    """Percentile bootstrap of the geometric-mean ratio over the compared points."""
    if len(ratios) < MIN_CURVE_POINTS:
        return None
    logs = [math.log(r) for r in ratios]
    return bootstrap_ci(logs, np.exp, resamples=rules.bootstrap_resamples,
                        confidence=rules.confidence, seed=rules.bootstrap_seed)


def _best_capped(rows: pl.DataFrame, on_curve: Sequence[ServingPoint],
                 spec: InferenceSpec) -> dict[str, Any]:
    """The compared sweep point a contract would run at (:func:`_fastest`)."""
    by_rate = {p.output_tok_s_per_gpu for p in on_curve}
    best = _fastest([r for r in rows.iter_rows(named=True) if r["output_tok_s"] is not None
                     and round(_per_gpu(r, spec), 4) in by_rate], spec)
    assert best is not None  # every compared point has an output rate
    return best


def _fastest(candidates: list[dict[str, Any]], spec: InferenceSpec) -> dict[str, Any] | None:
    """Of sweep points, the one serving the most output that meets the stated SLOs (the one a
    contract would run at), else the fastest."""
    candidates = [r for r in candidates if r["output_tok_s"] is not None]
    meeting = [r for r in candidates if _slo_met(spec, r) is not False]
    return max(meeting or candidates, key=lambda r: float(r["output_tok_s"]), default=None)


def _ratio_at(best: dict[str, Any], on_curve: Sequence[ServingPoint],
              spec: InferenceSpec) -> float:
    rate = round(_per_gpu(best, spec), 4)
    return next(p.ratio for p in on_curve if p.output_tok_s_per_gpu == rate and p.ratio)


def _curve_source(rows: Sequence[Mapping[str, Any]]) -> str:
    """Where a curve is published: its first row's source, and how many runs the others add
    (a Pareto front joins the best configuration of several runs; each row names its own)."""
    sources = list(dict.fromkeys(str(r["source"]) for r in rows))
    if len(sources) == 1:
        return sources[0]
    return (f"{sources[0]}; the curve's {len(rows)} points come from {len(sources)} published "
            "runs, each named in reference/inference.csv")


def _setup(row: Mapping[str, Any]) -> str:
    return ", ".join(str(row[k]) for k in ("parallel", "software", "scenario") if row.get(k))


def _money(best: dict[str, Any], spec: InferenceSpec, reference: float | None,
           usd_per_gpu_hour: float | None) -> dict[str, float]:
    """$ per million output and input tokens at the quote, measured and at reference speed."""
    if not usd_per_gpu_hour:
        return {}
    out = {"usd_per_million_output_tokens": usd_per_million_tokens(
        usd_per_gpu_hour, float(best["output_tok_s"]) / spec.gpus)}
    tokens, duration = best.get("input_tokens"), best.get("duration_s")
    if tokens and duration and duration > 0:
        out["usd_per_million_input_tokens"] = usd_per_million_tokens(
            usd_per_gpu_hour, tokens / duration / spec.gpus)
    if reference:
        # a disaggregated reference counts per decode GPU; every GPU serving is paid for
        paid = reference * (float(best["output_tok_s"]) / spec.gpus) / _per_gpu(best, spec)
        out["usd_per_million_output_tokens_at_reference"] = usd_per_million_tokens(
            usd_per_gpu_hour, paid)
        out["usd_per_million_input_tokens_at_reference"] = usd_per_million_tokens(
            usd_per_gpu_hour, paid * spec.input_len / spec.output_len)
    return out


def _per_gpu(row: dict[str, Any], spec: InferenceSpec) -> float:
    """Output tokens/s per GPU as the references count it: over the decode GPUs of a
    disaggregated prefill/decode split, the file's or else the manifest's (InferenceX's
    ``output_tput_per_gpu``), else over every GPU serving. Money always divides by every GPU
    serving: all of them are paid."""
    decode = row.get("decode_gpus") or spec.decode_gpus
    return float(row["output_tok_s"]) / (decode if decode else spec.gpus)


def _interactivity(row: dict[str, Any]) -> float | None:
    """Output tokens/s per user: as the tool states it, else 1000 ÷ its mean TPOT in ms."""
    stated = row.get("interactivity_tok_s_user")
    if stated is not None and math.isfinite(stated) and stated > 0:
        return float(stated)
    return interactivity(row.get("tpot_mean_ms"))


def _joules(best: dict[str, Any], spec: InferenceSpec, power: pl.DataFrame,
            notes: list[str]) -> float | None:
    """J per output token measured, never estimated from a TDP: the tool's own energy figure,
    else the mean GPU power its own telemetry read (AIPerf), else the ``[[power]]`` telemetry
    (nvidia-smi, DCGM Exporter) over the run's span, as the result file dates it. Power is
    drawn by every GPU serving, so J per token = mean power x GPUs ÷ output tok/s; what it rests
    on goes to ``notes``."""
    value = best.get("j_per_output_token")
    if value is not None and value > 0:
        return round(float(value), 6)
    rate = best.get("output_tok_s")
    if not rate or rate <= 0:
        return None
    watts, read = best.get("power_w_per_gpu"), best.get("power_gpus")
    if watts:
        notes.append(
            f"energy: {best['tool']}'s own GPU power telemetry, a mean {watts:,.1f} W per GPU "
            f"over the run ({read} GPU(s) read"
            + (f" of the {spec.gpus} serving" if read != spec.gpus else "")
            + f"); J per output token = that power x {spec.gpus} GPUs ÷ {rate:,.1f} output "
            "tok/s (GPU boards only: below an all-in figure)")
        return round(float(watts) * spec.gpus / float(rate), 6)
    if power.is_empty():
        return None
    start, end = best.get("started_s"), best.get("ended_s")
    if start is None or end is None:
        notes.append(f"energy: {best['tool']} records no run time cmax can read, so the "
                     "[[power]] telemetry cannot be placed in its window")
        return None
    energy = telemetry_energy(power, start, end, num_gpus=spec.gpus,
                              tokens_per_s_per_gpu=rate / spec.gpus) or {}
    checks = energy.get("telemetry_checks")
    joules = energy.get("joules_per_token")
    if isinstance(checks, list) and checks:
        notes.append("energy: [[power]] telemetry over the run's span "
                     + ("(GPU boards only: below an all-in figure): " if joules else ": ")
                     + "; ".join(str(c) for c in checks))
    return round(float(joules), 6) if isinstance(joules, int | float) else None


def _not_comparable(fields: dict[str, Any], rows: pl.DataFrame, spec: InferenceSpec,
                    blocking: Sequence[Bearing]) -> InferenceResult:
    """A result its own file puts on another model or GPU than declared: its measured rate
    shown, no reference, no ratio, the contradiction named."""
    notes = [f"not comparable ({b.rule}): {b.message}; no reference of the declared "
             f"{spec.model} is compared with it" for b in blocking]
    measured = rows.filter(pl.col("output_tok_s").is_not_null())
    if measured.height:
        best = measured.sort("output_tok_s", descending=True).row(0, named=True)
        fields.update(output_tok_s=float(best["output_tok_s"]),
                      output_tok_s_per_gpu=_per_gpu(best, spec),
                      interactivity=_round(_interactivity(best)))
    return InferenceResult(**fields, verdict="not_comparable", notes=notes)


def _verdict(ratio: float | None, ci: tuple[float, float] | None, comparison: str, basis: str,
             bar: float, invalid: bool, reference_shown: bool) -> str:
    """A result wholly below its bar fails whatever else is wrong with it (an error withholds
    a pass, never a fail); short of that, one whose file an error names or whose GPU count
    contradicts the manifest is invalid."""
    verdict = (None if ratio is None else
               against_bar(*ci, bar) if ci else point_against_bar(ratio, bar))
    if verdict == "fail":
        return "fail"
    if invalid or basis == "contradicted":
        return "invalid"
    if comparison == "none" and reference_shown:
        return "not_comparable"
    if verdict is None:
        return "no_reference"
    return verdict if basis == "corroborated" else "unverified"


def _slo_met(spec: InferenceSpec, row: dict[str, Any]) -> bool | None:
    """Every stated SLO met on this result (None: none stated, or one not measured)."""
    checks = [(limit, row.get(column)) for limit, column in
              ((spec.ttft_p99_ms, "ttft_p99_ms"), (spec.tpot_p99_ms, "tpot_p99_ms"))
              if limit is not None]
    values = [(limit, value) for limit, value in checks if value is not None]
    if not checks or len(values) < len(checks):
        return None
    return all(value <= limit for limit, value in values)


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
