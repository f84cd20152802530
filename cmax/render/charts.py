"""Report charts as deterministic SVG, drawn with matplotlib (no browser, no pyplot state).

Determinism (research ecosystem.md §3): matplotlib's SVG carries a ``<dc:date>`` and random
clip-path ids unless ``svg.hashsalt`` is fixed and ``metadata={"Date": None}`` is passed;
``svg.fonttype = "none"`` keeps real ``<text>`` (searchable in the PDF, 2x smaller).
``text.parse_math`` is off because bundle text (workload or provider names) containing ``$``
would otherwise be parsed as mathtext and could fail to render. Charts are embedded as
``data:`` URI images: inline SVG in HTML collides on ids and floods WeasyPrint's log.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import math
import re
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any

from cmax.reading.safetext import one_line
from cmax.render.formatting import TIER_COLOURS, run_label, twin_logs
from cmax.score.series import spikes
from cmax.scorecard import (
    InferenceResult,
    NetworkResult,
    ReliabilityResult,
    Scorecard,
    WorkloadResult,
)

RC: Any = {  # Any: matplotlib types rcParams keys as a Literal union
    "svg.fonttype": "none",
    "svg.hashsalt": "cmax-report",
    "text.parse_math": False,
    "font.family": "DejaVu Sans",
    "font.size": 8.0,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8.0,
    "legend.fontsize": 7.0,
    "xtick.labelsize": 7.0,
    "ytick.labelsize": 7.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#555555",
    "axes.grid": True,
    "grid.color": "#e3e3e3",
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.3,
    "path.simplify": True,
}

INK = "#222222"
MUTED = "#777777"
ACCENT = "#1f5f99"
VERDICT_COLOURS = {
    "pass": "#2e7d32", "fail": "#c62828", "inconclusive": "#e0a100",
    "not_comparable": "#777777", "no_reference": "#777777",
}
SERIES_COLOURS = ("#1f5f99", "#d9822b", "#2e7d32", "#8e44ad", "#c62828", "#16a085")
WIDTH_IN = 6.6


@contextmanager
def _figure(
    width: float, height: float, margins: tuple[float, float, float, float] | None = None
) -> Iterator[Any]:
    """A figure with constrained layout (for text labels of unknown length) or, when the
    labels are numbers, fixed ``margins`` in inches (left, right, bottom, top): constrained
    layout costs about a third of a second per chart."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(RC):
        if margins is None:
            yield Figure(figsize=(width, height), layout="constrained")
            return
        left, right, bottom, top = margins
        fig = Figure(figsize=(width, height))
        fig.subplots_adjust(left=left / width, right=1 - right / width,
                            bottom=bottom / height, top=1 - top / height)
        yield fig


def one_line_texts(fig: Any) -> None:
    """Every text of a figure (titles, tick labels, legend entries) through
    :func:`cmax.reading.safetext.one_line` before it is written: a raw control character is no
    valid XML, and a provider name holding ESC made the leaderboard's SVG unreadable."""
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    for text in fig.findobj(Text):
        shown = text.get_text()
        if not (shown.isascii() and shown.isprintable()):
            text.set_text(one_line(shown))
    # tick labels are made only as the figure is drawn: their formatter is what holds them
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for formatter in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if isinstance(formatter, FixedFormatter):
                    formatter.seq = [one_line(str(label)) for label in formatter.seq]
                elif isinstance(formatter, FuncFormatter):
                    formatter.func = _one_line_func(formatter.func)


def _one_line_func(func: Any) -> Any:
    def shown(value: float, pos: int | None = None) -> str:
        return one_line(str(func(value, pos)))
    return shown


def _svg(fig: Any) -> str:
    import matplotlib

    one_line_texts(fig)
    buf = io.BytesIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "cmax"})
    return lean_svg(buf.getvalue().decode("utf-8"))


_SVG = "http://www.w3.org/2000/svg"
_NS0_TAG = re.compile(r"(</?)ns0:")
_NO_ROTATION = re.compile(r"rotate\(-?0 [-0-9.e]+ [-0-9.e]+\)")


