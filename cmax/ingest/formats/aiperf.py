"""AIPerf summary exports: ``profile_export_aiperf.json`` and ``profile_export_aiperf.csv``.

Both are written by ``aiperf profile`` from the same metric results (ai-dynamo/aiperf
``src/aiperf/exporters/metrics_json_exporter.py`` @ 047d59d and ``metrics_csv_exporter.py`` @
309c4e8; the export model ``src/aiperf/common/models/export_models.py`` @ 896729c and
``docs/reference/json-export-schema.md`` @ db6edab), computed over the profiling phase only:

* the JSON holds one block per metric tag, ``{"unit": ..., "avg": ..., "p99": ...}``, in the
  metric's display unit, plus ``input_config`` (the model under ``endpoint.model_names``, the
  concurrency under ``loadgen.concurrency``), ``was_cancelled``, ``warmup_metrics`` (schema 1.4)
  and, under a locked scenario such as ``inferencex-agentx-mvp``, ``metadata.submission_valid``
  (``docs/benchmark-modes/semianalysis-agentx-faq.md`` @ 01a4d17: true, false or absent);
* the CSV holds the same metrics in two sections (``Metric,avg,min,...,std`` for metrics with a
  distribution, then ``Metric,Value``), each named ``<header> (<unit>)``, then optionally the
  GPU telemetry table (``Endpoint,GPU_Index,GPU_Name,...``).

Each metric is mapped explicitly (:data:`AIPERF_METRICS`). The per-request lengths are the
record metrics ``input_sequence_length`` / ``output_sequence_length`` (headers "Input Sequence
Length" / "Output Sequence Length", unit ``tokens``; OSL counts reasoning tokens too:
``aiperf/metrics/types/input_sequence_length_metric.py`` and
``output_sequence_length_metric.py`` @ db4f6397d11ee2d4cfbb41f70b2327315163dcf0), in both
exports as a distribution over the profiled requests (the CSV's first section, the JSON's
blocks). Where it is one value (min = max = avg, a whole number) the file states the length
every request had, as the JSON's ``input_config`` states a length held at stddev 0: that is
the row's ``input_len`` / ``output_len``, so a declaration of other lengths is a contradiction
(``inference.lengths-mismatch``) even within the tolerance the totals over the requests are
read with. A distribution that varies states no single length (its mean is the totals over
the request count, which the rule reads). Newer releases also export the server's and the
client's counts ("Input Sequence Length (Server)", "... (Local)", ``NO_CONSOLE`` metrics,
which the CSV keeps): a header is split from its unit at its last " (" so those rows are told
apart and left unread. AIPerf's ITL is the per-request
(latency - TTFT) / (OSL - 1), vLLM's TPOT. Generic request errors do not make AIPerf call a run
invalid (the FAQ says so): they are ``error_request_count`` (absent when none failed), read as
``failed``. The export states **no GPU count**; the GPU telemetry names the GPUs it saw. The
CSV also records no load (no ``input_config``): its row is paced at the ``[[inference]]``
entry's ``concurrency``, a declaration the row's scenario names.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, number
from cmax.reading.limits import csv_guarded

#: metric tag -> (the CSV header AIPerf prints, {stat: inference column})
AIPERF_METRICS: dict[str, tuple[str, dict[str, str]]] = {
    "request_count": ("Request Count", {"avg": "completed"}),
    "error_request_count": ("Error Request Count", {"avg": "failed"}),
    "benchmark_duration": ("Benchmark Duration", {"avg": "duration_s"}),
    "total_isl": ("Total Input Sequence Length", {"avg": "input_tokens"}),
    "total_output_tokens": ("Total Output Tokens", {"avg": "output_tokens"}),
    "output_token_throughput": ("Output Token Throughput", {"avg": "output_tok_s"}),
    "output_token_throughput_per_user": ("Output Token Throughput Per User",
                                         {"avg": "interactivity_tok_s_user"}),
    "time_to_first_token": ("Time to First Token", {"p99": "ttft_p99_ms"}),
    "inter_token_latency": ("Inter Token Latency", {"avg": "tpot_mean_ms", "p99": "tpot_p99_ms"}),
    # read whole by _every_request: the row's input_len / output_len
    "input_sequence_length": ("Input Sequence Length", {}),
    "output_sequence_length": ("Output Sequence Length", {}),
}
_NEEDS = ("request_count", "benchmark_duration", "output_token_throughput")
#: time units AIPerf displays, in milliseconds; the columns above are ms, duration seconds
_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "sec": 1000.0, "s": 1000.0}
_SECONDS = {"benchmark_duration"}
_COUNTS = ("completed", "failed", "input_tokens", "output_tokens")


@dataclass
class _Export:
    """One export's metric blocks by tag, and what it says about the run besides them."""

    metrics: dict[str, dict[str, Any]]
    model: str | None = None
    concurrency: float | None = None
    request_rate: float | None = None
    warmup_requests: int | None = None
    valid: bool | None = None
    invalid_reason: str | None = None
    gpu_names: list[str] = field(default_factory=list)
    #: mean ``nvidia_power_usage`` per GPU over the run, from the telemetry AIPerf collected
    #: (watts, GPUs read)
    power: tuple[float | None, int | None] = (None, None)
    #: the profiling run's start and end (UTC epoch seconds)
    span: tuple[float | None, float | None] = (None, None)
    #: fixed input / output tokens per request (a mean with stddev 0) and the temperature
    #: ``--extra-inputs`` fixed, as ``input_config`` states them
    lengths: tuple[int | None, int | None] = (None, None)
    temperature: float | None = None


