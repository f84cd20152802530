"""The arithmetic is a witness: which configuration explains the log's own numbers.

A training log prints its step times, its global batch size and (most frameworks) the model
TFLOP/s per GPU it computed from the same elapsed time. Every configuration the reference
measured at that GBS and sequence length -- a model, a precision, a GPU type and a GPU count --
predicts those numbers: its step time (the baseline's) and its TFLOP/s per GPU (model FLOPs
per sample x GBS / step time / GPUs, :mod:`cmax.throughput`). The declared configuration is
one candidate among them. When the claim explains the numbers badly (the run is far faster
than its reference, or the printed TFLOP/s fit the claimed model and GPU count under no FLOPs
convention) and another candidate explains them well, the claim is contradicted: an fp8 log
declared bf16 runs at the fp8 baseline's speed, a B200 log declared H100 at the B200's, an
8B run declared as 70B prints the 8B model's TFLOP/s on its own GPU count.

Only the claim is given every FLOPs convention a publisher uses (the benefit of the doubt);
another candidate must match under a pre-training convention, to rounding.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl

from cmax.findings import Finding
from cmax.reading.coerce import as_float, as_int
from cmax.throughput import model_tflops, step_time_s, tokens_per_s_per_gpu
from cmax.validate.context import Context, RunView, run_finding, under_recipe
from cmax.validate.registry import Rule, register
from cmax.validate.thresholds import (
    TIMING_BAND,
    TOO_GOOD_BAND,
    WITNESS_CLAIM_GAP,
    WITNESS_MARGIN,
    WITNESS_MATCH_GAP,
    WITNESS_SLOWEST,
    pct,
)

register(Rule(
    "identity.arithmetic", "error", "Another configuration explains the log's numbers",
    "The log's step times and printed TFLOP/s per GPU are predicted by every configuration the "
    "reference measured at the run's GBS and sequence length (model, precision, GPU type, GPU "
    "count). When the declared one explains them badly -- the run is more than "
    f"{pct(TOO_GOOD_BAND)} faster than its reference, or the printed TFLOP/s are more than "
    f"{pct(WITNESS_CLAIM_GAP)} from the claimed model and GPU count under every FLOPs "
    "convention -- and another configuration explains them markedly better (its reference "
    f"step time within {pct(TIMING_BAND)} faster to {pct(1 - WITNESS_SLOWEST)} slower, "
    f"the TFLOP/s within {pct(WITNESS_MATCH_GAP)}, {WITNESS_MARGIN:g}x closer), the run is "
    "that other configuration: an fp8 log declared bf16, a faster GPU's log, a smaller model "
    "on fewer GPUs. Both explanations are quoted.",
    "Declare the model, precision, GPU and GPU count the job used, or submit the declared "
    "run's unedited log.",
    "TFLOP/s per GPU = model FLOPs per sample x GBS / step time / GPUs (Megatron-LM "
    "training.py num_floating_point_operations; NVIDIA DGXC README); the reference's baselines "
    "and FLOPs conventions (reference/baselines.csv, reference/conventions.toml).",
))

#: FLOPs conventions that count a fine-tuning step: they apply to fine-tuning workloads only
#: (a pre-training claim given them would fit a smaller model's TFLOP/s: Llama 3.1 70B's
#: fine-tuning count on 64 GPUs is within 1.3 % of the 8B pre-training count on 8)
_FINETUNE = ("finetune", "lora", "sft")


def _applies(convention: str, workload: str) -> bool:
    tuned = any(word in workload for word in _FINETUNE)
    return tuned or not any(word in convention for word in _FINETUNE)


@dataclass(frozen=True)
class Explanation:
    """One configuration and how well it predicts the run's numbers."""

    workload: str
    gpu: str
    precision: str
    num_gpus: int
    baseline_id: str | None
    #: the reference's step time over the run's mean (above 1: the run is faster)
    speed: float | None
    #: printed TFLOP/s vs this configuration's implied, under its closest convention
    gap: float | None
    convention: str | None = None

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.workload, self.gpu, self.precision, self.num_gpus)

    def text(self) -> str:
        parts = []
        if self.speed is not None:
            parts.append(f"{self.speed:.2f}x the speed of {self.baseline_id}")
        if self.gap is not None:
            parts.append(f"printed TFLOP/s {self.gap:.1%} from its implied ({self.convention})")
        return (f"{self.workload} {self.precision} on {self.num_gpus} {self.gpu} "
                f"({'; '.join(parts) or 'no reference'})")