def lean_svg(svg: str) -> str:
    """The same drawing in about half the elements, for WeasyPrint draws every SVG node in
    Python: matplotlib wraps each artist in a ``<g id=...>`` that carries nothing else (its
    children are kept, in order, where it was), tags text with a null rotation and writes an
    RDF ``<metadata>`` block no renderer reads."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg)
    referenced = set(re.findall(r"#([^\s)\"']+)", svg))

    def unwrap(parent: ET.Element) -> None:
        kept: list[ET.Element] = []
        for child in parent:
            unwrap(child)
            if child.tag == f"{{{_SVG}}}metadata":
                continue
            if child.tag == f"{{{_SVG}}}g" and set(child.attrib) <= {"id"} \
                    and child.get("id") not in referenced:
                kept.extend(child)
                continue
            if _NO_ROTATION.fullmatch(child.get("transform", "")):
                del child.attrib["transform"]
            kept.append(child)
        parent[:] = kept

    unwrap(root)
    # ElementTree names the SVG namespace ns0 (the only other one, xlink, gets ns1); tags are
    # the only places a "<" can precede it, for text and attribute values are escaped
    text = ET.tostring(root, encoding="unicode")
    return _NS0_TAG.sub(r"\1", text).replace(f'xmlns:ns0="{_SVG}"', f'xmlns="{_SVG}"', 1)


def data_uri(svg: str) -> str:
    """The SVG as a ``data:`` URI, the only kind of image the PDF fetcher serves."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def _text_width_in(texts: Sequence[str], size: float) -> float:
    """The widest of ``texts`` in inches at ``size`` points, measured as matplotlib lays out
    text (plain text: labels are never mathtext)."""
    import matplotlib
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    with matplotlib.rc_context(RC):
        prop = FontProperties(size=size)
        widths = [text_to_path.get_text_width_height_descent(t, prop, ismath=False)[0]
                  for t in texts]
    return max(widths, default=0.0) / 72


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _value(value: float | None, default: float) -> float:
    return value if value is not None and math.isfinite(value) else default


def _label(w: WorkloadResult) -> str:
    return run_label(w)


ANNOTATION_PT = 7
"""The size of the value printed beside each bar of the ratio chart."""
ANNOTATION_GAP_PT = 5
"""Its distance from the end of the bar."""


def _right_limit(left: float, right: float, highs: Sequence[float], texts: Sequence[str],
                 plot_in: float) -> float:
    """The axis's right end at which every bar's annotation fits inside the plot: the text
    starts ``ANNOTATION_GAP_PT`` after the bar's end and takes its measured width, so
    (right − high) ÷ (right − left) × plot width ≥ the text's inches, solved for right. A
    152.7 % bar's label ran past a limit set 0.03 beyond the bar and was cut."""
    for high, text in zip(highs, texts, strict=True):
        need = (ANNOTATION_GAP_PT / 72 + _text_width_in([text], ANNOTATION_PT)) / plot_in
        if need < 1:
            right = max(right, (high - left * need) / (1 - need))
    return right


