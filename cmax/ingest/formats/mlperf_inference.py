"""MLPerf Inference ``mlperf_log_summary.txt``: the LoadGen's verdict on one performance run.

Written by the LoadGen (mlcommons/inference ``loadgen/results.cc`` @ b66003e, ``summary(...)``
lines): ``Scenario : <Offline|Server|Interactive|...>``, ``Mode : PerformanceOnly``, the
throughput (``Samples per second:`` / ``Tokens per second:`` offline; ``Completed samples per
second`` / ``Completed tokens per second`` in the latency-bound scenarios; ``(inferred)`` when
the SUT reported no token counts), ``Result is : VALID`` or ``INVALID`` with the constraint
lines under it (``Min duration satisfied : NO`` ...), and for LLM benchmarks the first-token and
per-output-token latency percentiles in **nanoseconds** (``time to output token`` in older
LoadGens, ``time per output token`` in newer). Each line is mapped in :data:`MLPERF_LINES`.

The summary names **no model, GPU or GPU count** (only the SUT's name): those are the
manifest's declarations. Per-GPU figures are not an MLPerf metric: cmax divides the system's
tokens/s by the declared GPUs and says so. An Offline run is a throughput at saturation (no
request rate); Server and Interactive runs are paced at ``target_qps``, kept as the request
rate so they are never taken for an offline maximum.
"""

from __future__ import annotations

import math
import re
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.formats import Marker, Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, number
from cmax.limits import read_bounded_text

#: summary line label (lower case, before the colon) -> (inference column, scale)
MLPERF_LINES: dict[str, tuple[str, float]] = {
    "samples per second": ("samples_per_s", 1.0),
    "completed samples per second": ("samples_per_s", 1.0),
    "tokens per second": ("output_tok_s", 1.0),
    "completed tokens per second": ("output_tok_s", 1.0),
    "tokens per second (inferred)": ("output_tok_s", 1.0),
    "completed tokens per second (inferred)": ("output_tok_s", 1.0),
    "99.00 percentile first token latency (ns)": ("ttft_p99_ms", 1e-6),
    "mean time to output token (ns)": ("tpot_mean_ms", 1e-6),
    "mean time per output token (ns)": ("tpot_mean_ms", 1e-6),
    "99.00 percentile time to output token (ns)": ("tpot_p99_ms", 1e-6),
    "99.00 percentile time per output token (ns)": ("tpot_p99_ms", 1e-6),
    "target_qps": ("request_rate", 1.0),
}
_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")
_CONSTRAINT = re.compile(r"^\s+(.+?) satisfied\s*:\s*NO\b", re.IGNORECASE)
_OFFLINE = "offline"


def _parse(text: str, path: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"tool": "mlperf-inference-summary", "line": 1}
    unmet: list[str] = []
    verdict_line = None
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if (unmet_match := _CONSTRAINT.match(raw)) is not None:
            unmet.append(unmet_match.group(1).strip().lower())
            continue
        match = _LINE.match(raw)
        if match is None:
            continue
        label, value = match.group(1).strip().lower(), match.group(2)
        if label == "scenario":
            row["scenario"] = value
        elif label == "mode":
            row["mode"] = value
        elif label == "result is":
            verdict_line = line_no
            if value not in ("VALID", "INVALID"):
                raise EvidenceError(f"'Result is : {value}' is neither VALID nor INVALID",
                                    file=path, line=line_no,
                                    fix="submit mlperf_log_summary.txt as the LoadGen wrote it")
            row["tool_valid"] = value == "VALID"
        elif (target := MLPERF_LINES.get(label)) is not None:
            column, scale = target
            got = number(value)
            if got is None or not math.isfinite(got) or got < 0:
                raise EvidenceError(f"{match.group(1).strip()!r} is not a number ({value!r})",
                                    file=path, line=line_no,
                                    fix="submit mlperf_log_summary.txt as the LoadGen wrote it")
            row.setdefault(column, got * scale)  # the first printing (Additional Stats repeat)
    if "scenario" not in row or verdict_line is None:
        raise EvidenceError("no 'Scenario :' or 'Result is :' line", file=path,
                            expected="an MLPerf Inference mlperf_log_summary.txt")
    if row.pop("mode", "PerformanceOnly") != "PerformanceOnly":
        raise EvidenceError("an accuracy run: it measures no throughput", file=path,
                            expected="the summary of a PerformanceOnly run (performance/run_1)")
    if row.get("output_tok_s") is None and row.get("samples_per_s") is None:
        raise EvidenceError("no samples or tokens per second line", file=path,
                            expected="the throughput line the LoadGen prints")
    if row["tool_valid"] is False:
        row["tool_invalid_reason"] = ("LoadGen: " + ", ".join(f"{c} not satisfied"
                                                              for c in unmet)) if unmet \
            else "LoadGen: Result is INVALID"
    if str(row["scenario"]).lower() == _OFFLINE:
        row["request_rate"] = None  # the whole query at once: a throughput at saturation
    return row


class MlperfInferenceSummary(ServingResult):
    id = "mlperf-inference-summary"
    title = "MLPerf Inference `mlperf_log_summary.txt`"
    tool = "MLPerf LoadGen (mlcommons/inference loadgen/results.cc @ b66003e)"
    sample = "inference/mlperf/server_mlperf_log_summary.txt"
    priority = 50
    markers = (Marker(b"MLPerf Results Summary",
                      re.compile(r"(?m)^MLPerf Results Summary\s*$")),)

    def parse(self, probe: Probe) -> Results:
        return Results([_parse(read_bounded_text(probe.path), probe.path)])

    def summarise(self, parsed: Results, probe: Probe) -> dict[str, Any]:
        row = parsed.rows[0]
        return {"format": self.id, "scenario": row["scenario"], "valid": row["tool_valid"],
                "output_tok_s": row.get("output_tok_s"),
                "samples_per_s": row.get("samples_per_s")}


register(MlperfInferenceSummary())
