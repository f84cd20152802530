"""MLPerf Training results rated against NVIDIA's own submission of the same benchmark.

The provider's score is the official one computed at ingest (:mod:`cmax.ingest.formats.mlperf`:
olympic mean x the review committee's RCP scaling factor, exactly as MLCommons'
result_summarizer); nothing is recomputed here. The reference is NVIDIA's result on the same
accelerator and benchmark, same round and scale where NVIDIA submitted one
(:meth:`cmax.reference.mlperf.MlperfReference.match`; the rule for another round or scale is
in docs/scoring.md). Ratio = reference time ÷ provider time (above 1 is faster than NVIDIA);
across scales the comparison is per GPU-minute. The confidence interval comes from the
spread of the provider's converged runs (percentile bootstrap of their mean, with the
rubric's seed, resamples and confidence); the verdict is pass only when the whole interval is
above the Exemplar bar, as for the training workloads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cmax.findings import Finding
from cmax.ingest.evidence import Evidence
from cmax.ingest.formats.mlperf import relative_path
from cmax.judgement.bar import against_bar
from cmax.judgement.bearings import Bearings, rules_of
from cmax.resolve.case import resolve
from cmax.score.reference_api import ReferenceData
from cmax.score.rubric import Rubric
from cmax.score.stats import FloatArray, bootstrap_ci
from cmax.scorecard import MlperfResult
from cmax.validate.registry import RULES

if TYPE_CHECKING:
    from cmax.ingest.formats.mlperf import MlperfSet
    from cmax.reference.mlperf import MlperfReference


def _reference(reference: ReferenceData) -> MlperfReference | None:
    """The NVIDIA table of this reference release (None for a reference without one)."""
    return reference.mlperf_reference()


def mlperf_results(
    evidence: Evidence, reference: ReferenceData, rubric: Rubric,
    findings: Bearings | Sequence[Finding] = (),
) -> list[MlperfResult]:
    """One result per MLPerf benchmark folder in the evidence; the findings bearing on its
    files decide by their declared effect (``not_rated``, ``other_system``: shown, not rated;
    ``not_independent``: failed; any error: no pass)."""
    sets: list[MlperfSet] = list(getattr(evidence, "mlperf_sets", ()))
    if not sets:
        return []
    case = resolve(evidence, reference)
    table = _reference(reference)
    bearings = Bearings.of(findings)
    # the accelerator each result is rated as: its official system JSON's, else the ledger's
    # declaration ([system] gpu)
    declared = {c.subject: c.value for c in case.claims if c.kind == "mlperf_accelerator"}
    return [_rate(s, s.accelerator or declared.get(f"mlperf[{k}]"), table, reference.release,
                  rubric, bearings, evidence.root) for k, s in enumerate(sets)]


def _how(s: MlperfSet) -> str:
    score = s.score
    if score.score_min is None:
        return score.note or "no official score"
    scaled = (f" x RCP scaling factor {s.scaling_factor:.6g} (scaling.json)"
              if s.scaling_file is not None else " (no scaling.json: factor 1)")
    return (f"official score {score.score_min:.6g} min: olympic mean of {score.runs} runs "
            f"({score.failed} failed; fastest {score.dropped_each_end} and slowest "
            f"{score.dropped_each_end} dropped) = {score.unscaled_min:.6g} min{scaled}")


def _rate(s: MlperfSet, accelerator: str | None, table: MlperfReference | None, release: str,
          rubric: Rubric, findings: Bearings, root: Path) -> MlperfResult:
    score = s.score
    notes = [_how(s), *(n for n in s.notes if n != score.note)]
    common = {
        "benchmark": s.benchmark, "submitter": s.submitter, "system": s.system_name,
        "runs": score.runs, "num_gpus": s.num_gpus,
        "score_min": None if score.score_min is None else round(score.score_min, 4),
    }
    files = {r.file for r in s.runs} | {s.label}
    if s.system is not None:
        files.add(relative_path(s.system.path, root))
    mine = findings.on(files=files)
    shown = rules_of(mine, "not_rated")
    if shown:
        notes.append(f"shown, not rated ({', '.join(shown)}): "
                     + "; ".join(RULES[r].title for r in shown if r in RULES))
        return MlperfResult(**common, verdict="not_comparable", notes=notes)
    elsewhere = rules_of(mine, "other_system")
    if elsewhere:
        notes.append(f"the result's system is not this cluster ({', '.join(elsewhere)}): "
                     "shown, not rated")
        return MlperfResult(**common, verdict="not_comparable", notes=notes)
    copied = rules_of(mine, "not_independent")
    if copied:
        notes.append(f"runs that are not independent ({', '.join(copied)}): no valid result, "
                     "scored as failed")
        return MlperfResult(**common, verdict="fail", notes=notes)
    if score.score_min is None:
        return MlperfResult(**common, verdict="fail", notes=notes)
    if table is None:
        notes.append(f"reference release {release} carries no MLPerf reference table")
        return MlperfResult(**common, verdict="no_reference", notes=notes)
    match = table.match(s.benchmark, accelerator, s.num_gpus, s.round)
    notes.append(match.note)
    ref = match.row
    if ref is None:
        return MlperfResult(**common, verdict="no_reference", notes=notes)
    provider = score.score_min
    if match.basis == "scale" and s.num_gpus:
        ratio = (ref.score_min * ref.num_gpus) / (provider * s.num_gpus)
        notes.append(f"reference {ref.score_min:g} min x {ref.num_gpus} GPUs ÷ provider "
                     f"{provider:g} min x {s.num_gpus} GPUs")
    else:
        ratio = ref.score_min / provider
        notes.append(f"reference {ref.score_min:g} min ÷ provider {provider:g} min")
    rules = rubric.performance
    times = [m for m in (r.minutes for r in s.runs) if m is not None]
    ci_low = ci_high = None
    if len(times) >= 2:
        mean = sum(times) / len(times)

        def stat(means: FloatArray) -> FloatArray:
            return ratio * mean / means

        ci_low, ci_high = bootstrap_ci(times, stat, resamples=rules.bootstrap_resamples,
                                       confidence=rules.confidence, seed=rules.bootstrap_seed)
        verdict = against_bar(ci_low, ci_high, rubric.mlperf.bar)
        notes.append(f"{rules.confidence:.0%} CI {ci_low:.4f}-{ci_high:.4f} from the spread of "
                     f"{len(times)} converged runs (bootstrap of their mean); pass needs the "
                     f"whole interval above {rubric.mlperf.bar:.0%}")
    else:
        verdict = "inconclusive"
        notes.append("fewer than 2 converged runs: no spread, verdict withheld")
    errors = rules_of(mine, errors=True)
    if errors and verdict == "pass":
        verdict = "inconclusive"
        notes.append("validation error(s) on this result (" + ", ".join(errors) + "): a "
                     "result whose evidence fails validation cannot pass")
    return MlperfResult(**common, reference_min=ref.score_min, reference_source=ref.source,
                        ratio=round(ratio, 6), ci_low=_r(ci_low), ci_high=_r(ci_high),
                        verdict=verdict, notes=notes)


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
