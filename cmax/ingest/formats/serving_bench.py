"""Serving benchmark results: ``vllm bench serve --save-result`` and ``trtllm-bench --report_json``.

Each tool's field names are mapped explicitly (:data:`VLLM_FIELDS`, :func:`_trtllm_row`) onto
the ``inference`` table (:data:`cmax.evidence.INFERENCE_SCHEMA`):

* vLLM (``vllm/benchmarks/serve.py`` of vllm-project/vllm @ 009e6d4): one JSON object per
  result, written by ``json.dump`` with no indent; ``--append-result`` appends further
  objects, each on its own line. Keys: ``duration``, ``completed``, ``failed``,
  ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``,
  ``output_throughput``, ``total_token_throughput``, ``mean/median/std/p<N>_{ttft,tpot,itl,
  e2el}_ms``, the run's setup (``backend``, ``model_id``, ``request_rate`` or ``"inf"``,
  ``max_concurrency``) and any ``--metadata KEY=VALUE`` pairs. It records **no GPU type or
  count**: those come from the manifest and stay declarations.
* TensorRT-LLM (``tensorrt_llm/bench/dataclasses/reporting.py`` of NVIDIA/TensorRT-LLM @
  0249976): one JSON document with ``engine`` (model, dtype, quantization, version),
  ``machine`` (the GPU's name), ``world_info`` (tp, pp, ep, world_size), ``request_info`` and
  ``performance`` (``system_output_throughput_tok_s``, ``output_throughput_per_gpu_tok_s``,
  ``total_latency_ms``, ...), plus ``streaming_metrics`` when streamed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.evidence import INFERENCE_SCHEMA, conform
from cmax.facts import Fact
from cmax.ingest.formats import InferenceFormat, Probe, register
from cmax.limits import MAX_JSON_BYTES, load_json, read_bounded_text

#: vLLM key -> inference column (numbers as written; ``request_rate`` may be "inf")
VLLM_FIELDS: dict[str, str] = {
    "duration": "duration_s",
    "completed": "completed",
    "failed": "failed",
    "total_input_tokens": "input_tokens",
    "total_output_tokens": "output_tokens",
    "output_throughput": "output_tok_s",
    "total_token_throughput": "total_tok_s",
    "max_concurrency": "concurrency",
    "request_rate": "request_rate",
    "p99_ttft_ms": "ttft_p99_ms",
    "p99_tpot_ms": "tpot_p99_ms",
    "mean_tpot_ms": "tpot_mean_ms",
    "temperature": "temperature",
}
_VLLM_NEEDS = ("duration", "completed", "total_output_tokens", "output_throughput")


@dataclass
class Results:
    """The result rows of one file, each with its line, and the identity facts it states."""

    rows: list[dict[str, Any]]
    facts: list[Fact] = field(default_factory=list)


def number(value: Any) -> float | None:
    """A finite number, ``inf`` for vLLM's unbounded rate, else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):  # "inf" (an unbounded rate) or a --metadata value such as "0.0"
        try:
            return float(value)
        except ValueError:
            return None
    if isinstance(value, int | float):
        return float(value)
    return None


def json_objects(probe: Probe, expected: str) -> list[tuple[int, Any]]:
    """The result objects of a file and the line each starts on: one JSON document (line 1),
    or one object per line as the tools append them (``--append-result``, SGLang's JSONL)."""
    if probe.has_json:
        return [(1, probe.json)]
    objects: list[tuple[int, Any]] = []
    text = read_bounded_text(probe.path, limit=MAX_JSON_BYTES)
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            objects.append((line_no, load_json(line, file=probe.path)))
        except ValueError as exc:
            raise EvidenceError(f"line is not a JSON result object ({exc})", file=probe.path,
                                line=line_no, expected=expected,
                                fix="submit the file exactly as the benchmark wrote it") from None
    return objects


def _looks_like_vllm(data: Any) -> bool:
    return isinstance(data, dict) and all(k in data for k in _VLLM_NEEDS) and (
        "backend" in data or "endpoint_type" in data or "model_id" in data)


