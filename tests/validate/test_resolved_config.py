"""Too good is too good whatever is declared: the sanity limits run on the run's resolved
configuration (declared, else stated by the log, else the matched recipe's)."""

from __future__ import annotations

from pathlib import Path

from cmax.validate import validate
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle, honest_times


def _rules(bundle: HonestBundle, tmp_path: Path) -> set[str]:
    return {f.rule for f in validate(bundle.ingest(tmp_path), FakeReference())
            if f.run_id == bundle.runs[0].run_id}


def _undeclared(*fields: str) -> HonestBundle:
    bundle = HonestBundle()
    run = bundle.runs[0]
    for name in fields:
        setattr(run, name, None)
    return bundle


def test_too_fast_without_seq_len_declared_is_too_good(tmp_path: Path) -> None:
    bundle = _undeclared("seq_len")
    bundle.runs[0].times = honest_times(17.4, 11)  # 14 % faster than the 19.86 s reference
    assert "sanity.too-good-to-be-true" in _rules(bundle, tmp_path)


def test_too_fast_without_any_configuration_declared_is_too_good(tmp_path: Path) -> None:
    bundle = _undeclared("seq_len", "mbs", "tp", "pp", "cp", "vp")
    bundle.runs[0].times = honest_times(8.3, 11)  # 141 % faster
    assert "sanity.too-good-to-be-true" in _rules(bundle, tmp_path)


def test_at_reference_without_configuration_declared_is_clean(tmp_path: Path) -> None:
    rules = _rules(_undeclared("seq_len", "mbs", "tp", "pp", "cp", "vp"), tmp_path)
    assert not {"sanity.too-good-to-be-true", "sanity.unexpected-improvement"} & rules
