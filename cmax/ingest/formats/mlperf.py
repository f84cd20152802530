"""MLPerf Training results: a ``result_*.txt`` MLLOG file and the system description JSON.

A result file is recognised by ``:::MLLOG {`` lines (mlcommons/logging); it embeds the
framework's own log, so its marker has the highest priority of all text formats. Folders of
results (benchmark, system, submitter) are read here as trees, not file by file. The system
description (``systems/<system>.json``) is recognised by its keys. Result sets are parsed once
and scored exactly as MLCommons scores them.

This module is the one home of MLPerf parsing and scoring in cmax. Validation
(:mod:`cmax.validate.mlperf_rules`) and scoring (:mod:`cmax.score.mlperf`) read the
:class:`MlperfSet` objects built here (events, runs, system description, scaling factor,
official score) and never open a result file again.

Formats, as MLCommons publishes them (``mlcommons/logging`` and the
``mlcommons/training_results_v*`` repositories):

* a *result file* ``result_<n>.txt`` holds ``:::MLLOG {json}`` lines (``namespace, time_ms,
  event_type, key, value, metadata``); anything before the token (rank or time prefixes) is
  ignored. A line that is not a JSON object with a numeric ``time_ms`` fails the file.
* a *benchmark folder* ``<org>/results/<system>/<benchmark>/`` holds the result files of one
  benchmark and, when the review committee scaled the result, ``scaling.json``
  (``{"scaling_factor": x}``);
* the *system description* is ``<org>/systems/<system>.json`` (``number_of_nodes``,
  ``accelerators_per_node``, ``accelerator_model_name``, ``division``, ``status``, ...).

Scoring follows ``mlperf_logging.result_summarizer`` (package mlperf-logging 4.1.68,
``_compute_strong_score_standalone``) for rounds v4.0 to v6.0: a run's time is ``run_stop -
run_start`` in minutes; a run that fails to parse or to converge is dropped and counts as one
of the slowest; with more failed runs than the olympic drop (1, or 4 for unet3d) there is no
score ("results NOT correct"); otherwise the score is the mean of the sorted times without the
``drop`` fastest and the ``drop - failed`` slowest, multiplied by the folder's
``scaling.json`` factor. The summarizer also fails a run whose log breaks the compliance
checker; cmax counts a run as failed when it did not stop with ``status: success`` or never
reached its benchmark's quality target (:data:`QUALITY_TARGETS`), and reports the other checks
a rating depends on as findings (:mod:`cmax.validate.mlperf_rules`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cmax.errors import CmaxError, EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._declarations import Role
from cmax.ingest.formats._protocol import Format, Probe, register
from cmax.reading.limits import MAX_JSON_BYTES, is_file_named, read_bounded, read_bounded_text

TOKEN = ":::MLLOG"
_TOKEN_B = b":::MLLOG "  # the official parser's token ends with a space

# result files required per benchmark (mlperf_logging/benchmark_meta.py, training, 4.1.68)
REQUIRED_RUNS: dict[str, int] = {
    **dict.fromkeys(("bert", "dlrm_dcnv2", "llama2_70b_lora", "llama31_8b", "flux1",
                     "gpt_oss_20b", "rgat", "gnn", "stable_diffusion", "dlrmv4"), 10),
    **dict.fromkeys(("gpt3", "llama31_405b", "deepseekv3_671b", "qwen35_397b_grpo"), 3),
    **dict.fromkeys(("resnet", "ssd", "retinanet", "maskrcnn"), 5),
    "unet3d": 40,
}

# benchmarks each training round accepts (mlperf_logging/benchmark_meta.py, 4.1.68)
ROUND_BENCHMARKS: dict[str, frozenset[str]] = {
    "4.0": frozenset({"bert", "dlrm_dcnv2", "gpt3", "resnet", "ssd", "unet3d",
                      "stable_diffusion", "llama2_70b_lora", "gnn"}),
    "4.1": frozenset({"bert", "dlrm_dcnv2", "gpt3", "ssd", "stable_diffusion",
                      "llama2_70b_lora", "gnn"}),
    "5.0": frozenset({"bert", "dlrm_dcnv2", "retinanet", "stable_diffusion",
                      "llama2_70b_lora", "rgat", "llama31_405b"}),
    "5.1": frozenset({"llama31_8b", "dlrm_dcnv2", "retinanet", "flux1", "llama2_70b_lora",
                      "rgat", "llama31_405b"}),
    "6.0": frozenset({"llama31_8b", "dlrm_dcnv2", "flux1", "llama2_70b_lora", "llama31_405b",
                      "gpt_oss_20b", "deepseekv3_671b"}),
}
SUPPORTED_ROUNDS = tuple(ROUND_BENCHMARKS)

# quality targets the compliance checker requires at least one eval_accuracy to meet, as
# (low, high]: mlperf_logging/compliance_checker/training_<r>/closed_<b>.yaml and open_<b>.yaml
# ATLEAST_ONE_CHECK, the same in rulesets 4.0.0-6.0.0 where the benchmark exists (deepseekv3:
# 6.0.0). A run without one fails the checker, and the summarizer then drops the run.
QUALITY_TARGETS: dict[str, tuple[float, float]] = {
    "llama2_70b_lora": (0.0, 0.925), "llama31_405b": (0.0, 5.6), "llama31_8b": (0.0, 3.3),
    "deepseekv3_671b": (0.0, 3.6), "gpt3": (2.6, 2.69),
}


def olympic_drop(benchmark: str | None) -> int:
    """Runs dropped at each end of the olympic mean (and the most that may fail)."""
    return 4 if (benchmark or "").lower() == "unet3d" else 1

SYSTEM_KEYS = ("submitter", "system_name")
# where a system JSON states host software (mlcommons/training_results_v5.1 systems/*.json):
# component -> keys, first present wins
SOFTWARE_KEYS: dict[str, tuple[str, ...]] = {
    "driver": ("cuda_driver_version", "nvidia_kernel_driver"),
    "cuda": ("cuda_version",),
    "nccl": ("nccl_version",),
    "framework": ("framework",),
}
# benchmarks whose RCP convergence metric is samples_count (rcp_checker.read_submission_file)
_SAMPLES_METRIC = frozenset({"llama2_70b_lora", "flux1", "llama31_405b", "llama31_8b",
                             "gpt_oss_20b", "deepseekv3_671b", "qwen35_397b_grpo", "dlrmv4"})
_ROUND_IN_PATH = re.compile(r"(?:^|[_\-])v(\d+\.\d+)$")
_RESULT_NAME = re.compile(r"^result_.*\.txt$")
_NOT_CONVERGED = 1e9  # the RCP checker's "infinite" epochs for a run that did not converge


@dataclass(frozen=True, slots=True)
class MllogEvent:
    """One ``:::MLLOG`` line: what the compliance rules and the RCP check read."""

    key: str
    value: Any
    metadata: dict[str, Any]
    time_ms: float
    line: int


@dataclass
class MlperfRun:
    """One result file, parsed once; ``events`` keep every MLLOG line with its line number."""

    file: str
    path: Path
    events: list[MllogEvent] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    line_count: int = 0
    benchmark: str | None = None
    submitter: str | None = None
    platform: str | None = None
    division: str | None = None
    availability: str | None = None
    run_start_ms: float | None = None
    run_stop_ms: float | None = None
    stop_status: str | None = None
    status: str = "no_data"
    problem: str | None = None

    @property
    def minutes(self) -> float | None:
        """Time to train as the summarizer computes it; None when the run does not count."""
        if self.status != "success" or self.run_start_ms is None or self.run_stop_ms is None:
            return None
        # the summarizer divides by 60, then by 1000: the same order gives the same last bit
        return (self.run_stop_ms - self.run_start_ms) / 60 / 1000

    def all(self, key: str) -> list[MllogEvent]:
        return [e for e in self.events if e.key == key]

    def first(self, key: str) -> MllogEvent | None:
        return next((e for e in self.events if e.key == key), None)

    def values(self) -> dict[str, Any]:
        """The first value logged for each key."""
        out: dict[str, Any] = {}
        for event in self.events:
            out.setdefault(event.key, event.value)
        return out

    @property
    def hyperparameters(self) -> dict[str, Any]:
        values = self.values()
        return {k: values[k] for k in ("global_batch_size", "seed",
                                       "gradient_accumulation_steps") if k in values}

    def facts(self) -> tuple[Fact, ...]:
        """What the log says about who ran it where (first occurrence, with its line)."""
        out = []
        for key, kind in (("submission_org", "submitter"), ("submission_platform", "system"),
                          ("submission_benchmark", "model")):
            event = self.first(key)
            if event is not None and stated(event.value) is not None:
                out.append(Fact(kind, str(event.value).strip(), event.line))
        return tuple(out)


#: what NVIDIA's reference implementations log until the submitter fills it in
#: (``SUBMISSION_ORG_PLACEHOLDER``, ``64xSUBMISSION_PLATFORM_PLACEHOLDER``); MLCommons publishes
#: such logs (Nebius, Lambda, Oracle, HPE, Dell in training_results_v5.0) and its summarizer
#: takes the submitter from the ``<org>/results`` folder and the system JSON instead
PLACEHOLDER = "PLACEHOLDER"


def stated(value: Any) -> str | None:
    """A logged identity value, or None when it is empty or a placeholder never filled in."""
    text = str(value or "").strip()
    return None if not text or PLACEHOLDER in text.upper() else text


def parse_result_file(path: Path, *, name: str | None = None) -> MlperfRun:
    """Read one result file; parse problems fail the run (MLPerf scores it as dropped)."""
    run = MlperfRun(file=name or path.name, path=path)
    try:
        data = read_bounded(path)
    except OSError as exc:
        raise EvidenceError(f"cannot read the result file: {exc.strerror}", file=path) from None
    lines = data.split(b"\n")
    run.line_count = len(lines) - (1 if lines and lines[-1] == b"" else 0)
    loads = json.loads
    for lineno, raw in enumerate(lines, start=1):
        # the official parser keeps what follows the *last* token on a line, read as latin-1
        pos = raw.rfind(_TOKEN_B)
        if pos < 0:
            continue
        text = raw[pos + len(_TOKEN_B):].decode("latin-1")
        try:
            event = loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past the limit
            run.errors.append((lineno, f"invalid JSON ({exc})"))
            continue
        if not isinstance(event, dict) or not isinstance(event.get("key"), str) or not (
                "value" in event and "metadata" in event):
            run.errors.append((lineno, "not an MLLOG event object with key, value and "
                               "metadata"))
            continue
        time_ms = _time_ms(event.get("time_ms"))
        if time_ms is None:
            run.errors.append((lineno, "time_ms is not a number"))
            continue
        meta = event["metadata"]
        run.events.append(MllogEvent(event["key"], event["value"],
                                     meta if isinstance(meta, dict) else {}, time_ms, lineno))
    _resolve(run)
    return run


def _time_ms(value: Any) -> float | None:
    """``float(time_ms)`` as the official parser takes it (a numeric string passes too)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        out = float(value)
    except ValueError:
        return None
    return out if math.isfinite(out) else None


