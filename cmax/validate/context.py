"""What every rule family reads: the evidence tables made safe to query, one view per run.

Rules must run on evidence that is itself wrong (that is their job), so the tables are first
conformed to the canonical schemas (missing columns become nulls, uncastable values become
nulls; the schema rules report both) and each run is paired with its manifest entry, its steps
in file order, its matched reference baseline and its steady-state window.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl

from cmax.coerce import as_float, as_int
from cmax.evidence import (
    AUDIT_SCHEMA,
    INCIDENTS_SCHEMA,
    MLPERF_SCHEMA,
    NCCL_SCHEMA,
    RUNS_SCHEMA,
    STEPS_SCHEMA,
    Evidence,
)
from cmax.findings import Finding
from cmax.manifest import MANIFEST_NAME, Manifest, RunSpec
from cmax.validate.refview import RefView
from cmax.validate.registry import finding
from cmax.window import Window, steady_state_window

CONFIG_FIELDS = ("gbs", "seq_len", "mbs", "tp", "pp", "cp", "ep", "vp")

TABLES: dict[str, dict[str, pl.DataType]] = {
    "runs": RUNS_SCHEMA,
    "steps": STEPS_SCHEMA,
    "nccl": NCCL_SCHEMA,
    "incidents": INCIDENTS_SCHEMA,
    "audit_checks": AUDIT_SCHEMA,
    "mlperf": MLPERF_SCHEMA,
}


def safe_conform(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Canonical columns in canonical order; extra columns kept; bad casts become null."""
    cols = [
        (pl.col(name).cast(dtype, strict=False) if name in frame.columns
         else pl.lit(None, dtype=dtype)).alias(name)
        for name, dtype in schema.items()
    ]
    extra = [pl.col(c) for c in frame.columns if c not in schema]
    return frame.select(cols + extra)


def norm_path(path: str | None) -> str:
    if not path:
        return ""
    return PurePosixPath(path.replace("\\", "/")).as_posix().removeprefix("./")


@dataclass
class RunView:
    """One training run as the rules see it."""

    run_id: str
    row: dict[str, Any]
    file: str | None
    spec: RunSpec | None
    spec_index: int | None
    steps: pl.DataFrame
    baseline: dict[str, Any] | None = None
    baseline_exact: bool = False
    window: Window = field(default_factory=lambda: steady_state_window(None, None))

    def get(self, name: str) -> Any:
        """A run attribute: the ingested value, else the manifest's declared value."""
        value = self.row.get(name)
        if value is None and self.spec is not None:
            value = getattr(self.spec, name, None)
        return value

    def get_int(self, name: str) -> int | None:
        return as_int(self.get(name))

    def get_str(self, name: str) -> str | None:
        value = self.get(name)
        return None if value is None else str(value).strip().lower()

    def clean_steps(self) -> pl.DataFrame:
        """Steps with a finite, positive step time, first occurrence of each iteration."""
        frame = self.steps.filter(
            pl.col("step_time_s").is_not_null()
            & pl.col("step_time_s").is_finite()
            & (pl.col("step_time_s") > 0)
            & pl.col("iteration").is_not_null()
        )
        return frame.unique(subset="iteration", keep="first", maintain_order=True).sort(
            "iteration")

    def window_steps(self) -> pl.DataFrame:
        steps = self.clean_steps()
        return steps.filter(pl.col("iteration").is_between(self.window.first, self.window.last))

    def summary(self) -> pl.DataFrame | None:
        """For summary-only sources (parse-script CSV/JSON, llmb-run database): the parser's
        window mean as a one-row steps table; None when the run has per-step rows."""
        if not self.steps.is_empty():
            return None
        step = as_float(self.row.get("reported_step_time_s"))
        tflops = as_float(self.row.get("reported_tflops_per_gpu"))
        if step is None and tflops is None:
            return None
        frame = pl.DataFrame({"run_id": [self.run_id], "step_time_s": [step],
                              "tflops_per_gpu": [tflops], "source_file": [self.file]},
                             schema={"run_id": pl.String, "step_time_s": pl.Float64,
                                     "tflops_per_gpu": pl.Float64, "source_file": pl.String})
        return safe_conform(frame, STEPS_SCHEMA)

    def measured(self, *, window: bool = False) -> pl.DataFrame:
        """Valid steps (only the window's if asked), or the valid summary row."""
        summary = self.summary()
        if summary is not None:
            return summary.filter(pl.col("step_time_s").is_finite()
                                  & (pl.col("step_time_s") > 0))
        return self.window_steps() if window else self.clean_steps()

    def line_of(self, iteration: int) -> int | None:
        hit = self.steps.filter(pl.col("iteration") == iteration)
        if hit.is_empty():
            return None
        return as_int(hit["line"][0])


