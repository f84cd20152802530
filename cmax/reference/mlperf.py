"""NVIDIA's own MLPerf Training submissions as the reference, and MLCommons' RCP data.

Two shipped files, both built by ``tools/build_mlperf_reference.py`` and guarded by
``reference/SHA256SUMS``:

* ``mlperf_nvidia.csv``: every NVIDIA closed-division result of training rounds v4.0-v5.1
  (EOS, EOS-DFW, the DGX H200/B200 systems, Nyx, Tyche, Theia, ...), one row per round,
  benchmark and system, with the official score (olympic mean x ``scaling.json``, checked
  against ``mlperf_logging.result_summarizer``) and its ``repo:path@commit`` source.
* ``mlperf_rcp.json``: MLCommons' reference convergence points per ruleset and benchmark,
  copied from the ``mlperf-logging`` package with the statistics its RCP checker derives.

A provider's result is rated against NVIDIA's on the same accelerator and benchmark (see
:meth:`MlperfReference.match` and docs/scoring.md, "MLPerf Training"). The RCP check
(:func:`rcp_check`) restates ``mlperf_logging.rcp_checker.check_directory`` with the pruned
RCPs, as the summarizer runs it.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from cmax.errors import ReferenceDataError
from cmax.reference.gpus import gpu_family

TABLE_FILE = "mlperf_nvidia.csv"
RCP_FILE = "mlperf_rcp.json"
CSV_COLUMNS = (
    "round", "benchmark", "submitter", "system_folder", "system_name", "accelerator",
    "num_gpus", "nodes", "availability", "framework", "runs", "failed_runs", "score_min",
    "unscaled_score_min", "rcp_scaling_factor", "run_minutes", "source", "system_source",
)
# a reference at another scale is used up to this GPU-count ratio (per GPU-minute); beyond it
# the scaling losses of the larger job dominate the comparison (docs/scoring.md)
MAX_SCALE_GAP = 4.0
_FIX = "restore reference/ from the release (python tools/build_mlperf_reference.py rebuilds it)"

@dataclass(frozen=True)
class NvidiaResult:
    """One NVIDIA submission: a round, benchmark and system, with its official score."""

    round: str
    benchmark: str
    submitter: str
    system_folder: str
    system_name: str
    accelerator: str
    family: str | None
    num_gpus: int
    score_min: float
    run_minutes: tuple[float | None, ...]
    scaling_factor: float
    availability: str
    source: str
    line: int

    def describe(self) -> str:
        return (f"NVIDIA {self.system_name} ({self.num_gpus} x {self.accelerator}), "
                f"v{self.round} {self.benchmark}: {self.score_min:.4g} min")


#: relative agreement at which two runs' times to train are the same run (1 ms in ~17 min)
FINGERPRINT_TOLERANCE = 1e-6
#: runs of a result that must repeat a published result's to call it a copy
FINGERPRINT_MIN_RUNS = 3


@dataclass(frozen=True)
class Match:
    """The reference a result is rated against and how it was chosen.

    ``basis``: ``same`` (round, accelerator and scale), ``round`` (same scale, other round),
    ``scale`` (other scale: compared on GPU-minutes) or ``none`` (``missing`` says what).
    """

    row: NvidiaResult | None
    basis: str
    note: str
    missing: str | None = None


@dataclass(frozen=True)
class RcpRecord:
    name: str
    bs: float
    mean: float
    stdev: float
    min_epochs: float
    max_speedup: float
    pruned_in: bool


@dataclass(frozen=True)
class RcpSet:
    """The RCPs of one ruleset and benchmark."""

    ruleset: str
    benchmark: str
    submission_runs: int
    records: tuple[RcpRecord, ...]
    source: str


@dataclass(frozen=True)
class RcpOutcome:
    """The RCP checker's verdict: ``passed`` None when it cannot be checked."""

    passed: bool | None
    message: str
    reference_mean: float | None = None
    submission_mean: float | None = None
    minimum_mean: float | None = None
    norm_factor: float = 1.0


