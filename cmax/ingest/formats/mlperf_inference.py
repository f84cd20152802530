"""MLPerf Inference ``mlperf_log_summary.txt``: the LoadGen's verdict on one performance run.

Written by the LoadGen (mlcommons/inference ``loadgen/results.cc`` @ b66003e, ``summary(...)``
lines): ``Scenario : <Offline|Server|Interactive|...>``, ``Mode : PerformanceOnly``, the
throughput (``Samples per second:`` / ``Tokens per second:`` offline; ``Completed samples per
second`` / ``Completed tokens per second`` in the latency-bound scenarios; ``(inferred)`` when
the SUT reported no token counts), ``Result is : VALID`` or ``INVALID`` with the constraint
lines under it (``Min duration satisfied : NO`` ...), and for LLM benchmarks the first-token and
per-output-token latency percentiles in **nanoseconds** (``time to output token`` in older
LoadGens, ``time per output token`` in newer). Each line is mapped in :data:`MLPERF_LINES`.

The latency scenarios report a percentile latency, not a throughput: SingleStream its 90th and
MultiStream its 99th percentile (``90.0th percentile latency (ns) : ...``). Where the LoadGen
prints an ``Early Stopping Result:`` estimate of that percentile, the estimate is the result,
as the MLCommons summarizer reports it (``summary_results.json`` of inference_results_v5.1 @
965182b: GATEOverflow resnet50 MultiStream 0.503471 ms is the estimate, not the 0.503206 ms
percentile line). The LoadGen runs the Interactive scenario as a Server run with tighter
latency bounds and prints ``Scenario : Server``; the submission folder names it
(``<benchmark>/Interactive/performance/run_1``), and the summarizer takes the scenario from
the folder, so cmax does too. An accuracy run's summary holds only the warnings and errors
lines, no ``MLPerf Results Summary``: it is refused with what to submit instead.

The summary names **no model, GPU or GPU count** (only the SUT's name): those are the
manifest's declarations. Per-GPU figures are not an MLPerf metric: cmax divides the system's
tokens/s by the declared GPUs and says so. An Offline run is a throughput at saturation (no
request rate); Server and Interactive runs are paced at ``target_qps``, kept as the request
rate so they are never taken for an offline maximum.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.formats._protocol import Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, number

#: summary line label (lower case, before the colon) -> (inference column, scale)
MLPERF_LINES: dict[str, tuple[str, float]] = {
    "samples per second": ("samples_per_s", 1.0),
    "completed samples per second": ("samples_per_s", 1.0),
    "tokens per second": ("output_tok_s", 1.0),
    "completed tokens per second": ("output_tok_s", 1.0),
    "tokens per second (inferred)": ("output_tok_s", 1.0),
    "completed tokens per second (inferred)": ("output_tok_s", 1.0),
    "99.00 percentile first token latency (ns)": ("ttft_p99_ms", 1e-6),
    "mean first token latency (ns)": ("ttft_mean_ms", 1e-6),
    "50.00 percentile first token latency (ns)": ("ttft_median_ms", 1e-6),
    "50.00 percentile time to output token (ns)": ("tpot_median_ms", 1e-6),
    "50.00 percentile time per output token (ns)": ("tpot_median_ms", 1e-6),
    "mean time to output token (ns)": ("tpot_mean_ms", 1e-6),
    "mean time per output token (ns)": ("tpot_mean_ms", 1e-6),
    "99.00 percentile time to output token (ns)": ("tpot_p99_ms", 1e-6),
    "99.00 percentile time per output token (ns)": ("tpot_p99_ms", 1e-6),
    "target_qps": ("request_rate", 1.0),
}
_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")
#: the result line of a latency scenario: ``90.0th percentile latency (ns) : 304963``
_PERCENTILE = re.compile(r"^(\d+(?:\.\d+)?)th percentile latency \(ns\)$")
#: ``Early stopping 90.0th percentile estimate: 305005`` under ``Early Stopping Result:``
_ESTIMATE = re.compile(r"^\s*\*\s*Early stopping (\d+(?:\.\d+)?)th percentile estimate:\s*(\d+)")
_HEADER = re.compile(r"(?m)^MLPerf Results Summary\s*$")
#: LoadGen scenarios whose result is a percentile latency
LATENCY_SCENARIOS = ("singlestream", "multistream")
#: the file name the LoadGen gives its summary
SUMMARY_NAME = "mlperf_log_summary.txt"
_CONSTRAINT = re.compile(r"^\s+(.+?) satisfied\s*:\s*NO\b", re.IGNORECASE)
_OFFLINE = "offline"


def _parse(text: str, path: Any) -> dict[str, Any]:
    if _HEADER.search(text) is None:
        raise EvidenceError(
            "an MLPerf Inference summary without 'MLPerf Results Summary': the LoadGen writes "
            "only its warnings and errors in accuracy mode, so this is an accuracy run's "
            "summary and measures no performance", file=path,
            expected="the summary of a PerformanceOnly run",
            fix="submit <benchmark>/<scenario>/performance/run_1/mlperf_log_summary.txt, "
            "not the one under accuracy/")
    row: dict[str, Any] = {"tool": "mlperf-inference-summary", "line": 1}
    unmet: list[str] = []
    verdict_line = None
    block = ""  # the early-stopping block a line is in ("" outside one)
    estimates: dict[float, float] = {}
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if (unmet_match := _CONSTRAINT.match(raw)) is not None:
            unmet.append(unmet_match.group(1).strip().lower())
            continue
        if raw.strip().endswith("Early Stopping Result:"):
            block = raw.strip()
            continue
        if (estimate := _ESTIMATE.match(raw)) is not None:
            if block == "Early Stopping Result:":  # the result's own, not TTFT's or TPOT's
                estimates[float(estimate.group(1))] = float(estimate.group(2))
            continue
        if not raw.startswith(" "):
            block = ""
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
        elif (pct := _PERCENTILE.match(label)) is not None and "latency_ms" not in row:
            got = number(value)
            if got is None or not math.isfinite(got) or got < 0:
                raise EvidenceError(f"{match.group(1).strip()!r} is not a number ({value!r})",
                                    file=path, line=line_no,
                                    fix="submit mlperf_log_summary.txt as the LoadGen wrote it")
            row["latency_percentile"], row["latency_ms"] = float(pct.group(1)), got * 1e-6
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
    row["scenario"] = _scenario(str(row["scenario"]), path)
    latency = str(row["scenario"]).lower() in LATENCY_SCENARIOS
    if latency:
        if "latency_ms" not in row:
            raise EvidenceError(f"a {row['scenario']} summary without its percentile latency "
                                "line", file=path,
                                expected="'90.0th percentile latency (ns) : ...' (SingleStream) "
                                "or '99.0th percentile latency (ns) : ...' (MultiStream)",
                                fix="submit mlperf_log_summary.txt as the LoadGen wrote it")
        if (early := estimates.get(row["latency_percentile"])) is not None:
            row["latency_ms"] = early * 1e-6  # the summarizer's result: the early-stopping bound
        # a latency run's throughput lines are additional stats, not its result
        for column in ("output_tok_s", "samples_per_s"):
            row.pop(column, None)
    elif row.get("output_tok_s") is None and row.get("samples_per_s") is None:
        raise EvidenceError("no samples or tokens per second line", file=path,
                            expected="the throughput line the LoadGen prints")
    if row["tool_valid"] is False:
        row["tool_invalid_reason"] = ("LoadGen: " + ", ".join(f"{c} not satisfied"
                                                              for c in unmet)) if unmet \
            else "LoadGen: Result is INVALID"
    if str(row["scenario"]).lower() in (_OFFLINE, *LATENCY_SCENARIOS):
        row["request_rate"] = None  # no request rate: the whole query at once, or one at a time
    return row


def _scenario(printed: str, path: Any) -> str:
    """The scenario as the submission names it: ``Interactive`` where the LoadGen printed
    ``Server`` and the file sits in an ``Interactive`` scenario folder (the summarizer takes
    the folder's name); else as printed."""
    folders = {part.lower() for part in Path(str(path)).parts[:-1]}
    if printed.lower() == "server" and "interactive" in folders:
        return "Interactive"
    return printed


class MlperfInferenceSummary(ServingResult):
    id = "mlperf-inference-summary"
    title = "MLPerf Inference `mlperf_log_summary.txt`"
    tool = "MLPerf LoadGen (mlcommons/inference loadgen/results.cc @ b66003e)"
    sample = "inference/mlperf/server_mlperf_log_summary.txt"

    def sniff(self, probe: Probe) -> bool:
        """The LoadGen's header, or its file name (an accuracy run's summary has no header and
        is refused by name, not left unrecognised)."""
        return probe.path.name == SUMMARY_NAME or _HEADER.search(probe.head_text) is not None

    def parse(self, probe: Probe) -> Results:
        return Results([_parse(probe.text, probe.path)])

    def summarise(self, parsed: Results, probe: Probe) -> dict[str, Any]:
        row = parsed.rows[0]
        return {"format": self.id, "scenario": row["scenario"], "valid": row["tool_valid"],
                "output_tok_s": row.get("output_tok_s"),
                "samples_per_s": row.get("samples_per_s"),
                "latency_ms": row.get("latency_ms"),
                "latency_percentile": row.get("latency_percentile")}


register(MlperfInferenceSummary())


#: LoadGen load pattern (``run_config.load_pattern.type``) -> the scenario it runs
_PATTERNS = {"poisson": "Server", "max_throughput": "Offline"}
#: a v6.1 statistic block's percentile -> inference column (nanoseconds in the file)
_ENDPOINT_PERCENTILES = (("ttft", "99.0", "ttft_p99_ms"), ("tpot", "99.0", "tpot_p99_ms"))
_ENDPOINT_STATS = (("tpot", "avg", "tpot_mean_ms"), ("tpot", "median", "tpot_median_ms"),
                   ("ttft", "avg", "ttft_mean_ms"), ("ttft", "median", "ttft_median_ms"))
_ENDPOINT_NEEDS = ("version", "n_samples_completed", "duration_ns", "tps", "run_config")


def _looks_like_endpoints(data: Any) -> bool:
    return isinstance(data, dict) and all(k in data for k in _ENDPOINT_NEEDS) and isinstance(
        data.get("tpot"), dict)


def _endpoint_number(data: dict[str, Any], key: str, path: Any, *, block: str = "") -> float:
    value = number(data.get(key))
    if value is None or not math.isfinite(value) or value < 0:
        where = f"{block}.{key}" if block else key
        raise EvidenceError(f"{where} is not a non-negative number ({data.get(key)!r})",
                            file=path, field=where, expected="the result_summary.json the "
                            "MLPerf endpoints harness writes", fix="submit the file unedited")
    return value


def _endpoints_row(data: dict[str, Any], path: Any) -> dict[str, Any]:
    """One row from a v6.1 ``result_summary.json`` (times in ns, rates per second)."""
    config = data.get("run_config")
    config = config if isinstance(config, dict) else {}
    pattern = config.get("load_pattern")
    pattern = pattern if isinstance(pattern, dict) else {}
    folders = [part for part in Path(str(path)).parts[:-1]]
    named = next((f for f in reversed(folders) if f.lower() in _THROUGHPUT_FOLDERS), None)
    scenario = named or _PATTERNS.get(str(pattern.get("type")))
    if scenario is None:
        raise EvidenceError(f"load pattern {pattern.get('type')!r} names no scenario and no "
                            "Offline, Server or Interactive folder holds the file", file=path,
                            field="run_config.load_pattern.type",
                            expected="poisson (Server) or max_throughput (Offline)",
                            fix="keep the file in its <benchmark>/<scenario>/performance folder")
    legacy = pattern.get("use_legacy_loadgen_qps_metrics") is True
    window = "legacy_loadgen_window_duration_ns" if legacy else "duration_ns"
    row: dict[str, Any] = {
        "tool": "mlperf-inference-result-summary", "line": 1, "scenario": scenario,
        # tps and qps are over the LoadGen-compatible window when the run says so
        "duration_s": _endpoint_number(data, window, path) * 1e-9,
        "output_tok_s": _endpoint_number(data, "tps", path),
        "samples_per_s": number(data.get("qps")),
        "completed": int(_endpoint_number(data, "n_samples_completed", path)),
        "failed": int(number(data.get("n_samples_failed")) or 0),
        "request_rate": None if scenario == "Offline" else number(pattern.get("target_qps")),
        "concurrency": number(pattern.get("target_concurrency")),
    }
    lengths = data.get("output_sequence_lengths")
    if isinstance(lengths, dict) and (total := number(lengths.get("total"))) is not None \
            and math.isfinite(total):
        row["output_tokens"] = int(total)
    for block, pct, column in _ENDPOINT_PERCENTILES:
        stats = data.get(block)
        table = stats.get("percentiles") if isinstance(stats, dict) else None
        if isinstance(table, dict) and pct in table:
            row[column] = _endpoint_number(table, pct, path, block=f"{block}.percentiles") * 1e-6
    for block, key, column in _ENDPOINT_STATS:
        stats = data.get(block)
        if isinstance(stats, dict) and number(stats.get(key)) is not None:
            row[column] = _endpoint_number(stats, key, path, block=block) * 1e-6
    if data.get("complete") is False or data.get("state") not in (None, "complete"):
        row["tool_valid"] = False
        row["tool_invalid_reason"] = f"MLPerf endpoints harness: state {data.get('state')!r}"
    return row


_THROUGHPUT_FOLDERS = ("offline", "server", "interactive")


class MlperfInferenceResultSummary(ServingResult):
    """MLPerf Inference v6.1's ``result_summary.json`` (the endpoints harness, ``version``
    0.1.0; mlcommons/inference_results_v6.1 @ 10ecdff): ``n_samples_issued/completed/failed``,
    ``duration_ns``, ``ttft``/``tpot``/``latency``/``output_sequence_lengths`` each with
    ``total, min, max, median, avg, std_dev, percentiles{...}`` in nanoseconds, ``qps`` and
    ``tps`` (output tokens/s), and ``run_config.load_pattern`` (``poisson`` at ``target_qps``
    for Server, ``max_throughput`` for Offline). With ``use_legacy_loadgen_qps_metrics`` the
    rates are over ``legacy_loadgen_window_duration_ns``, so that is the run's duration. The
    scenario is the folder's (``<benchmark>/<scenario>/performance``) as the summarizer takes
    it, else the load pattern's. Like the LoadGen summary it names no model, GPU or GPU count."""

    id = "mlperf-inference-result-summary"
    title = "MLPerf Inference v6.1 `result_summary.json`"
    tool = ("MLPerf Inference endpoints harness result_summary.json "
            "(mlcommons/inference_results_v6.1 @ 10ecdff)")
    sample = "inference/mlperf/v6.1/deepseek-r1/Server/performance/result_summary.json"
    json_shape = staticmethod(_looks_like_endpoints)

    def parse(self, probe: Probe) -> Results:
        return Results([_endpoints_row(probe.json, probe.path)])

    def summarise(self, parsed: Results, probe: Probe) -> dict[str, Any]:
        row = parsed.rows[0]
        return {"format": self.id, "scenario": row["scenario"],
                "output_tok_s": row["output_tok_s"], "samples_per_s": row.get("samples_per_s")}


register(MlperfInferenceResultSummary())
