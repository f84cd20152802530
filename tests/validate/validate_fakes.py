"""Test helpers for the validator: an honest-bundle builder (the fake reference is the shared
one in tests/fakes.py).

``HonestBundle`` builds an Evidence for a realistic, honest submission (slow first steps, ~1 %
jitter, one brief stall, NeMo 2 log text) and writes the files it names, recording each as an
EvidenceFile the way ingest does, so each test can break exactly one thing.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import hashlib
import io
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest import ingest
from cmax.ingest.evidence import (
    AUDIT_SCHEMA,
    INCIDENTS_SCHEMA,
    MLPERF_SCHEMA,
    NCCL_SCHEMA,
    RUNS_SCHEMA,
    STEPS_SCHEMA,
    Evidence,
    EvidenceFile,
    conform,
)
from cmax.ingest.formats import identify, recorded_facts
from cmax.ingest.formats.mlperf import mlperf_rows, read_tree
from cmax.submission.bundle import open_bundle
from cmax.submission.manifest import parse_manifest
from tests.fakes import PER_SAMPLE

__all__ = ["HonestBundle", "RunFx", "toml_text"]

# ---------------------------------------------------------------------------------------------
# An honest bundle


def honest_times(base: float, seed: int, *, n: int = 50, jitter: float = 0.01,
                 stall_at: int | None = 22, stall: float = 1.8) -> list[float]:
    """NeMo-2-like step times: two slow warm-up steps, ~1 % jitter, one brief stall."""
    rng = random.Random(seed)
    times = []
    for i in range(n):
        if i == 0:
            t = base * 3.4
        elif i == 1:
            t = base * 1.12
        elif i == stall_at:
            t = base * stall
        else:
            t = base * (1 + max(-0.03, min(0.03, rng.gauss(0, jitter))))
        times.append(round(t, 2))
    return times


@dataclass
class RunFx:
    workload: str
    precision: str
    base_step: float
    gbs: int
    tp: int | None
    pp: int | None
    cp: int | None
    vp: int | None
    ep: int | None = None
    num_gpus: int = 512
    seq_len: int = 8192
    mbs: int = 1
    seed: int = 1
    container: str = "nvcr.io/nvidia/nemo:25.04.01"
    times: list[float] = field(default_factory=list)
    iterations: list[int] | None = None
    tflops: list[float | None] | None = None
    loss: list[float] | None = None
    grad_norm: list[float | None] | None = None
    status: str = "success"
    max_iteration: int | None = 49
    row: dict[str, Any] = field(default_factory=dict)   # what the log says, if it differs
    spec: dict[str, Any] = field(default_factory=dict)  # extra/overridden manifest keys
    extra_steps: dict[str, list[Any]] = field(default_factory=dict)
    #: whether the log states its experiment name and world size (corroborating the claims)
    stated: bool = True
    #: its place in the manifest's [[runs]] (HonestBundle sets it): ingest names a run by it
    index: int = 0
    #: printed iterations of an earlier attempt, before the steps (a restart from a checkpoint:
    #: the log goes back to the first of ``its()``)
    earlier: list[int] = field(default_factory=list)
    #: the wall-clock stamps the earlier attempt's lines print (UTC epoch seconds), if any
    earlier_stamps: list[float] | None = None
    #: the log ends in a step line cut mid-write (the job killed while printing)
    cut_tail: bool = False
    #: the world size and experiment folder the log prints, where they differ from the claim
    world: int | None = None
    experiment: str | None = None
    #: more lines the job prints before its first step (a container, a setting, an argument)
    header_extra: list[str] = field(default_factory=list)
    #: a Megatron-LM log instead (one line per iteration, ``training.py`` ``training_log``),
    #: which reports the optimizer steps skipped in each interval: iteration -> count
    megatron_skipped: dict[int, int] | None = None
    #: the log's format when it is not NeMo 2's: "maxtext" (``completed step:`` lines, which
    #: print the step time and tokens/s) or "torchtitan" (metrics lines, which print tokens/s
    #: and no step time)
    log_format: str = "nemo2"
    #: the tokens/s/GPU a MaxText or TorchTitan log prints, as a multiple of what GBS x seq_len
    #: / step time / GPUs gives (1.0: the log's own arithmetic)
    tokens_scale: float = 1.0

    def __post_init__(self) -> None:
        if not self.times:
            self.times = honest_times(self.base_step, self.seed)

    @property
    def log(self) -> str:
        named = self.spec.get("log")
        return named if isinstance(named, str) else (
            f"training/{self.workload}_{self.precision}_{self.num_gpus}.log")

    @property
    def stem(self) -> str:
        return self.log.rsplit("/", 1)[-1].removesuffix(".log")

    @property
    def run_id(self) -> str:
        return f"runs[{self.index}]"

    def its(self) -> list[int]:
        return self.iterations if self.iterations is not None else list(range(len(self.times)))

    def tflops_values(self) -> list[float | None]:
        if self.tflops is not None:
            return self.tflops
        scale = PER_SAMPLE.get(self.workload, 0.0) * self.gbs / self.num_gpus / 1e12
        return [float(f"{scale / t:.4g}") if t > 0 and math.isfinite(t) else None
                for t in self.times]

    def header(self) -> list[str]:
        """The lines a NeMo 2 job prints about itself before its first step: the experiment
        folder (NeMo's exp_manager) and the world size (Lightning's distributed set-up)."""
        if not self.stated:
            return ["[NeMo I 2026-09-14 08:00:00 nemo_logging:393] Training starts"]
        return [f"[NeMo I 2026-09-14 08:00:00 nemo_logging:393] Experiments will be logged at "
                f"/results/{self.experiment or 'pretrain_' + self.stem}",
                "Initializing distributed: GLOBAL_RANK: 0, MEMBER: "
                f"1/{self.world or self.num_gpus}", *self.header_extra]

    def losses(self) -> list[float]:
        # a real loss moves with each batch (fabrication.formula-loss): seeded noise on the trend
        rng = random.Random(self.seed)
        return self.loss or [round(12.0 - 0.1 * i + rng.gauss(0, 0.02), 3)
                             for i in range(len(self.times))]

    def megatron_text(self) -> str:
        """The run as Megatron-LM prints it (NVIDIA/Megatron-LM megatron/training/training.py
        ``training_log``; the line of tests/data/ingest/megatron_lm_nan_grad.log): the
        argument summary, then per iteration its stamp, ``iteration k/ N``, consumed samples,
        the step time in ms, TFLOP/s, the loss and the skipped and NaN counts."""
        top = self.max_iteration if self.max_iteration is not None else max(self.its())
        dp = self.num_gpus // ((self.tp or 1) * (self.pp or 1) * (self.cp or 1))
        lines = [f"using world size: {self.num_gpus}, data-parallel size: {dp}, "
                 f"context-parallel size: {self.cp or 1}, tensor-model-parallel size: "
                 f"{self.tp or 1}, pipeline-model-parallel size: {self.pp or 1}"]
        clock = dt.datetime(2026, 9, 14, 8, 0, tzinfo=dt.UTC)
        skipped = self.megatron_skipped or {}
        for it, t, tf, loss in zip(self.its(), self.times, self.tflops_values(), self.losses(),
                                   strict=True):
            clock += dt.timedelta(seconds=t)
            lines.append(
                f" [{clock:%Y-%m-%d %H:%M:%S}] iteration {it + 1:8d}/{top + 1:8d} | consumed "
                f"samples: {(it + 1) * self.gbs:12d} | elapsed time per iteration (ms): "
                f"{t * 1000:.1f} | throughput per GPU (TFLOP/s/GPU): {tf or 0:.1f} | lm loss: "
                f"{loss:.6E} | number of skipped iterations: {skipped.get(it + 1, 0):3d} | "
                "number of nan iterations:   0 |")
        return "\n".join(lines) + "\n"

    def tokens_per_s(self, step_time: float) -> float:
        """The tokens/s/GPU the log prints for a step of ``step_time`` s."""
        return self.gbs * self.seq_len / step_time / self.num_gpus * self.tokens_scale

    def maxtext_text(self) -> str:
        """The run as MaxText prints it (tests/data/ingest/maxtext_llama2-70b.log: a JAX
        start-up line, then per step ``completed step: N, seconds: s, TFLOP/s/device: x,
        Tokens/s/device: y, total_weights: w, loss: l``, zero-based steps)."""
        lines = ["I0914 08:00:00.000000 139 max_utils.py:100] System Information: Jax Version: "
                 "0.4.38"]
        for it, t, tf, loss in zip(self.its(), self.times, self.tflops_values(), self.losses(),
                                   strict=True):
            lines.append(f"completed step: {it}, seconds: {t:.3f}, TFLOP/s/device: {tf or 0:.3f},"
                         f" Tokens/s/device: {self.tokens_per_s(t):.3f}, total_weights: "
                         f"{self.gbs * self.seq_len}, loss: {loss:.3f}")
        return "\n".join(lines) + "\n"

    def torchtitan_text(self) -> str:
        """The run as TorchTitan prints it (tests/data/ingest/torchtitan_deepseek-v3.log:
        ``step: N  loss: l  grad_norm: g  memory: ...  tps: t  tflops: f  mfu: m%`` per step,
        one-based, after rank 0's logger prefix), without the ``Training starts at step 1,
        with ... global batch size ...`` line: the step time is then known only from the
        manifest's GBS and sequence length."""
        lines = []
        clock = dt.datetime(2026, 9, 14, 8, 0, tzinfo=dt.UTC)
        for it, t, tf, loss in zip(self.its(), self.times, self.tflops_values(), self.losses(),
                                   strict=True):
            clock += dt.timedelta(seconds=t)
            lines.append(f"[rank0]:[titan] {clock:%Y-%m-%d %H:%M:%S},000 - root - INFO - "
                         f"step: {it + 1:2d}  loss: {loss:7.4f}  grad_norm:  1.5000  memory: "
                         f"61.23GiB(77.42%)  tps: {self.tokens_per_s(t):,.0f}  tflops: "
                         f"{tf or 0:.2f}  mfu: 48.49%")
        return "\n".join(lines) + "\n"

    def log_text(self) -> str:
        """The NeMo 2 log: its header, then one step line per step (NeMo's ProgressPrinter:
        ``iteration n/N | key: value | ...``, prefixed with the logger's stamp when the run
        states wall-clock times). What the log prints and the manifest does not
        (``row``: the GBS it ran, ``extra_steps``: stamps and consumed samples, grad norms)
        is written into the lines, so real ingest reads it back."""
        if self.megatron_skipped is not None:
            return self.megatron_text()
        if self.log_format == "maxtext":
            return self.maxtext_text()
        if self.log_format == "torchtitan":
            return self.torchtitan_text()
        lines = self.header()
        top = self.max_iteration if self.max_iteration is not None else max(self.its())
        losses = self.losses()
        gbs = self.row.get("gbs", self.gbs)
        stamps = self.extra_steps.get("wall_time_s")
        consumed = self.extra_steps.get("consumed_samples")
        norms = self.grad_norm
        for n, it in enumerate(self.earlier):
            said = ""
            if self.earlier_stamps is not None:
                when = dt.datetime.fromtimestamp(self.earlier_stamps[n], dt.UTC)
                said = f"[NeMo I {when:%Y-%m-%d %H:%M:%S} nemo_logging:393] "
            lines.append(f"{said}Training epoch 0, iteration {it}/{top} | global_batch_size: "
                         f"{gbs} | global_step: {it} | train_step_timing in s: {self.times[0]}")
        for i, (it, t, tf) in enumerate(zip(self.its(), self.times, self.tflops_values(),
                                            strict=True)):
            tf_text = f"{tf:.3e}" if tf is not None else "0"
            prefix = ""
            if stamps is not None:
                when = dt.datetime.fromtimestamp(float(stamps[i]), dt.UTC)
                prefix = f"[NeMo I {when:%Y-%m-%d %H:%M:%S} nemo_logging:393] "
            samples = consumed[i] if consumed is not None else (it + 1) * gbs
            norm = f" | grad_norm: {norms[i]}" if norms is not None and norms[i] is not None \
                else ""
            lines.append(
                f"{prefix}Training epoch 0, iteration {it}/{top} | lr: 6e-06 | "
                f"global_batch_size: {gbs} | global_step: {it} | reduced_train_loss: "
                f"{losses[i]:.3f}{norm} | train_step_timing in s: {t} | TFLOPS_per_GPU: "
                f"{tf_text} | consumed_samples: {samples:g}")
        text = "\n".join(lines) + "\n"
        if self.cut_tail:
            text += (f"Training epoch 0, iteration {top}/{top} | lr: 6e-06 | global_batch_size: "
                     f"{gbs} | train_step_timing in s: 1")
        return text

    def manifest_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "workload": self.workload, "precision": self.precision, "num_gpus": self.num_gpus,
            "log": self.log, "seq_len": self.seq_len, "gbs": self.gbs, "mbs": self.mbs,
            "tp": self.tp, "pp": self.pp, "cp": self.cp, "vp": self.vp,
            "framework": self.log_format, "container": self.container}
        if self.ep is not None:
            entry["ep"] = self.ep
        entry.update(self.spec)  # a key set to None leaves the manifest without it
        return {k: v for k, v in entry.items() if v is not None}

    def runs_row(self) -> dict[str, Any]:
        """The runs row ingest reads from the NeMo 2 log: what it prints (the GBS on its step
        lines, its framework), null where it is silent. The run's declared identity and
        configuration are its manifest entry's, read through the resolved run."""
        row = {"run_id": self.run_id, "entry": self.index, "gbs": self.gbs,
               "framework": self.log_format, "source_file": self.log, "status": self.status,
               "max_iteration": self.max_iteration, "restarts": 0}
        row.update(self.row)
        return row

    def steps_rows(self) -> dict[str, list[Any]]:
        n = len(self.times)
        cols: dict[str, list[Any]] = {
            "run_id": [self.run_id] * n, "iteration": self.its(), "step_time_s": self.times,
            "tflops_per_gpu": self.tflops_values(),
            "loss": self.losses(), "grad_norm": self.grad_norm or [None] * n,
            "consumed_samples": [float((it + 1) * self.gbs) for it in self.its()],
            "source_file": [self.log] * n,
            "line": list(range(len(self.header()) + 1, len(self.header()) + n + 1))}
        cols.update(self.extra_steps)
        return cols