@dataclass(frozen=True)
class MlperfReference:
    results: tuple[NvidiaResult, ...]
    rcps: dict[str, dict[str, RcpSet]]
    rcp_source: str

    def rcp(self, ruleset: str, benchmark: str) -> RcpSet | None:
        return self.rcps.get(ruleset, {}).get(benchmark)

    def published_copy(self, benchmark: str,
                       minutes: list[float]) -> tuple[NvidiaResult, int] | None:
        """The published result whose runs these durations repeat, and how many they repeat.

        A run's time to train is run_stop - run_start to the millisecond; two honest runs do
        not repeat one to :data:`FINGERPRINT_TOLERANCE`, let alone several. A copy matches at
        least :data:`FINGERPRINT_MIN_RUNS` runs (all of them when fewer were given)."""
        wanted = min(FINGERPRINT_MIN_RUNS, len(minutes))
        if wanted == 0:
            return None
        for row in self.results:
            if row.benchmark != benchmark:
                continue
            pool = [m for m in row.run_minutes if m is not None]
            hits = 0
            for m in minutes:
                twin = next((p for p in pool if math.isclose(p, m,
                                                             rel_tol=FINGERPRINT_TOLERANCE)), None)
                if twin is not None:
                    pool.remove(twin)
                    hits += 1
            if hits >= wanted:
                return row, hits
        return None

    def match(self, benchmark: str, accelerator: str | None, num_gpus: int | None,
              round_: str | None) -> Match:
        """NVIDIA's result to rate against: same accelerator and benchmark, then round/scale.

        Order: (1) same round and GPU count; (2) same GPU count, the nearest other round
        (latest on a tie); (3) the nearest GPU count within :data:`MAX_SCALE_GAP` (log scale;
        same round first, then the latest), compared per GPU-minute. Nothing matches without
        the accelerator, the benchmark or a scale that close; the note names what is missing.
        """
        family = gpu_family(accelerator)
        same_bench = [r for r in self.results if r.benchmark == benchmark]
        if not same_bench:
            return Match(None, "none", f"no NVIDIA MLPerf Training submission of {benchmark} "
                         "in the reference", missing="benchmark")
        if family is None:
            what = "no accelerator (no system JSON)" if not accelerator else (
                f"accelerator {accelerator!r} not recognised")
            return Match(None, "none", f"{what}: cannot pick NVIDIA's {benchmark} result on "
                         "the same accelerator", missing="accelerator")
        pool = [r for r in same_bench if r.family == family]
        if not pool:
            have = sorted({r.family or r.accelerator for r in same_bench})
            return Match(None, "none", f"no NVIDIA {benchmark} submission on {accelerator} "
                         f"(NVIDIA submitted {benchmark} on {', '.join(have)})",
                         missing="accelerator")
        if num_gpus is None:
            return Match(None, "none", f"GPU count unknown (no system JSON): cannot pick the "
                         f"scale among NVIDIA's {benchmark} results on {accelerator}",
                         missing="scale")
        rnd = _round_key(round_)
        same_scale = [r for r in pool if r.num_gpus == num_gpus]
        exact = [r for r in same_scale if r.round == round_]
        if exact:
            row = min(exact, key=lambda r: r.score_min)
            return Match(row, "same", f"reference: {row.describe()} (same round, accelerator "
                         f"and scale) [{row.source}]")
        if same_scale:
            row = min(same_scale, key=lambda r: (abs(_round_key(r.round) - rnd) if round_
                                                 else 0, -_round_key(r.round), r.score_min))
            why = (f"round v{round_} has none at {num_gpus} GPUs" if round_
                   else "the provider's round is unknown")
            return Match(row, "round", f"reference: {row.describe()}: same accelerator and "
                         f"scale, other round ({why}) [{row.source}]", missing="round")

        def distance(r: NvidiaResult) -> tuple[float, int, float]:
            return (abs(math.log(r.num_gpus / num_gpus)), 0 if r.round == round_ else 1,
                    -_round_key(r.round))

        row = min(pool, key=distance)
        scales = sorted({r.num_gpus for r in pool})
        if max(row.num_gpus, num_gpus) > MAX_SCALE_GAP * min(row.num_gpus, num_gpus):
            return Match(None, "none", f"no NVIDIA {benchmark} on {accelerator} within "
                         f"{MAX_SCALE_GAP:g}x of {num_gpus} GPUs (NVIDIA ran {scales}): time to "
                         "train does not scale linearly that far, so there is no fair "
                         "reference", missing="scale")
        return Match(row, "scale", f"reference: {row.describe()}: no NVIDIA {benchmark} on "
                     f"{accelerator} at {num_gpus} GPUs (NVIDIA ran {scales}); compared per "
                     f"GPU-minute (time x GPUs), which assumes linear scaling and so favours "
                     f"the smaller of the two scales [{row.source}]", missing="scale")


