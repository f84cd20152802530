"""Deterministic SVG charts for the trend reports, embedded as ``data:`` URIs.

Reports must be byte-identical for identical inputs, so every chart is drawn on a fresh
``Figure`` (no pyplot global state) with text kept as text (``svg.fonttype = none``), a fixed
``svg.hashsalt`` for element ids and no date in the metadata.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cmax.render.charts import RC, data_uri, one_line_texts

PALETTE = ("#1f5fa8", "#d2691e", "#2e8b57", "#8b3a8b", "#b22222", "#4682b4", "#8b8000",
           "#556b2f", "#cd5c5c", "#2f4f4f")

# the report charts' settings (text kept as text, no math parsing of labels, DejaVu Sans),
# with the trend reports' own id salt
_RC: Any = {**RC, "svg.hashsalt": "cmax-trend", "legend.frameon": False}


@dataclass(frozen=True)
class Series:
    """One line over time, optionally with a confidence band."""

    label: str
    dates: Sequence[dt.date]
    values: Sequence[float]
    low: Sequence[float | None] | None = None
    high: Sequence[float | None] | None = None


def _render(fig: Any) -> str:
    one_line_texts(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return data_uri(buf.getvalue())


def _figure(width: float, height: float) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def _date_axis(ax: Any) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    formatter = mdates.ConciseDateFormatter(locator)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_formatter(formatter)


def ratio_chart(series: Sequence[Series], *, bar: float | None, legend: bool = True,
                ylabel: str = "throughput ÷ reference", wide: bool = True) -> str:
    """Ratio over time with its 95% CI band, per series; the pass bar as a dashed line."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig, ax = _figure(10.0, 3.0) if wide else _figure(5.2, 2.6)
        for i, s in enumerate(series):
            color = PALETTE[i % len(PALETTE)]
            if s.low is not None and s.high is not None:
                band = [(d, lo, hi) for d, lo, hi in zip(s.dates, s.low, s.high, strict=True)
                        if lo is not None and hi is not None]
                if band:
                    ax.fill_between([b[0] for b in band], [b[1] for b in band],
                                    [b[2] for b in band], color=color, alpha=0.18, linewidth=0)
            ax.plot(list(s.dates), list(s.values), marker="o", markersize=2.5, linewidth=1.2,
                    color=color, label=s.label)
        if bar is not None:
            ax.axhline(bar, color="#b22222", linestyle="--", linewidth=0.8,
                       label=f"pass bar {bar:.0%}")
        ax.axhline(1.0, color="#888888", linestyle=":", linewidth=0.8)
        ax.set_ylabel(ylabel)
        _date_axis(ax)
        if legend and series:
            # above the axes: inside, it covers the lines near the pass bar
            ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=7, ncols=4)
        return _render(fig)


def step_chart(dates: Sequence[dt.date], levels: Sequence[int], labels: Sequence[str]) -> str:
    """Tier history: a step line on categorical levels (0 = best, at the top)."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig, ax = _figure(5.2, 2.4)
        ax.step(list(dates), list(levels), where="post", color=PALETTE[0], linewidth=1.4)
        ax.plot(list(dates), list(levels), "o", markersize=2.5, color=PALETTE[0])
        ax.set_yticks(range(len(labels)), labels=list(labels))
        ax.set_ylim(len(labels) - 0.5, -0.5)
        _date_axis(ax)
        return _render(fig)


def bar_chart(labels: Sequence[str], values: Sequence[float], *, ylabel: str,
              line: float | None = None, ylim: tuple[float, float] | None = None,
              colors: Sequence[str] | None = None, integer: bool = False) -> str:
    """Per-month bars (incidents, uptime), optionally with a reference line."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig, ax = _figure(5.2, 2.4)
        x = list(range(len(labels)))
        ax.bar(x, list(values), color=list(colors) if colors else PALETTE[0], width=0.7)
        step = max(1, len(labels) // 12)
        ax.set_xticks(x[::step], labels=list(labels)[::step], rotation=45, ha="right")
        if line is not None:
            ax.axhline(line, color="#b22222", linestyle="--", linewidth=0.8)
        if ylim is not None:
            ax.set_ylim(*ylim)
        if integer:
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(ylabel)
        ax.grid(axis="x", visible=False)
        return _render(fig)
