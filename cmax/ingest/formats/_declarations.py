"""Every evidence format declared: what detection needs to know of it without importing it.

A format's module (its parser, its plugin) is imported only when detection picks it, or when
a command asks for every format (``cmax docs formats``): ``cmax inspect`` of one NeMo log
imports the NeMo module, not the thirty others. So what detection reads before it knows the
format is declared here, as data, once per format:

``module``, ``role``, ``priority``
    The module of :mod:`cmax.ingest.formats` that registers it, the table it fills, and its
    place in the detection order (highest first).
``markers``
    A text format: the literal and the regex its content must hold. Detection scans the file
    with the declared markers alone and imports only the module whose marker it found.
``magic``, ``json``, ``head``, ``names``
    A structural format: the facts of the file under which its ``sniff`` (in its module)
    can say yes at all: the head starts with ``magic`` (SQLite), the file is one JSON
    document (``json``: the probe parses it once for every format), the decoded head matches
    the regex ``head`` (a CSV header, a banner, a key of JSON lines), or the file's name is
    one of ``names``. Detection tries the
    module's ``sniff`` only for a format whose facts hold, so these must be what the sniffer
    requires (never more): ``tests/ingest`` checks that every sample in ``tests/data`` and
    ``samples/`` is detected the same with every module imported and with none.

The plugin itself takes its priority and markers from here (:class:`cmax.ingest.formats.Format`),
and :func:`cmax.ingest.formats.register` refuses a format whose id, module or role its
declaration does not state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

Role = Literal["run", "nccl", "node-health", "mlperf", "mlperf-system", "audit", "incidents",
               "inference", "power", "storage", "accounting"]
ROLES = frozenset(Role.__args__)  # type: ignore[attr-defined]

SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Marker:
    """A text marker: ``literal`` (bytes, checked first, cheap) and the regex that must match
    (``regex``, compiled the first time the literal is found)."""

    literal: bytes
    regex: str

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex)


@dataclass(frozen=True)
class Declaration:
    """One format as detection sees it before its module is imported (see the module doc)."""

    id: str
    module: str
    role: Role
    priority: int
    markers: tuple[Marker, ...] = ()
    magic: bytes = b""
    json: bool = False
    head: str = ""
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        structural = bool(self.magic or self.json or self.head or self.names)
        if structural == bool(self.markers):
            raise ValueError(f"format {self.id!r}: declare markers (a text format) or the head "
                             "facts of a structural one (magic, json, head, names), not both")
        if self.role not in ROLES:
            raise ValueError(f"format {self.id!r}: unknown role {self.role!r} "
                             f"(roles: {', '.join(sorted(ROLES))})")

    @property
    def structural(self) -> bool:
        return not self.markers

    @cached_property
    def head_pattern(self) -> re.Pattern[str] | None:
        return re.compile(self.head) if self.head else None


def _text(format_id: str, module: str, role: Role, priority: int,
          *markers: tuple[bytes, str]) -> Declaration:
    return Declaration(format_id, module, role, priority,
                       markers=tuple(Marker(literal, regex) for literal, regex in markers))


#: every format cmax reads; docs/formats.md lists them with what each module says of itself
DECLARATIONS: tuple[Declaration, ...] = (
    # structural: the head decides
    Declaration("llmb-sqlite", "llmb_sqlite", "run", 100, magic=SQLITE_MAGIC),
    Declaration("clustermax-audit", "clustermax_audit", "audit", 90, json=True),
    Declaration("nccl-tests-json", "nccl_tests_json", "nccl", 85, json=True),
    # dcgmi diag's document, also after a line of text dcgmi printed first
    Declaration("dcgm-diag", "dcgm_diag", "node-health", 84, json=True,
                head=r"test_categories"),
    Declaration("dgxc-json", "dgxc", "run", 80, json=True),
    Declaration("mlperf-system-json", "mlperf", "mlperf-system", 70, json=True),
    Declaration("incidents-json", "incidents", "incidents", 60, json=True),
    # JSON lines; above vLLM's: older SGLang results also carry total_output_tokens
    Declaration("sglang-bench-serving", "sglang_bench_serving", "inference", 56,
                head=r'"output_throughput"'),
    Declaration("aiperf-csv", "aiperf", "inference", 55, head=r"\AMetric,"),
    Declaration("aiperf-json", "aiperf", "inference", 55, json=True),
    Declaration("inferencex-agg", "inferencex_agg", "inference", 55, json=True),
    Declaration("mlperf-inference-result-summary", "mlperf_inference", "inference", 55,
                json=True),
    Declaration("trtllm-bench", "trtllm_bench", "inference", 55, json=True),
    Declaration("vllm-bench-serve", "vllm_bench_serve", "inference", 55,
                head=r'"output_throughput"'),
    Declaration("dgxc-csv", "dgxc", "run", 50, head=r"(?i)\Afilename,status,time_mean_"),
    # the LoadGen's header, or its file name (an accuracy run's summary has no header)
    Declaration("mlperf-inference-summary", "mlperf_inference", "inference", 50,
                head=r"(?m)^MLPerf Results Summary\s*$", names=("mlperf_log_summary.txt",)),
    Declaration("dcgm-exporter-power", "dcgm_exporter_power", "power", 45, json=True),
    Declaration("nvidia-smi-power", "nvidia_smi_power", "power", 45,
                head=r"(?i)\A[^\n]*power\.draw"),
    Declaration("fio", "fio", "storage", 40, json=True),
    Declaration("incidents-csv", "incidents", "incidents", 40, head=r"(?i)\A[^\n]*planned"),
    Declaration("mlperf-storage", "mlperf_storage", "storage", 40, json=True),
    Declaration("sacct-json", "sacct", "accounting", 40, json=True),
    Declaration("sacct-parsable", "sacct", "accounting", 40, head=r"\A[^\n]*JobID"),
    # text: markers found in the file's first megabytes; an MLPerf result embeds a
    # framework's log, so :::MLLOG comes first
    _text("mlperf", "mlperf", "mlperf", 100, (b":::MLLOG", r":::MLLOG\s*\{")),
    _text("nccl-tests", "nccl_tests", "nccl", 90,
          (b"nThread", r"(?m)^[^\n]{0,40}?\bnThread\s+\d+\s+nGpus\s+\d+"),
          (b"Avg bus bandwidth", r"#?\s*Avg bus bandwidth\s*:"),
          (b"count", r"(?m)^\s*#?\s+size\s+count\s+type\b")),
    _text("nemo2", "nemo", "run", 60, (b"train_step_timing", r"train_step_timing in s\s*:")),
    _text("nemo1", "nemo", "run", 59, (b"train_step_timing", r"train_step_timing in s\s*=")),
    _text("megatron", "megatron", "run", 50,
          (b"elapsed time per iteration", r"elapsed time per iteration \(ms\)\s*:"),
          (b"MODEL_TFLOP/s/GPU", r"Step Time\s*:\s*[\d.]+\s*s\b")),
    _text("maxtext", "maxtext", "run", 40, (b"completed step:", r"completed step:\s*\d+")),
    _text("sa-bench", "sa_bench", "inference", 40,
          (b"Serving Benchmark Result", r"(?m)^=+ Serving Benchmark Result =+\s*$")),
    _text("paxml", "paxml", "run", 39, (b"train_step()", r"train_step\(\) took\s*[\d.]")),
    _text("torchtitan", "torchtitan", "run", 30,
          (b"step:", r"\bstep:\s*\d+\s+loss:.*\b(?:tflops|tps):")),
)