def _resolve(run: MlperfRun) -> None:
    """Identity keys, run start/stop and the run's status from its events."""
    starts = run.all("run_start")
    stops = run.all("run_stop")
    for key, attr in (("submission_benchmark", "benchmark"), ("submission_org", "submitter"),
                      ("submission_platform", "platform"), ("submission_division", "division"),
                      ("submission_status", "availability")):
        event = run.first(key)
        if event is not None and (value := stated(event.value)) is not None:
            setattr(run, attr, value)
    if starts:
        run.run_start_ms = starts[0].time_ms
    if stops:
        run.run_stop_ms = stops[0].time_ms
        status = stops[0].metadata.get("status")
        run.stop_status = None if status is None else str(status)
    if run.errors:
        line, message = run.errors[0]
        run.status, run.problem = "invalid", f"line {line}: unparseable MLLOG event ({message})"
    elif not run.events:
        run.status, run.problem = "no_data", "no :::MLLOG events"
    elif len(starts) > 1 or len(stops) > 1:
        again = (starts if len(starts) > 1 else stops)[1]
        run.status, run.problem = "invalid", f"line {again.line}: second {again.key}"
    elif not starts or not stops:
        run.status = "incomplete"
        run.problem = "no run_start" if not starts else "no run_stop"
    elif run.stop_status != "success":
        run.status, run.problem = "failed", f"run_stop status {run.stop_status!r}"
    elif (missed := _missed_target(run)) is not None:
        run.status, run.problem = "failed", missed
    else:
        run.status = "success"


