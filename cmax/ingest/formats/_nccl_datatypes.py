"""Which datatype of an nccl-tests sweep is rated, when a run measured several.

``all_reduce_perf -d all`` repeats the sweep once per datatype (NVIDIA/nccl-tests
``src/common.cu``: ``test_typenames`` int8 ... bfloat16, f8e4m3, f8e5m2). Bus bandwidth
differs between them (8-bit types run other kernels), so taking the best datatype at each size
would compare a number no baseline was measured with. Every network baseline in
``reference/network.toml`` is an nccl-tests run with its default datatype, ``float``
(``ncclstringtotype`` falls back to it; ``-d`` defaults to it), so that datatype is rated and the
others are shown beside it.
"""

from __future__ import annotations

import polars as pl

BASELINE_DATATYPE = "float"


def rated_rows(rows: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The rows of the rated datatype, and a note naming it and the others' best bus bandwidth.

    One datatype (the usual case) returns the rows untouched and no note.
    """
    if "dtype" not in rows.columns:
        return rows, []
    types = [str(t) for t in rows["dtype"].drop_nulls().unique(maintain_order=True).to_list()]
    if len(types) <= 1:
        return rows, []
    rated = BASELINE_DATATYPE if BASELINE_DATATYPE in types else types[0]
    why = ("the datatype the baselines were measured with, nccl-tests' default"
           if rated == BASELINE_DATATYPE else
           f"the first in the file: no {BASELINE_DATATYPE} rows, so no baseline measured it")
    oop = rows.filter((pl.col("in_place").not_() | pl.col("in_place").is_null())
                      & pl.col("busbw_gbps").is_finite())
    others = []
    for dtype in types:
        if dtype == rated:
            continue
        mine = oop.filter(pl.col("dtype") == dtype)
        if mine.is_empty():
            continue
        size = int(mine["size_bytes"].max())  # type: ignore[arg-type]
        best = float(mine.filter(pl.col("size_bytes") == size)["busbw_gbps"].max())  # type: ignore[arg-type]
        others.append(f"{dtype} {best:g}")
    note = (f"{len(types)} datatypes measured: rated on {rated} ({why}); the others, "
            "out-of-place bus bandwidth in GB/s at their largest size (shown, not rated): "
            + ", ".join(others))
    return rows.filter(pl.col("dtype") == rated), [note]
