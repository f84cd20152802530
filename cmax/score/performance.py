"""Training throughput per run against its matched reference baseline.

The ratio is provider ÷ reference throughput over the steady-state window the reference recipe
defines (cmax.recipes.window), so warm-up steps never count for or against a provider. When the
baseline prints a step time and the run uses the same GBS, sequence length and GPU count, the
ratio is reference step time ÷ mean provider step time: the most direct comparison, free of
the rounding in published tokens/s. Otherwise the comparison falls back to tokens/s/GPU, then
to model TFLOP/s/GPU, and the result says which.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from cmax.findings import Finding
from cmax.ingest.energy import implausible_power, measured_energy, telemetry_energy
from cmax.ingest.evidence import Evidence
from cmax.judgement.bar import against_bar, point_against_bar
from cmax.judgement.bearings import Bearings, rules_of
from cmax.reading.coerce import as_float
from cmax.reference.view import ReferenceData, optional_lookup
from cmax.resolve.case import Case, resolve
from cmax.resolve.runs import BaselineRow, ResolvedRun
from cmax.score.rubric import Rubric
from cmax.score.series import step_series
from cmax.score.stats import FloatArray, bootstrap_ci, geometric_mean
from cmax.score.verdicts import rated, unverified_note
from cmax.scorecard import Baseline, WorkloadResult
from cmax.states import Verdict
from cmax.throughput import mfu as mfu_of
from cmax.throughput import model_tflops as tflops_of
from cmax.throughput import tokens_per_gpu_step, tokens_per_s_per_gpu


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def _baseline_model(base: BaselineRow, release: str) -> Baseline:
    return Baseline(
        baseline_id=base.baseline_id, release=release, step_time_s=base.step_time_s,
        tokens_per_s_per_gpu=base.tokens_per_s_per_gpu,
        model_tflops_per_gpu=base.model_tflops_per_gpu, mfu_pct=base.mfu_pct, gbs=base.gbs,
        seq_len=base.seq_len, container=base.container,
        source=base.source or "(source not recorded in the reference row)",
    )


class _Basis:
    """How a run is compared: the per-step samples and the statistic of their mean."""

    def __init__(self, name: str, samples: list[float],
                 stat: Callable[[FloatArray], FloatArray], note: str) -> None:
        self.name = name
        self.samples = samples
        self.stat = stat
        self.note = note

    def point(self) -> float:
        return float(self.stat(np.array([float(np.mean(self.samples))]))[0])


def _choose_basis(
    *, base: Baseline, base_gpus: int | None, num_gpus: int, gbs: int | None,
    seq_len: int | None, step_times: list[float], tflops: list[float],
    flops_per_token: float | None,
) -> _Basis | None:
    """Pick the most direct comparison the baseline allows (see module docstring)."""
    same_config = (
        (base.gbs is None or gbs == base.gbs)
        and (base.seq_len is None or seq_len == base.seq_len)
        and (base_gpus is None or base_gpus == num_gpus)
    )
    if base.step_time_s and same_config and step_times:
        ref = base.step_time_s
        return _Basis("step_time", step_times, lambda m: ref / m,
                      f"compared on step time: reference {ref:g} s ÷ provider mean step time "
                      "(same GBS, sequence length and GPU count)")
    tokens_per_step = tokens_per_gpu_step(gbs, seq_len, num_gpus) if gbs and seq_len else None
    ref_tps = base.tokens_per_s_per_gpu
    if ref_tps is None and base.step_time_s and base.gbs and base.seq_len and base_gpus:
        ref_tps = tokens_per_s_per_gpu(base.gbs, base.seq_len, base.step_time_s, base_gpus)
    if ref_tps and tokens_per_step and step_times:
        k = tokens_per_step
        r = ref_tps
        why = "" if not same_config else " (the baseline gives no step time)"
        return _Basis("tokens", step_times, lambda m: k / m / r,
                      f"compared on tokens/s/GPU: provider GBS×seq/step/GPUs ÷ reference "
                      f"{r:g} tokens/s/GPU{why}")
    ref_tf = base.model_tflops_per_gpu
    if ref_tf:
        if tflops and len(tflops) == len(step_times):
            t = ref_tf
            return _Basis("tflops", tflops, lambda m: m / t,
                          f"compared on model TFLOP/s/GPU: provider's logged mean ÷ reference "
                          f"{t:g} (the baseline gives no step time or tokens/s)")
        if flops_per_token and tokens_per_step and step_times:
            k = tflops_of(flops_per_token, tokens_per_step)
            t = ref_tf
            return _Basis("tflops", step_times, lambda m: k / m / t,
                          f"compared on model TFLOP/s/GPU computed from the reference model "
                          f"FLOPs per token ÷ reference {t:g}")
    return None


def _window_span(window_steps: pl.DataFrame) -> tuple[float | None, float | None]:
    """UTC seconds from the start of the window's first step (its stamp, printed when the
    step ends, less its step time) to the last step's stamp; None without stamps."""
    if "wall_time_s" not in window_steps.columns or window_steps.is_empty():
        return None, None
    stamped = window_steps.filter(pl.col("wall_time_s").is_not_null()).sort("wall_time_s")
    if stamped.is_empty():
        return None, None
    first = stamped.row(0, named=True)
    start = float(first["wall_time_s"]) - float(first["step_time_s"] or 0.0)
    return start, float(stamped["wall_time_s"][-1])


