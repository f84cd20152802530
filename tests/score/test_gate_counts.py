"""A gate's reason counts what it counts: the performance floor weighs runs, so a bundle
with two runs of one workload (3 workloads, 4 runs) says runs, never workloads."""

from __future__ import annotations

from pathlib import Path

from cmax.pipeline import assess
from tests.sample_bundles import one_of_two_runs_fails


def test_the_performance_floor_counts_runs(tmp_path: Path) -> None:
    card = assess(one_of_two_runs_fails(tmp_path))
    assert len(card.workloads) == 4
    assert len({(w.workload, w.precision, w.num_gpus) for w in card.workloads}) == 3
    floor = next(g for g in card.gates if g.id == "performance_floor")
    assert floor.reason.startswith("2 of 4 training runs pass the [performance] bar")
    assert "workloads pass" not in floor.reason
