"""Every tolerance the rules use, with where it comes from.

Thresholds decide whether a provider's number is trusted, so none is a magic constant: each is
either published (NVIDIA, MLCommons, SemiAnalysis) or derived here from published facts, and
``docs/rules.md`` repeats the citation next to the rule that uses it.
"""

from __future__ import annotations

from cmax.ingest import power_copies


def pct(fraction: float) -> str:
    """A threshold as the rule texts print it: 0.05 -> '5 %' (docs/rules.md is generated from
    those texts, so the number there is always the one the rule uses)."""
    return f"{100 * fraction:g} %"


# NVIDIA Megatron-Bridge perf CI (scripts/performance/utils/evaluate.py @ 4ab94dfad):
# --timing_threshold 0.05, --outlier_threshold 3.0 (sigma), --max_outlier_ratio 0.1, and the
# function default for skipping warm-up, skip_first_percent_time = 0.1.
TIMING_BAND = 0.05
OUTLIER_SIGMA = 3.0
MAX_OUTLIER_RATIO = 0.10
WARMUP_FRACTION = 0.10

# A run faster than NVIDIA's tuned reference on the same recipe by more than this cannot pass.
# NVIDIA's recipes are tuned on its own reference clusters (EOS and successors); the spread of
# repeated runs there is a few percent (the perf CI above allows 5 % both ways), and the DGXC
# baselines across container releases move by a few percent at most. More than 10 % faster is
# not a better cluster: another precision, GPU or configuration, or numbers that are wrong.
TOO_GOOD_BAND = 0.10

# DGXC READMEs (v25.05+): "Each benchmark runs 50 steps; iterations 35-44 are averaged".
RECIPE_STEPS = 50

# Reported vs derived model TFLOP/s. The comparison is made against the nearest of the FLOPs
# conventions used for the workload (cmax's architecture-true count, Megatron-Bridge's, and the
# convention of its reference rows): conventions alone differ by up to 12 % (Llama 3.1 8B at seq
# 8192: NVIDIA's non-causal 4.74e14 vs causal 4.22e14 FLOPs/sample), so each is tried, and the
# remaining gap allows for framework implementation details and print rounding.
FLOPS_TOLERANCE = 0.10

# Reported tokens/s vs GBS x seq / step time is pure arithmetic: allow 2 % plus the rounding
# of the printed step time.
TOKENS_TOLERANCE = 0.02

# Implausibly low variance: a coefficient of variation below 0.02 % across the steady-state
# window, only judged when the log prints step times finely enough (relative resolution below
# the same 0.02 %) that real jitter would be visible. Multi-node steps synchronise on collectives
# and the data loader, and the DGXC parsers report a non-zero std for every published run.
MIN_CV = 0.0002

# nccl-tests arithmetic (busbw = algbw x factor, algbw = size / time) checked against the printed
# columns: bandwidths are printed with two decimals, so each side may be off by 0.01 GB/s of
# rounding (0.02 GB/s absolute allowance) plus a relative margin for the printed time's own
# rounding (0.5 % for busbw from algbw, 1 % for algbw from size and time). algbw from size and
# time is only judged where both are large enough for the rounding to stay inside that margin
# (time >= 100 us, algbw >= 1 GB/s). NVIDIA/nccl-tests doc/PERFORMANCE.md gives the formulas.
NCCL_ABS_TOLERANCE_GBPS = 0.02
NCCL_BUSBW_REL_TOLERANCE = 0.005
NCCL_ALGBW_REL_TOLERANCE = 0.01
NCCL_ALGBW_MIN_TIME_US = 100.0
NCCL_ALGBW_MIN_GBPS = 1.0

# Fewest steps a statistic is judged on: the window's spread and outliers need 5 steps (with
# fewer one step is 20 %+ of the sample), the post-warm-up checks (stragglers, stalls, drift,
# duplicate series) 10, the DGXC window's own length.
MIN_WINDOW_STATS_STEPS = 5
MIN_STEADY_STEPS = 10

# Robust sigma floor: MAD x cmax.quantiles.MAD_TO_SIGMA (the normal-consistent MAD scale) but
# never below the print resolution or 0.2 % of the median, so a log printed to 2 decimals is
# not called noisy by its own rounding.
SIGMA_FLOOR_FRACTION = 0.002

# A stall: a steady-state step at least 1.5x the run's steady median.
STALL_FACTOR = 1.5

# Dense peak: MFU above 100 % of the dense (non-sparse) peak is impossible (DGXC README,
# "Peak Theoretical Throughput ... based on non-sparse specifications").
PEAK_FRACTION = 1.0