def default_runs() -> list[RunFx]:
    return [
        RunFx("llama3.1-405b", "bf16", 19.86, 256, 8, 8, 2, 8, seed=11),
        RunFx("llama3.1-405b", "fp8", 13.05, 256, 8, 8, 2, 8, seed=12),
        RunFx("grok1-314b", "fp8", 13.47, 1024, 4, 8, 2, 8, ep=8, seed=13),
    ]


def nccl_hosts(nodes: int) -> list[str]:
    return [f"node-{n:03d}" for n in range(nodes)]


def nccl_rows(path: str, *, ranks: int = 512, nodes: int = 64, peak: float = 372.0
              ) -> dict[str, list[Any]]:
    """An all_reduce sweep whose algbw and busbw follow from size, time and ranks: the rows
    ingest reads from :func:`nccl_text` of the same sweep."""
    rows: dict[str, list[Any]] = {}
    factor = 2 * (ranks - 1) / ranks
    first = _NCCL_PREAMBLE + ranks + _NCCL_HEADER + 1
    hosts = ",".join(nccl_hosts(nodes))
    for k, line in zip(range(20, 35), range(first, first + 15), strict=True):
        size = 2 ** k
        bus = peak * size / (size + 2 ** 26)
        time_us = round(size * factor / bus / 1e3, 1)
        alg = round(size / time_us / 1e3, 2)
        for in_place in (False, True):
            values = {"run_id": "nccl[0]", "collective": "all_reduce", "ranks": ranks,
                      "nodes": nodes, "size_bytes": size, "dtype": "float", "time_us": time_us,
                      "algbw_gbps": alg, "busbw_gbps": round(alg * factor, 2), "wrong": 0,
                      "in_place": in_place, "source_file": path, "line": line, "block": 0,
                      "hosts": hosts}
            for key, value in values.items():
                rows.setdefault(key, []).append(value)
    return rows