def _mfu(run: ResolvedRun, model_tflops: float | None, *, printed: bool, system_gpu: str,
         reference: ReferenceData) -> tuple[float | None, str | None]:
    """The run's MFU (percent) and, where it is not taken against the declared peak, why.

    The peak is that of what ran: the GPU and precision the log states where it contradicts
    cmax.toml (an fp8 log declared bf16 is measured against the fp8 peak; the bf16 peak would
    double its MFU). Where the log's own statements disagree, or the model TFLOP/s are worked
    out from a workload or GPU count the log contradicts, the MFU cannot be known and is
    withheld rather than shown against the declaration."""
    if model_tflops is None:
        return None, None
    said = {name: run.stated(name) for name in ("gpu", "precision")}
    why = [f"the log contradicts cmax.toml's {name} without stating one {name} instead"
           for name, stated in said.items()
           if stated.status == "contradicted" and stated.known is None]
    if not printed:
        why += [f"the model TFLOP/s are worked out from cmax.toml's {name}, which the log "
                "contradicts" for name in ("workload", "num_gpus")
                if run.stated(name).status == "contradicted"]
    if why:
        return None, f"MFU withheld: {'; '.join(why)}"
    gpu = str(said["gpu"].known or system_gpu).lower()
    precision = str(said["precision"].known or "").lower()
    peak = optional_lookup(lambda: reference.peak_tflops(gpu, precision))
    if not peak:
        return None, None
    moved = [f"{stated.known} (declared {stated.value})" for stated in said.values()
             if stated.status == "contradicted"]
    note = (f"MFU against the dense {precision} peak of {gpu}, {peak:g} TFLOP/s, as the log "
            f"states {' and '.join(moved)}" if moved else None)
    return mfu_of(model_tflops, peak) * 100.0, note


