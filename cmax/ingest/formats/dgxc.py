"""DGXC Benchmarking parse-script summaries (CSV and JSON) of llmb-run experiments.

The parse script writes one row per experiment with the mean step time and TFLOP/s over its
window (research dgxc.md §3.2); a manifest run picks its row by ``experiment``. These are
summaries: they fill ``runs.reported_*`` and never step rows.

The scripts are ``parse_train_timing.sh`` / ``_mbridge.sh``. Each row holds the mean (and std)
of the window the script averaged (iterations 35-44 from v25.08, 11-44 in v25.05-v25.07), research
dgxc.md §3.3. They fill ``runs.reported_step_time_s``/``reported_tflops_per_gpu``; no step
rows are invented.

CSV headers: ``filename,status,time_mean_seconds,time_std_dev_seconds,tflops_per_gpu_mean,
tflops_per_gpu_std_dev,max_iteration`` (NeMo 2) or ``..._ms`` (Megatron-Bridge), then an optional
``# Summary: ...`` comment. JSON: ``{"analysis": {...}, "results": [...], "summary": {...}}``
with ``time_mean``/``time_std_dev``/``tflops_per_gpu_mean`` (NeMo 2) or ``time_mean_ms``/
``time_std_ms``/``tflops_mean`` (Megatron-Bridge). A ``Failed`` experiment (not every window
iteration present) becomes ``incomplete``.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, RunFormat, RunPart, RunRequest, register
from cmax.reading.limits import MAX_JSON_BYTES, csv_guarded, read_bounded, read_bounded_text, whole

CSV_PREFIX = "filename,status,time_mean_"


@dataclass(frozen=True)
class Experiment:
    """One experiment row of a parse-script summary."""

    name: str
    status: str  # llmb-run vocabulary
    raw_status: str
    time_mean_s: float | None
    time_std_s: float | None
    tflops_mean: float | None
    tflops_std: float | None
    max_iteration: int | None
    framework: str
    line: int | None = None


def _status(raw: object) -> str:
    text = str(raw or "").strip().lower()
    if text.startswith("success"):
        return "success"
    if text.startswith("fail"):
        return "incomplete"
    return "no_data"


def _float(value: object, *, file: Path, line: int | None, column: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if text in ("", "N/A", "n/a", "-", "null", "None"):
        return None
    try:
        return float(text)
    except ValueError:
        raise EvidenceError(f"invalid number {text!r}", file=file, line=line,
                            field=column) from None


def _int(value: object, *, file: Path, line: int | None, column: str) -> int | None:
    number = _float(value, file=file, line=line, column=column)
    return None if number is None else whole(number, file=file, line=line, field=column)


def looks_like_csv(first_line: str) -> bool:
    return first_line.strip().lower().startswith(CSV_PREFIX)


def parse_csv(path: Path) -> list[Experiment]:
    text = read_bounded(path).decode("utf-8-sig", errors="replace")
    lines = text.splitlines()
    header = next(csv_guarded(csv.reader([lines[0]]), file=path, line=1)) if lines else []
    cols = [c.strip().lower() for c in header]
    if not cols or not looks_like_csv(",".join(cols)):
        raise EvidenceError("not a DGXC parse-script CSV", file=path, line=1,
                            expected=f"a header starting {CSV_PREFIX}seconds or {CSV_PREFIX}ms")
    in_ms = "time_mean_ms" in cols
    out: list[Experiment] = []
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = next(csv_guarded(csv.reader([line]), file=path, line=lineno))
        if len(fields) != len(cols):
            raise EvidenceError(f"row has {len(fields)} fields", file=path, line=lineno,
                                expected=f"{len(cols)} fields as in the header")
        row = dict(zip(cols, fields, strict=True))
        out.append(_experiment(row, in_ms=in_ms, file=path, line=lineno))
    return out


def _experiment(row: dict[str, Any], *, in_ms: bool, file: Path, line: int | None) -> Experiment:
    divisor = 1000.0 if in_ms else 1.0
    t_mean = row.get("time_mean_ms" if in_ms else "time_mean_seconds", row.get("time_mean"))
    t_std = row.get("time_std_dev_ms" if in_ms else "time_std_dev_seconds",
                    row.get("time_std_ms" if in_ms else "time_std_dev"))
    tf_mean = row.get("tflops_per_gpu_mean", row.get("tflops_mean"))
    tf_std = row.get("tflops_per_gpu_std_dev", row.get("tflops_std"))
    mean = _float(t_mean, file=file, line=line, column="time_mean")
    std = _float(t_std, file=file, line=line, column="time_std")
    name = str(row.get("filename") or "").strip()
    if not name:
        raise EvidenceError("experiment without a filename", file=file, line=line,
                            field="filename")
    return Experiment(
        name=name, status=_status(row.get("status")), raw_status=str(row.get("status") or ""),
        time_mean_s=None if mean is None else mean / divisor,
        time_std_s=None if std is None else std / divisor,
        tflops_mean=_float(tf_mean, file=file, line=line, column="tflops_mean"),
        tflops_std=_float(tf_std, file=file, line=line, column="tflops_std"),
        max_iteration=_int(row.get("max_iteration"), file=file, line=line,
                           column="max_iteration"),
        framework="megatron-bridge" if in_ms else "nemo2",
        line=line,
    )


def is_dgxc_json(data: object) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("results"), list)
            and "analysis" in data
            and all(isinstance(r, dict) and "filename" in r for r in data["results"]))


def parse_json(path: Path) -> list[Experiment]:
    try:
        data = json.loads(read_bounded_text(path, limit=MAX_JSON_BYTES))
    except (ValueError, UnicodeDecodeError) as exc:
        raise EvidenceError(f"invalid JSON: {exc}", file=path) from None
    return experiments_from_json(data, path)


def experiments_from_json(data: Any, path: Path) -> list[Experiment]:
    """The experiments of an already parsed parse-script JSON document."""
    if not is_dgxc_json(data):
        raise EvidenceError("not a DGXC parse-script JSON", file=path,
                            expected='{"analysis": ..., "results": [{"filename", "status", ...}]}')
    out = []
    for item in data["results"]:
        in_ms = any(k in item for k in ("time_mean_ms", "time_std_ms", "tflops_mean"))
        out.append(_experiment(item, in_ms=in_ms, file=path, line=None))
    return out


def select(experiments: list[Experiment], selector: str | None, *, file: Path,
           field: str) -> Experiment:
    """The experiment a manifest run means: the only one, or the one ``experiment`` names."""
    if selector:
        hits = [e for e in experiments if selector in e.name]
        if len(hits) == 1:
            return hits[0]
        raise EvidenceError(
            f"experiment {selector!r} matches {len(hits)} of {len(experiments)} experiments",
            file=file, field=field.replace(".log", ".experiment"),
            expected="a substring of exactly one filename: "
            + ", ".join(e.name for e in experiments[:8]))
    if len(experiments) == 1:
        return experiments[0]
    raise EvidenceError(
        f"file holds {len(experiments)} experiments; cannot tell which one this run is",
        file=file, field=field,
        fix="add `experiment = \"<part of the filename>\"` to the run: "
        + ", ".join(e.name for e in experiments[:8]))


def summary(experiments: list[Experiment], fmt: str) -> dict[str, object]:
    return {
        "format": fmt,
        "experiments": [
            {"filename": e.name, "status": e.status, "time_mean_s": e.time_mean_s,
             "tflops_per_gpu_mean": e.tflops_mean, "max_iteration": e.max_iteration}
            for e in experiments
        ],
        "success": sum(1 for e in experiments if e.status == "success"),
        "failed": sum(1 for e in experiments if e.status != "success"),
    }



# llmb-run experiment file names: <task>_<model>_<size>_<dtype>_gpus<N>[_tp1_pp1_..._gbs128]_<job>
_PRECISION = re.compile(r"(?:^|_)(fp8(?:_cs|_mx|_ds)?|mxfp8|nvfp4|fp4|bf16|fp16)(?=_|\.|$)")
_GPUS = re.compile(r"_gpus(\d+)(?=_|\.|$)")
_PARALLEL = re.compile(r"_(tp|pp|cp|ep|vp|mbs|gbs)(\d+)(?=_|\.|$)")
_TASK = re.compile(r"^(?:pretrain|finetune|sft|lora|peft)_")


def experiment_facts(experiments: list[Experiment]) -> tuple[Fact, ...]:
    """What each experiment's file name states: its name, model, precision, GPUs, parallelism.

    llmb-run names an experiment's log after its workload, size, dtype and scale (research
    dgxc.md, "parse-script"), and the parse script copies that name into ``filename``; the
    facts quote the tokens as printed, for validation to compare with the manifest.
    """
    facts: list[Fact] = []
    for exp in experiments:
        where = f"experiment {exp.name}"
        facts.append(Fact("experiment", exp.name, exp.line, where))
        precision = _PRECISION.search(exp.name)
        if precision:
            facts.append(Fact("precision", precision.group(1), exp.line, where))
            model = _TASK.sub("", exp.name[: precision.start()])
            if model:
                facts.append(Fact("model", model, exp.line, where))
        gpus = _GPUS.search(exp.name)
        if gpus:
            facts.append(Fact("gpu_count", gpus.group(1), exp.line, where))
        facts.extend(Fact("parallel", f"{k}={v}", exp.line, where)
                     for k, v in _PARALLEL.findall(exp.name))
        facts.append(Fact("framework", exp.framework, exp.line, where))
    return tuple(facts)


class _DgxcSummary(RunFormat[list[Experiment]]):
    def summarise(self, parsed: list[Experiment], probe: Probe) -> dict[str, Any]:
        return summary(parsed, self.id)

    def facts(self, parsed: list[Experiment]) -> tuple[Fact, ...]:
        return experiment_facts(parsed)

    def read_run(self, parsed: list[Experiment], request: RunRequest) -> RunPart:
        exp = select(parsed, request.spec.experiment, file=request.path,
                                field=request.key)
        # what the experiment's name states of the parallel config, null where it is silent
        # (the table holds what the file says; cmax.toml's declaration is the resolved run's)
        stated = {k: int(v) for k, v in _PARALLEL.findall(exp.name)}
        row: dict[str, Any] = {k: stated.get(k) for k in request.declared}
        row.update(framework=exp.framework, status=exp.status,
                   max_iteration=exp.max_iteration, reported_step_time_s=exp.time_mean_s,
                   reported_tflops_per_gpu=exp.tflops_mean)
        return RunPart(row=row, notes=[f"summary row {exp.name!r} ({exp.raw_status}); "
                                       "no per-step data"])


class DgxcCsv(_DgxcSummary):
    id = "dgxc-csv"
    title = "DGXC parse-script CSV"
    tool = ("DGXC Benchmarking parse script (`filename,status,time_mean_seconds|ms,...` "
            "header; NeMo 2 in seconds, Megatron-Bridge in ms)")
    sample = "ingest/dgxc_parse_nemo2.csv"

    def sniff(self, probe: Probe) -> bool:
        return looks_like_csv(probe.first_line)

    def parse(self, probe: Probe) -> list[Experiment]:
        return parse_csv(probe.path)


class DgxcJson(_DgxcSummary):
    id = "dgxc-json"
    title = "DGXC parse-script JSON"
    tool = 'DGXC Benchmarking parse script JSON (`{"analysis": ..., "results": [...]}`)'
    sample = "ingest/dgxc_parse_nemo2.json"
    json_shape = staticmethod(is_dgxc_json)

    def parse(self, probe: Probe) -> list[Experiment]:
        return experiments_from_json(probe.require_json("a DGXC parse-script JSON"),
                                                probe.path)


register(DgxcCsv())
register(DgxcJson())