def _missed_target(run: MlperfRun) -> str | None:
    """Why a run that says success did not reach its benchmark's quality target, if it did not."""
    target = QUALITY_TARGETS.get(run.benchmark or "")
    if target is None:
        return None
    low, high = target
    for event in run.all("eval_accuracy"):
        value = _number(event.value)
        if value is not None and low < value <= high:
            return None
    return f"no eval_accuracy in ({low:g}, {high:g}] (the {run.benchmark} quality target)"


def convergence_point(run: MlperfRun, benchmark: str) -> float:
    """Epochs (or samples) to converge, as the RCP checker reads them; 1e9 if not converged.

    Facts from ``mlperf_logging/rcp_checker/rcp_checker.py`` (read_submission_file): the
    LLM benchmarks use the last ``eval_accuracy`` ``samples_count`` before ``run_stop``;
    stable_diffusion the first evaluated sample count with FID <= 90 and CLIP >= 0.15; the
    others the last ``eval_accuracy`` ``epoch_num`` rounded to 3 decimals. A run counts only
    if ``run_stop`` says ``status: success``.
    """
    point: float | None = None
    sd: dict[Any, dict[str, Any]] = {}
    for event in run.events:
        if event.key in ("eval_accuracy", "eval_error"):
            meta = event.metadata
            if benchmark == "stable_diffusion":
                sd.setdefault(meta.get("samples_count"), {})[str(meta.get("metric"))] = (
                    event.value)
            elif benchmark in _SAMPLES_METRIC:
                point = _number(meta.get("samples_count"))
            else:
                epoch = _number(meta.get("epoch_num"))
                point = None if epoch is None else round(epoch, 3)
        elif event.key == "run_stop":
            break
    if run.stop_status != "success" or run.status == "invalid":
        return _NOT_CONVERGED
    if benchmark == "stable_diffusion":
        passing = [float(step) for step, metrics in sd.items()
                   if _number(step) is not None
                   and (_number(metrics.get("FID")) or math.inf) <= 90.0
                   and (_number(metrics.get("CLIP")) or -math.inf) >= 0.15]
        return min(passing) if passing else _NOT_CONVERGED
    return _NOT_CONVERGED if point is None else point


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