def score_run(
    run: ResolvedRun,
    *,
    case: Case,
    findings: Bearings,
    reference: ReferenceData,
    rubric: Rubric,
) -> WorkloadResult:
    """One run's WorkloadResult: provider figures, baseline, ratio, CI and verdict.

    The baseline and the steady-state window are the case's (:mod:`cmax.resolve.case`), the same the
    validator judged, so the two stages can never disagree on them.
    """
    rules = rubric.performance
    row = run.row
    run_id = run.run_id
    # what the run is: the ledger's values (the log states them or cmax.toml declares them)
    workload = run.get_str("workload") or ""
    precision = run.get_str("precision") or ""
    num_gpus = run.get_int("num_gpus") or 0
    gpu = run.get_str("gpu") or case.manifest.system.gpu
    log = str(row.get("source_file") or "")
    status = str(row.get("status") or "no_data").lower()
    notes: list[str] = []

    printed = run.steps.select(pl.col("iteration").is_not_null()
                               & pl.col("step_time_s").is_not_null()).to_series().sum()
    common: dict[str, Any] = {
        "workload": workload, "precision": precision, "num_gpus": num_gpus, "log": log,
        "run_id": run_id, "log_states": {
            name: stated.log_value for name in ("workload", "num_gpus", "precision")
            if (stated := run.stated(name)).status == "contradicted"},
        "framework": run.get("framework"), "status": status, "steps_total": printed,
        # finite times only: NaN/inf are not JSON numbers (validation reports them)
        "bar": rules.bar, "step_series": step_series(run.steps),
    }

    gbs = run.get_int("gbs")
    seq_len = run.get_int("seq_len")
    if run.step_time_derived is not None:
        notes.append(run.step_time_derived.note())
    if run.baseline_note:
        notes.append(run.baseline_note)
    if run.baseline is None:
        notes.append(f"no reference baseline for {workload} {precision} on {num_gpus} × {gpu} "
                     f"in reference release {reference.release}")
        return WorkloadResult(**common, verdict="no_reference", notes=notes)
    base = _baseline_model(run.baseline, reference.release)
    base_gpus = run.baseline.num_gpus
    if gbs is None and base.gbs is not None:
        gbs = base.gbs
        notes.append(f"GBS {gbs} taken from the reference recipe (not in the log or manifest)")
    if seq_len is None and base.seq_len is not None:
        seq_len = base.seq_len
        notes.append(f"sequence length {seq_len} taken from the reference recipe")

    window = run.window
    # only the case's clean steps (finite, positive, first printing of each iteration): a NaN,
    # zero or negative step time is reported by validation as a missing window step and must
    # not move the ratio here
    in_window = run.window_steps
    step_times = [float(v) for v in in_window["step_time_s"]]
    tflops = [float(v) for v in in_window["tflops_per_gpu"]
              if v is not None and math.isfinite(v)]
    notes.append(f"steady-state window: iterations {window.first}-{window.last} ({window.rule}); "
                 f"{len(step_times)} step(s) in it")

    mean_step = float(np.mean(step_times)) if step_times else None
    tps = (tokens_per_s_per_gpu(gbs, seq_len, mean_step, num_gpus)
           if mean_step and gbs and seq_len and num_gpus else None)
    flops_per_token = (optional_lookup(lambda: reference.model_flops_per_token(workload, seq_len))
                       if seq_len else None)
    if tflops and len(tflops) == len(step_times):
        model_tflops: float | None = float(np.mean(tflops))
    elif flops_per_token and tps:
        model_tflops = tflops_of(flops_per_token, tps)
    else:
        model_tflops = None
    mfu, mfu_note = _mfu(run, model_tflops, printed=bool(tflops) and len(tflops) == len(step_times),
                         system_gpu=case.manifest.system.gpu, reference=reference)
    if mfu_note:
        notes.append(mfu_note)

    measured: dict[str, Any] = {
        "window": (window.first, window.last), "steps_in_window": len(step_times),
        "mean_step_time_s": _round(mean_step), "tokens_per_s_per_gpu": _round(tps, 3),
        "model_tflops_per_gpu": _round(model_tflops, 3), "mfu_pct": _round(mfu, 3),
        "baseline": base,
    }
    # Megatron --log-energy readings over the same window: GPU energy per token, measured
    energy = measured_energy(in_window, tokens_per_gpu_step=(
        tokens_per_gpu_step(gbs, seq_len, num_gpus) if gbs and seq_len and num_gpus else None))
    if energy is None or energy.get("joules_per_token") is None:
        # else GPU power telemetry (nvidia-smi, DCGM Exporter) over the window's wall-clock span
        energy = telemetry_energy(case.tables["power"], *_window_span(in_window),
                                  num_gpus=num_gpus, tokens_per_s_per_gpu=tps) or energy
    if energy is not None and energy.get("joules_per_token") is not None:
        tdp = getattr(optional_lookup(lambda: reference.gpu(gpu)), "tdp_w", None)
        why = implausible_power(as_float(energy.get("power_w_per_gpu")),
                                float(tdp) if isinstance(tdp, int | float) else None, mfu)
        if why is not None:
            checks = energy.get("telemetry_checks")
            energy = {**energy, "joules_per_token": None, "telemetry_checks": [
                *(checks if isinstance(checks, list) else []), why]}
    if energy is not None and energy.get("telemetry_checks"):
        measured.update(
            measured_joules_per_token=energy.get("joules_per_token"),
            measured_power_w_per_gpu=energy.get("power_w_per_gpu"),
            energy_checks=energy["telemetry_checks"])

    related = findings.on(run_id=run_id, files=[log])
    blocking = [b for b in related if b.effect == "not_comparable"]
    errors = rules_of(related, errors=True)

    basis = _choose_basis(base=base, base_gpus=base_gpus, num_gpus=num_gpus, gbs=gbs,
                          seq_len=seq_len, step_times=step_times, tflops=tflops,
                          flops_per_token=flops_per_token)
    ratio = ci_low = ci_high = None
    if basis is not None:
        notes.append(basis.note)
        ratio = basis.point()
        if len(basis.samples) >= rules.min_window_steps:
            ci_low, ci_high = bootstrap_ci(
                basis.samples, basis.stat, resamples=rules.bootstrap_resamples,
                confidence=rules.confidence, seed=rules.bootstrap_seed)

    def result(verdict: str) -> WorkloadResult:
        return WorkloadResult(**common, **measured, ratio=_round(ratio), ci_low=_round(ci_low),
                              ci_high=_round(ci_high), verdict=verdict,
                              validation_errors=errors, notes=notes)

    if blocking:
        notes.extend(f"not comparable ({f.rule}): {f.message}" for f in blocking)
        return result("not_comparable")
    if status == "invalid_grad_norm":
        notes.append("the run reported an invalid gradient norm: a diverged run cannot pass")
        return result("fail")
    if basis is None:
        if not step_times:
            notes.append("no step times in the steady-state window: nothing to compare")
            return result("inconclusive")
        notes.append("the baseline gives no figure this run can be compared on "
                     "(step time, tokens/s/GPU or model TFLOP/s/GPU)")
        return result("not_comparable")
    assert ratio is not None
    verdict: Verdict
    if ci_low is not None and ci_high is not None:
        verdict = against_bar(ci_low, ci_high, rules.bar)
        notes.append(f"{rules.confidence:.0%} percentile bootstrap over {len(basis.samples)} "
                     f"step(s), {rules.bootstrap_resamples} resamples, seed "
                     f"{rules.bootstrap_seed}; pass needs the whole interval above "
                     f"{rules.bar:.0%} of reference")
    elif window.first == window.last:
        verdict = point_against_bar(ratio, rules.bar)
        notes.append("the reference recipe measures a single step: verdict from the point "
                     "estimate, no confidence interval")
    else:
        verdict = "inconclusive"
        notes.append(f"fewer than {rules.min_window_steps} steps in the window: "
                     "no confidence interval, verdict withheld")
    if status != "success" and verdict == "pass":
        verdict = "inconclusive"
        notes.append(f"run status {status!r}: a run that did not finish cleanly cannot pass")
    if errors and verdict == "pass":
        # evidence that failed validation (e.g. the log is of another workload) is not
        # evidence of a pass; the ratio stays visible, the verdict is withheld
        verdict = "inconclusive"
        notes.append("validation error(s) on this run (" + ", ".join(errors) + "): "
                     "a run whose evidence fails validation cannot pass")
    unearned = case.claims.unearned(run_id)
    if unearned and not errors and verdict != "fail":
        verdict = "unverified"
        notes.append(unverified_note(unearned))
    held = rules_of(related, "unverified")
    if held and verdict == "pass":
        verdict = "unverified"
        notes.append("the log shows signs of fabrication (" + ", ".join(held) + "): the "
                     "pass counts only when other evidence corroborates the run")
    return result(verdict)