def _round_key(round_: str | None) -> float:
    try:
        major, minor = (round_ or "0.0").split(".")
        return int(major) + int(minor) / 10
    except ValueError:
        return 0.0


@functools.lru_cache(maxsize=8)
def load_mlperf_reference(directory: Path) -> MlperfReference:
    """The NVIDIA table and the RCPs of a reference release folder (checked, cached)."""
    return MlperfReference(_read_table(directory / TABLE_FILE), *_read_rcps(directory / RCP_FILE))


def _read_table(path: Path) -> tuple[NvidiaResult, ...]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReferenceDataError(f"cannot read the MLPerf reference table: {exc.strerror}",
                                 file=path, fix=_FIX) from None
    reader = csv.DictReader(text.splitlines())
    if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
        raise ReferenceDataError("unexpected columns in the MLPerf reference table", file=path,
                                 line=1, expected=",".join(CSV_COLUMNS), fix=_FIX)
    rows = []
    for line, rec in enumerate(reader, start=2):
        try:
            minutes = tuple(None if m == "failed" else float(m)
                            for m in rec["run_minutes"].split(";"))
            row = NvidiaResult(
                round=rec["round"], benchmark=rec["benchmark"], submitter=rec["submitter"],
                system_folder=rec["system_folder"], system_name=rec["system_name"],
                accelerator=rec["accelerator"], family=gpu_family(rec["accelerator"]),
                num_gpus=int(rec["num_gpus"]), score_min=float(rec["score_min"]),
                run_minutes=minutes, scaling_factor=float(rec["rcp_scaling_factor"]),
                availability=rec["availability"], source=rec["source"], line=line)
        except (TypeError, ValueError, AttributeError) as exc:
            raise ReferenceDataError(f"malformed MLPerf reference row ({exc})", file=path,
                                     line=line, fix=_FIX) from None
        if not (row.score_min > 0 and math.isfinite(row.score_min) and row.num_gpus > 0
                and re.fullmatch(r"\d+\.\d+", row.round) and row.source):
            raise ReferenceDataError("MLPerf reference row without a positive score, GPU "
                                     "count, round or source", file=path, line=line, fix=_FIX)
        rows.append(row)
    return tuple(rows)


