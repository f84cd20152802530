"""Every table and chart labels a run by what its log states, the declaration marked where
they disagree, tells two runs of one workload apart by their logs, and fits its labels."""

from __future__ import annotations

import csv
import html
import io
import re
from typing import Any

import pytest

from cmax.pipeline import assess
from cmax.render import charts, reports
from cmax.render.formatting import run_label, twin_logs
from cmax.scorecard import Scorecard
from tests.sample_bundles import fp8_run_declared_bf16, one_of_two_runs_contested

FP8_LABEL = "llama3.1-405b FP8 (declared BF16) · 512 GPUs"


@pytest.fixture(scope="module")
def declared_bf16(tmp_path_factory: pytest.TempPathFactory) -> Scorecard:
    return assess(fp8_run_declared_bf16(tmp_path_factory.mktemp("fp8")))


@pytest.fixture(scope="module")
def contested(tmp_path_factory: pytest.TempPathFactory) -> Scorecard:
    return assess(one_of_two_runs_contested(tmp_path_factory.mktemp("contested")))


def _rows(page: str, heading: str) -> list[str]:
    table = page.split(heading, 1)[1].split("</table>", 1)[0]
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.unescape(r))).strip()
            for r in table.split("<tr>")[2:]]


def test_the_run_label_shows_what_the_log_states(declared_bf16: Scorecard) -> None:
    labels = [run_label(w) for w in declared_bf16.workloads]
    assert labels == ["llama3.1-405b BF16 · 512 GPUs", FP8_LABEL, "grok1-314b FP8 · 512 GPUs"]


def test_every_table_labels_the_fp8_run_as_its_log_does(declared_bf16: Scorecard) -> None:
    page = reports.scorecard_html(declared_bf16, "x", "html", reports.ScorecardCharts())
    cost = _rows(page, "<h3>Cost per workload</h3>")
    held = next(r for r in cost if r.startswith(FP8_LABEL))
    assert "not priced withheld (identity.arithmetic, identity.precision" in held
    assert "$2.152" not in page and "$2.15" not in held
    training = _rows(page, "<h2>Training performance</h2>")
    assert any(r.startswith(FP8_LABEL) and "withheld" in r for r in training)
    appendix = _rows(page, 'id="runs"')
    assert any(r.startswith(FP8_LABEL) for r in appendix)
    rows = list(csv.DictReader(io.StringIO(reports.runs_csv(declared_bf16))))
    assert [r["log_states"] for r in rows] == ["", "precision=fp8", ""]


def test_two_runs_of_one_workload_are_told_apart_in_the_training_table(
        contested: Scorecard) -> None:
    assert twin_logs(contested.workloads) == [
        "training/llama3.1-405b_bf16_512.log", None, None,
        "training/llama3.1-405b_bf16_512_second.log"]
    page = reports.scorecard_html(contested, "x", "html", reports.ScorecardCharts())
    bf16 = [r for r in _rows(page, "<h2>Training performance</h2>")
            if r.startswith("llama3.1-405b BF16 · 512 GPUs")]
    assert len(bf16) == 2
    assert "llama3.1-405b_bf16_512.log" in bf16[0].replace(" ", "")
    assert "llama3.1-405b_bf16_512_second.log" in bf16[1].replace(" ", "")


def _drawn(monkeypatch: pytest.MonkeyPatch, card: Scorecard) -> tuple[Any, Any]:
    figures: list[Any] = []

    def keep(fig: Any) -> str:
        figures.append(fig)
        return "<svg/>"

    monkeypatch.setattr(charts, "_svg", keep)
    withheld = {j.id for j in card.judgements if j.verdict == "withheld"}
    charts.ratio_chart(card.workloads, card.exemplar_bar, withheld)
    from matplotlib.backends.backend_svg import RendererSVG

    fig: Any = figures[0]
    fig.set_dpi(72)  # as the SVG is written, with the SVG backend's text metrics
    width, height = fig.get_size_inches() * 72
    renderer = RendererSVG(  # type: ignore[no-untyped-call]  # matplotlib leaves it unannotated
        width, height, io.StringIO())
    fig.draw(renderer)
    return fig, renderer


def test_the_ratio_chart_fits_a_152_percent_label(declared_bf16: Scorecard,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The withheld run's 152.7 % ran past the axes and was cut ('152.'): every value
    beside a bar, and every tick label, now ends inside the figure and the plot."""
    fig, renderer = _drawn(monkeypatch, declared_bf16)
    ax = fig.axes[0]
    plot = ax.get_window_extent(renderer)
    width = fig.get_size_inches()[0] * 72
    values = [t for t in ax.texts if t.get_text().endswith(("%", "withheld"))]
    assert sorted(t.get_text() for t in values) == ["100.3%", "152.7% withheld", "99.8%"]
    for text in values:
        assert text.get_window_extent(renderer).x1 <= plot.x1, text.get_text()
    low, high = ax.get_xlim()
    for tick in ax.get_xticklabels():  # the ticks drawn: those inside the axis's range
        if tick.get_text() and low <= tick.get_position()[0] <= high:
            assert tick.get_window_extent(renderer).x1 <= width, tick.get_text()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert FP8_LABEL in labels


def test_the_ratio_chart_tells_two_runs_apart(contested: Scorecard,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    fig, _ = _drawn(monkeypatch, contested)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(set(labels)) == len(labels) == 4
    assert "llama3.1-405b BF16 · 512 GPUs · llama3.1-405b_bf16_512_second.log" in labels
    assert any(t.get_text() == "99.8% withheld" for t in fig.axes[0].texts)


def test_a_label_the_log_contradicts_without_one_value_says_so(
        declared_bf16: Scorecard) -> None:
    held = declared_bf16.workloads[1].model_copy(update={"log_states": {"precision": None}})
    assert run_label(held) == "llama3.1-405b BF16 (contradicted by its log) · 512 GPUs"


def test_the_leaderboard_lowest_ratio_is_of_runs_that_count(declared_bf16: Scorecard) -> None:
    """A card whose only run is the withheld 152.7 % read 152.7 % as its lowest ratio."""
    from cmax.render.views import leaderboard_rows

    held = declared_bf16.model_copy(update={"workloads": declared_bf16.workloads[1:2]})
    (alone,) = leaderboard_rows([("held", held)])
    assert alone.lowest_ratio is None
    (full,) = leaderboard_rows([("full", declared_bf16)])
    assert full.lowest_ratio == pytest.approx(0.998162)