@dataclass
class Context:
    evidence: Evidence
    ref: RefView
    tables: dict[str, pl.DataFrame]
    runs: list[RunView]
    manifest_file: str = MANIFEST_NAME
    gpu: str = ""

    @property
    def manifest(self) -> Manifest:
        return self.evidence.manifest


def _frame(evidence: Evidence, name: str) -> pl.DataFrame:
    value = getattr(evidence, name, None)
    return value if isinstance(value, pl.DataFrame) else pl.DataFrame()


def _match_spec(row: dict[str, Any], specs: list[RunSpec],
                used: set[int]) -> tuple[RunSpec | None, int | None]:
    """The manifest entry a run came from: same log path, a file inside the declared log
    folder (llmb-run experiment folders), or ingest's ``runs[i]`` id."""
    source = norm_path(row.get("source_file"))
    free = [(i, spec) for i, spec in enumerate(specs) if i not in used]
    for i, spec in free:
        if source and norm_path(spec.log) == source:
            return spec, i
    for i, spec in free:
        folder = norm_path(spec.log).rstrip("/")
        if source and folder and source.startswith(folder + "/"):
            return spec, i
    match = re.fullmatch(r"runs\[(\d+)\]", str(row.get("run_id") or ""))
    if match and int(match.group(1)) < len(specs) and int(match.group(1)) not in used:
        return specs[int(match.group(1))], int(match.group(1))
    return None, None


def _window_for(view: RunView) -> Window:
    release = None
    if view.baseline is not None:
        value = view.baseline.get("recipe_release")
        release = str(value) if value else None
    steps = view.clean_steps()
    last = as_int(steps["iteration"].max()) if not steps.is_empty() else None
    return steady_state_window(release, last)


def _attach_baseline(view: RunView, ref: RefView, system_gpu: str) -> None:
    workload = view.get_str("workload")
    precision = view.get_str("precision")
    num_gpus = view.get_int("num_gpus")
    gpu = view.get_str("gpu") or system_gpu
    if not workload or not precision or not num_gpus or not gpu:
        return
    gbs, seq_len = view.get_int("gbs"), view.get_int("seq_len")
    exact = None
    if gbs is not None or seq_len is not None:
        exact = ref.match_baseline(workload, gpu, precision, num_gpus, gbs=gbs, seq_len=seq_len)
    if exact is not None:
        view.baseline, view.baseline_exact = exact, True
        return
    view.baseline = ref.match_baseline(workload, gpu, precision, num_gpus)


def build_context(evidence: Evidence, ref: RefView) -> Context:
    tables = {name: safe_conform(_frame(evidence, name), schema)
              for name, schema in TABLES.items()}
    steps_all = tables["steps"].with_row_index("_order")
    specs = list(evidence.manifest.runs)
    system_gpu = evidence.manifest.system.gpu.strip().lower()
    used: set[int] = set()
    views: list[RunView] = []
    runs = tables["runs"].filter(pl.col("run_id").is_not_null()).unique(
        subset="run_id", keep="first", maintain_order=True)
    for row in runs.iter_rows(named=True):
        spec, index = _match_spec(row, specs, used)
        if index is not None:
            used.add(index)
        steps = steps_all.filter(pl.col("run_id") == row["run_id"])
        steps = steps.sort(["line", "_order"], nulls_last=True).drop("_order")
        view = RunView(run_id=str(row["run_id"]), row=row, file=row.get("source_file")
                       or (spec.log if spec else None), spec=spec, spec_index=index, steps=steps)
        _attach_baseline(view, ref, system_gpu)
        view.window = _window_for(view)
        views.append(view)
    return Context(evidence=evidence, ref=ref, tables=tables, runs=views, gpu=system_gpu)


def unmatched_specs(ctx: Context) -> list[tuple[int, RunSpec]]:
    """Manifest [[runs]] entries that no ingested run came from."""
    used = {v.spec_index for v in ctx.runs if v.spec_index is not None}
    return [(i, spec) for i, spec in enumerate(ctx.manifest.runs) if i not in used]


def bundle_path(ctx: Context, rel: str) -> Path:
    """Where a manifest path lives on disk (existence checks only; no escape is followed)."""
    return ctx.evidence.root.joinpath(*PurePosixPath(rel.replace("\\", "/")).parts)


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


def print_resolution(values: list[float]) -> float:
    """Smallest decimal step the values were printed with (0.01 for 12.34 and 12.3)."""
    def on_grid(v: float, q: float) -> bool:
        x = v / q
        # a value too large to scale (1e308 / 0.1) carries no decimals worth resolving
        return not math.isfinite(x) or abs(x - round(x)) < 1e-6 * max(1.0, abs(x))

    for digits in range(7):
        q = 10.0 ** -digits
        if all(on_grid(v, q) for v in values):
            return q
    return 1e-7