# ----------------------------------------------------------------------------- official score

@dataclass
class OlympicScore:
    """The summarizer's score of one benchmark folder (minutes), and how it was reached."""

    score_min: float | None
    runs: int
    failed: int
    required: int | None
    dropped_each_end: int
    olympic: bool
    note: str | None = None
    unscaled_min: float | None = None
    scaling_factor: float = 1.0


def olympic_score(minutes: list[float | None], benchmark: str | None, *,
                  scaling_factor: float = 1.0) -> OlympicScore:
    """The official score from per-run minutes (None = the run failed) and the RCP factor."""
    bench = (benchmark or "").lower()
    drop = olympic_drop(bench)
    required = REQUIRED_RUNS.get(bench)
    failed = sum(1 for m in minutes if m is None or not math.isfinite(m))
    good = sorted(m for m in minutes if m is not None and math.isfinite(m))
    n = len(minutes)
    if failed > drop:
        return OlympicScore(None, n, failed, required, drop, False,
                            f"{failed} failed runs; at most {drop} may fail: results NOT "
                            "correct", scaling_factor=scaling_factor)
    kept = good[drop: len(good) - (drop - failed)]
    if not kept:
        return OlympicScore(None, n, failed, required, drop, False,
                            f"{n} run(s) leave nothing after dropping the {drop} fastest and "
                            f"{drop} slowest: no score", scaling_factor=scaling_factor)
    mean = sum(kept) / len(kept)
    note = None
    if required is not None and n != required:
        note = f"{n} runs; MLPerf requires exactly {required} for {bench}"
    return OlympicScore(mean * scaling_factor, n, failed, required, drop, True, note,
                        unscaled_min=mean, scaling_factor=scaling_factor)


# ----------------------------------------------------------------------------- system JSON

@dataclass(frozen=True)
class SystemDesc:
    """``systems/<system>.json``: the submitter's own statement of the hardware."""

    path: Path
    data: dict[str, Any]
    lines: dict[str, int]
    #: found where MLPerf keeps it (``systems/<system>.json``); False for one found inside or
    #: beside the benchmark folder instead, as providers bundle it
    official: bool = True

    @property
    def accelerators_count(self) -> int | None:
        return system_gpus(self.data)

    def get(self, key: str) -> str | None:
        value = self.data.get(key)
        return None if value is None else str(value)

    def software(self) -> dict[str, tuple[str, str, int | None]]:
        """Host software the description states: component -> (version, key, line).

        MLCommons' system JSON keeps them under ``other_software_stack`` (``cuda_driver_version``
        or ``nvidia_kernel_driver``, ``cuda_version``, ``nccl_version``) and the framework at
        the top level (``framework``)."""
        stack = self.data.get("other_software_stack")
        stack = stack if isinstance(stack, dict) else {}
        out: dict[str, tuple[str, str, int | None]] = {}
        for comp, keys in SOFTWARE_KEYS.items():
            for key in keys:
                value = stack.get(key, self.data.get(key))
                if isinstance(value, (str, int, float)) and str(value).strip():
                    out[comp] = (str(value).strip(), key, self.lines.get(key))
                    break
        return out

    def facts(self) -> tuple[Fact, ...]:
        out = []
        for key, kind in (("accelerator_model_name", "gpu"), ("number_of_nodes", "node_count"),
                          ("system_name", "system"), ("submitter", "submitter")):
            value = self.get(key)
            if value and value.strip():
                out.append(Fact(kind, value.strip(), self.lines.get(key), key))
        count = self.accelerators_count
        if count is not None:
            out.append(Fact("gpu_count", str(count), self.lines.get("accelerators_per_node"),
                            "accelerators_per_node x number_of_nodes"))
        return tuple(out)


def is_system_json(data: object) -> bool:
    return isinstance(data, dict) and all(k in data for k in SYSTEM_KEYS) and any(
        k in data for k in ("accelerators_per_node", "number_of_nodes", "accelerator_model_name"))


def system_gpus(system: dict[str, Any]) -> int | None:
    """``accelerators_per_node x number_of_nodes`` (the summarizer's accelerators_count)."""
    try:
        nodes = int(str(system.get("number_of_nodes")).strip())
        per_node = int(str(system.get("accelerators_per_node")).strip())
    except (TypeError, ValueError):
        return None
    return nodes * per_node if nodes > 0 and per_node > 0 else None


