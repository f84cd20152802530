"""Report building blocks without WeasyPrint: number formats, slugs, page-1 selections, charts."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from cmax.findings import Finding
from cmax.render import charts, formatting, page_one, reports, slugs, views
from cmax.score.series import spikes
from cmax.states import State
from tests.score.scorecard_factory import (
    make_hostile_scorecard,
    make_minimal_scorecard,
    make_scorecard,
    make_strong_scorecard,
    make_weak_scorecard,
)

SVG_NS = "{http://www.w3.org/2000/svg}"


# ---------------------------------------------------------------- formatting


@pytest.mark.parametrize(("value", "expected"), [
    (0.9826, "98.3%"), (1.0, "100.0%"), (-0.052, "−5.2%"), (None, "—"),
    (math.nan, "—"), (math.inf, "—"),
])
def test_pct(value: float | None, expected: str) -> None:
    assert formatting.pct(value) == expected


def test_percent_variants() -> None:
    assert formatting.pct_range(0.942, 0.953) == "94.2–95.3%"
    assert formatting.pct_range(None, 0.9) == "—"
    assert formatting.pct_value(99.86, None) == "99.86%"
    assert formatting.pct_value(99.9, None) == "99.9%"
    assert formatting.pct_value(10.0, None) == "10%"
    assert formatting.pct_value(53.84, 1) == "53.8%"
    assert formatting.signed_pct(-5.24) == "−5.2%"
    assert formatting.signed_pct(3) == "+3.0%"


def test_money_counts_and_sizes() -> None:
    assert formatting.usd(2.1) == "$2.10"
    assert formatting.usd(75350016.4, 0) == "$75,350,016"
    assert formatting.usd(-12.5) == "−$12.50"
    assert formatting.integer(4096) == "4,096"
    assert formatting.num(1234.56, 1) == "1,234.6"
    assert formatting.binary_bytes(8) == "8 B"
    assert formatting.binary_bytes(1536) == "1.5 KiB"
    assert formatting.binary_bytes(16 * 2**30) == "16 GiB"
    assert formatting.where("a.log", 12) == "a.log:12"
    assert formatting.where(None, 3) == "—"
    assert formatting.truncate("x" * 70, 10) == "x" * 9 + "…"


def test_css_classes_come_from_fixed_tables_only() -> None:
    assert formatting.tier_class("Gold") == "tier-gold"
    assert formatting.tier_class('"><script>') == "neutral"
    assert formatting.verdict_class("inconclusive") == "warn"


# ---------------------------------------------------------------- slugs


def test_slug_is_filesystem_safe_for_hostile_names() -> None:
    card = make_hostile_scorecard()
    slug = slugs.report_slugs([card])[0]
    assert slug == "script-alert-1-script-img-src-file-etc-passwd"
    assert slugs.slugify("../../etc/passwd") == "etc-passwd"
    assert slugs.slugify("Ünïcödé Cloud") == "unicode-cloud"
    assert slugs.slugify("<>/\\").startswith("provider-")
    assert slugs.slugify("日本クラウド") != slugs.slugify("韓国クラウド")
    assert slugs.slugify("CON") == "con-x"
    assert len(slugs.slugify("a" * 500)) == slugs.MAX_LEN


def test_slugs_are_unique_and_independent_of_order() -> None:
    a = make_scorecard(provider="Acme / Cloud", cluster="x")
    b = make_scorecard(provider="Acme Cloud", cluster="x")  # same base slug
    c = make_scorecard(provider="Acme Cloud", cluster="x", score=70.0)  # same names, other card
    first = dict(zip(["a", "b", "c"], slugs.report_slugs([a, b, c]), strict=True))
    second = dict(zip(["c", "b", "a"], slugs.report_slugs([c, b, a]), strict=True))
    assert first == second
    assert len(set(first.values())) == 3
    assert all(s.startswith("acme-cloud-x-") for s in first.values())
    same = slugs.report_slugs([a, a])
    assert len(set(same)) == 2


# ---------------------------------------------------------------- first page


def test_key_numbers_for_the_reference_card() -> None:
    keys = {k.label: k for k in page_one.key_numbers(make_scorecard())}
    perf = keys["Training throughput"]
    assert perf.value == "1 of 2 runs pass"
    # 14.80 / 15.62 = 0.9475: the BF16 run is the lowest and straddles the 95% bar
    assert "lowest 94.8% of reference (CI 94.2–95.3%)" in perf.detail
    assert perf.tone == "warn"
    assert keys["Network bus bandwidth"].value == "99.2% of reference"
    assert keys["SLA uptime"].value == "99.86% measured"
    assert "missed, 10% service credit owed" in keys["SLA uptime"].detail
    assert keys["ClusterMAX audit"].value == "3 fail · 7 warn · 24 pass"
    assert keys["Price per GPU-hour"].value == "$2.10 quoted → $1.99"
    assert keys["Price per GPU-hour"].tone == "warn"  # −5.2%


def test_missing_sections_say_not_provided() -> None:
    keys = page_one.key_numbers(make_minimal_scorecard())
    assert [k.value for k in keys] == ["not provided"] * 6
    assert page_one.exemplar_text(make_minimal_scorecard()).startswith("no training runs")
    assert make_minimal_scorecard().exemplar_state is State.NOT_EVALUATED
    texts = [p.text for p in views.brief_demands(make_minimal_scorecard())]
    assert any(t.startswith("Provide training runs") for t in texts)
    assert any(t.startswith("Agree per-node monthly uptime") for t in texts)


def test_headline_findings_rank_by_severity_then_validator_order() -> None:
    card = make_scorecard()
    info = Finding(rule="z", severity="info", message="first but minor", fix="-")
    late_error = Finding(rule="a", severity="error", file="zzz", message="late error", fix="-")
    card = card.model_copy(update={"findings": [info, *card.findings, late_error]})
    top = views.headline_findings(card)
    assert [f.severity for f in top] == ["error", "error", "warning"]
    assert top[0].rule == "audit.security_version"  # raised before late_error
    assert top[2].rule == "perf.ci_straddles_bar"


def test_exemplar_text() -> None:
    assert page_one.exemplar_text(make_strong_scorecard()).startswith("all 2 suite workloads")
    assert make_strong_scorecard().exemplar_state is State.MET
    assert make_scorecard().exemplar_state is State.NOT_MET
    text = page_one.exemplar_text(make_scorecard())
    assert text == ("1 of 2 suite workloads meet the bar (> 95% of reference) on all their "
                    "runs; not met: llama3.1-70b bf16 512 GPUs (0.948 inconclusive).")


def test_within_a_tier_a_cloud_meeting_the_exemplar_bar_ranks_above_one_that_does_not() -> None:
    """Issue 40: Borealis (Bronze 63.0, none of its 3 runs passing) ranked above Zenith
    (Bronze 60.9, both runs passing) by score alone; the order a reader can state is tier,
    then the Exemplar state, then score."""
    from cmax.pipeline import assess
    from tests.paths import SAMPLES

    cards = [(name, assess(SAMPLES / name)) for name in ("borealis-cloud", "zenith-nvl72")]
    assert {c.tier for _, c in cards} == {"Bronze"}
    borealis, zenith = cards[0][1], cards[1][1]
    assert borealis.score > zenith.score
    assert borealis.exemplar_state is State.NOT_MET and zenith.exemplar_state is State.MET
    assert [slug for slug, _ in views.leaderboard_order(cards)] == ["zenith-nvl72",
                                                                   "borealis-cloud"]


def test_leaderboard_orders_by_tier_then_score() -> None:
    weak, strong, ref = make_weak_scorecard(), make_strong_scorecard(), make_scorecard()
    high_but_capped = make_scorecard(provider="Capped", score=99.0, tier="Bronze")
    rows = views.leaderboard_rows([("w", weak), ("c", high_but_capped), ("r", ref), ("s", strong)])
    assert [r.slug for r in rows] == ["s", "r", "c", "w"]
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    assert rows[1].lowest_ratio == pytest.approx(0.9475)
    assert rows[1].audit_fails == 3


# ---------------------------------------------------------------- charts


def _svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg.encode())
    return ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]


def test_charts_are_deterministic_and_undated() -> None:
    card = make_scorecard()
    first = charts.ratio_chart(card.workloads, 0.95)
    assert first is not None
    assert first == charts.ratio_chart(card.workloads, 0.95)
    for svg in (first, charts.nccl_chart(card.network), charts.step_time_chart(card.workloads[0])):
        assert svg is not None
        assert "<dc:date>" not in svg
        assert "<text" in svg  # real text, searchable in the PDF


def test_chart_text_from_bundles_is_escaped_and_never_markup() -> None:
    card = make_hostile_scorecard()
    odd = card.workloads[1].model_copy(update={"workload": "cost $5 & 10% <b>"})
    svg = charts.ratio_chart([card.workloads[0], odd], 0.95)
    assert svg is not None
    root = ET.fromstring(svg.encode())
    tags = {el.tag.removeprefix(SVG_NS) for el in root.iter()}
    assert not tags & {"script", "foreignObject", "image", "b"}
    texts = " ".join(_svg_texts(svg))
    assert "<svg onload=alert(1)>" in texts
    assert "cost $5 & 10% <b>" in texts  # `$` is text, not mathtext


def test_lean_svg_unwraps_bare_groups_and_keeps_everything_drawn() -> None:
    svg = (f'<svg xmlns="{SVG_NS[1:-1]}" xmlns:xlink="http://www.w3.org/1999/xlink">'
           '<metadata><x/></metadata>'
           '<g id="a"><path id="p1" d="M 0 0"/><g><text transform="rotate(-0 1 2)">1 &lt; 2</text>'
           '<text transform="rotate(-90 1 2)">y</text></g></g>'
           '<g id="kept" transform="scale(2)"><path id="p2" d="M 1 1"/></g>'
           '<g id="used"><path id="p3" d="M 2 2"/></g><use xlink:href="#used"/></svg>')
    lean = charts.lean_svg(svg)
    root = ET.fromstring(lean.encode())
    assert [el.tag.removeprefix(SVG_NS) for el in root] == ["path", "text", "text", "g", "g", "use"]
    assert [el.get("transform") for el in root.iter(f"{SVG_NS}text")] == [None, "rotate(-90 1 2)"]
    assert [el.get("id") for el in root.iter(f"{SVG_NS}path")] == ["p1", "p2", "p3"]
    assert _svg_texts(lean) == ["1 < 2", "y"]
    assert lean.startswith(f'<svg xmlns="{SVG_NS[1:-1]}"') and "ns0" not in lean


@pytest.mark.parametrize("name", [
    "llama3.1-405b", "a-workload-name-of-sixty-characters-from-some-odd-bundle-x"])
def test_ratio_chart_labels_fit_in_the_figure(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ratio chart's left margin is computed from its labels (constrained layout was a
    third of its time): every label must still start inside the figure, next to the axes."""
    figures: list[Any] = []

    def keep(fig: Any) -> str:
        figures.append(fig)
        return "<svg/>"

    monkeypatch.setattr(charts, "_svg", keep)
    card = make_scorecard()
    workloads = [card.workloads[0].model_copy(update={"workload": name}), *card.workloads[1:]]
    charts.ratio_chart(workloads, 0.95)
    from matplotlib.backends.backend_svg import RendererSVG

    fig: Any = figures[0]
    fig.set_dpi(72)  # as the SVG is written, with the SVG backend's text metrics
    width, height = fig.get_size_inches() * 72
    renderer = RendererSVG(  # type: ignore[no-untyped-call]  # matplotlib leaves it unannotated
        width, height, io.StringIO())
    fig.draw(renderer)
    ax = fig.axes[0]
    axes_left = ax.get_window_extent(renderer).x0
    for label in ax.get_yticklabels():
        box = label.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= axes_left, label.get_text()


