"""What the cross-file checks (issue 38) add to the rule phase of validation.

    python benchmarks/bench_crossfile.py

For each sample bundle (40 repeats) and a synthetic honest bundle of three 2 M-step runs (the
1 GiB case of bench_case.py, 3 repeats), times every rule family on the resolved case in one
process and prints the medians: all rules, the new families (hosts, copies, clocks,
fabrication, runs of one configuration, known logs), and what the new ones add to the rest.
Timing both in one process keeps the share meaningful on a busy machine. 2026-11-28, 2 cores
shared with other sessions: 6.8-8.0 % on the four training samples (about 2 ms of 29 ms), 2.2 %
on halcyon-serve, 7.0 % on the 2 M-step bundle (0.13 s of 2.0 s); the whole `cmax validate`
process of a sample takes about 1.3 CPU-seconds, so the new checks are about 0.2 % of it.
With re-jittered telemetry copies and published sweeps (crossfile.known-sweep) added, same
day: 7.6-8.3 % on the four training samples (7.0-8.4 % before, measured alternately), 1.9 %
on halcyon-serve, 5.4 % on the 2 M-step bundle (5.8 % before); the samples carry no power
telemetry, so the telemetry test costs them nothing (512 GPUs x 720 samples: 0.33 s, as the
identical-only check it replaces).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cmax.pipeline import load
from cmax.reference.view import ReferenceData, RefView
from cmax.resolve.case import Case, resolve
from cmax.submission.samples import sample_bundles
from cmax.validate import engine
from cmax.validate.context import build_context
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle, honest_times

NEW = {"cmax.validate.cluster_hosts", "cmax.validate.copies", "cmax.validate.clocks",
       "cmax.validate.fabrication", "cmax.validate.config_runs", "cmax.validate.known_logs"}
"""The rule modules of issue 38's cross-examination."""

def share(name: str, case: Case, ref: ReferenceData, repeat: int) -> None:
    ctx = build_context(case, RefView(ref))
    new: list[float] = []
    total: list[float] = []
    for _ in range(repeat):
        t_new = t_all = 0.0
        for check in engine.FAMILY_CHECKS:
            start = time.perf_counter()
            list(check(ctx))
            spent = time.perf_counter() - start
            t_all += spent
            if check.__module__ in NEW:
                t_new += spent
        new.append(t_new)
        total.append(t_all)
    n, a = statistics.median(new), statistics.median(total)
    print(f"{name:<30} all rules {a:8.4f} s  new checks {n:8.4f} s  = {100 * n / (a - n):5.1f} % "
          f"added to the rest ({repeat} repeats, medians)")



def main() -> None:
    for path in sample_bundles():
        with load(path) as loaded:
            share(path.name, loaded.case, loaded.reference, 40)
    with tempfile.TemporaryDirectory() as tmp:
        b = HonestBundle()
        for i, run in enumerate(b.runs):
            run.times = honest_times(run.base_step, i, n=2_000_000)
            run.max_iteration = 2_000_000 - 1
        ev = b.build(Path(tmp))
        fake = FakeReference()
        share("honest bundle, 2000000 steps", resolve(ev, fake), fake, 3)


if __name__ == "__main__":
    main()