def _scaled(tag: str, stat: str, block: dict[str, Any], path: Any) -> float | None:
    value = number(block.get(stat))
    if value is None or not math.isfinite(value):
        return None
    unit = str(block.get("unit") or "")
    if unit in _MS and tag in _SECONDS | {"time_to_first_token", "inter_token_latency"}:
        return value * _MS[unit] / (1000.0 if tag in _SECONDS else 1.0)
    if tag in _SECONDS | {"time_to_first_token", "inter_token_latency"}:
        raise EvidenceError(f"{tag} is in {unit!r}, not a time unit", file=path, field=tag,
                            expected=f"one of {', '.join(_MS)}")
    return value


def _row(export: _Export, tool: str, path: Any) -> dict[str, Any]:
    for tag in _NEEDS:
        if number(export.metrics.get(tag, {}).get("avg")) is None:
            raise EvidenceError(f"the export has no {tag}", file=path, field=tag,
                                expected="the summary `aiperf profile` writes",
                                fix="submit the export as AIPerf wrote it")
    row: dict[str, Any] = {"tool": tool, "line": 1, "failed": 0, "model": export.model,
                           "concurrency": export.concurrency,
                           "request_rate": export.request_rate,
                           "warmup_requests": export.warmup_requests,
                           "tool_valid": export.valid,
                           "tool_invalid_reason": export.invalid_reason,
                           "input_len": export.lengths[0], "output_len": export.lengths[1],
                           "temperature": export.temperature,
                           "power_w_per_gpu": export.power[0], "power_gpus": export.power[1],
                           "started_s": export.span[0], "ended_s": export.span[1]}
    for tag, (_, stats) in AIPERF_METRICS.items():
        block = export.metrics.get(tag)
        for stat, column in stats.items():
            if block is not None:
                row[column] = _scaled(tag, stat, block, path)
    for column in _COUNTS:
        value = row.get(column)
        if value is not None:
            if not float(value).is_integer() or value < 0:
                raise EvidenceError(f"{column.replace('_', ' ')} is not a whole number",
                                    file=path, field=column,
                                    fix="submit the export as AIPerf wrote it")
            row[column] = int(value)
    return row