def test_charts_skip_missing_data() -> None:
    card = make_minimal_scorecard()
    assert charts.ratio_chart(card.workloads, 0.95) is None
    assert charts.nccl_chart(card.network) is None
    no_series = make_scorecard().workloads[0].model_copy(update={"step_series": []})
    assert charts.step_time_chart(no_series) is None
    rel = make_scorecard().reliability
    assert rel is not None
    assert charts.incidents_chart(rel.model_copy(update={"incident_series": []})) is None


def test_a_long_step_series_is_drawn_from_its_spikes() -> None:
    """A scorecard written before series were bounded (every step of a long run) draws the
    same chart as its bounded series (cmax/score/series.py)."""
    w = make_scorecard().workloads[0]
    long = [(i, 10.0 + (i % 7) * 0.01) for i in range(10_000)]
    long[5_000] = (5_000, 30.0)
    full = w.model_copy(update={"step_series": long, "window": (35, 44)})
    cut = full.model_copy(update={"step_series": spikes(long)})
    assert len(cut.step_series) <= 1500 and (5_000, 30.0) in cut.step_series
    assert charts.step_time_chart(full) == charts.step_time_chart(cut)


def test_incident_chart_spans_the_period() -> None:
    rel = make_scorecard().reliability
    assert rel is not None
    svg = charts.incidents_chart(rel)
    assert svg is not None
    assert rel.incident_series[0][0] == dt.date(2026, 7, 1)
    assert "Jul" in _svg_texts(svg) and "Sep" in _svg_texts(svg)


