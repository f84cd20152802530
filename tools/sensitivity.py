"""How the samples' tiers move when the evidence gets 5-20% worse, through the real scorer.

Usage:  python tools/sensitivity.py            print the markdown table
        python tools/sensitivity.py --check docs/scoring.md
                                              exit 1 if the doc's table is out of step
        python tools/sensitivity.py --write docs/scoring.md
                                              rewrite the table between the markers

A rubric is only as good as its response to the evidence: a tier that does not move when a
cluster gets slower is a tier a provider can keep while under-delivering. Each sample bundle
is ingested and validated once; each perturbation then changes the *ingested evidence* (never
the files) and runs :func:`cmax.score.core.score` again with the original findings, so the
verdicts, CIs, gates and tier come from the same code a `cmax score` runs:

- throughput -x%: every step time ÷ (1 - x), printed TFLOP/s and tokens/s × (1 - x); every
  serving result's output tokens/s × (1 - x) (durations and TPOT ÷ (1 - x));
- bandwidth -x%: nccl-tests algbw and busbw × (1 - x), times ÷ (1 - x);
- reliability -x%: the same incidents on a fleet 1 ÷ (1 + x) the size, i.e. x% more
  interruptions per GPU-day (the manifest's gpus_in_service ÷ (1 + x));
- audit -x%: ceil(x × graded checks) PASS checks, in check-id order, become FAIL; checks a
  gate reads are left alone (a flipped disqualifier is the gate's story, not a 5% change).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl

from cmax import ingest, load_reference, open_bundle, validate
from cmax.findings import Finding
from cmax.ingest.evidence import Evidence
from cmax.score.core import score
from cmax.score.reference_api import ReferenceData
from cmax.score.rubric import Rubric, load_rubric

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ("aurora-compute", "borealis-cloud", "cinder-gpu", "halcyon-serve")
LEVELS = (0.05, 0.10, 0.20)
BEGIN = "<!-- sensitivity:begin (python tools/sensitivity.py --write docs/scoring.md) -->"
END = "<!-- sensitivity:end -->"

Perturb = Callable[[Evidence, float, Rubric], Evidence]


def slower(evidence: Evidence, x: float, rubric: Rubric) -> Evidence:
    """Every training step x% less throughput, printed rates scaled to match."""
    keep = 1.0 - x
    steps = evidence.steps.with_columns(
        pl.col("step_time_s") / keep,
        *(pl.col(c) * keep for c in ("tflops_per_gpu", "tokens_per_s_per_gpu")
          if c in evidence.steps.columns))
    runs = evidence.runs
    if "reported_step_time_s" in runs.columns:
        runs = runs.with_columns(pl.col("reported_step_time_s") / keep,
                                 pl.col("reported_tflops_per_gpu") * keep)
    serving = evidence.inference.with_columns(
        *(pl.col(c) * keep for c in ("output_tok_s", "total_tok_s",
                                     "output_tok_s_per_gpu_reported")),
        pl.col("duration_s") / keep, pl.col("tpot_mean_ms") / keep)
    return dataclasses.replace(evidence, steps=steps, runs=runs, inference=serving)


def narrower(evidence: Evidence, x: float, rubric: Rubric) -> Evidence:
    """Every nccl-tests row x% less bandwidth (time up to match)."""
    keep = 1.0 - x
    nccl = evidence.nccl.with_columns(pl.col("algbw_gbps") * keep, pl.col("busbw_gbps") * keep,
                                      pl.col("time_us") / keep)
    return dataclasses.replace(evidence, nccl=nccl)


def flakier(evidence: Evidence, x: float, rubric: Rubric) -> Evidence:
    """x% more interruptions per GPU-day: the same incidents on a smaller fleet."""
    rel = evidence.manifest.reliability
    if rel is None:
        return evidence
    smaller = rel.model_copy(update={"gpus_in_service": max(1, round(rel.gpus_in_service
                                                                     / (1.0 + x)))})
    manifest = evidence.manifest.model_copy(update={"reliability": smaller})
    return dataclasses.replace(evidence, manifest=manifest)


def audit_worse(evidence: Evidence, x: float, rubric: Rubric) -> Evidence:
    """ceil(x × graded checks) PASS checks become FAIL, gate checks excepted."""
    audit = evidence.audit_checks
    if audit.is_empty():
        return evidence
    gated = {c for g in rubric.gates for c in g.checks}
    status = audit["status"].str.to_uppercase()
    graded = int(status.is_in(["PASS", "WARNING", "FAIL"]).sum())
    candidates = sorted(
        str(cid) for cid, crit, st in zip(audit["check_id"], audit["criterion"], status,
                                          strict=True)
        if st == "PASS" and cid not in gated and crit not in gated)
    flip = set(candidates[:math.ceil(x * graded)])
    audit = audit.with_columns(
        pl.when(pl.col("check_id").is_in(sorted(flip))).then(pl.lit("FAIL"))
        .otherwise(pl.col("status")).alias("status"))
    return dataclasses.replace(evidence, audit_checks=audit)


PERTURBATIONS: tuple[tuple[str, Perturb], ...] = (
    ("throughput", slower), ("bandwidth", narrower), ("reliability", flakier),
    ("audit", audit_worse))


def _has(evidence: Evidence, what: str) -> bool:
    """Whether the sample holds the evidence a perturbation changes (a serving-only sample has
    no nccl-tests output or audit to make worse)."""
    table = {"bandwidth": evidence.nccl, "audit": evidence.audit_checks}.get(what)
    return table is None or not table.is_empty()


def _cell(evidence: Evidence, findings: list[Finding], reference: ReferenceData,
          rubric: Rubric) -> str:
    card = score(evidence, findings, reference, rubric)
    return f"{card.tier} {card.score:.1f}"


def rows(samples_dir: Path = ROOT / "samples") -> list[list[str]]:
    """One row per sample and perturbation: sample, what changed, then the tier and score at
    0 and at each of :data:`LEVELS`."""
    reference = load_reference()
    rubric = load_rubric()
    out: list[list[str]] = []
    for name in SAMPLES:
        with open_bundle(samples_dir / name) as bundle:
            evidence = ingest(bundle)
        findings = list(validate(evidence, reference))
        base = _cell(evidence, findings, reference, rubric)
        for what, perturb in PERTURBATIONS:
            if not _has(evidence, what):
                continue
            cells = [_cell(perturb(evidence, x, rubric), findings, reference, rubric)
                     for x in LEVELS]
            out.append([name, what, base, *cells])
    return out


def table(samples_dir: Path = ROOT / "samples") -> str:
    """The markdown table docs/scoring.md carries between :data:`BEGIN` and :data:`END`."""
    head = ["sample", "worse by", "as measured", *(f"−{x:.0%}" for x in LEVELS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(samples_dir)]
    return "\n".join(lines)


def doc_table(doc: str) -> str | None:
    """The table currently between the markers of ``doc`` (None without markers)."""
    if BEGIN not in doc or END not in doc:
        return None
    return doc.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", type=Path, metavar="DOC")
    group.add_argument("--write", type=Path, metavar="DOC")
    args = parser.parse_args(argv)
    fresh = table()
    if args.check is None and args.write is None:
        print(fresh)
        return 0
    path: Path = args.check or args.write
    doc = path.read_text(encoding="utf-8")
    current = doc_table(doc)
    if current is None:
        print(f"{path}: no sensitivity markers ({BEGIN} ... {END})", file=sys.stderr)
        return 2
    if args.check is not None:
        if current != fresh:
            print(f"{path}: the sensitivity table is out of step; run "
                  f"python tools/sensitivity.py --write {path}", file=sys.stderr)
            return 1
        return 0
    before, rest = doc.split(BEGIN, 1)
    path.write_text(before + BEGIN + "\n" + fresh + "\n" + END + rest.split(END, 1)[1],
                    encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