def _vllm_row(data: dict[str, Any], line: int, path: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"tool": "vllm-bench-serve", "line": line,
                           "model": data.get("model_id") or data.get("model")}
    for key, column in VLLM_FIELDS.items():
        value = number(data.get(key))
        if key in _VLLM_NEEDS and value is None:
            raise EvidenceError(f"result has no number for {key!r}", file=path, line=line,
                                field=key, expected="the JSON `vllm bench serve --save-result` "
                                "writes", fix="submit the file exactly as vLLM wrote it")
        if value is not None and not math.isfinite(value):
            value = None  # an unbounded rate or concurrency: offline, as fast as possible
        row[column] = value
    for key in ("precision", "dtype", "quantization"):  # --metadata precision=fp8
        if isinstance(data.get(key), str):
            row["precision"] = data[key]
            break
    for key in ("gpus", "num_gpus", "tensor_parallel_size"):  # --metadata gpus=8
        if (count := number(data.get(key))) is not None and count.is_integer():
            row["gpus"] = int(count)
            break
    return row


class ServingResult(InferenceFormat[Results]):
    """What both tools' results share: rows of the inference table, one per result."""

    def frame(self, parsed: Results, *, run_id: str, source_file: str) -> pl.DataFrame:
        many = len(parsed.rows) > 1
        rows = [{**row, "run_id": f"{run_id}#{k}" if many else run_id,
                 "source_file": source_file} for k, row in enumerate(parsed.rows)]
        return conform(pl.DataFrame(rows, infer_schema_length=None), INFERENCE_SCHEMA)

    def summarise(self, parsed: Results, probe: Probe) -> dict[str, Any]:
        """Each result's output rate and concurrency cap (None: uncapped), in file order."""
        return {"format": self.id, "results": len(parsed.rows),
                "output_tok_s": [r.get("output_tok_s") for r in parsed.rows],
                "concurrency": [r.get("concurrency") for r in parsed.rows]}


class VllmBenchServe(ServingResult):
    id = "vllm-bench-serve"
    title = "vLLM `bench serve` result JSON"
    tool = ("`vllm bench serve --save-result` (vllm-project/vllm "
            "vllm/benchmarks/serve.py @ 009e6d4), one object per line with --append-result")
    sample = "inference/vllm_bench_serve_llama3.3-70b.json"
    priority = 55

    def sniff(self, probe: Probe) -> bool:
        head = probe.head_text
        return (head[:1] == "{" and '"output_throughput"' in head and '"duration"' in head
                and '"total_output_tokens"' in head)

    def parse(self, probe: Probe) -> Results:
        rows: list[dict[str, Any]] = []
        for line, data in json_objects(probe, "one `vllm bench serve` result per line"):
            if not _looks_like_vllm(data):
                raise EvidenceError("not a `vllm bench serve` result object", file=probe.path,
                                    line=line, expected=", ".join(_VLLM_NEEDS))
            rows.append(_vllm_row(data, line, probe.path))
        models = {str(r["model"]): r["line"] for r in reversed(rows) if r.get("model")}
        facts = [Fact("model", name, line) for name, line in models.items()]
        return Results(rows, facts)


def _looks_like_trtllm(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("performance"), dict)
            and isinstance(data.get("engine"), dict)
            and "output_throughput_per_gpu_tok_s" in data["performance"])


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    """A sub-object of the report, empty when absent or not an object."""
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _trtllm_row(data: dict[str, Any]) -> dict[str, Any]:
    engine, perf = data["engine"], data["performance"]
    world, machine, requests, streaming = (
        _section(data, name) for name in ("world_info", "machine", "request_info",
                                          "streaming_metrics"))
    duration_ms = number(perf.get("total_latency_ms"))
    num = number(requests.get("num_requests"))
    avg_out = number(requests.get("avg_output_length"))
    avg_in = number(requests.get("avg_input_length"))
    world_size = number(world.get("world_size"))
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
        "input_tokens": round(num * avg_in) if num is not None and avg_in is not None else None,
        "output_tokens": (round(num * avg_out) if num is not None and avg_out is not None
                          else None),
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
    priority = 55
    json_shape = staticmethod(_looks_like_trtllm)

    def parse(self, probe: Probe) -> Results:
        data = probe.require_json("a trtllm-bench --report_json document")
        row = _trtllm_row(data)
        for column in ("output_tok_s", "duration_s", "completed"):
            if row[column] is None:
                raise EvidenceError(f"report has no {column.replace('_', ' ')}",
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


register(VllmBenchServe())
register(TrtllmBenchReport())
