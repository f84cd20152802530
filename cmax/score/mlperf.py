"""MLPerf Training results against the reference submission of the same benchmark and scale.

Scored the way MLCommons' result summarizer does (mlcommons/logging, result_summarizer): the
time to train of each run, failed runs counted as infinitely slow, then the olympic mean (drop
the fastest and the slowest; unet3d drops four of each). More than one failed run (four for
unet3d) means there is no valid result at all. The ratio is reference time ÷ provider time,
so, like the training ratio, above 1 is faster than the reference.
"""

from __future__ import annotations

import math

import polars as pl

from cmax.evidence import Evidence
from cmax.score.reference_api import ReferenceData, num, text
from cmax.score.rubric import Rubric
from cmax.score.stats import verdict_for
from cmax.scorecard import MlperfResult


def olympic_score(times_min: list[float], benchmark: str) -> tuple[float | None, str]:
    """(score in minutes or None, how it was computed). ``inf`` marks a failed run."""
    drop = 4 if benchmark.lower() == "unet3d" else 1
    failed = sum(1 for t in times_min if math.isinf(t))
    if failed > drop:
        return None, (f"{failed} runs failed; MLPerf accepts at most {drop}, so there is no "
                      "valid result")
    ordered = sorted(times_min)
    if len(ordered) > 2 * drop:
        kept = ordered[drop:-drop]
        return sum(kept) / len(kept), (f"olympic mean of {len(ordered)} runs (fastest and "
                                       f"slowest {drop} dropped)")
    finite = [t for t in ordered if not math.isinf(t)]
    if failed or not finite:
        return None, (f"{len(ordered)} run(s) including a failure: too few for an olympic "
                      "mean, no valid result")
    return sum(finite) / len(finite), (f"plain mean of {len(finite)} run(s): too few for an "
                                       "olympic mean (MLPerf needs 3-10 runs per benchmark)")


def mlperf_results(
    evidence: Evidence, reference: ReferenceData, rubric: Rubric,
) -> list[MlperfResult]:
    table = evidence.mlperf.filter(pl.col("benchmark").is_not_null())
    if table.is_empty():
        return []
    out: list[MlperfResult] = []
    groups = table.select("benchmark", "num_gpus").unique(maintain_order=True)
    for benchmark, num_gpus in groups.iter_rows():
        rows = table.filter((pl.col("benchmark").eq_missing(benchmark))
                            & (pl.col("num_gpus").eq_missing(num_gpus)))
        times = [
            float(t) if (t is not None and str(s or "").lower() == "success") else math.inf
            for t, s in zip(rows["time_to_train_min"], rows["status"], strict=True)
        ]
        score, how = olympic_score(times, str(benchmark))
        notes = [how]
        base = (reference.mlperf_baseline(str(benchmark), int(num_gpus))
                if num_gpus is not None else None)
        ref_min = num(base, "time_to_train_min")
        if ref_min is None:
            ref_min = num(base, "score_min")
        common = {
            "benchmark": str(benchmark),
            "submitter": rows["submitter"].drop_nulls().first(),
            "system": rows["system"].drop_nulls().first(),
            "runs": rows.height,
            "num_gpus": int(num_gpus) if num_gpus is not None else None,
            "score_min": None if score is None else round(score, 4),
        }
        if ref_min is None:
            notes.append(f"no reference submission for {benchmark} at {num_gpus} GPUs in "
                         f"reference release {reference.release}")
            verdict = "fail" if score is None else "no_reference"
            out.append(MlperfResult(**common, verdict=verdict, notes=notes))
            continue
        source = text(base, "source")
        if score is None:
            out.append(MlperfResult(**common, reference_min=ref_min, reference_source=source,
                                    verdict="fail", notes=notes))
            continue
        ratio = ref_min / score
        notes.append(f"reference {ref_min:g} min ÷ provider {score:g} min; pass needs "
                     f"> {rubric.mlperf.bar:.0%}")
        out.append(MlperfResult(**common, reference_min=ref_min, reference_source=source,
                                ratio=round(ratio, 6),
                                verdict=verdict_for(ratio, ratio, rubric.mlperf.bar),
                                notes=notes))
    return out