# ---------------------------------------------------------------- attachments


def test_findings_csv_neutralises_spreadsheet_formulas() -> None:
    bad = Finding(rule="r", severity="warning", file="=cmd|' /C calc'!A0", line=2,
                  message="+SUM(A1:A9)", fix="@fix")
    card = make_minimal_scorecard(findings=[bad])
    rows = list(csv.reader(io.StringIO(reports.findings_csv(card))))
    assert rows[0] == ["severity", "rule", "file", "line", "run_id", "message", "fix"]
    assert rows[1] == ["warning", "r", "'=cmd|' /C calc'!A0", "2", "", "'+SUM(A1:A9)", "'@fix"]


def _html(card: object) -> str:
    from cmax.scorecard import Scorecard

    assert isinstance(card, Scorecard)
    return reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())


def test_a_gate_without_conclusive_evidence_reads_not_evaluated_never_passed() -> None:
    card = make_scorecard()
    gate = card.gates[0].model_copy(update={
        "passed": False, "status": "not_evaluated", "not_evaluated_cap": "Silver",
        "reason": "not evaluated (no conclusive audit check)"})
    card = card.model_copy(update={"gates": [gate]})
    assert views.gate_state(gate) is State.NOT_EVALUATED
    assert views.failed_gates(card) == [] and views.unevaluated_gates(card) == [gate]
    html = _html(card)
    assert '<span class="chip neutral state-not_evaluated">not evaluated</span>' in html
    assert f"Show conclusive evidence for the “{gate.name}” gate: not evaluated, it caps the " \
        "tier at Silver." in html
    assert "held at Silver by 1 gate (1 not evaluated)" in html