def load_system(path: Path, *, official: bool = True) -> SystemDesc:
    """Read a system description; a broken one is an error naming the file (and line)."""
    try:
        text = read_bounded_text(path, limit=MAX_JSON_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError(f"cannot read the system description: {exc}", file=path) from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line = getattr(exc, "lineno", None)
        raise EvidenceError(f"invalid system description JSON: {exc}", file=path, line=line,
                            fix="submit systems/<system>.json as MLCommons' "
                            "system_desc_checker accepts it") from None
    if not is_system_json(data):
        raise EvidenceError("not an MLPerf system description", file=path,
                            expected="a JSON object with submitter, system_name, "
                            "number_of_nodes, accelerators_per_node")
    lines: dict[str, int] = {}
    stack = data.get("other_software_stack")
    nested = stack if isinstance(stack, dict) else {}
    for number, line_text in enumerate(text.splitlines(), start=1):
        match = re.match(r'\s*"([^"]+)"\s*:', line_text)
        if match and (match.group(1) in data or match.group(1) in nested):
            lines.setdefault(match.group(1), number)
    return SystemDesc(path, data, lines, official)


def load_system_json(path: Path) -> dict[str, Any]:
    """The system description as a plain dict (see :func:`load_system`)."""
    return load_system(path).data


def read_scaling(folder: Path) -> tuple[float, Path | None]:
    """The review committee's RCP scaling factor (``scaling.json``), 1.0 without one."""
    path = folder / "scaling.json"
    if not path.is_file():
        return 1.0, None
    try:
        data = json.loads(read_bounded_text(path, limit=MAX_JSON_BYTES))
        factor = data["scaling_factor"]
        if isinstance(factor, bool) or not isinstance(factor, int | float):
            raise ValueError("scaling_factor is not a number")
        if not math.isfinite(factor) or factor <= 0:
            raise ValueError(f"scaling_factor {factor} is not a positive number")
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError,
            RecursionError) as exc:
        raise EvidenceError(f"unusable scaling.json ({str(exc)[:120]})", file=path,
                            expected='{"scaling_factor": <positive number>}',
                            fix="restore scaling.json exactly as the MLCommons review "
                            "committee wrote it") from None
    return float(factor), path


# ----------------------------------------------------------------------------- result trees

@dataclass
class MlperfSet:
    """One benchmark folder: its runs, system, scaling factor and official score."""

    folder: Path
    benchmark: str
    runs: list[MlperfRun]
    system: SystemDesc | None
    scaling_factor: float
    scaling_file: Path | None
    round: str | None
    score: OlympicScore
    notes: list[str] = field(default_factory=list)
    label: str = ""  # how reports name the folder (bundle-relative when in a bundle)

    @property
    def system_folder(self) -> str:
        return self.folder.parent.name

    @property
    def org_folder(self) -> str | None:
        """``<org>`` of ``<org>/results/<system>/<benchmark>``, MLCommons' layout (the folder
        the summarizer names the submitter by), else None."""
        results = self.folder.parent.parent
        return results.parent.name if results.name == "results" and results.parent.name \
            else None

    @property
    def submitter(self) -> str | None:
        """The system JSON's submitter, else the logs' ``submission_org``, else (logs that
        carry a placeholder) the ``<org>`` folder, as the summarizer names it."""
        if self.system is not None and self.system.get("submitter"):
            return self.system.get("submitter")
        return next((r.submitter for r in self.runs if r.submitter), None) or self.org_folder

    @property
    def division(self) -> str | None:
        if self.system is not None and self.system.get("division"):
            return self.system.get("division")
        return next((r.division for r in self.runs if r.division), None)

    @property
    def accelerator(self) -> str | None:
        """The system JSON's accelerator when it is where MLPerf keeps it, else None (what the
        manifest's ``[system] gpu`` declares in its place is a claim of the ledger:
        :mod:`cmax.resolve.entry_claims`)."""
        if self.system is not None and self.system.official:
            return self.system.get("accelerator_model_name")
        return None

    @property
    def num_gpus(self) -> int | None:
        return None if self.system is None else self.system.accelerators_count

    @property
    def system_name(self) -> str | None:
        if self.system is not None and self.system.get("system_name"):
            return self.system.get("system_name")
        return next((r.platform for r in self.runs if r.platform), None)


def result_files(folder: Path) -> list[Path]:
    """The folder's ``result_*.txt`` files (what the summarizer globs), in natural order.

    A folder without such names falls back to any file holding MLLOG lines, so a provider's
    single renamed log still reads; the set then carries a note.
    """
    try:
        children = list(folder.iterdir())
        named = [p for p in children if p.is_file() and _RESULT_NAME.match(p.name)]
        if named:
            return sorted(named, key=_natural)
        found = [c for c in children if c.is_file() and not c.name.startswith(".")
                 and c.suffix != ".json" and _has_token(c)]
    except OSError as exc:
        raise EvidenceError(f"cannot list the folder: {exc.strerror}", file=folder) from None
    return sorted(found, key=_natural)