def _at(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _positive(value: Any) -> float | None:
    got = number(value)
    return got if got is not None and math.isfinite(got) and got > 0 else None


def _json_export(data: dict[str, Any]) -> _Export:
    metrics = {k: v for k, v in data.items() if isinstance(v, dict) and "unit" in v}
    config = data.get("input_config")
    names = _at(config, "endpoint", "model_names")
    model = str(names[0]) if isinstance(names, list) and names else None
    concurrency = _load(data, "concurrency")
    rate = _load(data, "request_rate")
    warm = number(_at(data, "warmup_metrics", "request_count", "avg"))
    if warm is None:
        warm = number(_at(config, "loadgen", "warmup_request_count"))
    found = data.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    valid = meta.get("submission_valid") if isinstance(meta.get("submission_valid"),
                                                        bool) else None
    reason = next((str(v) for k, v in meta.items() if "reason" in k and v), None)
    if data.get("was_cancelled") is True and valid is not False:
        valid, reason = False, "run_cancelled (was_cancelled: true)"
    seen = [g for endpoint in _mapping(_at(data, "telemetry_data", "endpoints")).values()
            if isinstance(endpoint, dict)
            for g in _mapping(endpoint.get("gpus")).values() if isinstance(g, dict)]
    gpus = [str(g["gpu_name"]) for g in seen if g.get("gpu_name")]
    return _Export(metrics, model, concurrency, rate,
                   int(warm) if warm is not None and warm.is_integer() else None,
                   valid, reason if valid is False else None, gpus,
                   power=_power(seen),
                   span=(_utc(data.get("start_time")), _utc(data.get("end_time"))),
                   lengths=(_fixed(config, "input_tokens")
                            or _every_request(metrics.get("input_sequence_length")),
                            _fixed(config, "output_tokens")
                            or _every_request(metrics.get("output_sequence_length"))),
                   temperature=_temperature(_at(config, "input", "extra")))


def _power(gpus: list[dict[str, Any]]) -> tuple[float | None, int | None]:
    """Mean of each GPU's average ``nvidia_power_usage`` (W) over the run, and how many GPUs
    the telemetry read; (None, None) when it read no power."""
    watts = [w for g in gpus if _at(g, "metrics", "nvidia_power_usage", "unit") == "W"
             and (w := _positive(_at(g, "metrics", "nvidia_power_usage", "avg"))) is not None]
    return (sum(watts) / len(watts), len(watts)) if watts else (None, None)


def _utc(text: Any) -> float | None:
    """An ISO time AIPerf wrote (the host's clock, without a zone: read as UTC, as cmax reads
    every stamp) in epoch seconds; None when absent or unreadable."""
    if not isinstance(text, str):
        return None
    try:
        stamp = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)).timestamp()


def _load(data: dict[str, Any], key: str) -> float | None:
    """``--concurrency`` / ``--request-rate`` as the export states it: ``input_config.loadgen``
    (the user config), ``input_config.phases.profiling`` (the resolved config of newer
    releases, as ``run_info.variation_values`` names it), else the recorded command line."""
    config = data.get("input_config")
    for path in (("loadgen", key), ("phases", "profiling", key)):
        if (value := _positive(_at(config, *path))) is not None:
            return value
    flag = "--" + key.replace("_", "-")
    words = str(_at(data, "run_info", "cli_command") or "").split()
    return next((_positive(w) for f, w in itertools.pairwise(words) if f == flag),
                None)


def _fixed(config: Any, which: str) -> int | None:
    """The tokens per request the synthetic prompts were held to (stddev 0), else None."""
    mean = number(_at(config, "input", "prompt", which, "mean"))
    spread = number(_at(config, "input", "prompt", which, "stddev"))
    return int(mean) if mean is not None and mean.is_integer() and spread == 0 else None


def _every_request(block: Any) -> int | None:
    """The tokens every profiled request had, when a length metric's distribution is one
    value (its avg, min and max the same whole number); None when the lengths varied or the
    export does not state them."""
    if not isinstance(block, dict):
        return None
    avg, low, high = (number(block.get(k)) for k in ("avg", "min", "max"))
    if avg is None or not math.isfinite(avg) or not avg.is_integer() or avg <= 0:
        return None
    return int(avg) if low == avg == high else None


def _mapping(value: Any) -> dict[str, Any]:
    """A JSON object of the export, or an empty one when the file has anything else there."""
    return value if isinstance(value, dict) else {}


def _temperature(extra: Any) -> float | None:
    """``temperature`` among ``--extra-inputs`` (name:value pairs, or a JSON object)."""
    pairs = extra.items() if isinstance(extra, dict) else (
        (p[0], p[1]) for p in (extra if isinstance(extra, list) else ())
        if isinstance(p, list | tuple) and len(p) == 2)
    return next((number(v) for k, v in pairs if k == "temperature"), None)


def _facts(export: _Export) -> list[Fact]:
    facts = [Fact("model", export.model, None, where="input_config")] if export.model else []
    facts += [Fact("gpu", name, None, where="GPU telemetry")
              for name in dict.fromkeys(export.gpu_names)]
    return facts


