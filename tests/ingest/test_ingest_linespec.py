"""One step-line declaration (cmax/ingest/linespec.py) read the same by every reader.

The regex reader and the fields reader both derive from ``nemo.NEMO2``: a field added to the
declaration reaches both, and the wall-clock stamps launchers and loggers put in front of a
step line (srun, torchrun, kubectl, Megatron, NeMo logging) are read the same by both, also
on hostile stamps.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import polars as pl
import pytest

from cmax.ingest import _fields as fields
from cmax.ingest import _greplines as greplines
from cmax.ingest.evidence import STEPS_SCHEMA
from cmax.ingest.formats import nemo
from cmax.ingest.formats.megatron import parse_megatron
from cmax.ingest.formats.nemo import parse_nemo2
from cmax.ingest.linespec import WALL_TIME
from tests.ingest.test_ingest_fields import _both, _line, _write
from tests.paths import DATA

PREFIXES = {
    "kubectl": "2025-02-18T09:31:{s:02d}.123456789Z ",
    "nemo": "[NeMo I 2025-02-18 09:31:{s:02d} nemo_logging:393] ",
    "megatron": " [2025-02-18 09:31:{s:02d}] ",
    "srun": "3: [NeMo I 2025-02-18 09:31:{s:02d} nemo_logging:393] ",
    "logging": "2025-02-18 09:31:{s:02d},250 INFO ",
}


def _stamped(prefix: str, i: int) -> str:
    return prefix.format(s=i % 60) + _line(i)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_both_readers_read_the_stamp(prefix: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [_stamped(PREFIXES[prefix], i) for i in range(50)]
    regex, fast = _both(_write(tmp_path / "x.log", lines), monkeypatch)
    assert fast.equals(regex, null_equal=True)
    stamps = regex.get_column(WALL_TIME)
    assert stamps.null_count() == 0
    assert stamps[1] - stamps[0] == pytest.approx(1.0)
    fraction = {"kubectl": 0.123456, "logging": 0.25}.get(prefix, 0.0)
    assert stamps[0] == pytest.approx(1739871060 + fraction)  # 2025-02-18 09:31:00 UTC


HOSTILE_STAMPS = [
    "2025-13-18 09:31:07] ",  # not a date: no stamp (null), the step is kept
    "2025-02-18 09:31:07.5] ",  # a fraction the first line has not
    "2025-02-18T09:31:07] ",  # another separator
    "2025-02-18 9:31:07] ",  # a one-digit hour
    "",  # no stamp at all
    "x2025-02-18 09:31:07] ",  # shifted
    # the fields reader holds a plain stamp as whole seconds in four bytes: an instant outside
    # 1970-2106 is left to the regexes, which read the same value
    "1969-12-31 23:59:59] ",
    "2106-02-07 06:28:15] ",  # the last second that fits
    "2106-02-07 06:28:16] ",
]


@pytest.mark.parametrize("stamp", HOSTILE_STAMPS)
def test_hostile_stamp_reads_as_the_regexes_read_it(stamp: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f" [2025-02-18 09:31:{i:02d}] " + _line(i) for i in range(40)]
    lines[7] = " [" + stamp + _line(7) if stamp else _line(7)
    regex, fast = _both(_write(tmp_path / "x.log", lines), monkeypatch)
    assert fast.equals(regex, null_equal=True)
    assert regex.height == 40


def test_a_stamp_after_the_counter_is_not_a_layout() -> None:
    line = _line(3).replace("/999 ", "/999 2025-02-18 09:31:00 ", 1)
    labels = {c: re.compile(p) for c, p in nemo.NEMO2.patterns.items()}
    assert fields.learn(line, labels, re.compile(nemo.NEMO2.iteration)) is None


def test_a_field_added_to_the_spec_reaches_both_readers_on_a_large_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The declaration is the only place a field is named: add one and both readers, over
    a log larger than the in-process limit, carry it with the same values."""
    spec = dataclasses.replace(nemo.NEMO2, values={**nemo.NEMO2.values,
                                                   "global_batch": r"global_batch_size"})
    monkeypatch.setattr(nemo, "NEMO2", spec)
    n = 0
    lines: list[str] = []
    size = 0
    while size <= greplines.SMALL_FILE:
        lines.append(_stamped(PREFIXES["nemo"], n))
        size += len(lines[-1]) + 1
        n += 1
    path = _write(tmp_path / "big.log", lines)
    assert path.stat().st_size > greplines.SMALL_FILE
    got = {}
    for name, dense in (("scan", 10**9), ("grep", 0)):
        with monkeypatch.context() as patch:
            patch.setattr(greplines, "DENSE", dense)
            with fields.StepQuery(path, spec) as query:
                assert query.layout is not None
                got[name] = query.collect()
    with monkeypatch.context() as patch:
        patch.setattr(fields, "learn", lambda *args: None)  # the regex reader alone
        with fields.StepQuery(path, spec) as query:
            got["regex"] = query.collect()
    for name, frame in got.items():
        assert frame.columns == spec.columns, name
        assert frame["global_batch"].unique().to_list() == [256.0], name
        assert frame[WALL_TIME].null_count() == 0, name
        assert frame.equals(got["regex"], null_equal=True), name
    assert got["regex"].height == n


def test_step_columns_reach_the_steps_table() -> None:
    """What a parser reads per step is a column of the canonical steps table."""
    megatron = parse_megatron(DATA / "ingest" / "megatron_bridge_llama3.1-70b.log").steps
    assert set(megatron.columns) <= set(STEPS_SCHEMA)
    assert megatron[WALL_TIME].null_count() == 0
    assert megatron["consumed_samples"].null_count() == 0
    nemo2 = parse_nemo2(DATA / "ingest" / "nemo2_llama3.1-8b_fp8.log").steps
    assert nemo2["consumed_samples"].drop_nulls().len() == nemo2.height
    assert nemo2[WALL_TIME].null_count() == nemo2.height  # these lines carry no stamp
    # max_iteration and global_step only number the steps (global_step across epochs)
    assert set(nemo.NEMO2.columns) - {"max_iteration", "global_step"} <= set(STEPS_SCHEMA)


def test_megatron_stamps_are_the_iteration_lines_own() -> None:
    steps = parse_megatron(DATA / "ingest" / "megatron_bridge_llama3.1-70b.log").steps
    gaps = steps[WALL_TIME].diff().drop_nulls()
    assert (gaps > 0).all()
    assert isinstance(steps.schema[WALL_TIME], pl.Float64)