def _read_rcps(path: Path) -> tuple[dict[str, dict[str, RcpSet]], str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        out: dict[str, dict[str, RcpSet]] = {}
        for ruleset, per in data["rulesets"].items():
            out[ruleset] = {
                bench: RcpSet(ruleset, bench, int(spec["submission_runs"]), tuple(
                    RcpRecord(str(r["name"]), float(r["bs"]), float(r["mean"]),
                              float(r["stdev"]), float(r["min_epochs"]),
                              float(r["max_speedup"]), bool(r["pruned_in"]))
                    for r in spec["records"]), str(spec["file"]))
                for bench, spec in per.items()}
        return out, str(data["source"])
    except OSError as exc:
        raise ReferenceDataError(f"cannot read the MLPerf RCP data: {exc.strerror}", file=path,
                                 fix=_FIX) from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ReferenceDataError(f"malformed MLPerf RCP data ({exc!r})", file=path,
                                 fix=_FIX) from None


# ----------------------------------------------------------------------------- RCP check

def rcp_check(rcps: RcpSet, batch_size: float, points: list[float]) -> RcpOutcome:
    """Convergence against the pruned RCPs, as ``rcp_checker.check_directory`` decides it.

    ``points`` are the runs' epochs (or samples) to converge, 1e9 for a run that did not.
    """
    bench = rcps.benchmark
    drop = 4 if bench == "unet3d" else 1
    if sum(1 for p in points if p >= 1e9) > drop:
        return RcpOutcome(False, "Insufficient convergence")
    pruned = [r for r in rcps.records if r.pruned_in]
    if not pruned:
        return RcpOutcome(False, "Cannot find any RCPs")
    exact = next((r for r in pruned if r.bs == batch_size), None)
    if exact is not None:
        return _evaluate(rcps, exact.mean, exact.min_epochs, points, "RCP found")
    lower = max((r for r in pruned if r.bs < batch_size), key=lambda r: r.bs, default=None)
    upper = min((r for r in pruned if r.bs > batch_size), key=lambda r: r.bs, default=None)
    if lower is not None and upper is not None:
        mean = _interp(batch_size, lower.bs, upper.bs, lower.mean, upper.mean)
        stdev = _interp(batch_size, lower.bs, upper.bs, lower.stdev, upper.stdev)
        minimum = min_acceptable_mean(mean, stdev, rcps.submission_runs * 2,
                                      rcps.submission_runs)
        return _evaluate(rcps, mean, minimum, points, "RCP Interpolation")
    missing = f"Missing RCP, please submit RCP with BS = {batch_size:g}"
    if lower is not None:
        return RcpOutcome(False, missing)
    smallest = min(pruned, key=lambda r: r.bs)
    outcome = _evaluate(rcps, smallest.mean, smallest.min_epochs, points, missing)
    if outcome.passed:
        return RcpOutcome(True, "RCP not found but slower convergence on smaller batch size",
                          outcome.reference_mean, outcome.submission_mean,
                          outcome.minimum_mean, outcome.norm_factor)
    return outcome


def _interp(x: float, x0: float, x1: float, y0: float, y1: float) -> float:
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _evaluate(rcps: RcpSet, mean: float, minimum: float, points: list[float],
              message: str) -> RcpOutcome:
    drop = 4 if rcps.benchmark == "unet3d" else 1
    ordered = sorted(points)
    kept = ordered[drop:len(ordered) - drop]
    if not kept:
        return RcpOutcome(None, f"{len(points)} run(s): too few for the RCP olympic mean")
    subm = sum(kept) / len(kept)
    if _at_least(rcps.ruleset, "5.0.0") and rcps.benchmark == "llama31_405b":
        minimum -= 46080  # rcp_checker: 405B's bound is Min Epochs - 46080 samples from v5.0
    norm = max(1.0, mean / subm)
    return RcpOutcome(subm >= minimum, message, mean, subm, minimum, norm)


def _at_least(version: str, floor: str) -> bool:
    return tuple(int(p) for p in version.split(".")) >= tuple(int(p) for p in floor.split("."))


def min_acceptable_mean(mean: float, stdev: float, ref_samples: int, runs: int,
                        *, alpha: float = 0.05, tolerance: float = 1e-4) -> float:
    """The lowest submission mean a one-sided pooled t-test cannot tell from the RCP mean.

    Restates ``RCP_Checker._find_min_acceptable_mean``: a bisection between 0 and the RCP
    mean on the p-value of ``ttest_ind_from_stats(mid, stdev, ref_samples, mean, stdev,
    runs - 2, equal_var=True)`` turned one-sided.
    """
    if stdev == 0:
        return mean
    subm_samples = runs - 2
    low, high = 0.0, mean
    mid = (low + high) / 2
    while high - low > tolerance:
        p_value = _one_sided_p(mid, stdev, ref_samples, mean, stdev, subm_samples)
        if p_value > alpha:
            high = mid
        else:
            low = mid
        mid = (low + high) / 2
    return mid


def _one_sided_p(m1: float, s1: float, n1: int, m2: float, s2: float, n2: int) -> float:
    df = n1 + n2 - 2
    pooled = ((n1 - 1) * s1 * s1 + (n2 - 1) * s2 * s2) / df
    t = (m1 - m2) / math.sqrt(pooled * (1.0 / n1 + 1.0 / n2))
    p = t_two_sided_p(t, df)
    return p / 2 if t < 0 else 1 - p / 2


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with integer ``df`` (Abramowitz & Stegun 26.7.3-4)."""
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    term = total = 1.0
    if df % 2:
        total = term = c if df > 1 else 0.0
        for k in range(3, df - 1, 2):
            term *= c * c * (k - 1) / k
            total += term
        a = 2 / math.pi * (theta + s * total)
    else:
        for k in range(2, df - 1, 2):
            term *= c * c * (k - 1) / k
            total += term
        a = s * total
    return min(1.0, max(0.0, 1.0 - a))