def _has_token(path: Path) -> bool:
    """Whether the first MiB holds an MLLOG token (an unreadable file does not)."""
    try:
        with path.open("rb") as fh:
            return _TOKEN_B in fh.read(1 << 20)
    except OSError:
        return False


def _natural(path: Path) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path.name))


def benchmark_folders(path: Path, *, max_depth: int = 6) -> list[Path]:
    """Every folder under ``path`` (itself included) holding result files, sorted."""
    out: list[Path] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            children = sorted(folder.iterdir())
        except OSError:
            return
        if any(c.is_file() and _RESULT_NAME.match(c.name) for c in children):
            out.append(folder)
            return
        if depth >= max_depth:
            return
        for child in children:
            if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
                walk(child, depth + 1)

    walk(path, 0)
    if not out and path.is_dir() and result_files(path):
        out.append(path)
    return out


def is_mlperf_tree(path: Path) -> bool:
    """True for a benchmark, system, submitter (or round) folder of MLPerf results."""
    path = Path(path)
    if not path.is_dir():
        return False
    try:
        return any(_has_token(file) for folder in benchmark_folders(path)
                   for file in result_files(folder)[:1])
    except EvidenceError:
        return False


def detect_round(folder: Path, benchmark: str) -> str | None:
    """The training round from the path (``training_results_v5.0``, ``v5.0``) if it names one.

    The logs do not state their round. A path naming a round the benchmark is not part of is
    ignored. Without a named round, a benchmark that belongs to one round only decides it.
    """
    for part in reversed(folder.resolve().parts):
        match = _ROUND_IN_PATH.search(part)
        if match and benchmark in ROUND_BENCHMARKS.get(match.group(1), frozenset()):
            return match.group(1)
    rounds = [r for r, names in ROUND_BENCHMARKS.items() if benchmark in names]
    return rounds[0] if len(rounds) == 1 else None


def find_system(folder: Path, runs: list[MlperfRun], *, root: Path) -> SystemDesc | None:
    """The system description of a benchmark folder.

    MLPerf keeps ``<org>/results/<system>/<benchmark>/`` and ``<org>/systems/<system>.json``,
    the only place read as official. A system JSON inside the benchmark folder or beside it (a
    provider's own bundle) is read too, marked not official, so its accelerator is not taken
    as the one rated. The search never leaves ``root``.
    """
    names = [folder.parent.name, *sorted({r.platform for r in runs if r.platform})]
    root = root.resolve()
    current = folder
    while True:
        for name in names:
            candidate = current / "systems" / f"{name}.json"
            if is_file_named(candidate) and candidate.resolve().is_relative_to(root):
                return load_system(candidate)
        if current.resolve() == root or current.parent == current:
            break
        current = current.parent
    for child in sorted(folder.glob("*.json")):
        if child.name == "scaling.json":
            continue
        try:
            return load_system(child, official=False)
        except CmaxError:
            continue
    return _beside(folder, names, root)


def _beside(folder: Path, names: list[str], root: Path) -> SystemDesc | None:
    """A system JSON next to the benchmark folder (``<system>/<system>.json`` or
    ``results/<system>.json``, else the one system description in that folder whatever its
    name: a provider's bundle rarely names it after the folder) rather than under
    ``systems/``: read, marked not official."""
    for parent in (folder.parent, folder.parent.parent):
        if not parent.resolve().is_relative_to(root) or parent.resolve() == folder.resolve():
            continue
        for name in names:
            candidate = parent / f"{name}.json"
            if is_file_named(candidate):
                try:
                    return load_system(candidate, official=False)
                except CmaxError:
                    continue
        if (lone := _lone_system(parent)) is not None:
            return lone
        if parent.resolve() == root:
            break
    return None


def _lone_system(parent: Path) -> SystemDesc | None:
    """The only system description among ``parent``'s JSON files (None: none, or several)."""
    found: list[SystemDesc] = []
    for child in sorted(parent.glob("*.json")):
        if child.name == "scaling.json" or not is_file_named(child):
            continue
        try:
            found.append(load_system(child, official=False))
        except CmaxError:
            continue
    return found[0] if len(found) == 1 else None