def test_exemplar_line_says_it_covers_performance_only() -> None:
    html = _html(make_strong_scorecard())
    assert "Exemplar (performance only)" in html and "not a recommendation" in html


def test_suspect_nodes_slot_renders_only_when_the_scorecard_has_them() -> None:
    from cmax.price.drivers import card_drivers
    from cmax.scorecard import SuspectNode

    card = make_scorecard()
    assert "Suspect nodes" not in _html(card) and views.suspect_offer(card) is None
    node = SuspectNode(node="gpu-node-07", sources=["nccl/pairs.txt:12"], shortfall_pct=18.0,
                       impact="slows every all-reduce it joins", gpus=8)
    card = card.model_copy(update={"suspect_nodes": [node]})
    offer = views.suspect_offer(card)
    assert offer is not None and offer.gpus == 8
    # GPUs on suspect nodes × quote × hours: 8 × $2.10 × 730 h = $12,264 a month
    assert offer.usd_per_month == 12264.0 and offer.usd_per_term == 12264.0 * 12
    html = _html(card)
    assert "Suspect nodes" in html and "gpu-node-07" in html
    assert "8 GPUs × $2.10 × 730 h = $12,264 a month" in html
    assert any(d.name == "Suspect nodes" for d in card_drivers(card.model_copy(
        update={"price": card.price.model_copy(update={"drivers": []})
                if card.price else None})))
    assert any("Exclude these 1 node(s)" in p.text for p in views.brief_demands(card))


