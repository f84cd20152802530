"""What every rule family reads: the resolved case, one view per run.

The case (:mod:`cmax.resolve.case`) already holds everything the rules need: the tables conformed to
the canonical schemas (missing columns and uncastable values become nulls; the schema rules
report both), and per run its manifest entry, its steps in file order, its clean steps, its
matched reference baseline and its steady-state window. The rules read only that: no rule opens
a file or matches a baseline again.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import polars as pl

from cmax.findings import Finding
from cmax.reading.coerce import as_int
from cmax.reference.view import RefView
from cmax.resolve.case import CONFIG_FIELDS as CONFIG_FIELDS
from cmax.resolve.case import TABLES as TABLES
from cmax.resolve.case import Case
from cmax.resolve.case import norm_path as norm_path
from cmax.resolve.case import safe_conform as safe_conform
from cmax.resolve.runs import ResolvedRun
from cmax.submission.manifest import MANIFEST_NAME, Manifest, RunSpec
from cmax.validate.registry import finding

#: One training run as the rules see it: the case's resolved run.
RunView = ResolvedRun


@dataclass(frozen=True)
class Context:
    """The case and a null-returning view of the reference, for the rule families."""

    evidence: Case
    ref: RefView
    tables: Mapping[str, pl.DataFrame]
    runs: tuple[ResolvedRun, ...]
    manifest_file: str = MANIFEST_NAME
    gpu: str = ""

    @property
    def manifest(self) -> Manifest:
        return self.evidence.manifest

    @property
    def case(self) -> Case:
        return self.evidence


def build_context(case: Case, ref: RefView) -> Context:
    return Context(evidence=case, ref=ref, tables=case.tables, runs=case.resolved,
                   gpu=case.manifest.system.gpu.strip().lower())


def unmatched_specs(ctx: Context) -> list[tuple[int, RunSpec]]:
    """Manifest [[runs]] entries that no ingested run came from."""
    used = {v.spec_index for v in ctx.runs if v.spec_index is not None}
    return [(i, spec) for i, spec in enumerate(ctx.manifest.runs) if i not in used]


def finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def fmt_iters(iterations: list[int], limit: int = 12) -> str:
    """Compact list of iteration numbers: 3, 7-9, 12."""
    nums = sorted(set(iterations))
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    text = ", ".join(parts[:limit])
    return text + (", ..." if len(parts) > limit else "")


def run_finding(rule_id: str, view: RunView, message: str, *, line: int | None = None,
                fix: str | None = None) -> Finding:
    """A finding about one run: points at its log and carries its run id."""
    return finding(rule_id, f"run {view.run_id}: {message}", file=view.file, line=line,
                   run_id=view.run_id, fix=fix)


def print_resolution(values: pl.Series | Sequence[float] | np.ndarray) -> float:
    """Smallest decimal step the values were printed with (0.01 for 12.34 and 12.3).

    A value is on the grid of step q when v / q is within 1e-6 (relative, at least absolute)
    of a whole number; a value too large to scale (1e308 / 0.1) carries no decimals worth
    resolving. Array-wise: a long run has millions of step times. (Python's round-half-even
    and Polars' rounding differ only at exact halves, where both are 0.5 away.)"""
    v = (values.cast(pl.Float64).to_numpy() if isinstance(values, pl.Series)
         else np.asarray(values, dtype=np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        for digits in range(7):
            x = v / 10.0 ** -digits
            on_grid = ~np.isfinite(x) | (np.abs(x - np.round(x))
                                         < np.maximum(np.abs(x), 1.0) * 1e-6)
            if bool(on_grid.all()):
                return 10.0 ** -digits
    return 1e-7


RECIPE_FIELDS = ("gbs", "seq_len", "mbs", "tp", "pp", "cp", "ep", "vp")
"""The configuration values the consistency rules need; unstated ones come from the recipe."""


def under_recipe(view: RunView) -> tuple[RunView, list[str]]:
    """The run with every configuration value neither the log nor cmax.toml states filled in,
    and what was assumed.

    The GBS the log prints on its iteration lines counts as stated. Everything else comes from
    the matched reference row (the recipe NVIDIA measured), and only when that row is for the
    run's own GPU count: a recipe's GBS and layout scale with it.
    """
    base = view.baseline
    fill: dict[str, int] = {}
    assumed: list[str] = []
    same_scale = base is not None and base.num_gpus in (None, view.get_int("num_gpus"))
    for name in RECIPE_FIELDS:
        if view.get(name) is not None:
            continue
        if name == "gbs" and view.logged_gbs:
            fill[name] = view.logged_gbs[0][1]
            continue
        value = as_int(getattr(base, name, None)) if same_scale else None
        if value is not None:
            fill[name] = value
            assumed.append(f"{name} {value}")
    if not fill:
        return view, []
    return dataclasses.replace(view, row=MappingProxyType({**view.row, **fill})), assumed
