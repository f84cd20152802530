"""Benchmark the case: seconds to resolve a bundle and to validate and score the resolved case.

    python benchmarks/bench_case.py [--repeat 5] [--steps 50]

For each sample bundle (ingest time not counted) and for a synthetic honest bundle whose runs
print ``--steps`` steps each, prints the median of ``--repeat`` runs of ``resolve``,
``validate`` on the case and ``score`` on the case, beside the floor: the stages after ingest
must stay well below a second per bundle, because ``cmax audit`` re-rates whole fleets.
Before issue 11 the validator derived each run's clean steps 9 times per sample run and took
0.126 s on borealis-cloud; the case derives them once.

``--steps 2000000`` is the length of a 1 GiB NeMo 2 log of a quiet run (three such runs):
resolve 1.63 s, validate 13.37 s, score 3.53 s (18.5 s in all) when the step-series rules and
the scorecard's series walked every step in Python; 0.16 / 0.65 / 0.10 s (0.92 s) since they
read columns (2026-11-24, 2 cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cmax.ingest.evidence import Evidence
from cmax.pipeline import load
from cmax.reference.view import ReferenceData
from cmax.resolve.case import Case, resolve
from cmax.score import load_rubric, score
from cmax.submission.samples import sample_bundles
from cmax.validate import validate
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle, honest_times

FLOOR_S = 1.0


def _median(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _row(name: str, evidence: Evidence, case: Case, reference: ReferenceData,
         repeat: int) -> None:
    rubric = load_rubric(None)
    findings = validate(case, reference)
    t_resolve = _median(lambda: resolve(evidence, reference), repeat)
    t_validate = _median(lambda: validate(case, reference), repeat)
    t_score = _median(lambda: score(case, findings, reference, rubric), repeat)
    total = t_resolve + t_validate + t_score
    print(f"{name:<28} resolve {t_resolve:7.4f} s  validate {t_validate:7.4f} s  "
          f"score {t_score:7.4f} s  total {total:7.4f} s  (floor {FLOOR_S:g} s: "
          f"{'ok' if total < FLOOR_S else 'OVER'})")


def _plain(case: Case) -> Evidence:
    return Evidence(**{f.name: getattr(case, f.name) for f in dataclasses.fields(Evidence)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    for path in sample_bundles():
        with load(path) as loaded:
            _row(path.name, _plain(loaded.case), loaded.case, loaded.reference, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = HonestBundle()
        for i, run in enumerate(bundle.runs):
            run.times = honest_times(run.base_step, i, n=args.steps)
            run.max_iteration = args.steps - 1
        evidence = bundle.build(Path(tmp))
        fake = FakeReference()
        _row(f"honest bundle, {args.steps} steps", evidence, resolve(evidence, fake), fake,
             args.repeat)


if __name__ == "__main__":
    main()
