"""SGLang ``bench_serving`` results: the JSONL ``--output-file`` appends one result to per run.

Written by ``save_results()`` in ``python/sglang/benchmark/metrics.py`` of sgl-project/sglang
@ 6e48df3 (``python -m sglang.bench_serving``): the run's arguments (``backend``,
``dataset_name``, ``request_rate`` -- a number, ``Infinity`` for all-at-once, or ``"trace"`` --
``max_concurrency``, ``random_input_len``, ``random_output_len``, ``random_range_ratio``),
``duration``, then every field of ``BenchmarkMetrics`` under its own name: ``completed``,
``total_input``, ``total_output``, ``output_throughput``, ``total_throughput``,
``mean/median/std/p99_{ttft,tpot,itl,e2e_latency}_ms`` and ``concurrency`` (the *measured*
mean requests in flight, not the cap). Older releases wrote ``total_input_tokens`` /
``total_output_tokens`` instead (the same numbers). SGLang names its keys differently from
vLLM (``total_output`` against ``total_output_tokens``, ``total_throughput`` against
``total_token_throughput``), so each is mapped explicitly in :data:`SGLANG_FIELDS`.

A result records **no model, GPU type or GPU count, and no failed-request count** (only the
requests that completed): those stay the manifest's declarations.
"""

from __future__ import annotations

import math
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.formats._protocol import Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, json_objects, number

#: SGLang key -> inference column; the first key present wins (current name, then older)
SGLANG_FIELDS: dict[str, tuple[str, ...]] = {
    "duration_s": ("duration",),
    "completed": ("completed",),
    "input_tokens": ("total_input", "total_input_tokens"),
    "output_tokens": ("total_output", "total_output_tokens"),
    "output_tok_s": ("output_throughput",),
    "total_tok_s": ("total_throughput",),
    "concurrency": ("max_concurrency",),
    "request_rate": ("request_rate",),
    "ttft_p99_ms": ("p99_ttft_ms",),
    "tpot_p99_ms": ("p99_tpot_ms",),
    "tpot_mean_ms": ("mean_tpot_ms",),
    "tpot_median_ms": ("median_tpot_ms",),
    "ttft_mean_ms": ("mean_ttft_ms",),
    "ttft_median_ms": ("median_ttft_ms",),
}
_NEEDS = ("duration_s", "completed", "output_tokens", "output_tok_s")
#: a key only SGLang writes: its re-tokenized output count, under either release's name
_MARKS = ('"total_output_retokenized"', '"total_output_tokens_retokenized"')


def _looks_like_sglang(data: Any) -> bool:
    return isinstance(data, dict) and "duration" in data and "output_throughput" in data and (
        "total_output_retokenized" in data or "total_output_tokens_retokenized" in data)


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((data[k] for k in keys if k in data), None)


def _row(data: dict[str, Any], line: int, path: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"tool": "sglang-bench-serving", "line": line, "failed": None}
    for column, keys in SGLANG_FIELDS.items():
        value = number(_first(data, keys))
        if column in _NEEDS and (value is None or not math.isfinite(value)):
            raise EvidenceError(f"result has no number for {keys[0]!r}", file=path, line=line,
                                field=keys[0], expected="the JSONL `python -m "
                                "sglang.bench_serving --output-file` appends",
                                fix="submit the file exactly as SGLang wrote it")
        if value is not None and not math.isfinite(value):
            value = None  # request_rate Infinity: every request sent at once
        row[column] = value
    if data.get("request_rate") == "trace":
        # arrival times replayed from a trace: paced, never an offline maximum, so the row
        # keeps the requests it measured in flight on average as its concurrency
        row["scenario"] = "trace replay (concurrency: mean requests in flight)"
        row["concurrency"] = row["concurrency"] or number(data.get("concurrency"))
    for column, key in (("completed", "completed"), ("input_tokens", "total_input"),
                        ("output_tokens", "total_output")):
        if row[column] is not None:
            if not float(row[column]).is_integer():
                raise EvidenceError(f"{key!r} is not a whole number", file=path, line=line,
                                    field=key, fix="submit the file exactly as SGLang wrote it")
            row[column] = int(row[column])
    # fixed lengths only when the random dataset drew every request at its full length
    ratio = number(data.get("random_range_ratio"))
    if str(data.get("dataset_name") or "").startswith("random") and ratio == 1.0:
        for column, key in (("input_len", "random_input_len"),
                            ("output_len", "random_output_len")):
            value = number(data.get(key))
            row[column] = int(value) if value is not None and value.is_integer() else None
    return row


class SglangBenchServing(ServingResult):
    id = "sglang-bench-serving"
    title = "SGLang `bench_serving` result JSONL"
    tool = ("`python -m sglang.bench_serving --output-file` (sgl-project/sglang "
            "python/sglang/benchmark/metrics.py @ 6e48df3), one result appended per line")
    sample = "inference/sglang_bench_serving_llama3.3-70b.jsonl"

    def sniff(self, probe: Probe) -> bool:
        head = probe.head_text
        return (head[:1] == "{" and '"output_throughput"' in head and '"duration"' in head
                and any(mark in head for mark in _MARKS))

    def parse(self, probe: Probe) -> Results:
        rows: list[dict[str, Any]] = []
        for line, data in json_objects(probe, "one `sglang.bench_serving` result per line"):
            if not _looks_like_sglang(data):
                raise EvidenceError("not an SGLang `bench_serving` result object",
                                    file=probe.path, line=line,
                                    expected="duration, output_throughput and "
                                    "total_output_retokenized, as SGLang writes them")
            rows.append(_row(data, line, probe.path))
        return Results(rows)


register(SglangBenchServing())