def read_set(folder: Path, *, root: Path | None = None, label: str | None = None) -> MlperfSet:
    """Parse and score one benchmark folder (the summarizer's unit of scoring)."""
    files = result_files(folder)
    if not files:
        raise EvidenceError("folder holds no MLPerf result files", file=folder,
                            expected="result_*.txt files with :::MLLOG lines")
    runs = [parse_result_file(p) for p in files]
    notes: list[str] = []
    if not any(_RESULT_NAME.match(p.name) for p in files):
        notes.append("result files are not named result_*.txt; MLCommons' summarizer would "
                     "not read them")
    logged = next((r.benchmark for r in runs if r.benchmark), None)
    name = "maskrcnn" if folder.name == "mask" else folder.name
    benchmark = name if name in REQUIRED_RUNS else (logged or name)
    if logged and logged != benchmark:
        notes.append(f"folder {folder.name!r} holds {logged!r} logs; scored as {benchmark}")
    factor, scaling_file = read_scaling(folder)
    system = find_system(folder, runs, root=root or folder)
    score = olympic_score([r.minutes for r in runs], benchmark, scaling_factor=factor)
    if score.note:
        notes.append(score.note)
    if system is None:
        notes.append("no systems/<system>.json found: GPU count and accelerator unknown")
    elif not system.official:
        where = "inside the benchmark folder" if system.path.parent == folder else (
            "beside the results")
        notes.append(f"system JSON {system.path.name} is {where}, not under "
                     "systems/: its GPU count and software are read, the accelerator rated is "
                     "the manifest's, as declared")
    base = root or folder
    for run in runs:
        run.file = relative_path(run.path, base)
    return MlperfSet(folder=folder, benchmark=benchmark, runs=runs, system=system,
                     scaling_factor=factor, scaling_file=scaling_file,
                     round=detect_round(folder, benchmark), score=score, notes=notes,
                     label=label or relative_path(folder, base) or folder.name)