def ratio_chart(workloads: Sequence[WorkloadResult], bar: float,
                withheld: Collection[str] = ()) -> str | None:
    """Throughput ratio to reference per run, with its 95% CI, the bar and parity. A run
    whose id is in ``withheld`` (its judgement withholds its pass) says so beside its value;
    two runs that would read the same are told apart by their logs' file names."""
    shown = [(w, log) for w, log in zip(workloads, twin_logs(workloads), strict=True)
             if _finite(w.ratio)]
    if not shown:
        return None
    shown.reverse()  # first workload on top
    rows = [w for w, _ in shown]
    values = [_value(w.ratio, 0.0) for w in rows]
    lows = [_value(w.ci_low, v) for w, v in zip(rows, values, strict=True)]
    highs = [_value(w.ci_high, v) for w, v in zip(rows, values, strict=True)]
    texts = [f"{v:.1%}" + (" withheld" if w.run_id in withheld else "")
             for w, v in zip(rows, values, strict=True)]
    labels = [_label(w) + (f" · {PurePosixPath(log).name}" if log else "") for w, log in shown]
    # the margins constrained layout would find (labels, tick pads, legend above, axis label
    # below), computed from the labels' width instead: it took a third of this chart's time.
    # Like it, a long label squeezes the plot, down to 0.85 in, before it is cut.
    margin = min(_text_width_in(labels, RC["ytick.labelsize"]) + 0.14, WIDTH_IN - 0.9)
    left = min([*lows, bar, 1.0]) - 0.03
    top = max([*highs, bar, 1.0]) + 0.03
    # half the widest percent tick label: a tick at the axis's right end is centred on it
    right_margin = max(0.042, _text_width_in([f"{top * 1.5:.0%}"], RC["xtick.labelsize"]) / 2)
    right = _right_limit(left, top, highs, texts, WIDTH_IN - margin - right_margin)
    with _figure(WIDTH_IN, 0.55 + 0.38 * len(rows),
                 margins=(margin, right_margin, 0.403, 0.265)) as fig:
        ax = fig.subplots()
        ax.axvline(1.0, color=INK, linewidth=0.9, label="reference (100%)")
        ax.axvline(bar, color=VERDICT_COLOURS["fail"], linewidth=0.9, linestyle="--",
                   label=f"pass bar ({bar:.0%})")
        for i, w in enumerate(rows):
            colour = VERDICT_COLOURS.get(w.verdict, MUTED)
            ax.errorbar([values[i]], [i], xerr=[[values[i] - lows[i]], [highs[i] - values[i]]],
                        fmt="o", color=colour, ecolor=colour, elinewidth=2.2, capsize=3,
                        markersize=4.5)
            ax.annotate(texts[i], (highs[i], i), xytext=(ANNOTATION_GAP_PT, 0),
                        textcoords="offset points", va="center", fontsize=ANNOTATION_PT,
                        color=INK)
        ax.set_yticks(range(len(rows)), labels)
        ax.set_xlim(left, right)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.xaxis.set_major_formatter(_percent_formatter())
        ax.set_xlabel("throughput ÷ reference (95% confidence interval)")
        ax.grid(axis="y", visible=False)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=2, frameon=False)
        return _svg(fig)


STEP_PLOT_MAX_S = 1e9


def step_time_chart(w: WorkloadResult) -> str | None:
    """Step time over the run: warm-up, the steady-state window and the reference step time."""
    # no real step takes 30 years: clipping keeps matplotlib's axis arithmetic finite when a
    # log claims 1e308 s (such a step is off the scale either way)
    points = [(x, min(y, STEP_PLOT_MAX_S)) for x, y in spikes(w.step_series)]
    if not points:
        return None
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    with _figure(WIDTH_IN / 2, 2.35, margins=(0.45, 0.08, 0.85, 0.25)) as fig:
        from matplotlib.ticker import MaxNLocator

        ax = fig.subplots()
        # the axis spans the steps printed, never a window or an origin beyond them (3 steps
        # near iteration 1,000 drawn on a 0-1,000 axis), and iterations are whole numbers
        low, high = min(xs), max(xs)
        pad = max(0.5, (high - low) * 0.02)
        ax.set_xlim(low - pad, high + pad)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
        if w.window is not None and w.window[0] <= high and w.window[1] >= low:
            ax.axvspan(max(w.window[0], low - pad), min(w.window[1], high + pad),
                       color="#dbe8f5", linewidth=0, label="steady-state window")
        ax.plot(xs, ys, color=ACCENT, linewidth=1.0, label="step time")
        if _finite(w.mean_step_time_s):
            ax.axhline(float(w.mean_step_time_s or 0), color=ACCENT, linewidth=0.8,
                       linestyle=":", label=f"window mean {w.mean_step_time_s:.2f} s")
        ref = w.baseline.step_time_s if w.baseline else None
        if ref is not None and _finite(ref):
            ax.axhline(ref, color=INK, linewidth=0.9, linestyle="--",
                       label=f"reference {ref:.2f} s")
        steady = [y for x, y in points if w.window is None or w.window[0] <= x <= w.window[1]]
        top = max(steady or ys) * 1.25
        bottom = min([*(steady or ys), ref if ref and _finite(ref) else math.inf]) * 0.9
        ax.set_ylim(max(0.0, bottom), top)
        clipped = sum(1 for y in ys if y > top)
        if clipped:
            # warm-up steps can be 3x the steady state; showing them would flatten the rest
            ax.annotate(f"↑ {clipped} warm-up step{'s' if clipped > 1 else ''} off the scale",
                        (0.99, 0.97), xycoords="axes fraction", ha="right", va="top",
                        fontsize=6, color=MUTED)
        ax.set_title(_label(w), loc="left")
        ax.set_xlabel("iteration")
        ax.set_ylabel("step time (s)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.45, -0.3), ncols=2, frameon=False,
                  fontsize=6)
        return _svg(fig)