_NCCL_PREAMBLE = 5  # version, start, parameters, "#", "Using devices"
_NCCL_HEADER = 4  # "#", the two column-title lines, the units line


def nccl_text(rows: dict[str, list[Any]], *, hosts: list[str] | None = None,
              gpu: str = "NVIDIA H100 80GB HBM3", info: tuple[str, ...] = ()) -> str:
    """``rows`` (two per size: out-of-place, in-place) as nccl-tests 2.17 prints them
    (NVIDIA/nccl-tests src/common.cu: one device line per rank naming its host and the CUDA
    device, then the size table)."""
    ranks, nodes = int(rows["ranks"][0]), int(rows["nodes"][0])
    hosts = hosts or nccl_hosts(nodes)
    per_host = ranks // nodes
    lines = ["# nccl-tests version 2.17.6 nccl-headers=22707 nccl-library=22707",
             "# Collective test starting: all_reduce_perf",
             "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 17179869184 step: 2(factor) "
             "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0",
             "#", "# Using devices"]
    lines += [f"#  Rank {r:4d} Group  0 Pid {4000 + r:6d} on {hosts[r // per_host]:>10} device "
              f"{r % per_host:2d} [0000:{0x19 + 0x10 * (r % per_host):02x}:00] "
              f"{gpu}" for r in range(ranks)]
    lines += [f"{hosts[0]}:4000:4000 [0] NCCL INFO {text}" for text in info]
    lines += ["#", "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
              "#       size         count      type   redop    root     time   algbw   busbw "
              "#wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
              "            (us)  (GB/s)  (GB/s)"]
    for i in range(0, len(rows["size_bytes"]), 2):
        size = int(rows["size_bytes"][i])
        half = [f"{rows['time_us'][j]:8.1f} {rows['algbw_gbps'][j]:7.2f} "
                f"{rows['busbw_gbps'][j]:7.2f} {rows['wrong'][j]:6d}" for j in (i, i + 1)]
        lines.append(f"{size:12d} {size // 4:13d}     float     sum      -1 {half[0]} {half[1]}")
    if not rows["size_bytes"]:  # killed before its first size: the table header only
        return "\n".join(lines) + "\n"
    avg = sum(rows["busbw_gbps"]) / len(rows["busbw_gbps"])
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {avg:.4g} ", "#",
              "# Collective test concluded: all_reduce_perf", ""]
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))  # JSON's escapes are TOML basic-string escapes


