"""The pair-bandwidth heatmap: which node pairs are slow, at a glance.

A buyer's pairwise nccl-tests pass produces one bus-bandwidth figure per node pair; laid out as
a matrix, a bad node shows as a cross of low cells through its row and column. The chart reads
only the scorecard (``Scorecard.network_pairs`` and ``suspect_nodes``) and uses the report
charts' matplotlib settings, so it renders byte-identically every time and labels are never
parsed as math. Encode it with :func:`cmax.render.charts.data_uri` for the report.
"""

from __future__ import annotations

import math
import statistics

from cmax.render.charts import INK, WIDTH_IN, _figure, _svg
from cmax.scorecard import Scorecard

MAX_ANNOTATED = 16  # beyond this many nodes the cells are too small for numbers
SUSPECT = "#c62828"


def pair_matrix(card: Scorecard) -> tuple[list[str], list[list[float | None]]]:
    """Hosts (sorted) and the symmetric matrix of median bus bandwidth per 2-node pair."""
    values: dict[tuple[str, str], list[float]] = {}
    for pair in card.network_pairs:
        if len(pair.hosts) != 2 or not math.isfinite(pair.busbw_gbps):
            continue
        a, b = sorted(pair.hosts)
        values.setdefault((a, b), []).append(pair.busbw_gbps)
    hosts = sorted({h for key in values for h in key})
    index = {h: i for i, h in enumerate(hosts)}
    matrix: list[list[float | None]] = [[None] * len(hosts) for _ in hosts]
    for (a, b), vals in values.items():
        med = statistics.median(vals)
        matrix[index[a]][index[b]] = matrix[index[b]][index[a]] = med
    return hosts, matrix


def pair_heatmap_svg(card: Scorecard) -> str | None:
    """The heatmap as SVG text, or None when the scorecard holds fewer than three node pairs."""
    hosts, matrix = pair_matrix(card)
    cells = [v for row in matrix for v in row if v is not None]
    if len(hosts) < 3 or len(cells) < 6:  # three pairs (each counted twice) at least
        return None
    import numpy as np

    grid = np.array([[math.nan if v is None else v for v in row] for row in matrix])
    suspects = {s.node for s in card.suspect_nodes}
    side = min(WIDTH_IN, 1.6 + 0.38 * len(hosts))
    with _figure(side + 1.0, side) as fig:
        ax = fig.subplots()
        ax.grid(False)
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdYlGn", vmin=0.0,
                          vmax=max(cells), interpolation="nearest")
        ax.set_xticks(range(len(hosts)), labels=hosts, rotation=90)
        ax.set_yticks(range(len(hosts)), labels=hosts)
        for axis_labels in (ax.get_xticklabels(), ax.get_yticklabels()):
            for label in axis_labels:
                if label.get_text() in suspects:
                    label.set_color(SUSPECT)
                    label.set_fontweight("bold")
        if len(hosts) <= MAX_ANNOTATED:
            for i, row in enumerate(matrix):
                for j, value in enumerate(row):
                    if value is not None:
                        ax.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=6.0,
                                color=INK)
        bar = fig.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label("bus bandwidth (GB/s)")
        ax.set_title("nccl-tests bus bandwidth per node pair"
                     + (" (suspect nodes in red)" if suspects else ""))
        return _svg(fig)
