"""Numeric sanity: values that cannot come from a healthy run on real hardware.

A NaN or negative step time, a NaN gradient norm, or more TFLOP/s than the GPU's dense peak
are not "slow" or "fast" results; they are not results. These rules catch a broken parser, a
diverged run and an edited number alike.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from cmax.findings import Finding
from cmax.reading.coerce import as_int
from cmax.throughput import model_tflops, tokens_per_s_per_gpu
from cmax.validate.context import Context, RunView, run_finding, under_recipe
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import PEAK_FRACTION, TIMING_BAND, TOO_GOOD_BAND, pct

register(Rule(
    "sanity.non-finite", "error", "NaN or infinite measurement",
    "A step time, TFLOP/s or bandwidth of NaN or infinity cannot be averaged or compared; it "
    "comes from a broken log line, a parser error or a diverged run.",
    "Submit the unedited log; if the framework printed nan/inf, fix the run and re-run.",
))
register(Rule(
    "sanity.non-positive-time", "error", "Zero or negative time",
    "Step times and collective times are durations: zero or negative values are impossible "
    "and would inflate throughput without bound.",
    "Submit the unedited log; check the parser reads the right field.",
))
register(Rule(
    "sanity.nan-grad-norm", "error", "NaN or infinite gradient norm",
    "A NaN gradient norm means the run diverged or skipped updates; llmb-run marks such a run "
    "INVALID_GRAD_NORM and it does not count, whatever its step times.",
    "Fix the numerics (loss scaling, FP8 recipe, learning rate) and re-run.",
    "llmb-run pretrain_log_parser.py: INVALID_GRAD_NORM when `grad norm: nan` appears.",
))
register(Rule(
    "sanity.nan-loss", "error", "NaN or infinite loss",
    "A NaN loss means the run diverged; its throughput is not that of a working training job "
    "(skipped steps run faster).",
    "Fix the numerics and re-run.",
))
register(Rule(
    "sanity.tflops-above-peak", "error", "Reported TFLOP/s above the GPU's dense peak",
    "Model TFLOP/s per GPU above the dense (non-sparse) peak of the GPU at the run's precision "
    "means MFU above 100 %, which is impossible: the figure is wrong or edited.",
    "Submit the TFLOP/s the framework printed; check the GPU type and precision in cmax.toml.",
    "DGXC README \"Peak Theoretical Throughput\" (non-sparse): H100 989 BF16 / 1979 FP8.",
))
register(Rule(
    "sanity.throughput-above-peak", "error", "Step times imply more than the GPU's peak",
    "Model FLOPs per sample x GBS / step time / GPUs exceeds the dense peak: the step times "
    "are faster than the hardware can run this model, so the log, the GBS or the GPU count "
    "is wrong.",
    "Check GBS, sequence length and GPU count against the log; submit the unedited log.",
    "Model FLOPs per sample (reference/conventions.toml; smallest convention) against the "
    "dense peak of NVIDIA/dgxc-benchmarking README \"Peak Theoretical Throughput\".",
))
register(Rule(
    "sanity.tflops-zero", "warning", "Reported TFLOP/s are all zero",
    "Some framework builds print 0 MODEL_TFLOP/s for hybrid models (Megatron-Bridge 25.11 known "
    "issue for Nemotron-H). The figure is unusable; cmax rates the run from step times.",
    "Nothing to fix for the rating; upgrade the container to get TFLOP/s reporting back.",
    "Megatron-Bridge docs/releases/known-issues.md (25.11); DGXC nemotronh README v25.05.",
))
register(Rule(
    "sanity.unexpected-improvement", "warning",
    f"Faster than the reference by more than {pct(TIMING_BAND)}",
    f"NVIDIA's own perf CI fails a run that beats its golden value by more than {pct(TIMING_BAND)} "
    "(\"UNEXPECTED "
    "IMPROVEMENT\") because that usually means a different configuration or a measuring error, "
    "not a better cluster.",
    "Confirm the configuration matches the reference recipe; if it does, keep the full logs "
    "ready for review.",
    "Megatron-Bridge scripts/performance/utils/evaluate.py: timing_threshold 0.05 both ways.",
))
register(Rule(
    "sanity.too-good-to-be-true", "error",
    f"Faster than NVIDIA's tuned reference by more than {pct(TOO_GOOD_BAND)}",
    "NVIDIA tunes each recipe on its own reference clusters, where repeated runs spread by a "
    f"few percent. A run more than {pct(TOO_GOOD_BAND)} faster on the same recipe, GPU, "
    "precision and scale is not a better cluster: it is another precision (fp8 declared as "
    "bf16), another GPU, another configuration, or wrong numbers. Such a run cannot pass "
    "until the evidence explains it.",
    "Check the run's precision, GPU, GBS and parallel layout against the reference recipe and "
    "submit the log of the declared configuration.",
    "cmax (docs/rules.md): NVIDIA Megatron-Bridge perf CI treats >5 % as UNEXPECTED "
    "IMPROVEMENT; cmax errors at twice that.",
))
register(Rule(
    "sanity.nccl-wrong-results", "error", "nccl-tests reported wrong results",
    "A non-zero #wrong column means the collective returned corrupted data; the bandwidth on "
    "that line is meaningless and the fabric or GPUs are faulty.",
    "Find and fix the faulty node or link, then re-run nccl-tests with validation on (-c 1).",
    "nccl-tests output format (#wrong column).",
    subject="file",
))


def _bad(col: str) -> pl.Expr:
    return pl.col(col).is_not_null() & (pl.col(col).is_nan() | pl.col(col).is_infinite())


def _first(frame: pl.DataFrame) -> tuple[str, int | None]:
    """Where the first bad value is: its iteration, or the summary row of a parse-script CSV /
    llmb-run database (which has no iteration), and its line."""
    if frame.is_empty():
        return "-", None
    row = frame.row(0, named=True)
    it = as_int(row.get("iteration"))
    return (f"iteration {it}" if it is not None else "the summary's mean"), as_int(row.get("line"))


def _run_values(view: RunView) -> Iterator[Finding]:
    summary = view.summary
    steps = view.steps if summary is None else summary
    for col, label in (("step_time_s", "step time"), ("tflops_per_gpu", "TFLOP/s")):
        bad = steps.filter(_bad(col))
        if not bad.is_empty():
            it, line = _first(bad)
            yield run_finding("sanity.non-finite", view,
                              f"{bad.height} step(s) with a NaN/inf {label}, first at {it}",
                              line=line)
    bad = steps.filter(pl.col("step_time_s").is_finite() & (pl.col("step_time_s") <= 0))
    if not bad.is_empty():
        it, line = _first(bad)
        yield run_finding("sanity.non-positive-time", view,
                          f"{bad.height} step(s) with a step time <= 0, first at {it}",
                          line=line)
    bad = steps.filter(_bad("grad_norm"))
    status = str(view.row.get("status") or "").lower()
    if not bad.is_empty():
        it, line = _first(bad)
        yield run_finding("sanity.nan-grad-norm", view,
                          f"{bad.height} step(s) with a NaN/inf gradient norm, first at {it}",
                          line=line)
    elif status == "invalid_grad_norm":
        yield run_finding("sanity.nan-grad-norm", view,
                          "ingest reports status invalid_grad_norm")
    bad = steps.filter(_bad("loss"))
    if not bad.is_empty():
        it, line = _first(bad)
        yield run_finding("sanity.nan-loss", view,
                          f"{bad.height} step(s) with a NaN/inf loss, first at {it}",
                          line=line)
    # counted, not filtered: a copy of a long run's steps only to count them is wasted memory
    reported = pl.col("tflops_per_gpu").is_not_null() & pl.col("tflops_per_gpu").is_finite()
    count, zeros = steps.select(
        reported.sum().alias("count"),
        (reported & (pl.col("tflops_per_gpu") == 0)).sum().alias("zeros")).row(0)
    if count and zeros == count:
        yield run_finding("sanity.tflops-zero", view,
                          f"all {count} reported TFLOP/s values are 0")


def _peaks(ctx: Context, view: RunView) -> Iterator[Finding]:
    gpu = view.get_str("gpu") or ctx.gpu
    precision = view.get_str("precision")
    peak = ctx.ref.peak_tflops(gpu, precision)
    if peak is None:
        return
    limit = peak * PEAK_FRACTION
    steps = view.measured()
    over = steps.filter(pl.col("tflops_per_gpu").is_finite() & (pl.col("tflops_per_gpu") > limit))
    if not over.is_empty():
        it, line = _first(over)
        top = float(over["tflops_per_gpu"].max())  # type: ignore[arg-type]
        yield run_finding("sanity.tflops-above-peak", view,
                          f"{over.height} step(s) report up to {top:.1f} TFLOP/s/GPU, above the "
                          f"{peak:g} dense {precision} peak of {gpu} (first at {it})",
                          line=line)
    derived = derived_tflops(ctx, view, steps)
    if derived is None:
        return
    over = derived.filter(pl.col("derived_tflops") > limit)
    if not over.is_empty():
        it, line = _first(over)
        top = float(over["derived_tflops"].max())  # type: ignore[arg-type]
        yield run_finding("sanity.throughput-above-peak", view,
                          f"{over.height} step(s) imply up to {top:.1f} TFLOP/s/GPU "
                          f"({100 * top / peak:.0f} % MFU) on a {peak:g} TFLOP/s {precision} peak "
                          f"(first at {it})", line=line)


def derived_tflops(ctx: Context, view: RunView, steps: pl.DataFrame,
                   per_sample: float | None = None) -> pl.DataFrame | None:
    """Steps with ``derived_tflops`` = model FLOPs/sample x GBS / step time / GPUs / 1e12.

    Without ``per_sample`` the smallest count among the workload's FLOPs conventions is used,
    so a step is only called impossible under every way of counting.
    """
    gbs, num_gpus = view.get_int("gbs"), view.get_int("num_gpus")
    if per_sample is None:
        candidates = ctx.ref.flops_candidates(view.get_str("workload"), view.get_int("seq_len"))
        per_sample = min(candidates.values()) if candidates else None
    if per_sample is None or not gbs or not num_gpus or steps.is_empty():
        return None
    samples_per_s = tokens_per_s_per_gpu(gbs, 1, pl.col("step_time_s"), num_gpus)
    return steps.with_columns(model_tflops(per_sample, samples_per_s).alias("derived_tflops"))


def _improvement(view: RunView) -> Iterator[Finding]:
    base = view.baseline
    window = view.measured(window=True)
    if base is None or window.is_empty():
        return
    gbs, seq_len, num_gpus = view.get_int("gbs"), view.get_int("seq_len"), view.get_int("num_gpus")
    if (base.gbs is not None and gbs is not None and base.gbs != gbs) or (
            base.seq_len is not None and seq_len is not None and base.seq_len != seq_len):
        return  # not comparable: reported by comparability.config-mismatch
    mean_step = float(window["step_time_s"].mean())  # type: ignore[arg-type]
    ratio: float | None = None
    what = ""
    ref_step = base.step_time_s
    ref_tokens = base.tokens_per_s_per_gpu
    if ref_step and base.gbs == gbs:
        ratio, what = ref_step / mean_step, f"step time {mean_step:.3f} s vs {ref_step:g} s"
    elif ref_tokens and gbs and seq_len and num_gpus:
        tokens = tokens_per_s_per_gpu(gbs, seq_len, mean_step, num_gpus)
        ratio, what = tokens / ref_tokens, f"{tokens:.1f} vs {ref_tokens:g} tokens/s/GPU"
    if ratio is not None and ratio > 1 + TOO_GOOD_BAND:
        yield run_finding("sanity.too-good-to-be-true", view,
                          f"{100 * (ratio - 1):.1f} % faster than NVIDIA's "
                          f"{base.baseline_id} ({what}); the run cannot pass")
    elif ratio is not None and ratio > 1 + TIMING_BAND:
        yield run_finding("sanity.unexpected-improvement", view,
                          f"{100 * (ratio - 1):.1f} % faster than "
                          f"{base.baseline_id} ({what})")


def _nccl(ctx: Context) -> Iterator[Finding]:
    nccl = ctx.tables["nccl"]
    if nccl.is_empty():
        return
    for path in sorted({str(p) for p in nccl["source_file"].drop_nulls().unique().to_list()}
                       ) or [""]:
        rows = nccl.filter(pl.col("source_file") == path) if path else nccl
        bad = rows.filter(_bad("time_us") | _bad("algbw_gbps") | _bad("busbw_gbps"))
        if not bad.is_empty():
            yield finding("sanity.non-finite",
                          f"{bad.height} nccl-tests row(s) with NaN/inf time or bandwidth",
                          file=path or None, line=as_int(bad["line"][0]))
        bad = rows.filter(pl.col("time_us").is_finite() & (pl.col("time_us") <= 0))
        if not bad.is_empty():
            yield finding("sanity.non-positive-time",
                          f"{bad.height} nccl-tests row(s) with a time <= 0 us",
                          file=path or None, line=as_int(bad["line"][0]))
        bad = rows.filter(pl.col("wrong").fill_null(0) > 0)
        if not bad.is_empty():
            sizes = ", ".join(str(s) for s in bad["size_bytes"].head(5).to_list())
            yield finding("sanity.nccl-wrong-results",
                          f"{bad.height} row(s) with #wrong > 0 (sizes {sizes} B)",
                          file=path or None, line=as_int(bad["line"][0]))


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        # the limits apply to the run as resolved: what cmax.toml or the log states, else the
        # matched recipe's configuration; none is skipped because a field was not declared
        resolved, _ = under_recipe(view)
        yield from _run_values(view)
        yield from _peaks(ctx, resolved)
        yield from _improvement(resolved)
    yield from _nccl(ctx)
