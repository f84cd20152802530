"""Same scorecards in, byte-identical HTML, PDF and JSON out, across processes.

The second render runs in a fresh interpreter with a different hash seed, so anything that
leaks set ordering, a per-process random salt (matplotlib's SVG ids), the clock (PDF
attachment dates) or the output folder into a report shows up here as a differing file.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cmax.render import render_reports
from cmax.render.reports import render_brief
from cmax.scorecard import Scorecard
from tests.paths import REPO
from tests.score.scorecard_factory import make_minimal_scorecard, make_weak_scorecard

ROOT = REPO
SCRIPT = """
import sys
from pathlib import Path
from cmax.render import render_reports
from tests.score.scorecard_factory import make_minimal_scorecard
from tests.render.test_render_determinism import light_card
from tests.paths import REPO
render_reports([light_card(), make_minimal_scorecard()], Path(sys.argv[1]))
"""


def light_card() -> Scorecard:
    """Every chart, attachment and price table, without the long tables that only cost time."""
    return make_weak_scorecard(audit=None, categories=[], evidence_files=[])


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_reports_are_byte_identical_across_processes(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "elsewhere" / "deeper"
    env = {**os.environ, "PYTHONHASHSEED": "4242", "PYTHONPATH": str(ROOT)}
    # the other process renders while this one does: two cores, half the wall time
    other = subprocess.Popen([sys.executable, "-c", SCRIPT, str(there)], cwd=tmp_path, env=env)
    try:
        render_reports([light_card(), make_minimal_scorecard()], here)
    finally:
        assert other.wait(timeout=120) == 0
    first, second = _digests(here), _digests(there)
    # 2 x (json, 2 html, 2 pdf, findings and runs csv) + leaderboard html/pdf/csv
    assert len(first) == 17
    assert first == second
    for path in here.iterdir():
        data = path.read_bytes()
        assert str(tmp_path).encode() not in data, path.name
        # the only dates in a PDF are the pinned attachment dates (2000-01-01)
        assert set(re.findall(rb"D:(\d{8})", data)) <= {b"20000101"}, path.name


@pytest.mark.parametrize("subsetter", ["harfbuzz", "fonttools"])
def test_pdfs_are_byte_identical_across_time(tmp_path: Path, subsetter: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two renders with clocks 2.5 s apart, with HarfBuzz-subset and with WeasyPrint's
    fontTools fallback (whose subset fonts carry fontTools' clock in ``head.modified``)."""
    import weasyprint.pdf.fonts as wp_fonts

    if subsetter == "fonttools":
        monkeypatch.setattr(wp_fonts, "harfbuzz_subset", None)
    elif wp_fonts.harfbuzz_subset is None:
        pytest.skip("HarfBuzz-subset is not installed here (tools/install-system-deps.sh)")
    card = make_minimal_scorecard()
    for name, clock in (("first", 1_700_000_000.0), ("second", 1_700_000_002.5)):
        monkeypatch.setattr(time, "time", lambda clock=clock: clock)  # the clock, two apart
        render_brief(card, "a", tmp_path / name)
    first = (tmp_path / "first" / "a.brief.pdf").read_bytes()
    assert first == (tmp_path / "second" / "a.brief.pdf").read_bytes()


def test_a_callers_source_date_epoch_neither_leaks_in_nor_is_clobbered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import weasyprint.pdf.fonts as wp_fonts

    monkeypatch.setattr(wp_fonts, "harfbuzz_subset", None)
    card = make_minimal_scorecard()
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    render_brief(card, "a", tmp_path / "unset")
    assert "SOURCE_DATE_EPOCH" not in os.environ
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    render_brief(card, "a", tmp_path / "set")
    assert os.environ["SOURCE_DATE_EPOCH"] == "1700000000"
    assert ((tmp_path / "unset" / "a.brief.pdf").read_bytes()
            == (tmp_path / "set" / "a.brief.pdf").read_bytes())
