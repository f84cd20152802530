"""The document worker of ``cmax report``: the same bytes as drawing in-process, and every way
it can fail (never started, crashed, failed, timed out, parent interrupted) ends in the
in-process path, with its errors, and with the worker gone."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.errors import CmaxError
from cmax.render import reports, views, worker
from cmax.render.reports import documents_from, render_reports, scorecard_documents
from cmax.render.slugs import report_slugs
from cmax.render.worker import DocumentWorker
from tests.paths import REPO
from tests.render.test_render_determinism import light_card
from tests.score.scorecard_factory import make_hostile_scorecard, make_minimal_scorecard


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_worker_documents_are_the_in_process_documents() -> None:
    cards = [light_card(), make_hostile_scorecard(), make_minimal_scorecard()]
    slugs = report_slugs(cards)
    with DocumentWorker.start() as helper:
        helper.submit(cards)
        drawn = [helper.documents(card, slug) for card, slug in zip(cards, slugs, strict=True)]
        assert helper.documents(cards[0], "another-slug") is None  # only what was sent, as sent
        assert helper.documents(light_card(), slugs[0]) is None  # an equal card, but not that one
    for card, slug, documents in zip(cards, slugs, drawn, strict=True):
        assert documents == scorecard_documents(card, slug)


@pytest.mark.parametrize("rank_by", ["tier", "value"])
def test_worker_leaderboard_charts_are_the_in_process_ones(rank_by: views.RankBy) -> None:
    cards = [make_minimal_scorecard(), light_card(), make_hostile_scorecard()]
    rows = views.leaderboard_rows(list(zip(report_slugs(cards), cards, strict=True)), rank_by)
    ranked, labels = [r.card for r in rows], reports.leaderboard_labels(rows)
    with DocumentWorker.start() as helper:
        helper.submit(cards, rank_by)
        drawn = helper.leaderboard_charts(ranked, labels)
        assert helper.leaderboard_charts(cards[::-1], labels[::-1]) is None  # another order
        assert helper.leaderboard_charts(ranked, [*labels[:-1], "x"]) is None
    assert drawn == reports.leaderboard_charts(ranked, labels)
    assert drawn["score"] and drawn["price"]


def test_reports_through_the_worker_are_byte_identical(tmp_path: Path) -> None:
    cards = [light_card(), make_minimal_scorecard()]
    render_reports(cards, tmp_path / "here")
    with DocumentWorker.start() as helper, documents_from(helper):
        helper.submit(cards)
        render_reports(cards, tmp_path / "worker")
        # the documents and charts did come from the worker
        assert len(helper._documents) == 2 and helper._leaderboard is not None
    assert _digests(tmp_path / "here") == _digests(tmp_path / "worker")


def _fake_worker(code: str) -> DocumentWorker:
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return DocumentWorker(process)


@pytest.mark.parametrize("code", [
    "import sys; sys.exit(3)",  # died at once
    "import sys; sys.stdin.buffer.read(); sys.stdout.buffer.write(b'half an ans')",
    "import pickle, sys; sys.stdin.buffer.read(); "
    "sys.stdout.buffer.write(pickle.dumps(('failed', None)))",  # raised or warned
])
def test_a_failed_worker_means_drawing_here(code: str) -> None:
    card = make_minimal_scorecard()
    helper = _fake_worker(code)
    helper.submit([card])
    assert helper.documents(card, report_slugs([card])[0]) is None
    helper.close()


def test_a_slow_worker_is_killed_and_the_documents_drawn_here(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "TIMEOUT_S", 0.3)
    card = make_minimal_scorecard()
    helper = _fake_worker("import time; time.sleep(60)")
    process = helper._process
    assert process is not None
    helper.submit([card])
    assert helper.documents(card, report_slugs([card])[0]) is None
    assert process.poll() is not None  # killed, not left behind


def test_a_worker_that_cannot_start_changes_nothing(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    card = make_minimal_scorecard()
    with DocumentWorker.start() as helper:
        helper.submit([card])
        assert helper.documents(card, report_slugs([card])[0]) is None


def test_the_worker_is_killed_when_the_parent_stops_early() -> None:
    with pytest.raises(KeyboardInterrupt), DocumentWorker.start() as helper:
        process = helper._process
        raise KeyboardInterrupt
    assert process is not None and process.poll() is not None


def test_a_chart_error_is_still_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The worker cannot draw (here: fails as a chart error would), so the parent draws and
    its error is the command's usual one line, no traceback from either process."""
    from cmax.cli import report_cmd

    monkeypatch.setattr(report_cmd, "_assess",
                        lambda bundle, rubric, commercial=None: make_minimal_scorecard())
    monkeypatch.setattr(DocumentWorker, "start", classmethod(lambda cls: _fake_worker(
        "import pickle, sys; sys.stdin.buffer.read(); "
        "sys.stdout.buffer.write(pickle.dumps(('failed', None)))")))

    def broken(card: object) -> None:
        raise CmaxError("cannot draw the chart", fix="report it")

    monkeypatch.setattr(reports, "scorecard_charts", broken)
    (tmp_path / "b").mkdir()
    assert main(["report", str(tmp_path / "b"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("cmax: error: cannot draw the chart")
    assert "Traceback" not in err


def test_no_worker_on_a_single_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "_usable_cpus", lambda: 1)
    with DocumentWorker.start() as helper:
        assert helper._process is None


def test_what_a_library_prints_does_not_spoil_the_answer() -> None:
    """Anything printed in the worker goes to its stderr; its stdout carries only the answer."""
    card = make_minimal_scorecard()
    helper = _fake_worker(
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from cmax.render import worker; "
        "warm = worker._warm_up; "
        "worker._warm_up = lambda: (print('Matplotlib is building the font cache'), warm()); "
        "worker.main()")
    helper.submit([card])
    slug = report_slugs([card])[0]
    assert helper.documents(card, slug) == scorecard_documents(card, slug)
    helper.close()


def test_the_worker_draws_without_the_rating_stack(tmp_path: Path) -> None:
    """Page 1's price drivers come from cmax.price.drivers (scorecard models only): drawing a
    scorecard's documents must not import Polars or the case, ~0.15 s on the worker's path."""
    import pickle

    (tmp_path / "cards.pickle").write_bytes(pickle.dumps([light_card(), make_hostile_scorecard()]))
    code = ("import pickle, sys; from cmax.render import worker; worker._warm_up(); "
            f"cards = pickle.loads(open({str(tmp_path / 'cards.pickle')!r}, 'rb').read()); "
            "list(worker.draw_each(cards)); "
            "print(sorted(m for m in ('polars', 'cmax.resolve.case', 'cmax.price.advice', "
            "'cmax.score.core') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("then", ["time.sleep(60)",  # stuck on the second: killed at timeout
                                  "out.write(pickle.dumps(('failed', None))); out.flush()"])
def test_each_scorecard_is_taken_as_soon_as_it_is_drawn(
        then: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With several scorecards the parent does not wait for all: the first one's documents are
    used while the worker is still on the second; what never comes is drawn here."""
    import pickle

    monkeypatch.setattr(worker, "TIMEOUT_S", 0.5)
    cards = [make_minimal_scorecard(), make_hostile_scorecard()]
    slugs = report_slugs(cards)
    first = scorecard_documents(cards[0], slugs[0])
    (tmp_path / "first").write_bytes(pickle.dumps(("card", (slugs[0], first))))
    helper = _fake_worker(
        "import pickle, sys, time; sys.stdin.buffer.read(); out = sys.stdout.buffer; "
        f"out.write(open({str(tmp_path / 'first')!r}, 'rb').read()); out.flush(); {then}")
    process = helper._process
    assert process is not None
    helper.submit(cards)
    assert helper.documents(cards[0], slugs[0]) == first
    assert helper.documents(cards[1], slugs[1]) is None
    assert helper.leaderboard_charts(cards, ["a", "b"]) is None
    helper.close()
    assert process.poll() is not None