def test_leaderboard_ranks_by_value_when_asked() -> None:
    cards = [(f"s{i}", c) for i, c in enumerate(
        [make_strong_scorecard(), make_scorecard(), make_weak_scorecard(),
         make_minimal_scorecard()])]
    rows = views.leaderboard_rows(cards, "value")
    values = [r.value for r in rows]
    priced = [v for v in values if v is not None]
    assert priced == sorted(priced) and values[len(priced):] == [None] * (len(values) - len(priced))
    assert [r.value_rank for r in rows if r.value is not None] == list(range(1, len(priced) + 1))
    by_tier = views.leaderboard_rows(cards)
    assert {r.slug: r.value_rank for r in by_tier} == {r.slug: r.value_rank for r in rows}


def test_screen_css_scales_the_print_sizes_up_for_reading() -> None:
    """On screen the 8.6 pt print body and its chart labels are too small: the screen media
    rule scales the page so the body reads at 11 pt or more (print is unchanged)."""
    import re as _re

    from tests.paths import REPO

    css = (REPO / "templates" / "report.css").read_text("utf-8")
    body_pt = float(_re.search(r"html \{[^}]*font-size: ([\d.]+)pt", css).group(1))  # type: ignore[union-attr]
    screen = css[css.index("@media screen {"):css.index("@media print {")]
    zoom = float(_re.search(r"zoom: ([\d.]+);", screen).group(1))  # type: ignore[union-attr]
    assert body_pt * zoom >= 11.0
    assert "zoom" not in css[:css.index("@media screen {")]  # the PDF keeps its sizes


def _x_ticks(svg: str) -> list[str]:
    import re

    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    return texts[:texts.index("iteration")]  # the x tick labels come before the axis label


def test_step_chart_ticks_whole_iterations_over_the_steps_printed() -> None:
    """Issue 30: three steps near iteration 1,000 read on a 0-1,000 axis, and a short series
    had ticks at 43.25."""
    w = make_scorecard().workloads[0]
    late = w.model_copy(update={"step_series": [(998, 10.1), (999, 10.0), (1000, 10.2)],
                                "window": (11, 44)})
    ticks = _x_ticks(charts.step_time_chart(late) or "")
    assert ticks and all(t.strip().lstrip("−-").isdigit() for t in ticks), ticks
    assert all(997 <= int(t) <= 1001 for t in ticks), ticks  # not 0, 200, ... 1000
    short = w.model_copy(update={"step_series": [(43, 10.1), (44, 10.0)], "window": (43, 44)})
    ticks = _x_ticks(charts.step_time_chart(short) or "")
    assert ticks and all(t.strip().isdigit() for t in ticks), ticks  # no 43.25