def _speed(row: dict[str, object], gbs: int, seq_len: int, mean_step: float) -> float | None:
    ref = as_float(row.get("step_time_s"))
    if ref is None or not math.isfinite(ref) or ref <= 0:
        tokens, n = as_float(row.get("tokens_per_s_per_gpu")), as_int(row.get("num_gpus"))
        if tokens is None or not math.isfinite(tokens) or tokens <= 0 or not n:
            return None
        ref = step_time_s(gbs, seq_len, tokens, n)
    return ref / mean_step


def _gap(ctx: Context, workload: str, seq_len: int, gbs: int, num_gpus: int,
         printed: float | None, *, claim: bool) -> tuple[float | None, str | None]:
    """How far the printed TFLOP per GPU per step is from this configuration's, under its
    closest convention (of the workload's task); the claim is given every convention a
    publisher of its task uses, another configuration only the pre-training ones."""
    if printed is None:
        return None, None
    best: tuple[float, str] | None = None
    for name, per_sample in ctx.ref.flops_candidates(workload, seq_len).items():
        if not _applies(name, workload) or (not claim and any(w in name for w in _FINETUNE)):
            continue
        implied = model_tflops(per_sample, tokens_per_s_per_gpu(gbs, 1, 1.0, num_gpus))
        gap = abs(printed / implied - 1)
        if best is None or gap < best[0]:
            best = (gap, name)
    return (None, None) if best is None else best


def _observed(view: RunView) -> tuple[float, float | None] | None:
    """The window's mean step time and the median printed TFLOP per GPU per step
    (TFLOP/s x step time: the model FLOPs the framework counted, whatever the step took)."""
    window = view.measured(window=True)
    if window.is_empty():
        return None
    mean_step = as_float(window["step_time_s"].mean())
    if mean_step is None or not math.isfinite(mean_step) or mean_step <= 0:
        return None
    printed = window.filter(pl.col("tflops_per_gpu").is_finite()
                            & (pl.col("tflops_per_gpu") > 0)).select(
        (pl.col("tflops_per_gpu") * pl.col("step_time_s")).median()).item()
    value = as_float(printed)
    return mean_step, value if value is not None and math.isfinite(value) else None


def _candidates(ctx: Context, gbs: int, seq_len: int, mean_step: float,
                printed: float | None, limit: int | None) -> dict[tuple[str, str, str, int],
                                                                 Explanation]:
    """Each configuration of the reference at this GBS and sequence length, with the row of
    it (of several releases) closest to the run's speed."""
    out: dict[tuple[str, str, str, int], Explanation] = {}
    gaps: dict[tuple[str, int], tuple[float | None, str | None]] = {}
    for row in ctx.ref.training_rows(gbs, seq_len).iter_rows(named=True):
        workload, n = str(row.get("workload") or ""), as_int(row.get("num_gpus"))
        gpu, precision = str(row.get("gpu") or ""), str(row.get("precision") or "")
        if not workload or not n or (limit and n > limit):
            continue
        speed = _speed(row, gbs, seq_len, mean_step)
        if speed is None:
            continue
        if (workload, n) not in gaps:
            gaps[(workload, n)] = _gap(ctx, workload, seq_len, gbs, n, printed, claim=False)
        gap, convention = gaps[(workload, n)]
        found = Explanation(workload, gpu, precision, n, str(row.get("baseline_id")), speed,
                            gap, convention)
        old = out.get(found.key)
        if old is None or abs(math.log(speed)) < abs(math.log(old.speed or 1.0)):
            out[found.key] = found
    return out


def _claim(ctx: Context, view: RunView, gbs: int, seq_len: int, mean_step: float,
           printed: float | None, others: dict[tuple[str, str, str, int], Explanation]
           ) -> Explanation | None:
    workload, precision = view.get_str("workload"), view.get_str("precision")
    n = view.get_int("num_gpus")
    gpu = ctx.ref.gpu_id(view.get_str("gpu") or ctx.gpu) or view.get_str("gpu") or ctx.gpu
    if not workload or not precision or not n:
        return None
    base = view.baseline
    speed: float | None = None
    baseline_id: str | None = None
    if base is not None and base.gbs in (None, gbs) and base.seq_len in (None, seq_len) \
            and base.num_gpus in (None, n):
        speed = _speed({"step_time_s": base.step_time_s, "num_gpus": n,
                        "tokens_per_s_per_gpu": base.tokens_per_s_per_gpu},
                       gbs, seq_len, mean_step)
        baseline_id = base.baseline_id
    same = others.get((workload, gpu, precision, n))
    if speed is None and same is not None:
        speed, baseline_id = same.speed, same.baseline_id
    gap, convention = _gap(ctx, workload, seq_len, gbs, n, printed, claim=True)
    return Explanation(workload, gpu, precision, n, baseline_id, speed, gap, convention)