# Reliability floor for "too few incidents": one unexpected interruption per 20,000 GPU-days.
# That is ~10x better than Llama 3 (419 unexpected in 54 days on 16,384 GPUs: one per ~2,100
# GPU-days, arXiv:2407.21783) and 4x better than the best H100 MTBI SemiAnalysis quotes
# (2,000-5,000 GPU-days). Zero incidents where this floor expects >= 3 has probability < 5 %.
INCIDENT_FLOOR_GPU_DAYS = 20_000.0
INCIDENT_MIN_EXPECTED = 3.0

# An audit decides the ACS and GPUDirect gates only when it checked at least a quarter of the
# nodes the manifest claims. Those settings are fleet-wide configuration, so a sample of one
# node in four drawn from the production partition speaks for it; a 2-node pilot attached to a
# 64-node system (3 %) is another system. cmax's modelling choice: ClusterMAX
# publishes no sampling rule.
AUDIT_MIN_NODE_SHARE = 0.25

# --- serving benchmarks (cmax/validate/inference_rules.py) ------------------------------------
# vLLM computes output_throughput as total_output_tokens / duration and writes both at full
# precision, trtllm-bench likewise from its totals: 1% leaves room for rounding in a result
# someone re-typed, not for a throughput the file's own totals do not give.
INFERENCE_ARITHMETIC_TOLERANCE = 0.01
# Share of requests that may fail before a result stops counting. AIPerf's AgentX scenario
# invalidates a run above 1% context overflows and InferenceX gates uploads on an error rate
# (research field-2026-11.md §3.1-3.2); cmax applies 1% to every failed request.
INFERENCE_FAILED_SHARE = 0.01
# Mean tokens per request against the manifest's input/output lengths: synthetic datasets
# (vLLM random, trtllm prepare_dataset with stdev 0) hit them exactly, so 5% means another
# workload was run.
INFERENCE_LENGTH_TOLERANCE = 0.05
# Each of C concurrent users receives at most 1000 / TPOT tokens/s, so a system cannot emit more
# than C x 1000 / mean TPOT output tokens/s; 10% covers the first tokens TPOT leaves out.
INFERENCE_PER_USER_SLACK = 0.10
# Little's law the other way: C users in flight, each request taking mean TTFT + (OSL - 1) x
# mean TPOT, emit C x OSL / that many tokens/s. InferenceX's official single-node rows
# (SemiAnalysisAI/InferenceX-app cypress/fixtures/api/benchmarks.json @ 528c414) reach 0.93-1.00
# of it (median 0.97); below 1 - this slack the latencies are better than the total allows.
INFERENCE_LITTLE_SLACK = 0.25
# A result beyond the best published reference of its setup (offline maximum, or the best
# available MLPerf system of its scenario) by more than the references' own spread: the
# available closed-division MLPerf Inference v5.1 systems of one GPU, model and scenario lie
# within 1.57x of each other (H200 llama3.1-8b Server; summary_results.json @ 965182b).
INFERENCE_TOO_GOOD = 1.6

# An MLPerf run stands as evidence of the cluster for as long as an NVIDIA Exemplar validation
# does: 12 months (reference/drift.toml exemplar_valid_months, from NVIDIA dgxc-benchmarking
# Exemplar_validation.md), counted back from the [benchmark] date; a run after that date by
# more than a day (time zones) contradicts it.
MLPERF_PERIOD_DAYS = 365

# The log agrees with itself (cmax/validate/selfcheck.py).
WALL_CLOCK_TOLERANCE = 0.05
"""Wall-clock time between the window's stamped step lines may exceed the printed step times
by this fraction: logging, timers that exclude the optimizer's host work, and a checkpoint's
few seconds stay well inside it; a printed time edited 15 % faster does not."""
WALL_CLOCK_SLACK_S = 2.0
"""Plus two seconds: Megatron and NeMo stamp lines to the whole second, so two stamps carry up
to 1 s of rounding each."""
SINGLE_STEP_BAND = 0.03
"""A single-step window (DGXC <= v25.04 measured only the last step) may be this much faster
than the median of the steps before it, or 3 robust sigmas of them if more: a 4 % edit of that
one step is caught, an honest run's last step (within ~1 % jitter) is not."""
SINGLE_STEP_NEIGHBOURS = 10
"""How many steps before the measured one it is checked against."""