def relative_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (how findings and reports name it), else its name."""
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.name
    return "" if rel == "." else rel


def read_tree(path: Path, *, root: Path | None = None,
              round_: str | None = None) -> list[MlperfSet]:
    """Every benchmark folder under a benchmark, system, submitter or round folder.

    ``round_`` (the manifest's ``[[mlperf]] round``) overrides the round read from the path.
    """
    path = Path(path)
    if path.is_file():
        sets = [_single_file_set(path, root=root or path.parent)]
    else:
        folders = benchmark_folders(path)
        if not folders:
            raise EvidenceError("folder holds no MLPerf result files", file=path,
                                expected="<org>/results/<system>/<benchmark>/result_*.txt")
        sets = [read_set(f, root=root or path) for f in folders]
    if round_:
        for s in sets:
            s.round = round_.removeprefix("v")
    return sets


def _single_file_set(path: Path, *, root: Path) -> MlperfSet:
    run = parse_result_file(path)
    benchmark = run.benchmark or "unknown"
    factor, scaling_file = read_scaling(path.parent)
    score = olympic_score([run.minutes], benchmark, scaling_factor=factor)
    notes = ["one result file: MLPerf scores a benchmark folder of "
             f"{REQUIRED_RUNS.get(benchmark, 'several')} runs"]
    return MlperfSet(folder=path.parent, benchmark=benchmark, runs=[run],
                     system=find_system(path.parent, [run], root=root),
                     scaling_factor=factor, scaling_file=scaling_file,
                     round=detect_round(path.parent, benchmark), score=score, notes=notes,
                     label=path.name)


# ----------------------------------------------------------------------------- summaries

def summary_row(sets: list[MlperfSet]) -> dict[str, Any]:
    """One row of the summarizer's ``summary.json`` for the sets of one system folder."""
    first = sets[0]
    system = first.system.data if first.system is not None else {}

    def field_(key: str) -> Any:
        value = system.get(key)
        return None if value is None else str(value)

    try:
        hosts: int | None = (int(str(system["host_processors_per_node"]))
                             * int(str(system["number_of_nodes"])))
    except (KeyError, ValueError):
        hosts = None
    row: dict[str, Any] = {
        "division": field_("division"), "availability": field_("status"),
        "submitter": field_("submitter") or first.submitter,
        "system": field_("system_name") or first.system_name,
        "number_of_nodes": field_("number_of_nodes"),
        "host_processor_model_name": field_("host_processor_model_name"),
        "host_processors_count": hosts,
        "accelerator_model_name": field_("accelerator_model_name"),
        "accelerators_count": first.num_gpus,
        "framework": field_("framework"),
        "notes": ";".join(s for s in (field_("hw_notes"), field_("sw_notes")) if s),
    }
    for s in sets:
        row[s.benchmark] = s.score.score_min
        row[f"{s.benchmark}:time_to_train"] = s.score.score_min
        row[f"{s.benchmark}:rcp_scaling_factor"] = s.scaling_factor
    rnd = first.round
    submitter = row["submitter"]
    if rnd is not None and submitter and first.system is not None:
        prefix = f"https://github.com/mlcommons/training_results_v{rnd}"
        row["details_url"] = f"{prefix}/blob/main/{submitter}/systems/{first.system.path.stem}.json"
        row["code_url"] = f"{prefix}/blob/master/{submitter}/benchmarks"
    return row


def set_summary(s: MlperfSet) -> dict[str, Any]:
    """What ``cmax inspect`` shows for one benchmark folder."""
    score = s.score
    out: dict[str, Any] = {
        "format": "mlperf",
        "benchmark": s.benchmark,
        "round": s.round,
        "submitter": s.submitter,
        "system": s.system_name,
        "system_folder": s.system_folder,
        "division": s.division,
        "accelerator_model_name": s.accelerator,
        "num_gpus": s.num_gpus,
        "runs": [
            {"file": r.path.name, "status": r.status,
             "time_to_train_min": round(r.minutes, 4) if r.minutes is not None else None,
             **({"problem": r.problem} if r.problem else {})}
            for r in s.runs
        ],
        "score_min": _round(score.score_min),
        "unscaled_score_min": _round(score.unscaled_min),
        "rcp_scaling_factor": s.scaling_factor,
        "olympic": score.olympic,
        "failed_runs": score.failed,
        "required_runs": score.required,
    }
    if s.notes:
        out["notes"] = list(s.notes)
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def inspect_tree(path: Path) -> dict[str, Any]:
    """``cmax inspect`` on a benchmark, system or submitter folder: every official score.

    One benchmark folder gives its own summary; a larger tree lists every benchmark and the
    ``summary`` rows the MLCommons summarizer writes to summary.json (one per system).
    """
    path = Path(path)
    sets = read_tree(path, root=_submitter_root(path))
    by_system: dict[Path, list[MlperfSet]] = {}
    for s in sets:
        by_system.setdefault(s.folder.parent, []).append(s)
    summary = [summary_row(group) for group in by_system.values()]
    if len(sets) == 1:
        out = set_summary(sets[0])
        if Path(path).is_file():  # no official score for one run: show that run's time
            out["time_to_train_min"] = out["runs"][0]["time_to_train_min"]
        return {**out, "summary": summary}
    return {"format": "mlperf-tree", "benchmarks": [set_summary(s) for s in sets],
            "summary": summary}


def _submitter_root(path: Path) -> Path:
    """For ``cmax inspect``: the submitter folder above a system or benchmark folder (the one
    holding ``systems/``), so the system JSON is found; else the folder itself."""
    start = path if path.is_dir() else path.parent
    for folder in (start, *list(start.parents)[:4]):
        if (folder / "systems").is_dir():
            return folder
    return start


def system_summary(system: dict[str, Any]) -> dict[str, Any]:
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


def mlperf_rows(sets: list[MlperfSet], display: dict[Path, str]) -> list[dict[str, Any]]:
    """Rows of the canonical ``mlperf`` table (one per run)."""
    return [{
        "run_id": r.path.name, "benchmark": s.benchmark, "submitter": r.submitter or s.submitter,
        "system": r.platform or s.system_folder, "division": r.division or s.division,
        "status": r.status, "run_start_ms": _int(r.run_start_ms),
        "run_stop_ms": _int(r.run_stop_ms),
        "time_to_train_min": r.minutes, "num_gpus": s.num_gpus,
        "source_file": display.get(r.path, r.path.name),
    } for s in sets for r in s.runs]


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


class MlperfResult(Format[MlperfRun]):
    id = "mlperf"
    title = "MLPerf Training result file"
    tool = "MLCommons MLPerf Training reference and submitter code (`:::MLLOG {...}` lines)"
    sample = "ingest/mlperf/results/example_h100_64x8/llama31_405b/result_0.txt"
    role: Role = "mlperf"

    def parse(self, probe: Probe) -> MlperfRun:
        return parse_result_file(probe.path)

    def summarise(self, parsed: MlperfRun, probe: Probe) -> dict[str, Any]:
        # the tree reader summarises a lone file the way it does a folder (system, notes)
        return inspect_tree(probe.path)


class MlperfSystemJson(Format[SystemDesc]):
    id = "mlperf-system-json"
    title = "MLPerf system description"
    tool = "MLPerf submission `systems/<system>.json` (checked by MLCommons system_desc_checker)"
    sample = "ingest/mlperf/systems/example_h100_64x8.json"
    role: Role = "mlperf-system"
    json_shape = staticmethod(is_system_json)

    def parse(self, probe: Probe) -> SystemDesc:
        """The description with its key lines, so its facts (GPU, node and GPU counts) name
        the line that states them, for ``cmax inspect`` and ``cmax init``."""
        return load_system(probe.path, official=False)

    def summarise(self, parsed: SystemDesc, probe: Probe) -> dict[str, Any]:
        return dict(system_summary(parsed.data))

    def facts(self, parsed: SystemDesc) -> tuple[Fact, ...]:
        return parsed.facts()


register(MlperfResult())
register(MlperfSystemJson())
