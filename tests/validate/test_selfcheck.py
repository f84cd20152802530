"""The log agrees with itself (cmax/validate/selfcheck.py): the clean side of each rule (the
tripping side is in test_validate_rules.TRIPS)."""

from __future__ import annotations

from pathlib import Path

from cmax.validate import validate
from tests.fakes import FakeReference
from tests.validate.test_validate_rules import _stamps
from tests.validate.validate_fakes import HonestBundle, honest_times

NEW = {"consistency.wall-clock", "consistency.consumed-samples",
       "consistency.single-step-window"}


def _fired(bundle: HonestBundle, tmp_path: Path) -> set[str]:
    return {f.rule for f in validate(bundle.build(tmp_path), FakeReference())} & NEW


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
