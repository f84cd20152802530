"""Storage and checkpoints scored from evidence: each ``storage`` row against its reference.

What is compared with what (docs/scoring.md, "Storage and checkpoints"):

- an MLPerf Storage **training** result: its MiB/s ÷ the closed division's median for the same
  round, workload and emulated accelerator (``reference/storage.toml``). It counts only when it
  meets its own accelerator-utilisation bar, DLIO flagged no page-cache hits, its dataset is at
  least 5× the clients' memory (MemTotal × hosts) and the reference has its round: otherwise
  it is shown, not rated, with the reason;
- an MLPerf Storage **checkpointing** result: its save GiB/s ÷ the full-run median of the same
  round and model, at the same process count (a subset run is another experiment); the load
  direction is shown;
- **checkpoint lines** of a training log: the checkpoint's size (the entry's
  ``checkpoint_gib`` or the model's, ``reference/storage.toml``) ÷ the median blocking save
  time, per GPU, ÷ the reference's per-GPU save bandwidth for that model;
- a **fio** group: its GiB/s ÷ the bandwidth the contract states (``contracted_gib_s``); no
  public fio reference exists, so without one it is shown.

The first rated checkpoint evidence (log events before MLPerf results) also gives the price
advice its checkpoint term: the share of wall time a blocking save takes at the contract's
checkpoint interval, against the same share at the reference bandwidth.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import polars as pl

from cmax.ingest.evidence import Evidence
from cmax.reference.storage import StorageReference, checkpoint_share
from cmax.reference.view import RefView
from cmax.resolve.case import Case
from cmax.scorecard import CheckpointCost, StorageResult
from cmax.submission.manifest import StorageSpec

DEFAULT_INTERVAL_MIN = 30.0


def _spec(evidence: Evidence, entry: int | None) -> StorageSpec | None:
    """The ``[[storage]]`` entry ingest read the rows for (their ``entry`` column)."""
    entries = evidence.manifest.storage
    return entries[entry] if entry is not None and 0 <= entry < len(entries) else None


#: the storage columns a [[storage]] entry can fill, as a reader names them
DECLARED_NAMES = {"accelerator": "emulated accelerator", "tool_version": "round",
                  "accelerators": "GPUs", "size_gib": "checkpoint size"}


def _filled(row: dict[str, Any]) -> list[str]:
    """The columns of ``row`` its ``[[storage]]`` entry filled (the ``declared`` list
    :meth:`cmax.resolve.case.Case.with_declared` adds), by their exact names."""
    return [str(c) for c in row.get("declared") or ()]


def _declared(row: dict[str, Any]) -> list[str]:
    return [DECLARED_NAMES.get(c, c) for c in _filled(row)]


def _result(row: dict[str, Any], **values: Any) -> StorageResult:
    return StorageResult(source_file=str(row["source_file"]), line=row.get("line"),
                         tool=str(row["tool"]), tool_version=row.get("tool_version"),
                         benchmark=str(row["benchmark"]), workload=row.get("workload"),
                         direction=str(row["direction"]), declared=_declared(row), **values)


def _training(row: dict[str, Any], ref: StorageReference) -> StorageResult:
    workload, accel, round_ = row["workload"], row["accelerator"], row["tool_version"]
    bar = ref.au_threshold_pct.get(str(workload))
    detail = []
    reasons = []
    if "accelerator" in _filled(row):
        # the median differs by accelerator (resnet50: 12,879 MiB/s on A100, 16,162 on H100):
        # the emulated accelerator must come from the run's own files to be compared
        reasons.append("the emulated accelerator rests on cmax.toml alone (the run's "
                       "configs/overrides.yaml or *_metadata.json states it)")
    au = row["au_pct"]
    if bar is not None and au is not None:
        detail.append(f"accelerator utilisation {au:.2f}% mean over epochs (bar {bar:g}%, "
                      f"{ref.au_source})")
    if row["au_pass"] is False or (bar is not None and au is not None and au < bar):
        reasons.append(f"fails its own utilisation bar: mean AU {au:.2f}% < {bar:g}%"
                       if bar is not None and au is not None and au < bar
                       else "DLIO's own verdict is that it failed its utilisation bar")
    if row["caching"]:
        reasons.append("DLIO flagged potential page-cache hits on a client host "
                       "(potential_caching), so the reads may have come from memory")
    memory = (row["host_mem_gib"] or 0.0) * (row["hosts"] or 0)
    need = ref.dataset_to_memory * memory
    if row["dataset_gib"] is not None and memory:
        detail.append(f"dataset {row['dataset_gib']:,.0f} GiB vs {ref.dataset_to_memory:g} × "
                      f"client memory {memory:,.0f} GiB (MemTotal {row['host_mem_gib']:.1f} "
                      f"GiB × {row['hosts']} hosts) = {need:,.0f} GiB")
        if row["dataset_gib"] < need:
            reasons.append(f"dataset {row['dataset_gib']:,.0f} GiB is below "
                           f"{ref.dataset_to_memory:g}× the clients' memory ({need:,.0f} GiB): "
                           "the page cache can serve the reads")
    median = ref.training_median(round_, workload, accel)
    if median is None:
        rounds = ref.training_rounds(workload)
        if accel is None:
            reasons.append("the emulated accelerator is not stated (configs/overrides.yaml, "
                           "*_metadata.json or [[storage]] accelerator)")
        elif round_ is None:
            reasons.append("the round (tool version) is not stated: name it in a v<round> "
                           "folder or [[storage]] round")
        elif rounds and round_ not in rounds:
            reasons.append(f"tool version {round_}: the reference median is "
                           f"{', '.join(rounds)}'s, and the tool's version moves results "
                           "(mlcommons/storage#682)")
        else:
            reasons.append(f"no closed-division median for {workload} on {accel} "
                           f"in {round_}")
    values: dict[str, Any] = {"measured": row["mib_per_s"], "unit": "MiB/s", "detail": detail}
    if median is not None:
        values.update(reference=median.mib_per_s,
                      reference_source=(f"MLPerf Storage {median.round} closed median of "
                                        f"{median.results} results from {median.submitters} "
                                        f"submitters ({median.source})"))
    if reasons:
        return _result(row, verdict="not rated", reason="; ".join(reasons), **values)
    assert median is not None
    return _result(row, verdict="rated", ratio=row["mib_per_s"] / median.mib_per_s, **values)


def _checkpointing(row: dict[str, Any], ref: StorageReference) -> StorageResult:
    median = ref.checkpoint_median(row["workload"], row["tool_version"])
    values: dict[str, Any] = {"measured": row["gib_per_s"], "unit": "GiB/s",
                              "detail": [f"{row['direction']} of {row['size_gib']:,.0f} GiB in "
                                         f"{row['duration_s']:.1f} s (mean over the run's "
                                         f"checkpoints), {row['accelerators']} processes on "
                                         f"{row['hosts']} hosts"]}
    if row["direction"] != "save":
        return _result(row, verdict="shown", reason="the reference medians are of saves",
                       **values)
    if median is None:
        rounds = sorted({c.round for c in ref.checkpoint
                         if c.model == ref.canonical_model(row["workload"])})
        why = (f"tool version {row['tool_version']}: the reference median is "
               f"{', '.join(rounds)}'s" if rounds else
               f"no full-run median for {row['workload'] or 'an unnamed model'}")
        return _result(row, verdict="not rated", reason=why, **values)
    values.update(reference=median.save_gib_per_s,
                  reference_source=f"MLPerf Storage {median.round} full-run median at "
                  f"{median.gpus} processes ({median.source})")
    if row["accelerators"] != median.gpus:
        return _result(row, verdict="not rated", reason=(
            f"{row['accelerators']} processes: the median is of full runs at the closed "
            f"count of {median.gpus}, and a run of another size is another experiment "
            f"({ref.subset_source})"), **values)
    return _result(row, verdict="rated", ratio=row["gib_per_s"] / median.save_gib_per_s,
                   **values)


def _fio(row: dict[str, Any], spec: StorageSpec | None) -> StorageResult:
    values: dict[str, Any] = {
        "measured": row["gib_per_s"], "unit": "GiB/s",
        "detail": [f"{row['mib_per_s']:,.1f} MiB/s: the group's data over its wall time "
                   f"({row['duration_s']:g} s)"]}
    contracted = spec.contracted_gib_s if spec is not None else None
    if contracted is None:
        return _result(row, verdict="shown", reason="no public fio reference; state "
                       "[[storage]] contracted_gib_s to rate it against the contract", **values)
    return _result(row, verdict="rated", ratio=row["gib_per_s"] / contracted,
                   reference=contracted, reference_source="the contract ([[storage]] "
                   "contracted_gib_s, declared)", **values)


def _log_events(rows: list[dict[str, Any]], spec: StorageSpec | None, ref: StorageReference,
                stated_gpus: set[int]) -> tuple[StorageResult, float | None, int | None]:
    """One result for a log's checkpoint events: the median blocking save and, where the size
    and GPUs are known, its bandwidth per GPU against the reference's. Also returns the
    median save time (None without save events) and the GPUs it is counted over.

    A figure that could flatter the provider counts only when the evidence carries it: the
    checkpoint size is the model's (reference/storage.toml; a declared ``checkpoint_gib`` gives
    a bandwidth shown beside no reference), and the GPU count the one the log states (its world
    size); a GPU count only cmax.toml states is not rated.
    """
    saves = [r for r in rows if r["direction"] == "save"]
    first = (saves or rows)[0]
    kinds = {d: sum(1 for r in rows if r["direction"] == d) for d in
             dict.fromkeys(r["direction"] for r in rows)}
    detail = ["events: " + ", ".join(f"{n} {d}" for d, n in kinds.items()) + " (lines "
              + ", ".join(str(r["line"]) for r in rows[:8]) + (", …" if len(rows) > 8 else "")
              + ")"]
    if not saves:
        return _result(first, verdict="shown", unit="s", reason="no save event",
                       detail=detail), None, None
    save_s = statistics.median(r["duration_s"] for r in saves)
    finals = [r["duration_s"] for r in rows if r["direction"] == "finalize"]
    if finals:
        detail.append(f"async finalisation after each save: median {statistics.median(finals):.3f}"
                      " s (not blocking)")
    detail.append(f"median blocking save {save_s:.2f} s over {len(saves)} checkpoint(s)")
    model = spec.model if spec is not None else None
    known = ref.size(model)
    reasons = []
    if known is not None:
        size: float | None = known.gib
        size_source = f"{known.model} checkpoint size ({known.source})"
    else:  # no reference size, so no reference bandwidth either: shown, never rated
        size, size_source = first["size_gib"], "[[storage]] checkpoint_gib, declared"
    declared = first["accelerators"]
    gpus: int | None = declared
    if stated_gpus:
        if declared is not None and declared not in stated_gpus:
            reasons.append(f"cmax.toml says {declared} GPUs; the log states "
                           f"{', '.join(str(g) for g in sorted(stated_gpus))}")
        elif declared is None and len(stated_gpus) == 1:
            gpus = next(iter(stated_gpus))
        detail.append(f"GPUs: the log states {', '.join(str(g) for g in sorted(stated_gpus))}")
    elif declared is not None:
        reasons.append("the run's GPU count rests on cmax.toml alone (the log states no world "
                       "size)")
    if size is None or not gpus:
        missing = "the checkpoint size ([[storage]] model or checkpoint_gib)" if size is None \
            else "the run's GPUs ([[storage]] gpus)"
        return _result(first, verdict="shown", unit="s", measured=save_s,
                       reason=f"save time shown; its bandwidth needs {missing}",
                       detail=detail), save_s, None
    per_gpu = size / save_s / gpus
    detail.append(f"{size:,.0f} GiB ({size_source}) ÷ {save_s:.2f} s ÷ {gpus} GPUs")
    values: dict[str, Any] = {"measured": per_gpu, "unit": "GiB/s per GPU", "detail": detail}
    median = ref.checkpoint_median(model)
    if median is None:
        return _result(first, verdict="shown", reason=f"no reference save bandwidth for "
                       f"{model or 'this model'}", **values), save_s, gpus
    values.update(reference=median.per_gpu, reference_source=(
        f"MLPerf Storage {median.round} {median.model} full-run median "
        f"{median.save_gib_per_s:g} GiB/s ÷ {median.gpus} processes ({median.source})"))
    if reasons:
        return _result(first, verdict="not rated", reason="; ".join(reasons),
                       **values), save_s, gpus
    return _result(first, verdict="rated", ratio=per_gpu / median.per_gpu, **values), save_s, gpus


def _stated_gpus(evidence: Evidence, source_file: str) -> set[int]:
    """The GPU counts (world sizes) a log states about itself (its ``gpu_count`` facts)."""
    found = set()
    for record in evidence.files:
        if record.path == source_file:
            for fact in record.facts:
                if fact.kind == "gpu_count" and str(fact.value).isdigit():
                    found.add(int(fact.value))
    return found


def storage_results(evidence: Case, ref: RefView
                    ) -> tuple[list[StorageResult], CheckpointCost | None]:
    """Every storage row judged, and the checkpoint term of the price (None without rated
    checkpoint evidence). A value only the row's ``[[storage]]`` entry states is the claims
    ledger's (declared), filled where the file is silent and named in the result's
    ``declared``."""
    table: pl.DataFrame = evidence.with_declared("storage")
    reference = ref.storage()
    if table.height == 0:
        return [], None
    results: list[StorageResult] = []
    costs: list[CheckpointCost] = []
    interval, interval_basis = _interval(evidence)
    by_entry: dict[int | None, list[dict[str, Any]]] = {}
    for row in table.iter_rows(named=True):
        by_entry.setdefault(row.get("entry"), []).append(row)
    for entry, rows in by_entry.items():
        spec = _spec(evidence, entry)
        if reference is None:
            results += [_result(r, verdict="shown", unit="", reason="the reference release "
                                "has no storage references") for r in rows]
            continue
        if rows[0]["benchmark"] == "checkpoint-log":
            result, save_s, gpus = _log_events(
                rows, spec, reference, _stated_gpus(evidence, str(rows[0]["source_file"])))
            results.append(result)
            cost = _log_cost(result, rows, spec, save_s, gpus, reference, interval,
                             interval_basis)
            costs += [cost] if cost is not None else []
            continue
        for row in rows:
            if row["benchmark"] == "training":
                results.append(_training(row, reference))
            elif row["benchmark"] == "checkpointing":
                result = _checkpointing(row, reference)
                results.append(result)
                cost = _mlperf_cost(result, row, reference, interval, interval_basis)
                costs += [cost] if cost is not None else []
            else:
                results.append(_fio(row, spec))
    # a log's measured saves are the buyer's own workload: they price before a benchmark's
    costs.sort(key=lambda c: not c.basis.startswith("measured"))
    return results, (costs[0] if costs else None)


def _interval(evidence: Evidence) -> tuple[float, str]:
    rel = evidence.manifest.reliability
    if rel is not None:
        return rel.checkpoint_interval_min, "[reliability] checkpoint_interval_min"
    return DEFAULT_INTERVAL_MIN, (f"assumed: {DEFAULT_INTERVAL_MIN:g} min ([reliability] "
                                  "checkpoint_interval_min's default; no [reliability] table)")


def _cost(model: str, size: float, save_s: float, basis: str, reference_save_s: float,
          reference_source: str, interval: float, interval_basis: str) -> CheckpointCost:
    share = checkpoint_share(save_s, interval)
    ref_share = checkpoint_share(reference_save_s, interval)
    return CheckpointCost(model=model, size_gib=size, save_s=save_s, basis=basis,
                          interval_min=interval, interval_basis=interval_basis, share=share,
                          reference_save_s=reference_save_s, reference_share=ref_share,
                          reference_source=reference_source,
                          ratio=(1.0 - share) / (1.0 - ref_share))


def _log_cost(result: StorageResult, rows: Sequence[dict[str, Any]], spec: StorageSpec | None,
              save_s: float | None, gpus: int | None, ref: StorageReference, interval: float,
              interval_basis: str) -> CheckpointCost | None:
    if result.verdict != "rated" or save_s is None or result.reference is None or not gpus:
        return None
    model = ref.canonical_model(spec.model if spec is not None else None) or "?"
    size = result.measured * save_s * gpus if result.measured is not None else 0.0
    return _cost(model, size, save_s,
                 f"measured: median of the blocking saves in {rows[0]['source_file']}",
                 size / (result.reference * gpus),
                 f"{result.reference:.4f} GiB/s per GPU × {gpus} GPUs, the MLPerf Storage "
                 "full-run median per GPU",
                 interval, interval_basis)


def _mlperf_cost(result: StorageResult, row: dict[str, Any], ref: StorageReference,
                 interval: float, interval_basis: str) -> CheckpointCost | None:
    if result.verdict != "rated" or result.reference is None:
        return None
    size = float(row["size_gib"])
    return _cost(str(ref.canonical_model(row["workload"])), size, size / row["gib_per_s"],
                 f"{size:,.0f} GiB ÷ the measured {row['gib_per_s']:.2f} GiB/s "
                 f"({row['source_file']})", size / result.reference,
                 f"{result.reference:g} GiB/s ({result.reference_source})",
                 interval, interval_basis)
