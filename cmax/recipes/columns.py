"""What a reference recipe fixes about a run: the configuration columns a run is compared on.

The runs table (:mod:`cmax.ingest.evidence`) and the reference baselines
(:mod:`cmax.reference.baselines`) carry these columns in this order, so a run and its baseline
are compared column by column. Both the reference and the evidence read it here, neither from
the other.
"""

from __future__ import annotations

import polars as pl

RECIPE_SCHEMA: dict[str, pl.DataType] = {
    "seq_len": pl.Int64(),
    "gbs": pl.Int64(),
    "mbs": pl.Int64(),
    "tp": pl.Int64(),
    "pp": pl.Int64(),
    "cp": pl.Int64(),
    "ep": pl.Int64(),
    "vp": pl.Int64(),
}
"""The recipe configuration a run is compared on (sequence length, batch sizes, parallel
layout): the same columns, in the same order, in the runs table and the reference baselines."""
