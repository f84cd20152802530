"""``trtllm-bench --report_json`` reports.

Written by ``tensorrt_llm/bench/dataclasses/reporting.py`` of NVIDIA/TensorRT-LLM @ 0249976:
one JSON document with ``engine`` (model, dtype, quantization, version), ``machine`` (the GPU's
name), ``world_info`` (tp, pp, ep, world_size), ``request_info`` and ``performance``
(``system_output_throughput_tok_s``, ``output_throughput_per_gpu_tok_s``, ``total_latency_ms``,
...), plus ``streaming_metrics`` when streamed. Its field names are mapped one by one in
:func:`_trtllm_row`.
"""

from __future__ import annotations

import math
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, number


def _looks_like_trtllm(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("performance"), dict)
            and isinstance(data.get("engine"), dict)
            and "output_throughput_per_gpu_tok_s" in data["performance"])


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    """A sub-object of the report, empty when absent or not an object."""
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _total(requests: float | None, per_request: float | None) -> int | None:
    """Tokens over all requests, None when either is unknown or the product is not finite."""
    total = _finite(requests * per_request) if requests is not None and per_request is not None \
        else None
    return round(total) if total is not None else None


def _trtllm_row(data: dict[str, Any]) -> dict[str, Any]:
    engine, perf = data["engine"], data["performance"]
    world, machine, requests, streaming = (
        _section(data, name) for name in ("world_info", "machine", "request_info",
                                          "streaming_metrics"))
    duration_ms = number(perf.get("total_latency_ms"))
    # counts and lengths are read only when finite: int(inf) and round(inf) raise
    num = _finite(number(requests.get("num_requests")))
    avg_out = _finite(number(requests.get("avg_output_length")))
    avg_in = _finite(number(requests.get("avg_input_length")))
    world_size = _finite(number(world.get("world_size")))
    tpot, ttft = _section(streaming, "tpot_percentiles"), _section(streaming, "ttft_percentiles")
    return {
        "tool": "trtllm-bench", "line": 1,
        "model": engine.get("model"),
        "precision": engine.get("quantization") or engine.get("dtype"),
        "gpu_name": machine.get("name"),
        "gpus": int(world_size) if world_size and world_size.is_integer() else None,
        "concurrency": None,  # an offline run: the queue is kept full, no cap
        "duration_s": duration_ms / 1000.0 if duration_ms is not None else None,
        "completed": int(num) if num is not None else None,
        "failed": 0,
        "input_tokens": _total(num, avg_in),
        "output_tokens": _total(num, avg_out),
        "output_tok_s": number(perf.get("system_output_throughput_tok_s")),
        "total_tok_s": number(perf.get("system_total_throughput_tok_s")),
        "output_tok_s_per_gpu_reported": number(perf.get("output_throughput_per_gpu_tok_s")),
        "ttft_p99_ms": number(ttft.get("p99")),
        "tpot_p99_ms": number(tpot.get("p99")),
        "tpot_mean_ms": number(streaming.get("avg_tpot_ms")),
    }


class TrtllmBenchReport(ServingResult):
    id = "trtllm-bench"
    title = "TensorRT-LLM `trtllm-bench` report JSON"
    tool = ("`trtllm-bench ... throughput --report_json` (NVIDIA/TensorRT-LLM "
            "tensorrt_llm/bench/dataclasses/reporting.py @ 0249976)")
    sample = "inference/trtllm_bench_report_llama3.3-70b.json"
    json_shape = staticmethod(_looks_like_trtllm)

    def parse(self, probe: Probe) -> Results:
        data = probe.require_json("a trtllm-bench --report_json document")
        row = _trtllm_row(data)
        for column in ("output_tok_s", "duration_s", "completed"):
            if row[column] is None:
                raise EvidenceError(f"report has no {column.replace('_', ' ')} (or not a "
                                    "finite number)",
                                    file=probe.path, expected="the JSON trtllm-bench "
                                    "--report_json writes", fix="submit the report as written")
        facts = [Fact(kind, str(row[key]), 1) for kind, key in
                 (("model", "model"), ("gpu", "gpu_name"), ("gpu_count", "gpus"),
                  ("precision", "precision")) if row.get(key) is not None]
        version = data["engine"].get("version")
        if version:
            facts.append(Fact("framework", f"tensorrt-llm {version}", 1))
        return Results([row], facts)

    def summarise(self, parsed: Results, probe: Probe) -> dict[str, Any]:
        row = parsed.rows[0]
        return {"format": self.id, "model": row["model"], "gpu": row["gpu_name"],
                "gpus": row["gpus"], "output_tok_s": row["output_tok_s"],
                "output_tok_s_per_gpu": row["output_tok_s_per_gpu_reported"]}


register(TrtllmBenchReport())