def workload_results(
    evidence: Evidence, findings: Bearings | Sequence[Finding], reference: ReferenceData,
    rubric: Rubric,
) -> list[WorkloadResult]:
    """Every run in the case, in run order (plain Evidence is resolved first), each with the
    findings bearing on it (:class:`cmax.judgement.bearings.Bearings`)."""
    case = resolve(evidence, reference)
    bearings = Bearings.of(findings)
    out = []
    for run in case.resolved:
        # a 1e308 s "step" overflows the mean to inf: the ratio is then 0, which is the
        # limit the numbers give (validation reports the stall); no numpy warning on stderr
        with np.errstate(over="ignore"):
            out.append(score_run(run, case=case, findings=bearings, reference=reference,
                                 rubric=rubric))
    return out


def suite_throughput(results: Sequence[WorkloadResult]) -> tuple[float | None, list[str]]:
    """Geometric mean of the comparable runs' ratios and one line per run that went into it.

    Runs that are not comparable, have no reference, no ratio or failed validation are left
    out (:func:`rated`): a price must not rest on a number the scorecard does not stand behind.
    """
    used = [r for r in results if rated(r)]
    if not used:
        return None, []
    ratios = [r.ratio for r in used if r.ratio is not None]
    lines = []
    for r in used:
        ci = (f", 95% CI {r.ci_low:.4f}-{r.ci_high:.4f}"
              if r.ci_low is not None and r.ci_high is not None else "")
        lines.append(f"{r.workload} {r.precision} {r.num_gpus} GPUs: {r.ratio:.4f}{ci} "
                     f"({r.verdict})")
    return geometric_mean(ratios), lines
