"""The log agrees with itself (cmax/validate/selfcheck.py): the clean side of each rule (the
tripping side is in test_validate_rules.TRIPS)."""

from __future__ import annotations

from pathlib import Path

from cmax.validate import validate
from tests.fakes import FakeReference
from tests.validate.test_validate_rules import _stamps
from tests.validate.validate_fakes import HonestBundle, honest_times

NEW = {"consistency.wall-clock", "consistency.consumed-samples",
       "consistency.single-step-window", "consistency.spliced-window",
       "consistency.skipped-iterations", "consistency.skipped-iterations-outside",
       "statistics.speed-change"}


def _fired(bundle: HonestBundle, tmp_path: Path) -> set[str]:
    return {f.rule for f in validate(bundle.ingest(tmp_path), FakeReference())} & NEW


def test_honest_stamps_and_samples_are_clean(tmp_path: Path) -> None:
    bundle = HonestBundle()
    run = bundle.runs[0]
    run.extra_steps = {"wall_time_s": _stamps(0, 1.0),
                       "consumed_samples": [256.0 * (i + 1) for i in range(50)]}
    assert _fired(bundle, tmp_path) == set()


def test_a_checkpoint_stall_between_stamps_is_within_tolerance(tmp_path: Path) -> None:
    bundle = HonestBundle()
    stamps = _stamps(0, 1.0)
    stamps[40:] = [s + 8 for s in stamps[40:]]  # 8 s the step timer does not count
    bundle.runs[0].extra_steps = {"wall_time_s": stamps}
    assert _fired(bundle, tmp_path) == set()


def test_an_honest_single_step_window_is_clean(tmp_path: Path) -> None:
    bundle = HonestBundle()
    run = bundle.runs[0]
    run.num_gpus, run.gbs, run.times = 128, 64, honest_times(19.5, 11)
    assert _fired(bundle, tmp_path) == set()


def test_a_restart_before_the_window_is_no_splice(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.runs[0].row.update(restarts=1, resumed_at="20")
    assert _fired(bundle, tmp_path) == set()


def test_stamps_going_back_inside_the_window_are_a_splice(tmp_path: Path) -> None:
    bundle = HonestBundle()
    stamps = _stamps(0, 1.0)
    stamps[40:] = [s - 3600 for s in stamps[40:]]  # the tail of a job run an hour earlier
    bundle.runs[0].extra_steps = {"wall_time_s": stamps}
    assert _fired(bundle, tmp_path) == {"consistency.spliced-window"}


def test_one_jump_in_consumed_samples_inside_the_window_is_a_splice(tmp_path: Path) -> None:
    bundle = HonestBundle()
    samples = [256.0 * (i + 1) for i in range(50)]
    samples[38:] = [s + 256.0 * 900 for s in samples[38:]]  # iterations of another job
    bundle.runs[0].extra_steps = {"consumed_samples": samples}
    assert _fired(bundle, tmp_path) == {"consistency.spliced-window"}


def test_a_gradual_drift_and_a_slower_tail_are_no_speed_change(tmp_path: Path) -> None:
    drift = HonestBundle()
    drift.runs[0].times = [round(t * (1 + 0.004 * i), 2)
                           for i, t in enumerate(honest_times(19.86, 11))]
    assert _fired(drift, tmp_path / "drift") == set()
    tail = HonestBundle()  # the window (35-44) in the slower stretch: nothing flattered
    tail.runs[0].times = [round(t * 1.12, 2) if i >= 30 else t
                          for i, t in enumerate(honest_times(19.86, 11))]
    assert _fired(tail, tmp_path / "tail") == set()


def test_a_stall_and_stragglers_bunched_together_are_no_speed_change(tmp_path: Path) -> None:
    # seeded honest run 134 of benchmarks/false_alarms.py: a 1.7x stall and two stragglers
    # within five steps right after the settle point
    bundle = HonestBundle()
    bundle.runs[1].times = [
        44.37, 14.62, 13.06, 13.08, 12.94, 13.04, 12.78, 12.85, 12.88, 13.18, 13.01, 12.91, 13.19,
        13.04, 14.15, 13.12, 13.15, 22.1, 14.41, 12.75, 13.17, 14.84, 13.34, 13.12, 13.15, 12.67,
        13.15, 13.02, 13.14, 13.06, 13.04, 13.15, 12.98, 12.8, 12.94, 13.1, 13.14, 13.1, 13.05,
        13.25, 13.05, 13.2, 13.24, 13.3, 13.15, 13.2, 13.16, 13.39, 13.34, 12.83]
    assert _fired(bundle, tmp_path) == set()