def toml_text(data: dict[str, Any]) -> str:
    """``data`` (a manifest dict: tables, arrays of tables, scalars) as TOML text."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in data.items()
             if not isinstance(v, dict | list) or (isinstance(v, list) and not
                                                   any(isinstance(e, dict) for e in v))]
    for key, value in data.items():
        if isinstance(value, dict):
            lines += ["", f"[{key}]", *(f"{k} = {_toml_value(v)}" for k, v in value.items())]
        elif isinstance(value, list) and any(isinstance(e, dict) for e in value):
            for entry in value:
                lines += ["", f"[[{key}]]", *(f"{k} = {_toml_value(v)}"
                                              for k, v in entry.items())]
    return "\n".join(lines) + "\n"


def mllog(key: str, value: Any, t: float, **meta: Any) -> str:
    event = {"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME", "key": key,
             "value": value, "metadata": {"file": "train.py", "lineno": 1, **meta}}
    return ":::MLLOG " + json.dumps(event)


def mlperf_result(seed: int, *, status: str = "success", accuracy: float = 5.5,
                  overrides: dict[str, Any] | None = None, drop: tuple[str, ...] = (),
                  init_minutes: float = 12.0, run_start_offset_ms: float = 10.0,
                  extra: tuple[str, ...] = (), first_block: int = 5) -> str:
    """A closed llama31_405b result file in the MLLOG format."""
    t0 = 1_760_000_000_000.0 + seed * 10_000_000
    gbs = 1152
    values: dict[str, Any] = {
        "submission_org": "Example Cloud", "submission_platform": "64xH100",
        "submission_division": "closed", "submission_benchmark": "llama31_405b",
        "submission_status": "cloud", "cache_clear": True, "global_batch_size": gbs,
        "max_sequence_length": 8192, "opt_name": "adamw", "opt_base_learning_rate": 8e-5,
        "opt_end_learning_rate": 8e-7, "opt_learning_rate_warmup_steps": 8000,
        "opt_learning_rate_decay_steps": 1_192_000,
        "opt_learning_rate_decay_schedule": "cosine with linear warmup",
        "opt_adamw_beta_1": 0.9, "opt_adamw_beta_2": 0.95, "opt_adamw_epsilon": 1e-05,
        "opt_adamw_weight_decay": 0.1, "opt_gradient_clip_norm": 1.0,
        "gradient_accumulation_steps": 8, "eval_samples": 5760, "init_checkpoint_step": 0,
        "train_samples": 1_382_400, "seed": seed}
    values.update(overrides or {})
    lines = []
    t = t0
    lines.append(mllog("init_start", None, t))
    for key, value in values.items():
        if key not in drop:
            t += 10
            lines.append(mllog(key, value, t))
    t = t0 + init_minutes * 60_000
    if "init_stop" not in drop:
        lines.append(mllog("init_stop", None, t))
    if "run_start" not in drop:
        lines.append(mllog("run_start", None, t + run_start_offset_ms))
    t += 10
    # samples_count of the last eval = (first_block + 2) x 46080: 322560 by default, at the
    # MLCommons RCP mean for llama31_405b at batch size 1152 (so the RCP check passes)
    for epoch, acc in enumerate((6.1, 5.8, accuracy), start=first_block):
        t += 600_000 + 37 * seed  # independent runs never take the same time to the ms
        lines.append(mllog("block_start", None, t, samples_count=epoch * 46080,
                           epoch_count=1, first_epoch_num=epoch))
        lines.append(mllog("eval_start", None, t + 1, samples_count=epoch * 46080))
        lines.append(mllog("eval_accuracy", acc, t + 2, samples_count=epoch * 46080))
        lines.append(mllog("eval_stop", None, t + 3, samples_count=epoch * 46080))
        lines.append(mllog("block_stop", None, t + 4, samples_count=epoch * 46080,
                           first_epoch_num=epoch))
    if "run_stop" not in drop:
        lines.append(mllog("run_stop", None, t + 100, status=status))
    lines.extend(extra)
    return "[1,0]<stdout>: " + "\n[1,0]<stdout>: ".join(lines) + "\n"


def incidents_csv(rows: list[dict[str, Any]]) -> str:
    """``rows`` as the incident CSV cmax reads (tests/data/ingest/incidents.csv's columns)."""
    out = io.StringIO()
    columns = ("start", "end", "node", "gpu", "category", "planned", "description")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        cells = []
        for key in columns:
            value = row.get(key)
            if isinstance(value, dt.datetime):
                value = value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            elif isinstance(value, bool):
                value = "true" if value else "false"
            cells.append("" if value is None else str(value))
        writer.writerow(cells)
    return out.getvalue()


MLPERF_SYSTEM = "mlperf/systems/64xH100.json"


def mlperf_system(**overrides: Any) -> dict[str, Any]:
    """The MLPerf system description of the honest bundle's cluster (64 x 8 H100 SXM)."""
    return {"submitter": "Example Cloud", "division": "closed", "status": "Available cloud",
            "system_name": "64xH100", "number_of_nodes": "64", "accelerators_per_node": "8",
            "accelerator_model_name": "NVIDIA H100-SXM5-80GB", **overrides}


def audit_json(cluster: str | None, *, nodes: int, gpus_per_node: int,
               system: dict[str, Any]) -> dict[str, Any]:
    """The ``audit.values.json`` ClusterMAX's ``cmax audit`` writes for the honest cluster: the
    normalised ``cluster`` summary and the raw collector records its five graded checks read
    (layout: tests/data/ingest/example_audit.values.json, research clustermax_audit_format.md)."""
    audit: dict[str, Any] = {"version": "2.1", "type": "slurm",
                             "timestamp": "2026-09-10T09:00:00Z", "hostname": "login-01"}
    if cluster is not None:
        audit["clusterName"] = cluster
    return {
        "schema_version": 1, "runner": "audit",
        "cluster": {"gpu_model": "H100", "nodes": nodes, "gpus_per_node": gpus_per_node,
                    "driver_version": system.get("driver"), "cuda_version": system.get("cuda"),
                    "nccl_version": system.get("nccl"), "orchestrator": "slurm",
                    "environment": "slurm", "audited_at": "2026-09-10T09:00:00Z"},
        "audit_data": {
            "audit": audit,
            "securityVersions": {
                "nvidiaDriver": {"minimum": "580.159.03", "status": "pass",
                                 "version": "580.159.03"},
                "runc": {"minimum": "1.3.6", "status": "pass", "version": "1.3.6"}},
            "gpus": {"gdrcopy": {"installed": True}},
            "healthChecks": {"nhcInstalled": True},
            "software": {"nccl": {"installed": True, "version": system.get("nccl")}}},
    }


def _audit_row(check_id: str, category: str, criterion: str, observed: str | None,
               minimum: str | None = None, *, group: str, basis: str = "",
               status: str = "PASS") -> dict[str, Any]:
    return {"check_id": check_id, "category": category, "criterion": criterion,
            "status": status, "observed": observed, "minimum": minimum,
            "evidence": f"{group}: audit_data.{check_id}" + (f" ({basis})" if basis else "")}


#: what ingest grades from :func:`audit_json` (cmax/ingest/formats/clustermax_audit.py), in
#: its order
AUDIT_ROWS: list[dict[str, Any]] = [
    _audit_row("securityVersions.nvidiaDriver.status", "security", "security-nvidia-driver",
               "pass (version 580.159.03)", "580.159.03", group="versions"),
    _audit_row("securityVersions.runc.status", "security", "security-runc",
               "pass (version 1.3.6)", "1.3.6", group="versions"),
    _audit_row("gpus.gdrcopy.installed", "gpu-stack", "gdrcopy", "true", group="hardware"),
    _audit_row("kubelet_cpu_manager_policy.status", "security",
               "cli:kubelet-cpu-manager-policy", None, group="orchestration",
               basis="n/a for slurm machines", status="SKIPPED"),
    _audit_row("storage.rwxStatus", "storage", "csi-rwx", None, group="storage",
               basis="n/a for slurm machines", status="SKIPPED"),
    _audit_row("healthChecks.nhcInstalled", "health", "healthcheck-program", "true",
               group="health"),
    _audit_row("software.nccl.installed", "software", "nccl-installed", "true",
               group="software"),
]


def _recorded(path: Path, rel: str, data: bytes) -> EvidenceFile:
    """The EvidenceFile ingest records for ``path``: the format the registry recognises and
    the facts and line count its plugin reports (a file no format reads stays ``unknown``)."""
    digest = hashlib.sha256(data).hexdigest()
    try:
        fmt, probe = identify(path)
        parsed = fmt.parse(probe)
    except EvidenceError:
        return EvidenceFile(path=rel, kind="unknown", sha256=digest, size_bytes=len(data),
                            line_count=data.count(b"\n"))
    return EvidenceFile(path=rel, kind=fmt.id, sha256=digest, size_bytes=len(data),
                        facts=tuple(fmt.facts(parsed)), line_count=fmt.line_count(parsed, probe))


@dataclass
class HonestBundle:
    """Everything an honest submission holds; tests change one thing and build()."""

    runs: list[RunFx] = field(default_factory=default_runs)
    nodes: int = 64
    gpus_per_node: int = 8
    cluster: str = "aurora-h100-east"
    audit_cluster: str | None = "aurora-h100-east"
    system: dict[str, Any] = field(default_factory=lambda: {
        "driver": "580.159.03", "cuda": "13.0", "nccl": "2.27.7"})
    nccl_path: str | None = "nccl/all_reduce_perf_64n.txt"
    nccl: dict[str, list[Any]] | None = None
    mlperf_path: str | None = "mlperf/llama31_405b"
    mlperf_files: dict[str, str] | None = None
    audit_path: str | None = "audit/audit.values.json"
    audit_rows: list[dict[str, Any]] = field(default_factory=lambda: [dict(r)
                                                                      for r in AUDIT_ROWS])
    incidents: list[dict[str, Any]] | None = None
    gpus_in_service: int = 512
    manifest_extra: dict[str, Any] = field(default_factory=dict)
    skip_files: tuple[str, ...] = ()
    extra_files: dict[str, str] = field(default_factory=dict)
    drop_rows: tuple[str, ...] = ()  # tables to leave empty although files are declared
    #: values the audit JSON states instead of the honest ones (``audit_data`` dotted paths)
    audit_values: dict[str, Any] = field(default_factory=dict)
    #: what the nccl-tests device lines name: the hosts (default node-000...) and the GPU
    nccl_host_names: list[str] | None = None
    nccl_gpu: str = "NVIDIA H100 80GB HBM3"
    #: NCCL INFO lines the sweep prints after its device lines ("Using network Socket")
    nccl_info: tuple[str, ...] = ()
    #: the node count the audit's cluster summary states, where it differs from the system's
    audit_nodes: int | None = None
    #: set by :meth:`build`: the Evidence was built by hand, not read from the files by ingest
    built_by_hand: bool = False

    def manifest_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "provider": {"name": "Example Cloud", "cluster": self.cluster},
            "system": {"gpu": "h100-sxm", "nodes": self.nodes,
                       "gpus_per_node": self.gpus_per_node, **self.system},
            "benchmark": {"date": dt.date(2026, 9, 14), "reference": "latest"},
            "runs": [r.manifest_entry() for r in self.runs],
            "reliability": {"incidents": "incidents.csv", "period_start": dt.date(2026, 7, 1),
                            "period_end": dt.date(2026, 9, 30),
                            "gpus_in_service": self.gpus_in_service},
        }
        if self.nccl_path:
            data["nccl"] = [{"path": self.nccl_path}]
        if self.mlperf_path:
            data["mlperf"] = [{"path": self.mlperf_path}]
        if self.audit_path:
            data["audit"] = {"path": self.audit_path}
        data.update(self.manifest_extra)
        return data

    def results(self) -> dict[str, str]:
        if self.mlperf_files is not None:
            return self.mlperf_files
        return {f"result_{i}.txt": mlperf_result(100 + i, accuracy=5.5 - 0.01 * i)
                for i in range(3)}

    def incident_rows(self) -> list[dict[str, Any]]:
        if self.incidents is not None:
            return self.incidents
        utc = dt.UTC
        return [
            {"start": dt.datetime(2026, 7, 4, 11, 0, tzinfo=utc),
             "end": dt.datetime(2026, 7, 4, 11, 20, tzinfo=utc), "node": "node-036",
             "gpu": "5", "category": "Faulty GPU", "planned": False, "description": "xid 79",
             "source_file": "incidents.csv", "line": 2},
            {"start": dt.datetime(2026, 7, 8, 2, 0, tzinfo=utc),
             "end": dt.datetime(2026, 7, 8, 6, 0, tzinfo=utc), "node": "node-014", "gpu": None,
             "category": "Host Maintenance", "planned": True,
             "description": "scheduled firmware update",
             "source_file": "incidents.csv", "line": 3},
            # a log kept for the whole period records something every month
            {"start": dt.datetime(2026, 8, 12, 2, 0, tzinfo=utc),
             "end": dt.datetime(2026, 8, 12, 6, 0, tzinfo=utc), "node": "node-051", "gpu": None,
             "category": "Host Maintenance", "planned": True,
             "description": "scheduled firmware update",
             "source_file": "incidents.csv", "line": 4},
            {"start": dt.datetime(2026, 9, 9, 2, 0, tzinfo=utc),
             "end": dt.datetime(2026, 9, 9, 6, 0, tzinfo=utc), "node": "node-007", "gpu": None,
             "category": "Host Maintenance", "planned": True,
             "description": "kernel update, announced 7 days ahead",
             "source_file": "incidents.csv", "line": 5},
        ]

    def file_texts(self) -> dict[str, str]:
        """Every evidence file of the bundle: bundle-relative path -> its text."""
        files: dict[str, str] = {}
        for run in self.runs:
            files[run.log] = run.log_text()
        if self.nccl_path:
            rows = self.nccl if self.nccl is not None else nccl_rows(self.nccl_path)
            if "nccl" in self.drop_rows:  # the job died before its first size line
                rows = {k: v[:0] for k, v in rows.items()}
                rows.update(ranks=[512], nodes=[64])
            files[self.nccl_path] = nccl_text(rows, hosts=self.nccl_host_names,
                                              gpu=self.nccl_gpu, info=self.nccl_info)
        if self.mlperf_path:
            for name, text in self.results().items():
                files[f"{self.mlperf_path}/{name}"] = text
            files[MLPERF_SYSTEM] = json.dumps(mlperf_system(), indent=4)
        if self.audit_path:
            audit = audit_json(self.audit_cluster, nodes=self.audit_nodes or self.nodes,
                               gpus_per_node=self.gpus_per_node, system=self.system)
            for dotted, value in self.audit_values.items():
                *parents, leaf = dotted.split(".")
                node = audit["audit_data"]
                for key in parents:
                    node = node.setdefault(key, {})
                node[leaf] = value
            files[self.audit_path] = json.dumps(audit, indent=2)
        files["incidents.csv"] = incidents_csv(
            [] if "incidents" in self.drop_rows else self.incident_rows())
        files.update(self.extra_files)
        return {rel: text for rel, text in files.items() if rel not in self.skip_files}

    def write_bundle(self, root: Path) -> Path:
        """The bundle as a provider submits it: its files and its ``cmax.toml``."""
        for i, run in enumerate(self.runs):
            run.index = i
        for rel, text in self.file_texts().items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (root / "cmax.toml").write_text(toml_text(self.manifest_dict()), encoding="utf-8")
        return root

    def ingest(self, root: Path) -> Evidence:
        """The Evidence real ingest reads from the written bundle (what a user's run sees)."""
        with open_bundle(self.write_bundle(root)) as bundle:
            return ingest(bundle)

    def write_files(self, root: Path) -> list[EvidenceFile]:
        """Write the bundle's files; the EvidenceFile ingest would record for each."""
        records = []
        for rel, text in self.file_texts().items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            records.append(_recorded(path, rel, text.encode("utf-8")))
        return records

    def build(self, root: Path) -> Evidence:
        """The Evidence built by hand from the fixture's own tables (its files are written
        too): what a parser would produce, for cases no file can state."""
        self.built_by_hand = True
        for i, run in enumerate(self.runs):
            run.index = i
        files = self.write_files(root)
        manifest = parse_manifest(self.manifest_dict(), source=root / "cmax.toml")
        step_cols: dict[str, list[Any]] = {}
        done = 0
        for run in self.runs:
            rows = run.steps_rows()
            n = len(rows["run_id"])
            for key in {*step_cols, *rows}:  # a column one run lacks is null on its rows
                step_cols.setdefault(key, [None] * done).extend(rows.get(key, [None] * n))
            done += n
        steps = pl.DataFrame(step_cols, strict=False) if step_cols else pl.DataFrame()
        schema = dict(STEPS_SCHEMA)
        for extra in steps.columns:
            schema.setdefault(extra, pl.Float64())
        runs = conform(pl.DataFrame([r.runs_row() for r in self.runs], strict=False),
                       RUNS_SCHEMA) if self.runs else conform(pl.DataFrame(), RUNS_SCHEMA)
        nccl = pl.DataFrame()
        if self.nccl_path:
            nccl = pl.DataFrame(self.nccl if self.nccl is not None
                                else nccl_rows(self.nccl_path), strict=False)
        sets = (read_tree(root / self.mlperf_path, root=root)
                if self.mlperf_path and (root / self.mlperf_path).is_dir() else [])
        mlperf_frame = mlperf_rows(sets, {run.path: run.path.relative_to(root).as_posix()
                                          for s in sets for run in s.runs})
        systems = {s.system.path.relative_to(root).as_posix(): s.system
                   for s in sets if s.system is not None}
        files = [dataclasses.replace(f, facts=recorded_facts(systems[f.path]), line_count=None)
                 if f.path in systems else f for f in files]  # read with its result set
        audit = [{**r, "source_file": self.audit_path}
                 for r in self.audit_rows] if self.audit_path else []
        tables = {
            "runs": runs,
            "steps": conform(steps, schema) if not steps.is_empty() else conform(steps,
                                                                                   STEPS_SCHEMA),
            "nccl": conform(nccl, NCCL_SCHEMA),
            "incidents": conform(pl.DataFrame(self.incident_rows(), strict=False),
                                 INCIDENTS_SCHEMA),
            "audit_checks": conform(pl.DataFrame(audit, strict=False), AUDIT_SCHEMA),
            "mlperf": conform(pl.DataFrame(mlperf_frame, strict=False), MLPERF_SCHEMA),
        }
        for name in self.drop_rows:
            tables[name] = tables[name].clear()
        return Evidence(manifest=manifest, root=root, source=root, audit_cluster=self.audit_cluster,
                        files=files, mlperf_sets=sets, runs=tables["runs"], steps=tables["steps"],
                        nccl=tables["nccl"], incidents=tables["incidents"],
                        audit_checks=tables["audit_checks"], mlperf=tables["mlperf"])