def _percent_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _pos: f"{value * 100:.0f}%")


def _bytes_label(size: float) -> str:
    for unit in ("B", "K", "M", "G", "T"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.0f}{unit}"
        size /= 1024
    return f"{size:.0f}P"


def nccl_chart(network: Sequence[NetworkResult]) -> str | None:
    """Bus bandwidth against message size for every nccl-tests sweep, with the fabric reference."""
    series = [(n, [(s, b) for s, b in n.series if s > 0 and _finite(b)]) for n in network]
    series = [(n, pts) for n, pts in series if pts]
    if not series:
        return None
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    with _figure(WIDTH_IN, 2.6, margins=(0.55, 0.1, 0.45, 0.1)) as fig:
        ax = fig.subplots()
        ax.set_xscale("log", base=2)
        lo = min(s for _, pts in series for s, _ in pts)
        hi = max(s for _, pts in series for s, _ in pts)
        for i, (n, pts) in enumerate(series):
            colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=2.2,
                    color=colour, label=f"{n.collective} · {n.nodes} nodes / {n.ranks} ranks")
            if n.reference_busbw_gbps is not None and _finite(n.reference_busbw_gbps):
                ax.axhline(n.reference_busbw_gbps, color=colour, linestyle="--", linewidth=0.8,
                           label=f"reference {n.reference_busbw_gbps:.0f} GB/s")
        ticks = [2.0 ** k for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1, 3)]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: _bytes_label(v)))
        ax.set_xlabel("message size")
        ax.set_ylabel("bus bandwidth (GB/s)")
        refs = [n.reference_busbw_gbps or 0.0 for n, _ in series]
        peak = max([b for _, pts in series for _, b in pts] + refs)
        ax.set_ylim(0, peak * 1.12)
        ax.legend(loc="center left", frameon=False)
        return _svg(fig)


def serving_chart(results: Sequence[InferenceResult]) -> str | None:
    """Output tokens/s per GPU against interactivity (tokens/s per user) for every serving
    sweep, with the reference curve it was compared on (dashed) or, without one, the
    reference's offline maximum (dotted: a ceiling measured with no latency target)."""
    series = [(r, sorted((p.interactivity, p.output_tok_s_per_gpu) for p in r.points
                         if p.interactivity is not None and _finite(p.interactivity)
                         and _finite(p.output_tok_s_per_gpu)))
              for r in results]
    series = [(r, pts) for r, pts in series if pts]
    if not series:
        return None
    with _figure(WIDTH_IN, 2.5, margins=(0.6, 0.1, 0.45, 0.1)) as fig:
        ax = fig.subplots()
        peak = 0.0
        for i, (r, pts) in enumerate(series):
            colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", markersize=3,
                    color=colour, label=f"{r.model} {r.precision} · {r.gpus} GPU"
                    f"{'s' if r.gpus != 1 else ''} ({r.tool})")
            peak = max(peak, *(y for _, y in pts))
            curve = [(c.interactivity, c.output_tok_s_per_gpu) for c in r.reference_curve]
            if curve:
                ax.plot([x for x, _ in curve], [y for _, y in curve], color=colour,
                        linestyle="--", linewidth=0.9, marker="x", markersize=2.5,
                        label="reference curve")
                peak = max(peak, *(y for _, y in curve))
            elif r.reference_tok_s_per_gpu is not None and _finite(r.reference_tok_s_per_gpu):
                ax.axhline(r.reference_tok_s_per_gpu, color=colour, linestyle=":",
                           linewidth=0.9, label=f"reference offline maximum "
                           f"{r.reference_tok_s_per_gpu:,.0f} (no latency target)")
                peak = max(peak, r.reference_tok_s_per_gpu)
        ax.set_xlabel("interactivity (output tokens/s per user = 1000 / mean TPOT ms)")
        ax.set_ylabel("output tokens/s per GPU")
        ax.set_xlim(left=0)
        ax.set_ylim(0, peak * 1.45)
        ax.legend(loc="upper right", frameon=False, ncols=2)
        return _svg(fig)


