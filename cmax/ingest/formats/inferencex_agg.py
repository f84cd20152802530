"""InferenceX fixed-sequence rows: ``agg_<RESULT_FILENAME>.json`` (one row) and the collected
``agg_bmk.json`` (an array of rows).

Written by ``utils/process_result.py`` of SemiAnalysisAI/InferenceX @ 843c625 from the
benchmark's own result JSON plus the job's environment: the configuration (``hw``, ``conc``,
``image``, ``model``, ``framework``, ``precision``, ``spec_decoding``, ``disagg``, ``isl``,
``osl``), the topology (single node: ``tp``, ``pp``, ``pcp_size``, ...; multinode:
``num_prefill_gpu``, ``num_decode_gpu`` and the ``prefill_*`` / ``decode_*`` layouts), the per-GPU
throughputs (``tput_per_gpu`` = total tok/s over all GPUs, ``output_tput_per_gpu`` = output
tok/s over the GPUs -- over the **decode** GPUs when disaggregated --, ``input_tput_per_gpu``),
every latency of the benchmark in **seconds** with ``_ms`` dropped (``mean_tpot``,
``p99_ttft``, ...) and for each TPOT key an interactivity ``*_intvty`` = 1000 / TPOT in ms
(tok/s per user). ``utils/aggregate_power.py`` adds ``joules_per_output_token`` and
``power_valid`` (1/0) where GPU power was measured. ``utils/collect_results.py`` concatenates
rows into ``agg_bmk.json`` without checking them.

A row states its GPU type (``hw``, the runner type such as ``h200`` or ``gb200``) and its GPU
count (tp x pp x pcp on one node, InferenceX's own denominator; prefill + decode GPUs across
nodes), so both are facts here. It keeps no token totals or duration: the arithmetic checked
is the per-user bound (concurrency x interactivity against the output rate).
"""

from __future__ import annotations

import math
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, number

#: InferenceX key -> inference column, for the values copied as written
INFERENCEX_FIELDS: dict[str, str] = {
    "conc": "concurrency",
    "isl": "input_len",
    "osl": "output_len",
    "output_tput_per_gpu": "output_tok_s_per_gpu_reported",
    "mean_intvty": "interactivity_tok_s_user",
}
#: InferenceX latency key (seconds) -> inference column (milliseconds)
INFERENCEX_SECONDS: dict[str, str] = {
    "mean_tpot": "tpot_mean_ms",
    "p99_tpot": "tpot_p99_ms",
    "p99_ttft": "ttft_p99_ms",
    "median_tpot": "tpot_median_ms",
    "mean_ttft": "ttft_mean_ms",
    "median_ttft": "ttft_median_ms",
}
_NEEDS = ("hw", "conc", "model", "precision", "isl", "osl", "tput_per_gpu",
          "output_tput_per_gpu")


def _looks_like_row(data: Any) -> bool:
    return isinstance(data, dict) and all(k in data for k in ("hw", "conc", "isl", "osl")) and (
        "output_tput_per_gpu" in data)


def _shape(data: Any) -> bool:
    if isinstance(data, list):
        return bool(data) and all(_looks_like_row(r) for r in data[:3])
    return _looks_like_row(data)


def _whole(data: dict[str, Any], key: str, path: Any, where: str, *,
           default: int | None = None) -> int:
    value = number(data.get(key))
    if value is None and default is not None and key not in data:
        return default
    if value is None or not value.is_integer() or value < 0:
        raise EvidenceError(f"{where}: {key!r} is not a whole number", file=path, field=key,
                            fix="submit the rows exactly as InferenceX's process_result.py "
                            "wrote them")
    return int(value)


def _gpus(data: dict[str, Any], path: Any, where: str) -> tuple[int, int | None, int | None]:
    """All GPUs, then the prefill and decode GPUs of a multinode (disaggregated) row."""
    if data.get("is_multinode") is True:
        prefill = _whole(data, "num_prefill_gpu", path, where)
        decode = _whole(data, "num_decode_gpu", path, where)
        return prefill + decode, prefill, decode
    gpus = 1
    for key in ("tp", "pp", "pcp_size"):  # InferenceX's denominator; DCP adds no GPUs
        gpus *= _whole(data, key, path, where, default=1)
    return gpus, None, None


