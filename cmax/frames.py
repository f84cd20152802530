"""Scorecards and the audit history as Polars DataFrames, for notebooks and other tools.

A scorecard is a tree of pydantic models; ``pl.DataFrame(card.workloads)`` fails on the step
series (a list of tuples). These accessors give one flat, typed table per kind of result,
for one scorecard or a batch (a batch adds ``provider`` and ``cluster`` so rows stay
attributable). The columns and their types are the ``*_SCHEMA`` dicts below (documented in
docs/python-api.md); an empty result is an empty frame with the same columns. Convert with
``.to_pandas()`` or hand to DuckDB as any Polars frame.

    import cmax, cmax.frames as cf
    cards = [cmax.assess(b) for b in cmax.sample_bundles()]
    cf.workloads(cards).sort("ratio")
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

if typing.TYPE_CHECKING:
    from cmax.findings import Finding
    from cmax.scorecard import Scorecard

__all__ = ["FINDING_SCHEMA", "GATE_SCHEMA", "JUDGEMENT_SCHEMA", "NETWORK_SCHEMA",
           "SCORECARD_SCHEMA", "WORKLOAD_SCHEMA", "findings", "gates", "history", "judgements",
           "network", "scorecards", "workloads"]

_WHO: dict[str, pl.DataType] = {"provider": pl.String(), "cluster": pl.String()}

SCORECARD_SCHEMA: dict[str, pl.DataType] = {
    **_WHO, "region": pl.String(), "gpu": pl.String(), "nodes": pl.Int64(),
    "gpus_per_node": pl.Int64(), "interconnect": pl.String(), "benchmark_date": pl.Date(),
    "reference_release": pl.String(), "rubric": pl.String(), "tier": pl.String(),
    "score": pl.Float64(), "exemplar_pass": pl.Boolean(), "exemplar_state": pl.String(),
    "exemplar_bar": pl.Float64(),
    "errors": pl.Int64(), "warnings": pl.Int64(), "infos": pl.Int64(),
    "quoted_usd_per_gpu_hour": pl.Float64(), "ask_usd_per_gpu_hour": pl.Float64(),
    "usd_per_reference_gpu_hour": pl.Float64(),
}
WORKLOAD_SCHEMA: dict[str, pl.DataType] = {
    **_WHO, "workload": pl.String(), "precision": pl.String(), "num_gpus": pl.Int64(),
    "log": pl.String(), "framework": pl.String(), "status": pl.String(),
    "steps_total": pl.Int64(), "window_first": pl.Int64(), "window_last": pl.Int64(),
    "steps_in_window": pl.Int64(), "mean_step_time_s": pl.Float64(),
    "tokens_per_s_per_gpu": pl.Float64(), "model_tflops_per_gpu": pl.Float64(),
    "mfu_pct": pl.Float64(), "baseline_id": pl.String(), "baseline_release": pl.String(),
    "baseline_tokens_per_s_per_gpu": pl.Float64(), "ratio": pl.Float64(),
    "ci_low": pl.Float64(), "ci_high": pl.Float64(), "bar": pl.Float64(),
    "verdict": pl.String(), "validation_errors": pl.List(pl.String()),
    "log_states": pl.String(),
}
NETWORK_SCHEMA: dict[str, pl.DataType] = {
    **_WHO, "file": pl.String(), "collective": pl.String(), "ranks": pl.Int64(),
    "nodes": pl.Int64(), "large_message_bytes": pl.Int64(), "busbw_gbps": pl.Float64(),
    "max_busbw_gbps": pl.Float64(), "reference_busbw_gbps": pl.Float64(),
    "ratio": pl.Float64(), "verdict": pl.String(),
}
GATE_SCHEMA: dict[str, pl.DataType] = {
    **_WHO, "id": pl.String(), "name": pl.String(), "status": pl.String(),
    "cap": pl.String(), "binding_cap": pl.String(), "reason": pl.String(),
}
JUDGEMENT_SCHEMA: dict[str, pl.DataType] = {
    **_WHO, "kind": pl.String(), "id": pl.String(), "label": pl.String(), "state": pl.String(),
    "bar_state": pl.String(), "verdict": pl.String(), "provenance": pl.String(),
    "witnesses": pl.Int64(),
    "independent_witnesses": pl.Int64(), "effects": pl.List(pl.String()),
    "findings": pl.Int64(), "gates": pl.List(pl.String()), "reason": pl.String(),
}
FINDING_SCHEMA: dict[str, pl.DataType] = {
    **_WHO, "rule": pl.String(), "severity": pl.String(), "file": pl.String(),
    "line": pl.Int64(), "run_id": pl.String(), "message": pl.String(), "fix": pl.String(),
}


def _cards(cards: Scorecard | Iterable[Scorecard]) -> list[Scorecard]:
    """The scorecards, or one error naming what else was passed: a path or a JSON document
    in the list failed deep inside a frame with an AttributeError."""
    from cmax.errors import UsageError
    from cmax.scorecard import Scorecard

    out = [cards] if isinstance(cards, Scorecard) else list(cards)
    for i, card in enumerate(out):
        if not isinstance(card, Scorecard):
            raise UsageError(f"item {i} is a {type(card).__name__} ({str(card)[:60]!r})",
                             field="cards", expected="cmax Scorecard objects",
                             fix="pass cmax.assess(bundle) for each bundle, or "
                                 "cmax.Scorecard.model_validate_json(text) for a saved "
                                 "scorecard JSON")
    return out


def _frame(rows: Sequence[dict[str, Any]], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema,
                        orient="row")


def _per_item(cards: Scorecard | Iterable[Scorecard], items: Callable[[Scorecard], Iterable[Any]],
              row: Callable[[Any], dict[str, Any]], schema: dict[str, pl.DataType]
              ) -> pl.DataFrame:
    rows = [{"provider": c.provider, "cluster": c.cluster, **row(item)}
            for c in _cards(cards) for item in items(c)]
    return _frame(rows, schema)


def scorecards(cards: Scorecard | Iterable[Scorecard]) -> pl.DataFrame:
    """One row per scorecard: who, tier, score, Exemplar verdict, finding counts, prices."""
    rows = []
    for c in _cards(cards):
        p = c.price
        rows.append({
            **c.model_dump(include=set(SCORECARD_SCHEMA)),
            "errors": c.finding_counts.get("error", 0),
            "warnings": c.finding_counts.get("warning", 0),
            "infos": c.finding_counts.get("info", 0),
            "quoted_usd_per_gpu_hour": p.quoted_usd_per_gpu_hour if p else None,
            "ask_usd_per_gpu_hour": p.ask_usd_per_gpu_hour if p else None,
            "usd_per_reference_gpu_hour": p.usd_per_reference_gpu_hour if p else None,
        })
    return _frame(rows, SCORECARD_SCHEMA)


def workloads(cards: Scorecard | Iterable[Scorecard]) -> pl.DataFrame:
    """One row per training run: its window, throughput, baseline, ratio with 95% CI,
    verdict. The step series stays on the scorecard (``WorkloadResult.step_series``)."""
    from cmax.render.formatting import log_states_text

    def row(w: Any) -> dict[str, Any]:
        b = w.baseline
        return {**w.model_dump(exclude={"step_series", "baseline", "window", "notes"}),
                "log_states": log_states_text(w),
                "window_first": w.window[0] if w.window else None,
                "window_last": w.window[1] if w.window else None,
                "baseline_id": b.baseline_id if b else None,
                "baseline_release": b.release if b else None,
                "baseline_tokens_per_s_per_gpu": b.tokens_per_s_per_gpu if b else None}
    return _per_item(cards, lambda c: c.workloads, row, WORKLOAD_SCHEMA)


def network(cards: Scorecard | Iterable[Scorecard]) -> pl.DataFrame:
    """One row per nccl-tests result: large-message bus bandwidth against the fabric's
    reference."""
    return _per_item(cards, lambda c: c.network,
                     lambda n: n.model_dump(exclude={"series", "notes"}), NETWORK_SCHEMA)


def gates(cards: Scorecard | Iterable[Scorecard]) -> pl.DataFrame:
    """One row per gate: passed, failed or not_evaluated, and the tier it caps at."""
    return _per_item(cards, lambda c: c.gates,
                     lambda g: {**g.model_dump(), "binding_cap": g.binding_cap}, GATE_SCHEMA)


def judgements(cards: Scorecard | Iterable[Scorecard]) -> pl.DataFrame:
    """One row per claim the rating rests on (``Scorecard.judgements``): its state, its bar,
    a result's verdict at its bar as the gates count it, its provenance, how many witnesses
    and how many of them independent of the provider, the effects of the findings bearing on
    it and the gates reading it."""
    def row(j: Any) -> dict[str, Any]:
        return {"kind": j.kind, "id": j.id, "label": j.label, "state": j.state.value,
                "bar_state": j.bar_state.value if j.bar_state is not None else None,
                "verdict": j.verdict,
                "provenance": j.provenance, "witnesses": len(j.witnesses),
                "independent_witnesses": sum(w.independent for w in j.witnesses),
                "effects": list(j.effects), "findings": len(j.findings), "gates": j.gates,
                "reason": j.reason}
    return _per_item(cards, lambda c: c.judgements, row, JUDGEMENT_SCHEMA)


def findings(source: Scorecard | Iterable[Scorecard] | Sequence[Finding]) -> pl.DataFrame:
    """One row per validation finding, from scorecards or from a list of findings (e.g.
    ``cmax.pipeline.load(bundle).findings``; provider and cluster are then null)."""
    from cmax.findings import Finding

    if isinstance(source, Sequence) and source and isinstance(source[0], Finding):
        return _frame([f.model_dump() for f in source], FINDING_SCHEMA)
    items = _cards(source)  # type: ignore[arg-type]
    return _per_item(items, lambda c: c.findings, lambda f: f.model_dump(), FINDING_SCHEMA)


def history(location: str | Path, *, version: int | None = None) -> pl.DataFrame:
    """The audit history table (a folder or an ``s3://`` URI), at ``version`` if given; the
    columns are ``cmax.history.store.DATASET_SCHEMA`` (docs/python-api.md describes each)."""
    from cmax.history.store import HistoryStore

    return HistoryStore(location).read(version)