def _looks_like_json(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("output_token_throughput"), dict)
            and isinstance(data.get("request_count"), dict)
            and ("aiperf_version" in data or "input_config" in data
                 or "benchmark_duration" in data))


class AiperfJson(ServingResult):
    id = "aiperf-json"
    title = "AIPerf `profile_export_aiperf.json`"
    tool = ("`aiperf profile` (ai-dynamo/aiperf src/aiperf/exporters/metrics_json_exporter.py "
            "@ 047d59d)")
    sample = "inference/aiperf/profile_export_aiperf.json"
    json_shape = staticmethod(_looks_like_json)

    def parse(self, probe: Probe) -> Results:
        export = _json_export(probe.require_json("an AIPerf profile_export_aiperf.json"))
        if export.concurrency is None and export.request_rate is None:
            raise EvidenceError("the export states no concurrency or request rate",
                                file=probe.path, field="input_config.loadgen",
                                expected="input_config as `aiperf profile` writes it",
                                fix="submit the export as AIPerf wrote it")
        return Results([_row(export, self.id, probe.path)], _facts(export))


#: CSV header (lower case) -> metric tag
_BY_HEADER = {header.lower(): tag for tag, (header, _) in AIPERF_METRICS.items()}


def _csv_export(text: str, path: Any) -> _Export:
    metrics: dict[str, dict[str, Any]] = {}
    gpus: list[str] = []
    columns: list[str] = []
    for line_no, cells in enumerate(csv_guarded(csv.reader(io.StringIO(text)), file=path),
                                    start=1):
        if not cells or not any(c.strip() for c in cells):
            continue
        if cells[0] in ("Metric", "Endpoint"):
            columns = [c.strip() for c in cells]
            continue
        if not columns:
            raise EvidenceError("data before any header row", file=path, line=line_no,
                                expected="AIPerf's 'Metric,avg,...' or 'Metric,Value' header")
        if columns[0] == "Endpoint":  # the GPU telemetry table
            if "GPU_Name" in columns and len(cells) > columns.index("GPU_Name"):
                gpus.append(cells[columns.index("GPU_Name")])
            continue
        name, _, unit = cells[0].rpartition(" (") if " (" in cells[0] else (cells[0], "", "")
        tag = _BY_HEADER.get(name.strip().lower())
        if tag is None:
            continue
        if len(cells) != len(columns):
            raise EvidenceError(f"{len(cells)} cells under a {len(columns)}-column header",
                                file=path, line=line_no, field=cells[0],
                                fix="submit the CSV as AIPerf wrote it")
        stats = {("avg" if c == "Value" else c): v for c, v in zip(columns[1:], cells[1:],
                                                                  strict=True)}
        for stat, value in stats.items():
            if value.strip() and number(value) is None:
                raise EvidenceError(f"{cells[0]} {stat} {value!r} is not a number", file=path,
                                    line=line_no, field=cells[0],
                                    fix="submit the CSV as AIPerf wrote it")
        metrics[tag] = {"unit": unit.rstrip(")") if unit else "",
                        **{k: v for k, v in stats.items() if v.strip()}}
    return _Export(metrics, gpu_names=gpus,
                   lengths=(_every_request(metrics.get("input_sequence_length")),
                            _every_request(metrics.get("output_sequence_length"))))


class AiperfCsv(ServingResult):
    id = "aiperf-csv"
    title = "AIPerf `profile_export_aiperf.csv`"
    tool = ("`aiperf profile` (ai-dynamo/aiperf src/aiperf/exporters/metrics_csv_exporter.py "
            "@ 309c4e8)")
    sample = "inference/aiperf/profile_export_aiperf.csv"
    records_load = False  # the CSV has no input_config: the entry's concurrency is used

    def sniff(self, probe: Probe) -> bool:
        first = probe.first_line.strip()
        return first.startswith(("Metric,avg,min,max,p1,", "Metric,Value")) and (
            "Output Token Throughput" in probe.head_text)

    def parse(self, probe: Probe) -> Results:
        export = _csv_export(probe.text, probe.path)
        return Results([_row(export, self.id, probe.path)], _facts(export))


register(AiperfJson())
register(AiperfCsv())