# The arithmetic witness (validate/witness.py). A framework prints TFLOP/s with one of the
# FLOPs conventions the reference knows, from the same elapsed time as the step time, so an
# honest log matches its own model and GPU count under one of them to rounding (< 1 %). The
# witness calls a claim contradicted by the printed TFLOP/s only when the claim is off by more
# than WITNESS_CLAIM_GAP under every convention while another configuration of the reference
# at the same GBS and sequence length matches within WITNESS_MATCH_GAP (and 3x better).
WITNESS_MATCH_GAP = 0.01
WITNESS_CLAIM_GAP = 0.03
WITNESS_MARGIN = 3.0
# A configuration explains the step time when the run is at most TIMING_BAND faster than its
# reference and not slower than this fraction of it (a real cluster can be 40 % slow; the step
# time alone is never the witness against a claim the run is not too fast for).
WITNESS_SLOWEST = 0.6

# A speed change inside a run (statistics.speed-change): the two stretches' medians must differ
# by more than TIMING_BAND and by more than this many robust sigmas of the steps about their
# own stretch's median; each stretch at least SPEED_SEGMENT steps (a stall or a few stragglers
# never make one), and SPEED_CONSISTENT of the slower stretch's steps must lie above the
# midpoint of the two medians (a stall and two stragglers bunched in a short stretch do not).
# A long run is judged on at most SPEED_BLOCKS block medians, so the search costs the same on
# 50 steps and on two million.
SPEED_CHANGE_SIGMAS = 6.0
SPEED_SEGMENT = 8
SPEED_CONSISTENT = 0.75
SPEED_BLOCKS = 200

# Copies (cmax/validate/copies.py). Two honest runs' steps differ by x - y ~ N(0, 2 sigma^2):
# a median |difference| of 0.674 x sqrt(2) = 0.95 sigma. A copy re-jittered by a quarter of
# the jitter or less differs by at most a quarter sigma, with the original's deviations
# (correlation above 0.9; two honest runs' deviations correlate near 0).
COPY_DIFF_SHARE = 0.25
COPY_CORRELATION = 0.9
COPY_MAX_POINTS = 20_000  # shared steps compared; a longer run is sampled evenly
# nccl-tests prints times to 0.1 us; repeated sweeps of one fabric differ by a percent or more
# at the latency-bound sizes (a few to tens of us), so half or more of a sweep's sizes differ
# by well over 0.1 % between two honest runs.
NCCL_COPY_BAND = 0.001
NCCL_COPY_MIN_SIZES = 8
# Telemetry copies are decided where the energy figure reads them too (a copy's coverage is not
# counted): cmax/ingest/power_copies.py holds the bars and their basis.
TELEMETRY_COPY_MIN_SAMPLES = power_copies.TELEMETRY_COPY_MIN_SAMPLES
TELEMETRY_TREND_MIN_GPUS = power_copies.TREND_MIN_GPUS
TELEMETRY_COPY_DIFF_SHARE = power_copies.COPY_DIFF_SHARE
TELEMETRY_COPY_CORRELATION = power_copies.COPY_CORRELATION

# Clocks (cmax/validate/clocks.py). A job's steps run inside its allocation, so the printed step
# times (rounded to 0.01 s, Megatron's interval averages exact) and the log's stamps (1 s) can
# only add up to less than sacct's Elapsed (whole seconds, from slurmctld); 2 % and 30 s leave
# room for rounding and for a node clock a few seconds off the controller's.
CLOCK_TOLERANCE = 0.02
CLOCK_SLACK_S = 30.0
# slurmctld assigns the next job id when it accepts a submission and records that time as the
# job's submit time, so ids and submit times rise together; 60 s covers a controller clock step
# (NTP) and the second-granularity stamps.
JOB_ORDER_SKEW_S = 60.0

# Fabrication warnings (cmax/validate/fabrication.py). DGXC logs' first step takes 2-4x the
# steady step (graph capture, NCCL set-up), and the first few stay slower; 5 % above the steady
# median over the first 3 steps is far below any real warm-up. Real multi-node jitter is a few
# tenths of a percent to a few percent (the statistics family's premise); 0.1 % robust CV is
# below that, above statistics.low-variance's 0.02 % error floor.
WARMUP_STEPS = 3
WARMUP_MIN_EXCESS = 0.05
MIN_REAL_JITTER = 0.001
FORMULA_LOSS_MIN_STEPS = 20
# The whole run's clock (cmax/validate/clocks.py): the window rule's 5 % (WALL_CLOCK_TOLERANCE),
# with the tenth of the intervals that add most left out (checkpoint saves, evaluations and a
# restart stop the step timer, not the clock).
RUN_CLOCK_TOLERANCE = 0.05
RUN_CLOCK_TRIM = 0.10
# A copy re-jittered by at most a quarter of the jitter (COPY_DIFF_SHARE) has its original's
# median to within a fraction of a percent: series whose medians are 2 % apart are not compared
# step by step.
COPY_MEDIAN_BAND = 0.02
