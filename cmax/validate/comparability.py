"""Comparability: the run used the reference recipe's configuration, or it is flagged.

Throughput depends on global batch size, sequence length, the parallel layout and the GPU
count as much as on the cluster. A run with a larger GBS or a friendlier layout than the
reference recipe can beat the baseline on a worse cluster, so a config mismatch makes the run
*not comparable* (its errors declare the effect ``not_comparable``, which the judgement layer
applies: ``cmax/judgement/bearings.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from cmax.findings import Finding
from cmax.reading.coerce import as_int
from cmax.resolve.runs import BaselineRow
from cmax.validate.context import CONFIG_FIELDS, Context, RunView, run_finding
from cmax.validate.registry import Rule, register

register(Rule(
    "comparability.no-baseline", "warning", "No reference result for this workload on this GPU",
    "The reference holds no result for the workload on this GPU type at any precision or "
    "scale, so the run is reported but cannot be rated against a baseline.",
    "Run a workload of the reference suite for this GPU (`cmax reference list`), or treat the "
    "number as unrated.",
))
register(Rule(
    "comparability.precision-mismatch", "error", "No reference result at this precision",
    "The reference has this workload on this GPU, but not at the run's precision. BF16, FP8 "
    "and FP4 runs differ by up to 2x in throughput and cannot stand in for each other.",
    "Run the workload at a precision the reference publishes for this GPU.",
    effect="not_comparable",
))
register(Rule(
    "comparability.scale-mismatch", "error", "No reference result at this GPU count",
    "Per-GPU throughput falls as a job grows (more communication per step), so a run at a "
    "different scale from every reference result is not comparable; Exemplar suites are "
    "judged at a fixed scale (512 GPUs).",
    "Run at one of the GPU counts the reference publishes (listed in the message).",
    "DGXC Exemplar_validation.md: \"Scale: 512 GPUs\".",
    effect="not_comparable",
))
register(Rule(
    "comparability.config-mismatch", "error", "Run configuration differs from the reference",
    "GBS, sequence length, micro-batch size and the TP/PP/CP/EP/VP layout are part of the "
    "recipe. Changing any of them changes the work per step and the communication pattern; the "
    "reference recipes use weak scaling (GBS proportional to GPUs).",
    "Re-run with the reference recipe's configuration (shown in the message) or submit the "
    "run as unrated.",
    "NVIDIA/dgxc-benchmarking recipe READMEs (configuration tables per GPU and scale).",
    effect="not_comparable",
))
register(Rule(
    "comparability.config-unverified", "warning", "Part of the run configuration is unknown",
    "The log and the manifest do not state some recipe parameters, so cmax cannot confirm the "
    "run used the reference configuration.",
    "Declare seq_len, gbs, mbs, tp, pp, cp, ep and vp for the run in cmax.toml (or submit a "
    "log that prints them).",
))
register(Rule(
    "comparability.container-differs", "info", "Different container from the reference",
    "The reference was measured with another framework container; software releases change "
    "performance, so part of any gap may be software rather than the cluster.",
    "Note it when comparing; for Exemplar use the latest recipe release's container throughout.",
    "DGXC Exemplar_validation.md: use the latest recipe version and keep it for the whole "
    "certification.",
))
register(Rule(
    "comparability.proxy-baseline", "warning", "The reference result is a proxy configuration",
    "The matched reference row is a reduced-layer proxy; NVIDIA's READMEs say proxy configs "
    "\"are not realistic\", so a ratio against it is indicative only.",
    "Prefer a full-model reference scale if one exists.",
    "NVIDIA/dgxc-benchmarking llama3.1 and grok1 READMEs (proxy configurations).",
))
register(Rule(
    "comparability.baseline-erratum", "info", "The reference result carries an erratum",
    "The public source of the matched reference number has a known error (noted in the "
    "reference data); the rating uses the value as published.",
    "Nothing to fix; read the erratum note in `cmax reference show`.",
))

_TAG = re.compile(r"(\d+\.\d+(?:\.\d+)*)")


def _container_tag(value: Any) -> str | None:
    if not value:
        return None
    text = str(value).strip().lower()
    match = _TAG.search(text.rsplit(":", 1)[-1]) if ":" in text else _TAG.search(text)
    return match.group(1) if match else text


def _norm_config(name: str, value: Any) -> int | None:
    """NA in a reference table means the dimension is not used: CP, EP, VP of 1."""
    number = as_int(value)
    if name in ("cp", "ep", "vp") and number is None:
        return 1
    return number


def _scales(ctx: Context, view: RunView, workload: str, gpu: str,
            precision: str) -> tuple[list[int], list[str]]:
    """Reference GPU counts at this precision, and the precisions published for the GPU."""
    rows = ctx.ref.baselines_for(workload, gpu)
    if rows.is_empty():
        return [], []
    scales = sorted({n for n in (as_int(v) for v in rows["num_gpus"].to_list()) if n})
    precisions = sorted({str(p).lower() for p in rows["precision"].drop_nulls().to_list()})
    matching = [n for n in scales if ctx.ref.match_baseline(workload, gpu, precision, n)]
    return matching, precisions


def _fmt(values: Iterable[object]) -> str:
    return ", ".join(str(v) for v in values)


def _compare(view: RunView, base: BaselineRow) -> Iterator[Finding]:
    mismatched: list[str] = []
    unknown: list[str] = []
    for name in CONFIG_FIELDS:
        if name == "mbs" and base.mbs is None:
            continue
        ref_value = _norm_config(name, base.config(name))
        if ref_value is None:
            continue
        run_raw = view.get(name)
        if run_raw is None and name in ("cp", "ep", "vp") and ref_value == 1:
            continue
        run_value = _norm_config(name, run_raw) if run_raw is not None else None
        if run_value is None:
            unknown.append(name)
        elif run_value != ref_value:
            mismatched.append(f"{name} {run_value} (reference {ref_value})")
    label = base.baseline_id
    if mismatched:
        yield run_finding("comparability.config-mismatch", view,
                          f"{_fmt(mismatched)} differ from {label}")
    if unknown:
        yield run_finding("comparability.config-unverified", view,
                          f"{_fmt(unknown)} not stated; cannot confirm the configuration of "
                          f"{label}")
    run_tag = _container_tag(view.get("container"))
    ref_tag = _container_tag(base.container)
    if run_tag and ref_tag and run_tag != ref_tag:
        yield run_finding("comparability.container-differs", view,
                          f"container {view.get('container')} vs reference "
                          f"{base.container}")
    if base.proxy:
        yield run_finding("comparability.proxy-baseline", view,
                          f"{label} is a reduced-layer proxy configuration")
    if base.erratum:
        yield run_finding("comparability.baseline-erratum", view, f"{label}: {base.erratum}")


def check(ctx: Context) -> Iterator[Finding]:
    for view in ctx.runs:
        workload, precision = view.get_str("workload"), view.get_str("precision")
        gpu = view.get_str("gpu") or ctx.gpu
        num_gpus = view.get_int("num_gpus")
        if not workload or not precision or not num_gpus or not gpu:
            continue  # schema.missing-value
        if view.baseline is not None:
            yield from _compare(view, view.baseline)
            continue
        scales, precisions = _scales(ctx, view, workload, gpu, precision)
        if not precisions:
            yield run_finding("comparability.no-baseline", view,
                              f"the reference ({ctx.ref.release}) has no {workload} result on "
                              f"{gpu}")
        elif not scales:
            yield run_finding("comparability.precision-mismatch", view,
                              f"no {workload} reference on {gpu} at {precision}; published: "
                              f"{_fmt(precisions)}")
        else:
            yield run_finding("comparability.scale-mismatch", view,
                              f"no {workload} {precision} reference on {gpu} at {num_gpus} "
                              f"GPUs; published scales: {_fmt(scales)}")