def _counts(ctx: Context, claim: Explanation, gbs: int, seq_len: int, printed: float | None,
            per_node: int, limit: int) -> list[Explanation]:
    """The claimed model, precision and GPU on the GPU count its printed TFLOP/s imply: model
    FLOPs per sample x GBS / (TFLOP per GPU per step), on a power-of-two number of nodes."""
    if printed is None:
        return []
    out: list[Explanation] = []
    for name, per_sample in ctx.ref.flops_candidates(claim.workload, seq_len).items():
        if any(word in name for word in _FINETUNE):
            continue
        implied = model_tflops(per_sample, tokens_per_s_per_gpu(gbs, 1, 1.0, 1)) / printed
        # recipes run on a power-of-two number of nodes (or one node's GPUs): counts 2x apart
        # cannot both fit the printed figure to 1 %
        n = per_node * 2 ** max(0, round(math.log2(max(implied, 1.0) / per_node)))
        if n != claim.num_gpus and n <= limit:
            gap, convention = _gap(ctx, claim.workload, seq_len, gbs, n, printed, claim=False)
            out.append(Explanation(claim.workload, claim.gpu, claim.precision, n, None, None,
                                   gap, convention))
    return out


def _explains_better(c: Explanation, claim: Explanation, fast: bool, off: bool) -> bool:
    if c.speed is None:
        if not off:  # a count the TFLOP/s imply, with no reference speed: only they testify
            return False
    else:
        plausible = WITNESS_SLOWEST <= c.speed <= 1 + TIMING_BAND
        closer = not fast or claim.speed is None or \
            abs(math.log(c.speed)) * 2 < math.log(claim.speed)
        if not (plausible and closer):
            return False
    if c.gap is not None:
        if off and claim.gap is not None and not (
                c.gap <= WITNESS_MATCH_GAP and c.gap * WITNESS_MARGIN <= claim.gap):
            return False
        if not off and claim.gap is not None and c.gap > max(claim.gap, WITNESS_MATCH_GAP):
            return False
    return True


def _witness(ctx: Context, view: RunView) -> Iterator[Finding]:
    gbs, seq_len = view.get_int("gbs"), view.get_int("seq_len")
    observed = _observed(view)
    if not gbs or not seq_len or observed is None:
        return
    mean_step, printed = observed
    limit = ctx.manifest.system.nodes * ctx.manifest.system.gpus_per_node
    others = _candidates(ctx, gbs, seq_len, mean_step, printed, limit)
    claim = _claim(ctx, view, gbs, seq_len, mean_step, printed, others)
    if claim is None:
        return
    fast = claim.speed is not None and claim.speed > 1 + TOO_GOOD_BAND
    off = claim.gap is not None and claim.gap > WITNESS_CLAIM_GAP
    if not (fast or off):
        return
    counted = _counts(ctx, claim, gbs, seq_len, printed, ctx.manifest.system.gpus_per_node,
                      limit)
    better = [c for c in [*others.values(), *counted]
              if c.key != claim.key and _explains_better(c, claim, fast, off)]
    if not better:
        return
    # an explanation the reference's step time confirms too comes before one resting on the
    # printed TFLOP/s alone
    best = min(better, key=lambda c: (c.speed is None, (c.gap or 0.0)
                                      + abs(math.log(c.speed or 1.0))))
    numbers = f"mean step {mean_step:.3f} s at GBS {gbs}, seq {seq_len}"
    if printed is not None:
        numbers += f", printed TFLOP/s x step time {printed:.1f} TFLOP/GPU"
    yield run_finding(
        "identity.arithmetic", view,
        f"the log's numbers ({numbers}) fit {best.text()} far better than the declared "
        f"{claim.text()}")


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        resolved, _ = under_recipe(view)
        yield from _witness(ctx, resolved)
