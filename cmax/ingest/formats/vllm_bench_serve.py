"""``vllm bench serve --save-result`` results (and ``--append-result`` files).

Written by ``vllm/benchmarks/serve.py`` of vllm-project/vllm @ 009e6d4: one JSON object per
result, written by ``json.dump`` with no indent; ``--append-result`` appends further objects,
each on its own line. Its keys are mapped one by one (:data:`VLLM_FIELDS`): ``duration``,
``completed``, ``failed``, ``total_input_tokens``, ``total_output_tokens``,
``output_throughput``, ``total_token_throughput``, the p99, median and mean latencies (in ms;
the same keys without ``_ms`` in seconds, :data:`VLLM_LATENCIES`), the run's setup
(``backend``, ``model_id``, ``request_rate`` or ``"inf"``, ``max_concurrency``) and any
``--metadata KEY=VALUE`` pairs. ``date`` is the save time right after the run, so the run spans
the ``duration`` before it (what places ``[[power]]`` telemetry in it). It records **no GPU type
or count**: those come from the manifest and stay declarations.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, json_objects, number

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
    "temperature": "temperature",
}
#: vLLM latency key (milliseconds) -> inference column. A result that carries these keys in
#: seconds with ``_ms`` dropped (``p99_ttft``, as InferenceX's process_result.py rewrites them)
#: is read in seconds.
VLLM_LATENCIES: dict[str, str] = {
    "p99_ttft_ms": "ttft_p99_ms",
    "mean_ttft_ms": "ttft_mean_ms",
    "median_ttft_ms": "ttft_median_ms",
    "p99_tpot_ms": "tpot_p99_ms",
    "mean_tpot_ms": "tpot_mean_ms",
    "median_tpot_ms": "tpot_median_ms",
}


_VLLM_NEEDS = ("duration", "completed", "total_output_tokens", "output_throughput")


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
    row.update(_latencies(data))
    for key in ("precision", "dtype", "quantization"):  # --metadata precision=fp8
        if isinstance(data.get(key), str):
            row["precision"] = data[key]
            break
    for key in ("gpus", "num_gpus", "tensor_parallel_size"):  # --metadata gpus=8
        if (count := number(data.get(key))) is not None and count.is_integer():
            row["gpus"] = int(count)
            break
    saved = _saved_at(data.get("date"))
    if saved is not None and row["duration_s"]:
        row["started_s"], row["ended_s"] = saved - row["duration_s"], saved
    return row


def _latencies(data: dict[str, Any]) -> dict[str, float | None]:
    """Each latency in ms: the ``*_ms`` key as vLLM writes it, else the same key without
    ``_ms`` in seconds (never both guessed: a file with any ``*_ms`` latency is read in ms)."""
    in_ms = any(key in data for key in VLLM_LATENCIES)
    out: dict[str, float | None] = {}
    for key, column in VLLM_LATENCIES.items():
        value = number(data.get(key)) if in_ms else number(data.get(key.removesuffix("_ms")))
        if value is not None and in_ms is False:
            value *= 1000.0
        out[column] = value if value is None or math.isfinite(value) else None
    return out


def _saved_at(text: Any) -> float | None:
    """``date``: when vLLM saved the result, right after the run (``datetime.now()``, the
    host's clock without a zone, read as UTC as cmax reads every stamp), to the second; the
    run spans the ``duration`` before it. None when absent or in no known layout."""
    for layout in ("%Y%m%d-%H%M%S", "%Y-%m-%d %H:%M:%S"):
        try:
            return dt.datetime.strptime(str(text), layout).replace(tzinfo=dt.UTC).timestamp()
        except ValueError:
            continue
    return None


class VllmBenchServe(ServingResult):
    id = "vllm-bench-serve"
    title = "vLLM `bench serve` result JSON"
    tool = ("`vllm bench serve --save-result` (vllm-project/vllm "
            "vllm/benchmarks/serve.py @ 009e6d4), one object per line with --append-result")
    sample = "inference/vllm_bench_serve_llama3.3-70b.json"

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


register(VllmBenchServe())