def _row(data: dict[str, Any], index: int, many: bool, path: Any) -> dict[str, Any]:
    where = f"row {index}" if many else "the row"
    for key in _NEEDS:
        if key not in data or data[key] is None:
            raise EvidenceError(f"{where} has no {key!r}", file=path, field=key,
                                expected="an InferenceX agg row (process_result.py)",
                                fix="submit the rows exactly as InferenceX wrote them")
    gpus, prefill, decode = _gpus(data, path, where)
    if gpus <= 0:
        raise EvidenceError(f"{where} states {gpus} GPUs", file=path, field="tp",
                            expected="at least one GPU")
    row: dict[str, Any] = {"tool": "inferencex", "line": index + 1 if many else 1,
                           "model": str(data["model"]), "precision": str(data["precision"]),
                           "gpu_name": str(data["hw"]), "gpus": gpus,
                           "prefill_gpus": prefill, "decode_gpus": decode}
    for key, column in INFERENCEX_FIELDS.items():
        row[column] = number(data.get(key))
    for key, column in INFERENCEX_SECONDS.items():
        seconds = number(data.get(key))
        row[column] = seconds * 1000.0 if seconds is not None else None
    for column in ("concurrency", "output_tok_s_per_gpu_reported"):
        value = row[column]
        if value is None or not math.isfinite(value) or value < 0:
            raise EvidenceError(f"{where}: {column.split('_')[0]} is not a number", file=path,
                                field="conc" if column == "concurrency"
                                else "output_tput_per_gpu")
    for column in ("input_len", "output_len"):
        row[column] = int(row[column]) if row[column] and row[column].is_integer() else None
    # output per GPU divides by the decode GPUs when disaggregated, by all GPUs otherwise
    row["output_tok_s"] = row["output_tok_s_per_gpu_reported"] * (decode or gpus)
    total = number(data.get("tput_per_gpu"))
    row["total_tok_s"] = total * gpus if total is not None else None
    if number(data.get("power_valid")) == 1:
        row["j_per_output_token"] = number(data.get("joules_per_output_token"))
    spec = str(data.get("spec_decoding") or "none")
    row["scenario"] = ("disaggregated" if data.get("disagg") is True else "aggregated") + (
        f", speculative decoding {spec}" if spec != "none" else "")
    return row


class InferencexAgg(ServingResult):
    id = "inferencex-agg"
    title = "InferenceX fixed-sequence result rows (agg_*.json)"
    tool = ("InferenceX `utils/process_result.py` (SemiAnalysisAI/InferenceX @ 843c625): "
            "agg_<RESULT_FILENAME>.json, or the rows collected into agg_bmk.json")
    sample = "inference/inferencex_agg_bmk_h200.json"
    json_shape = staticmethod(_shape)

    def parse(self, probe: Probe) -> Results:
        data = probe.require_json("an InferenceX agg row or array of rows")
        many = isinstance(data, list)
        items = data if many else [data]
        rows: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            if not _looks_like_row(item):
                raise EvidenceError(f"row {index} is not an InferenceX result row",
                                    file=probe.path, expected="hw, conc, isl, osl and "
                                    "output_tput_per_gpu, as process_result.py writes them")
            rows.append(_row(item, index, many, probe.path))
        facts: list[Fact] = []
        for kind, key in (("gpu", "gpu_name"), ("gpu_count", "gpus"), ("model", "model"),
                          ("precision", "precision")):
            for value in dict.fromkeys(str(r[key]) for r in rows):
                facts.append(Fact(kind, value, None, where=f"agg rows: {key}"))
        for image in dict.fromkeys(str(i.get("image")) for i in items if i.get("image")):
            facts.append(Fact("container", image, None, where="agg rows: image"))
        return Results(rows, facts)


register(InferencexAgg())