def incidents_chart(rel: ReliabilityResult) -> str | None:
    """Unexpected interruptions per day over the reporting period."""
    points = sorted(rel.incident_series)
    if not points:
        return None
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as MplPath
    from matplotlib.ticker import MaxNLocator

    with _figure(WIDTH_IN, 2.0, margins=(0.55, 0.1, 0.3, 0.1)) as fig:
        ax = fig.subplots()
        ax.xaxis_date()
        # every bar in one path: a quarter of daily bars as separate patches is slow to draw
        vertices: list[tuple[float, float]] = []
        codes: list[Any] = []
        for day, count in points:
            if count <= 0:
                continue
            x = float(date2num(day)) - 0.42  # type: ignore[no-untyped-call]
            vertices += [(x, 0.0), (x + 0.84, 0.0), (x + 0.84, count), (x, count), (x, 0.0)]
            codes += [MplPath.MOVETO, *[MplPath.LINETO] * 3, MplPath.CLOSEPOLY]
        if vertices:
            ax.add_patch(PathPatch(MplPath(vertices, codes), facecolor="#c0623b", linewidth=0))
        locator = AutoDateLocator(minticks=4, maxticks=8)  # type: ignore[no-untyped-call]
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(
            ConciseDateFormatter(locator, show_offset=False))  # type: ignore[no-untyped-call]
        ax.set_xlim(rel.period_start - dt.timedelta(days=1), rel.period_end + dt.timedelta(days=1))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(0, max(1, max(p[1] for p in points)) * 1.15)
        ax.set_ylabel("interruptions / day")
        ax.grid(axis="x", visible=False)
        return _svg(fig)


def score_chart(cards: Sequence[Scorecard], labels: Sequence[str]) -> str | None:
    """Leaderboard: weighted score per provider, coloured by tier."""
    if not cards:
        return None
    rows = list(reversed(list(zip(cards, labels, strict=True))))
    with _figure(5.2, 0.6 + 0.32 * len(rows)) as fig:
        ax = fig.subplots()
        for i, (card, _label_text) in enumerate(rows):
            ax.barh(i, card.score, color=TIER_COLOURS.get(card.tier, MUTED), height=0.62)
            ax.annotate(f"{card.score:.1f} · {card.tier}", (card.score, i), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=7)
        ax.set_yticks(range(len(rows)), [lab for _, lab in rows])
        ax.set_xlim(0, 112)
        ax.set_xlabel("weighted score before gates (0-100)")
        ax.grid(axis="y", visible=False)
        return _svg(fig)


def price_chart(cards: Sequence[Scorecard], labels: Sequence[str]) -> str | None:
    """Leaderboard: quoted price against the ask in $/GPU-hour."""
    rows = [(c, lab) for c, lab in zip(cards, labels, strict=True)
            if c.price is not None and _finite(c.price.quoted_usd_per_gpu_hour)]
    if not rows:
        return None
    rows.reverse()
    with _figure(5.2, 0.7 + 0.36 * len(rows)) as fig:
        ax = fig.subplots()
        for i, (card, _lab) in enumerate(rows):
            advice = card.price
            assert advice is not None
            ax.barh(i + 0.18, advice.quoted_usd_per_gpu_hour, height=0.34, color="#b9c6d3",
                    label="quoted" if i == 0 else None)
            rec = advice.ask_usd_per_gpu_hour
            if rec is not None and _finite(rec):
                ax.barh(i - 0.18, rec, height=0.34, color=ACCENT,
                        label="ask" if i == 0 else None)
                ax.annotate(f"${rec:.2f}", (rec, i - 0.18), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=6.5)
            ax.annotate(f"${advice.quoted_usd_per_gpu_hour:.2f}",
                        (advice.quoted_usd_per_gpu_hour, i + 0.18), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=6.5)
        ax.set_yticks(range(len(rows)), [lab for _, lab in rows])
        ax.set_xlim(left=0)
        ax.margins(x=0.12)
        ax.set_xlabel("USD per GPU-hour")
        ax.grid(axis="y", visible=False)
        fig.legend(loc="outside upper right", ncols=2, frameon=False)
        return _svg(fig)
