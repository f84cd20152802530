"""False alarms of the validator on honest runs: how many honest runs get an error.

    python benchmarks/false_alarms.py [--runs 1002] [--seed 0]

Builds seeded honest bundles (tests/validate/validate_fakes.HonestBundle: three NeMo 2 runs at
the reference, each with its own jitter of 0.5-2 %, a stall of 1.2-3x at a random step,
stragglers (1-3 steps 5-15 % slow) and a checkpoint stall of 5-20 s between two stamped lines
in half of them, wall-clock stamps and consumed samples on every line) and counts the runs with
at least one error finding. Then validates each public-format log in tests/data/ingest, declared
honestly in a one-run bundle, and lists its errors: the faults the fixture is written to carry
(tests/test_claims_public_logs.EXPECTED) and any other (a false alarm). The figures go into
docs/rules.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cmax.pipeline import load
from cmax.validate import validate
from cmax.validate.registry import effect_of
from tests.fakes import FakeReference
from tests.resolve.test_claims_public_logs import LOGS, _bundle, expected_errors
from tests.validate.validate_fakes import HonestBundle, honest_times


def _honest(rng: random.Random) -> HonestBundle:
    bundle = HonestBundle()
    for run in bundle.runs:
        times = honest_times(run.base_step, rng.randrange(1 << 30),
                             jitter=rng.uniform(0.005, 0.02),
                             stall_at=rng.randrange(2, 50), stall=rng.uniform(1.2, 3.0))
        for i in rng.sample(range(2, 50), rng.randint(1, 3)):  # stragglers
            times[i] = round(times[i] * rng.uniform(1.05, 1.15), 2)
        clock, stamps = 1_777_600_000.0, []
        stall_after = rng.randrange(5, 50) if rng.random() < 0.5 else None
        for i, t in enumerate(times):
            clock += t + (rng.uniform(5, 20) if i == stall_after else 0.0)
            stamps.append(float(round(clock)))
        run.times = times
        run.extra_steps = {"wall_time_s": stamps,
                           "consumed_samples": [float(run.gbs * (i + 1)) for i in range(50)]}
    return bundle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1002)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    runs = flagged = held = 0
    rules: Counter[str] = Counter()
    holds: Counter[str] = Counter()
    reference = FakeReference()
    with tempfile.TemporaryDirectory() as tmp:
        for b in range((args.runs + 2) // 3):
            bundle = _honest(rng)
            findings = validate(bundle.build(Path(tmp) / str(b)), reference)
            for run in bundle.runs:
                errors = {f.rule for f in findings
                          if f.severity == "error" and f.run_id == run.run_id}
                # a warning that holds a pass at unverified is a false alarm too
                held_by = {f.rule for f in findings
                           if effect_of(f.rule) == "unverified" and f.run_id == run.run_id}
                runs += 1
                flagged += bool(errors)
                held += bool(held_by)
                rules.update(errors)
                holds.update(held_by)
    print(f"honest runs: {runs}, with an error: {flagged} ({1000 * flagged / runs:.2f} per 1,000)"
          + (f"; rules: {dict(rules)}" if rules else ""))
    print(f"honest runs held at unverified by a fabrication warning: {held} "
          f"({1000 * held / runs:.2f} per 1,000)" + (f"; rules: {dict(holds)}" if holds else ""))
    for log, workload, precision, gpus, _ in LOGS:
        with tempfile.TemporaryDirectory() as tmp, \
                load(_bundle(Path(tmp), log, workload, precision, gpus)) as loaded:
            errors = {f.rule for f in loaded.findings if f.severity == "error"}
        unexpected = sorted(errors - expected_errors(log))
        print(f"{log}: {len(errors)} error rule(s), the fixture's own faults "
              f"{sorted(errors & expected_errors(log))}; false alarms: {unexpected or 'none'}")


if __name__ == "__main__":
    main()
