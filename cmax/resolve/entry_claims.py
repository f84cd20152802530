"""What a ``[[storage]]`` or ``[[inference]]`` entry declares where its file is silent.

Ingest writes what each file states, null where it says nothing. Some comparisons still need
the value: the emulated accelerator and round an MLPerf Storage result is compared at, the GPUs
and checkpoint size a log's saves are divided by, the concurrency of an AIPerf CSV export
(which records no load). The entry's declaration of such a value is a claim of the ledger
(``declared``: only cmax.toml says it), subject ``storage[i]`` / ``inference[i]``, made here
once; :func:`with_declared` fills an entry's rows from those claims for the stages that
compare them (score's storage and serving results, the serving rules), naming the columns
filled, so the label "declared" travels with the value and the evidence table stays what the
file said. An MLPerf benchmark folder whose system JSON is not where MLPerf keeps it states no
accelerator of its own: the ``[system] gpu`` it is rated as is a declared claim of subject
``mlperf[k]`` (``k``: its place in ``Evidence.mlperf_sets``, as in ``Scorecard.mlperf``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from cmax.ingest.evidence import INFERENCE_SCHEMA, STORAGE_SCHEMA, Evidence, entry_rows
from cmax.resolve.claims import Claim, Ledger


@dataclass(frozen=True)
class Fill:
    """A column a table's entry may declare: the ledger's claim kind and the entry's field."""

    column: str
    kind: str
    field: str


#: Per table: the columns its ``cmax.toml`` entries declare where the file is silent.
FILLS: dict[str, tuple[Fill, ...]] = {
    "storage": (Fill("accelerator", "storage_accelerator", "accelerator"),
                Fill("tool_version", "storage_round", "round"),
                Fill("accelerators", "storage_gpus", "gpus"),
                Fill("size_gib", "checkpoint_size", "checkpoint_gib")),
    "inference": (Fill("concurrency", "serving_load", "concurrency"),),
}

_SCHEMAS = {"storage": STORAGE_SCHEMA, "inference": INFERENCE_SCHEMA}

#: the ``declared`` column :func:`with_declared` adds: the names of the columns filled
DECLARED_DTYPE = pl.List(pl.String)


def _subject(table: str, index: int) -> str:
    return f"{table}[{index}]"


def _declared(table: str, index: int, fill: Fill, value: object) -> Claim:
    subject = _subject(table, index)
    return Claim(subject, fill.kind, str(value), "declared", f"cmax.toml {subject}.{fill.field}")


def entry_claims(evidence: Evidence) -> list[Claim]:
    """The declared claims of every storage and inference entry whose file is silent on a
    column the entry states (a storage row that states the column keeps its own; an inference
    result fills its load only when its format records none: a vLLM result without one ran
    offline)."""
    from cmax.ingest.formats import by_id

    out: list[Claim] = []
    kind_of = {f.path: f.kind for f in evidence.files}  # the format that read each file
    for i, storage in enumerate(evidence.manifest.storage):
        rows = entry_rows(evidence.storage, i)
        for fill in FILLS["storage"]:
            value = getattr(storage, fill.field)
            if value is None or rows.height == 0 or rows[fill.column].null_count() == 0:
                continue
            if fill.column == "tool_version" and not str(value).startswith("v"):
                value = f"v{value}"
            out.append(_declared("storage", i, fill, value))
    for i, serving in enumerate(evidence.manifest.inference):
        rows = entry_rows(evidence.inference, i)
        kinds = {kind_of[str(f)] for f in rows["source_file"].drop_nulls().to_list()
                 if str(f) in kind_of}
        silent = bool(kinds) and not any(getattr(by_id(k), "records_load", True) for k in kinds)
        if silent and serving.concurrency is not None:
            out.append(_declared("inference", i, FILLS["inference"][0], serving.concurrency))
    gpu = evidence.manifest.system.gpu
    for k, mlperf_set in enumerate(evidence.mlperf_sets):
        system = mlperf_set.system
        if (system is None or not system.official) and gpu:
            out.append(Claim(f"mlperf[{k}]", "mlperf_accelerator", gpu, "declared",
                             "cmax.toml [system] gpu"))
    return out


def with_declared(frame: pl.DataFrame, claims: Ledger | Iterable[Claim],
                  table: str) -> pl.DataFrame:
    """``frame``'s rows (of ``table``) with each entry's declared values where the file is
    silent, and a ``declared`` column listing the names of the columns filled (null where
    none; a list, so a reader asks for a column by its exact name). A declared load is also
    named in the row's ``scenario``."""
    schema = _SCHEMAS[table]
    fills = {f.kind: f for f in FILLS[table]}
    by_entry: dict[int, list[tuple[Fill, str]]] = {}
    for claim in claims:
        fill = fills.get(claim.kind)
        prefix = f"{table}["
        if fill is None or claim.status != "declared" or claim.value is None \
                or not claim.subject.startswith(prefix):
            continue
        number = claim.subject[len(prefix):].rstrip("]")
        if number.isdigit():
            by_entry.setdefault(int(number), []).append((fill, claim.value))
    frame = frame.with_columns(pl.lit(None, dtype=DECLARED_DTYPE).alias("declared"))
    for index, values in by_entry.items():
        mine = pl.col("entry") == index
        exprs = [pl.when(mine).then(pl.col(f.column).fill_null(
            pl.lit(value).cast(schema[f.column]))).otherwise(pl.col(f.column)).alias(f.column)
                 for f, value in values]
        exprs.append(pl.when(mine).then(pl.lit([f.column for f, _ in values],
                                               dtype=DECLARED_DTYPE))
                     .otherwise(pl.col("declared")).alias("declared"))
        if table == "inference":
            load = next(v for f, v in values if f.column == "concurrency")
            exprs.append(pl.when(mine).then(pl.lit(
                f"concurrency {load} declared in cmax.toml (the file records no load)"))
                .otherwise(pl.col("scenario")).alias("scenario"))
        frame = frame.with_columns(*exprs)
    return frame
