"""MLPerf Training result files (``:::MLLOG {json}`` lines) and system descriptions.

Facts from ``mlcommons/logging`` (research/clustermax_and_mlperf.md §2): each event is the token
``:::MLLOG `` followed by one JSON object (``namespace, time_ms, event_type, key, value,
metadata``); anything before the token (rank or timestamp prefixes) is ignored. A line that is
not valid JSON, or has a non-numeric ``time_ms``, fails the whole file.

Scoring as the result summarizer does it: a run's time is ``run_stop - run_start`` in minutes;
a run that did not stop with ``status: success`` (or failed to parse) counts as infinitely slow;
the benchmark score is the olympic mean (drop the fastest and slowest run, 4 each for unet3d),
where failed runs take the slowest slots. More failed runs than slots means no valid score.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from cmax.errors import CmaxError
from cmax.evidence import MLPERF_SCHEMA
from cmax.ingest.textlines import table

TOKEN = ":::MLLOG"

# result files required per benchmark (mlperf_logging benchmark_meta.py, training)
REQUIRED_RUNS: dict[str, int] = {
    **dict.fromkeys(("bert", "dlrm_dcnv2", "llama2_70b_lora", "llama31_8b", "flux1",
                     "gpt_oss_20b", "rgat", "stable_diffusion"), 10),
    **dict.fromkeys(("gpt3", "llama31_405b", "deepseekv3_671b", "qwen35_397b_grpo"), 3),
    **dict.fromkeys(("resnet", "ssd", "retinanet", "maskrcnn"), 5),
    "unet3d": 40,
}

SYSTEM_KEYS = ("submitter", "system_name")


@dataclass
class MlperfRun:
    """One result file."""

    file: str
    path: Path
    benchmark: str | None = None
    submitter: str | None = None
    platform: str | None = None
    division: str | None = None
    availability: str | None = None
    run_start_ms: int | None = None
    run_stop_ms: int | None = None
    stop_status: str | None = None
    status: str = "no_data"
    problem: str | None = None
    events: int = 0
    hyperparameters: dict[str, object] = field(default_factory=dict)

    @property
    def minutes(self) -> float | None:
        if self.status != "success" or self.run_start_ms is None or self.run_stop_ms is None:
            return None
        return (self.run_stop_ms - self.run_start_ms) / 60_000.0


def parse_result_file(path: Path, *, name: str | None = None) -> MlperfRun:
    """Read one ``result_*.txt``; parse problems mark the run failed, as MLPerf does."""
    run = MlperfRun(file=name or path.name, path=path)
    data = path.read_bytes()
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        pos = raw.find(TOKEN.encode())
        if pos < 0:
            continue
        text = raw[pos + len(TOKEN):].decode("utf-8", errors="replace").strip()
        try:
            event = json.loads(text)
            if not isinstance(event, dict):
                raise ValueError("not an object")
            time_ms = event["time_ms"]
            if isinstance(time_ms, bool) or not isinstance(time_ms, (int, float)):
                raise ValueError("time_ms is not a number")
        except (ValueError, KeyError) as exc:
            run.problem = run.problem or f"line {lineno}: unparseable MLLOG event ({exc})"
            continue
        run.events += 1
        key, value = event.get("key"), event.get("value")
        meta = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
        if key == "submission_benchmark":
            run.benchmark = run.benchmark or str(value)
        elif key == "submission_org":
            run.submitter = run.submitter or str(value)
        elif key == "submission_platform":
            run.platform = run.platform or str(value)
        elif key == "submission_division":
            run.division = run.division or str(value)
        elif key == "submission_status":
            run.availability = run.availability or str(value)
        elif key == "run_start":
            if run.run_start_ms is not None:
                run.problem = run.problem or f"line {lineno}: second run_start"
            else:
                run.run_start_ms = int(time_ms)
        elif key == "run_stop":
            if run.run_stop_ms is not None:
                run.problem = run.problem or f"line {lineno}: second run_stop"
            else:
                run.run_stop_ms = int(time_ms)
                status = meta.get("status") if isinstance(meta, dict) else None
                run.stop_status = str(status) if status is not None else None
        elif key in ("global_batch_size", "seed", "gradient_accumulation_steps"):
            run.hyperparameters.setdefault(str(key), value)
    if run.events == 0:
        run.status = "no_data"
    elif run.problem is not None:
        run.status = "invalid"
    elif run.run_start_ms is None or run.run_stop_ms is None:
        run.status = "incomplete"
        run.problem = "no run_start" if run.run_start_ms is None else "no run_stop"
    elif run.stop_status != "success":
        run.status = "failed"
        run.problem = f"run_stop status {run.stop_status!r}"
    else:
        run.status = "success"
    return run


@dataclass
class OlympicScore:
    score_min: float | None
    runs: int
    failed: int
    required: int | None
    dropped_each_end: int
    olympic: bool
    note: str | None = None


def olympic_score(minutes: list[float | None], benchmark: str | None) -> OlympicScore:
    """The benchmark score from per-run minutes (None = failed run), summarizer style."""
    bench = (benchmark or "").lower()
    drop = 4 if bench == "unet3d" else 1
    required = REQUIRED_RUNS.get(bench)
    failed = sum(1 for m in minutes if m is None or not math.isfinite(m))
    good = sorted(m for m in minutes if m is not None and math.isfinite(m))
    n = len(minutes)
    if failed > drop:
        return OlympicScore(None, n, failed, required, drop, False,
                            f"{failed} failed runs; at most {drop} may fail: results NOT correct")
    if n < 2 * drop + 1:
        mean = sum(good) / len(good) if good else None
        return OlympicScore(mean, n, failed, required, drop, False,
                            f"{n} run(s) are too few for olympic scoring; plain mean shown")
    # failed runs already occupy slowest slots; drop the rest of the slots from the good runs
    kept = good[drop: len(good) - (drop - failed)] if drop - failed else good[drop:]
    note = None
    if required is not None and n != required:
        note = f"{n} runs; MLPerf requires exactly {required} for {bench}"
    return OlympicScore(sum(kept) / len(kept), n, failed, required, drop, True, note)


def is_system_json(data: object) -> bool:
    return isinstance(data, dict) and all(k in data for k in SYSTEM_KEYS) and any(
        k in data for k in ("accelerators_per_node", "number_of_nodes", "accelerator_model_name"))


def system_gpus(system: dict[str, object]) -> int | None:
    try:
        nodes = int(str(system.get("number_of_nodes")))
        per_node = int(str(system.get("accelerators_per_node")))
    except (TypeError, ValueError):
        return None
    return nodes * per_node


def load_system_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CmaxError(f"invalid system description JSON: {exc}", file=path) from None
    if not is_system_json(data):
        raise CmaxError("not an MLPerf system description", file=path,
                        expected="a JSON object with submitter, system_name, number_of_nodes, "
                        "accelerators_per_node")
    return data  # type: ignore[no-any-return]


def result_files(folder: Path) -> list[Path]:
    """Files in ``folder`` holding MLLOG events, in natural order (result_2 before result_10)."""
    found = []
    for child in folder.iterdir():
        if child.is_file() and not child.name.startswith("."):
            with child.open("rb") as fh:
                if TOKEN.encode() in fh.read(1 << 20):
                    found.append(child)
    return sorted(found, key=_natural)


def _natural(path: Path) -> tuple[object, ...]:
    import re

    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path.name))


def mlperf_frame(runs: list[MlperfRun], *, num_gpus: int | None,
                 display: dict[Path, str]) -> pl.DataFrame:
    records = [{
        "run_id": r.file, "benchmark": r.benchmark, "submitter": r.submitter,
        "system": r.platform, "division": r.division, "status": r.status,
        "run_start_ms": r.run_start_ms, "run_stop_ms": r.run_stop_ms,
        "time_to_train_min": r.minutes, "num_gpus": num_gpus,
        "source_file": display.get(r.path, r.path.name),
    } for r in runs]
    return table(records, MLPERF_SCHEMA)


def mlperf_summary(runs: list[MlperfRun], system: dict[str, object] | None) -> dict[str, object]:
    bench = next((r.benchmark for r in runs if r.benchmark), None)
    score = olympic_score([r.minutes for r in runs], bench)
    out: dict[str, object] = {
        "format": "mlperf",
        "benchmark": bench,
        "submitter": next((r.submitter for r in runs if r.submitter), None),
        "system": next((r.platform for r in runs if r.platform), None),
        "division": next((r.division for r in runs if r.division), None),
        "runs": [
            {"file": r.file, "status": r.status,
             "time_to_train_min": round(r.minutes, 4) if r.minutes is not None else None,
             **({"problem": r.problem} if r.problem else {})}
            for r in runs
        ],
        "score_min": round(score.score_min, 4) if score.score_min is not None else None,
        "olympic": score.olympic,
        "failed_runs": score.failed,
        "required_runs": score.required,
    }
    if score.note:
        out["note"] = score.note
    if system is not None:
        out["num_gpus"] = system_gpus(system)
        out["system_name"] = system.get("system_name")
    return out


def system_summary(system: dict[str, object]) -> dict[str, object]:
    return {
        "format": "mlperf-system-json",
        "submitter": system.get("submitter"),
        "system": system.get("system_name"),
        "division": system.get("division"),
        "status": system.get("status"),
        "number_of_nodes": system.get("number_of_nodes"),
        "accelerators_per_node": system.get("accelerators_per_node"),
        "accelerator_model_name": system.get("accelerator_model_name"),
        "num_gpus": system_gpus(system),
    }
