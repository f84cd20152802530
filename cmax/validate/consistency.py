"""Internal consistency: the numbers in a submission must agree with each other.

Every figure a training or nccl-tests log prints is arithmetic on a few others (TFLOP/s from
step time and model FLOPs, tokens/s from GBS x seq / step time, bus bandwidth from algorithm
bandwidth and rank count). An edited number breaks that arithmetic, so these rules catch
edits that no single-value check can see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import polars as pl

from cmax.findings import Finding
from cmax.ingest.textlines import rising
from cmax.reading.coerce import as_int
from cmax.throughput import tokens_per_s_per_gpu
from cmax.validate import selfcheck
from cmax.validate.context import (
    CONFIG_FIELDS,
    Context,
    RunView,
    print_resolution,
    run_finding,
    under_recipe,
)
from cmax.validate.registry import Rule, finding, register
from cmax.validate.sanity import derived_tflops
from cmax.validate.thresholds import (
    FLOPS_TOLERANCE,
    NCCL_ABS_TOLERANCE_GBPS,
    NCCL_ALGBW_MIN_GBPS,
    NCCL_ALGBW_MIN_TIME_US,
    NCCL_ALGBW_REL_TOLERANCE,
    NCCL_BUSBW_REL_TOLERANCE,
    TOKENS_TOLERANCE,
)

register(Rule(
    "consistency.tflops-vs-step-time", "error", "Reported TFLOP/s disagree with the step times",
    "The framework computes TFLOP/s/GPU as model FLOPs per step / step time / GPUs. When the "
    "printed figure is far from what the step times imply for this model, GBS and sequence "
    "length, either number was edited or the run is not the model it claims to be.",
    "Submit the unedited log and check workload, GBS, seq_len and num_gpus in cmax.toml.",
    f"More than {FLOPS_TOLERANCE:.0%} from the nearest of the FLOPs conventions used for this "
    "workload (cmax architecture-true, Megatron-Bridge flop_utils, and the convention of its "
    "reference rows, e.g. NVIDIA's non-causal Llama formula); median over the window's steps.",
))
register(Rule(
    "consistency.recipe-config-assumed", "info", "Configuration not stated: the recipe's assumed",
    "Neither cmax.toml nor the log states part of the run's configuration (GBS, sequence "
    "length, parallelism). Skipping the consistency rules would let a log with edited TFLOP/s "
    "through, so they run under the matched reference recipe's values instead, and this note "
    "says which were assumed. A run made with another configuration then shows up as "
    "inconsistent, which is the honest outcome: declare what the job used.",
    "Declare gbs, seq_len, mbs, tp, pp, cp (and ep, vp) in the run's [[runs]] entry.",
    "The matched baseline row of the reference release (NVIDIA DGXC recipe configuration); "
    "only a row for the run's own GPU count is used.",
))
register(Rule(
    "consistency.tokens-vs-step-time", "error", "Reported tokens/s disagree with the step times",
    "Tokens per second per GPU is GBS x sequence length / step time / GPUs (DGXC README "
    "formula); a printed figure that disagrees was edited or computed for another config.",
    "Submit the unedited log and check GBS, seq_len and num_gpus.",
    f"More than {TOKENS_TOLERANCE:.0%} apart plus the rounding of the printed step time.",
))
register(Rule(
    "consistency.gpu-count", "error", "More GPUs than the declared system has",
    "A run, nccl-tests job or MLPerf result using more GPUs than [system] nodes x gpus_per_node "
    "was not run on the system being rated.",
    "Correct [system] nodes/gpus_per_node, or remove evidence from other systems.",
    effect="other_system",
))
register(Rule(
    "consistency.partial-nodes", "warning", "GPU count is not a whole number of nodes",
    "Reference recipes run on whole nodes (8 GPUs per H100/B200 node, 4 per GB200 tray); a "
    "partial node changes the communication pattern.",
    "Run on whole nodes, as the recipe does.",
))
register(Rule(
    "consistency.parallel-layout", "error", "Parallel layout does not fit the GPU count",
    "Megatron requires TP x PP x CP to divide the GPU count, EP x PP to divide it for MoE "
    "models, and GBS to be a multiple of data-parallel size x micro-batch size. A layout that "
    "breaks these could not have run, so the declared config is not the one that produced "
    "the log.",
    "Declare the configuration the job really used.",
))
register(Rule(
    "consistency.manifest-vs-log", "error", "The manifest and the log disagree",
    "cmax.toml declares one configuration and the log shows another; the rating would compare "
    "the wrong thing. Besides the parsed fields, the global batch size printed on the window's "
    "iteration lines is re-read from the log, because declared values take precedence in "
    "ingest and declaring the reference GBS is the easiest way to look comparable.",
    "Correct cmax.toml (or submit the log of the run it describes).",
))
register(Rule(
    "consistency.iteration-sequence", "error", "Iterations repeat or go backwards",
    "In one job's log the iteration counter only increases. Repeats or backward jumps mean "
    "several attempts (or several logs) were spliced into one file, and the window average "
    "would mix them.",
    "Submit the log of a single attempt (llmb-run keeps the highest-numbered retry).",
    "llmb-run job_logs.py: picks the log of the highest retry.",
))
register(Rule(
    "consistency.restarted-run", "warning", "The log holds several attempts of the job",
    "The job restarted inside the log (fault-tolerant resume); cmax keeps the later attempt of "
    "each iteration, as llmb-run keeps the latest retry. Steps just after a resume are not "
    "steady state, and the restart itself is a reliability event.",
    "Prefer a log of one uninterrupted attempt; report the interruption in the incident log.",
    "llmb-run job_logs.py: the highest retry number wins.",
))
register(Rule(
    "consistency.nccl-busbw", "error", "nccl-tests bus bandwidth does not match algbw",
    "nccl-tests derives busbw from algbw by a fixed factor per collective (all_reduce 2(n-1)/n; "
    "all_gather, reduce_scatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1). A busbw that "
    "breaks this was edited.",
    "Submit the unedited nccl-tests stdout.",
    "NVIDIA/nccl-tests doc/PERFORMANCE.md.",
    subject="file",
))
register(Rule(
    "consistency.nccl-algbw", "error", "nccl-tests algbw does not match size / time",
    "algbw is message size / time; an algbw that disagrees with the printed size and time was "
    "edited.",
    "Submit the unedited nccl-tests stdout.",
    "NVIDIA/nccl-tests doc/PERFORMANCE.md (algbw = S / t).",
    subject="file",
))


def _assumed_note(view: RunView, assumed: list[str]) -> Iterator[Finding]:
    if assumed and view.baseline is not None:
        yield run_finding(
            "consistency.recipe-config-assumed", view,
            f"neither cmax.toml nor the log states {', '.join(a.split()[0] for a in assumed)};"
            f" the consistency rules assume the reference recipe's ({view.baseline.baseline_id})"
            f": {', '.join(assumed)}")


def _median(frame: pl.DataFrame, col: str) -> float | None:
    value = frame[col].median()
    return float(value) if isinstance(value, int | float) else None


def _tflops(ctx: Context, view: RunView) -> Iterator[Finding]:
    steps = view.measured().filter(pl.col("tflops_per_gpu").is_finite()
                                   & (pl.col("tflops_per_gpu") > 0))
    window = steps.filter(pl.col("iteration").is_between(view.window.first, view.window.last))
    use = window if window.height >= 3 else steps
    if use.is_empty():
        return
    candidates = ctx.ref.flops_candidates(view.get_str("workload"), view.get_int("seq_len"))
    gaps: list[tuple[float, str, float, float]] = []
    for convention, per_sample in candidates.items():
        derived = derived_tflops(ctx, view, use, per_sample)
        if derived is None:
            return
        reported = _median(derived, "tflops_per_gpu")
        implied = _median(derived, "derived_tflops")
        if reported and implied:
            gaps.append((abs(reported / implied - 1), convention, reported, implied))
    if not gaps:
        return
    gap, convention, reported, implied = min(gaps)
    if gap > FLOPS_TOLERANCE:
        names = ", ".join(sorted(candidates))
        yield run_finding(
            "consistency.tflops-vs-step-time", view,
            f"reported {reported:.1f} TFLOP/s/GPU is {gap:.0%} "
            f"{'above' if reported > implied else 'below'} the {implied:.1f} implied by the step "
            f"times under the closest FLOPs convention ({convention}; tried {names}) for "
            f"{view.get_str('workload')}, GBS {view.get_int('gbs')}, seq "
            f"{view.get_int('seq_len')}, {view.get_int('num_gpus')} GPUs",
            line=as_int(use["line"][0]))


def _tokens(view: RunView) -> Iterator[Finding]:
    if "tokens_per_s_per_gpu" not in view.steps.columns:
        return
    gbs, seq_len, num_gpus = view.get_int("gbs"), view.get_int("seq_len"), view.get_int("num_gpus")
    steps = view.clean_steps.filter(pl.col("tokens_per_s_per_gpu").is_not_null()
                                      & pl.col("tokens_per_s_per_gpu").is_finite())
    if not gbs or not seq_len or not num_gpus or steps.is_empty():
        return
    q = print_resolution(steps["step_time_s"])
    implied = tokens_per_s_per_gpu(gbs, seq_len, pl.col("step_time_s"), num_gpus)
    tolerance = TOKENS_TOLERANCE + q / pl.col("step_time_s")
    bad = steps.filter(((pl.col("tokens_per_s_per_gpu") / implied) - 1).abs() > tolerance)
    if not bad.is_empty():
        row = bad.row(0, named=True)
        expected = tokens_per_s_per_gpu(gbs, seq_len, row["step_time_s"], num_gpus)
        yield run_finding(
            "consistency.tokens-vs-step-time", view,
            f"{bad.height} step(s) report tokens/s/GPU that GBS {gbs} x seq {seq_len} / step "
            f"time / {num_gpus} GPUs does not give (iteration {row['iteration']}: "
            f"{row['tokens_per_s_per_gpu']:.1f} reported, {expected:.1f} implied)",
            line=as_int(row.get("line")))


def _layout(view: RunView) -> Iterator[Finding]:
    n = view.get_int("num_gpus")
    if not n:
        return
    tp, pp = view.get_int("tp"), view.get_int("pp")
    cp, ep = view.get_int("cp") or 1, view.get_int("ep") or 1
    if tp is None or pp is None:
        return
    problems: list[str] = []
    model = tp * pp * cp
    if model <= 0 or n % model:
        problems.append(f"TP x PP x CP = {model} does not divide {n} GPUs")
    elif ep > 1 and n % (ep * pp):
        problems.append(f"EP x PP = {ep * pp} does not divide {n} GPUs")
    else:
        dp = n // model
        gbs, mbs = view.get_int("gbs"), view.get_int("mbs") or 1
        if gbs and gbs % (dp * mbs):
            problems.append(f"GBS {gbs} is not a multiple of DP {dp} x MBS {mbs}")
    for text in problems:
        yield run_finding("consistency.parallel-layout", view, text)


def _manifest(ctx: Context, view: RunView) -> Iterator[Finding]:
    spec = view.spec
    if spec is not None:
        diffs: list[str] = []
        for name in ("workload", "precision", "num_gpus", *CONFIG_FIELDS):
            if name == "gbs" and view.logged_gbs:
                continue  # the window's own lines decide it, with their line (_logged_gbs)
            logged, declared = view.row.get(name), getattr(spec, name, None)
            if logged is None or declared is None:
                continue
            if str(logged).strip().lower() != str(declared).strip().lower():
                diffs.append(f"{name} {logged} in the log vs {declared} in cmax.toml")
        if diffs:
            yield run_finding("consistency.manifest-vs-log", view, "; ".join(diffs))


def _logged_gbs(view: RunView) -> Iterator[Finding]:
    """The GBS the log itself prints on the window's iteration lines, against the one cmax.toml
    declares (else the run's record).

    The case carries what the log prints on the window's lines (``parallel gbs=N`` facts,
    :mod:`cmax.resolve.case`): a manifest that declares the reference GBS for a run made with
    another is the easiest way to make a run look comparable.
    """
    spec_gbs = getattr(view.spec, "gbs", None) if view.spec is not None else None
    declared = spec_gbs if isinstance(spec_gbs, int) else view.get_int("gbs")
    if declared is None:
        return
    for line, logged in view.logged_gbs:
        if logged != declared:
            yield run_finding("consistency.manifest-vs-log", view,
                              f"the log prints global batch size {logged}, the run is "
                              f"declared with gbs {declared}", line=line)
            return


def _restarts(view: RunView) -> Iterator[Finding]:
    restarts = as_int(view.row.get("restarts"))
    if restarts:
        yield run_finding("consistency.restarted-run", view,
                          f"{restarts} restart(s) inside the log; the later attempt of each "
                          "iteration is used")


def _sequence(view: RunView) -> Iterator[Finding]:
    iterations = view.steps["iteration"]
    if rising(iterations):
        return  # strictly rising (nearly every log): nothing to walk step by step
    its = [as_int(v) for v in iterations.to_list()]
    lines = [as_int(v) for v in view.steps["line"].to_list()]
    seen: dict[int, int | None] = {}
    top: int | None = None
    for it, line in zip(its, lines, strict=True):
        if it is None:
            continue
        if it in seen:
            yield run_finding("consistency.iteration-sequence", view,
                              f"iteration {it} appears again (first at line {seen[it]})",
                              line=line)
            return
        if top is not None and it < top:
            yield run_finding("consistency.iteration-sequence", view,
                              f"iteration {it} follows iteration {top}", line=line)
            return
        seen[it] = line
        top = it if top is None else max(top, it)


def _system(ctx: Context) -> Iterator[Finding]:
    system = ctx.manifest.system
    total = system.nodes * system.gpus_per_node
    for view in ctx.runs:
        n = view.get_int("num_gpus")
        if n and n > total:
            yield run_finding("consistency.gpu-count", view,
                              f"{n} GPUs, but [system] has {system.nodes} nodes x "
                              f"{system.gpus_per_node} = {total}")
        elif n and n > system.gpus_per_node and n % system.gpus_per_node:
            yield run_finding("consistency.partial-nodes", view,
                              f"{n} GPUs is not a multiple of {system.gpus_per_node} per node")
    nccl = ctx.tables["nccl"]
    over = nccl.filter((pl.col("ranks") > total) | (pl.col("nodes") > system.nodes))
    for path in sorted({str(p) for p in over["source_file"].drop_nulls().to_list()}):
        row = over.filter(pl.col("source_file") == path).row(0, named=True)
        yield finding("consistency.gpu-count",
                      f"nccl-tests ran on {row['ranks']} ranks / {row['nodes']} nodes, but "
                      f"[system] has {system.nodes} nodes x {system.gpus_per_node} = {total}",
                      file=path, line=as_int(row.get("line")))
    mlperf = ctx.tables["mlperf"].filter(pl.col("num_gpus") > total)
    for row in mlperf.iter_rows(named=True):
        yield finding("consistency.gpu-count",
                      f"MLPerf result on {row['num_gpus']} GPUs, but [system] has {total}",
                      file=row.get("source_file"))


_BUS_FACTOR: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}


def _collective(name: object) -> str:
    text = str(name or "").lower().removesuffix("_perf").replace("-", "_")
    return {"allreduce": "all_reduce", "allgather": "all_gather",
            "reducescatter": "reduce_scatter"}.get(text, text)


def _nccl(ctx: Context) -> Iterator[Finding]:
    nccl = ctx.tables["nccl"].filter(
        pl.col("algbw_gbps").is_finite() & pl.col("busbw_gbps").is_finite()
        & pl.col("ranks").is_not_null() & (pl.col("ranks") > 0))
    if nccl.is_empty():
        return
    factor = pl.Series("factor", [
        _BUS_FACTOR[c](int(n)) if c in _BUS_FACTOR else None
        for c, n in zip((_collective(v) for v in nccl["collective"].to_list()),
                        nccl["ranks"].to_list(), strict=True)
    ], dtype=pl.Float64)
    nccl = nccl.with_columns(factor)
    expected_bus = pl.col("algbw_gbps") * pl.col("factor")
    bus_bad = nccl.filter(pl.col("factor").is_not_null()
                          & ((pl.col("busbw_gbps") - expected_bus).abs()
                             > NCCL_ABS_TOLERANCE_GBPS + NCCL_BUSBW_REL_TOLERANCE * expected_bus))
    expected_alg = pl.col("size_bytes") / pl.col("time_us") / 1e3
    alg_bad = nccl.filter(pl.col("time_us").is_finite()
                          & (pl.col("time_us") >= NCCL_ALGBW_MIN_TIME_US)
                          & (pl.col("algbw_gbps") >= NCCL_ALGBW_MIN_GBPS)
                          & ((pl.col("algbw_gbps") - expected_alg).abs()
                             > NCCL_ABS_TOLERANCE_GBPS + NCCL_ALGBW_REL_TOLERANCE * expected_alg))
    for rule, bad, what in (("consistency.nccl-busbw", bus_bad, "busbw"),
                            ("consistency.nccl-algbw", alg_bad, "algbw")):
        for path in sorted({str(p) for p in bad["source_file"].fill_null("").to_list()}):
            rows = bad.filter(pl.col("source_file").fill_null("") == path)
            row = rows.row(0, named=True)
            yield finding(rule,
                          f"{rows.height} row(s) where the printed {what} does not follow from "
                          f"the other columns (first: {row['size_bytes']} B, {row['collective']},"
                          f" {row['ranks']} ranks)",
                          file=path or None, line=as_int(row.get("line")))


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        recipe, assumed = under_recipe(view)
        yield from _assumed_note(view, assumed)
        yield from _tflops(ctx, recipe)
        yield from _tokens(recipe)
        yield from _layout(recipe)
        yield from _manifest(ctx, view)
        yield from _logged_gbs(view)
        yield from _sequence(view)
        yield from _restarts(view)
    yield from _system(ctx)
    yield from _nccl(ctx)
    yield from selfcheck.check(ctx)
