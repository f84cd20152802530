"""sa-bench console output: the "Serving Benchmark Result" blocks of ``benchmark.out``.

The Exemplar agentic-inference recipes (NVIDIA/exemplar-performance
``agenticInference/inference_short/README.md`` @ e249aa3) leave their numbers in
``srt-slurm/outputs/<job>/logs/benchmark.out``: per concurrency of the sweep, a **warm-up**
block (fewer successful requests; it primes the KV cache and JIT and is not a measurement) and
then the **measured** block. Each block is what ``benchmark_serving.py`` prints (SemiAnalysisAI/
InferenceX ``utils/bench_serving/benchmark_serving.py`` @ 843c625, the sa-bench lineage of
vLLM's script): before it ``Traffic request rate: <r>`` and ``Maximum request concurrency:
<c>``, then ``=== Serving Benchmark Result ===`` and ``<label>: <value>`` lines mapped in
:data:`SA_BENCH_LABELS`, closed by a line of ``=``.

Warm-up: within one concurrency, a block followed by a larger one is the warm-up of that one;
it is skipped, and its request count is kept as the measured block's ``warmup_requests``. A
measured block with no warm-up before it (and no ``Warming up with N requests`` line) states
0. The file records **no GPU type or count** (the manifest's declarations) and the model only in
the ``Namespace(... model='...')`` line the script prints, when present.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import Probe, register
from cmax.ingest.formats._serving import Results, ServingResult, number

#: block label (lower case, as printed before the colon) -> inference column
SA_BENCH_LABELS: dict[str, str] = {
    "successful requests": "completed",
    "failed requests": "failed",
    "maximum request concurrency": "concurrency",
    "benchmark duration (s)": "duration_s",
    "total input tokens": "input_tokens",
    "total generated tokens": "output_tokens",
    "output token throughput (tok/s)": "output_tok_s",
    "total token throughput (tok/s)": "total_tok_s",
    "mean tpot (ms)": "tpot_mean_ms",
    "p99 tpot (ms)": "tpot_p99_ms",
    "p99 ttft (ms)": "ttft_p99_ms",
}
_NEEDS = ("completed", "duration_s", "output_tokens", "output_tok_s")
_HEADER = re.compile(r"^=+ Serving Benchmark Result =+\s*$")
_CLOSE = re.compile(r"^={10,}\s*$")
_LABEL = re.compile(r"^([A-Za-z][^:]*?):\s+(\S+)")
_BEFORE = {"traffic request rate": "request_rate", "maximum request concurrency": "concurrency"}
_WARMING = re.compile(r"^Warming up with (\d+) requests")
_MODEL = re.compile(r"\bmodel='([^']+)'")


@dataclass
class _Block:
    line: int
    values: dict[str, float | None]
    context: dict[str, float | None] = field(default_factory=dict)
    warmup_requests: int | None = None

    def get(self, column: str) -> float | None:
        """The block's own value, else the one printed just before it."""
        return self.values.get(column, self.context.get(column))


def _value(text: str) -> float | None:
    value = number(text)
    return value if value is not None and math.isfinite(value) else None  # inf, "None"


def _blocks(text: str, path: Any) -> tuple[list[_Block], list[Fact]]:
    blocks: list[_Block] = []
    facts: list[Fact] = []
    context: dict[str, float | None] = {}
    warming: int | None = None
    current: _Block | None = None
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if current is not None:
            if _CLOSE.match(line):
                blocks.append(current)
                current = None
                continue
            if _HEADER.match(line):
                break  # a new block before this one closed: reported below
            match = _LABEL.match(line)
            if match and (column := SA_BENCH_LABELS.get(match.group(1).strip().lower())):
                current.values[column] = _value(match.group(2))
            continue
        if _HEADER.match(line):
            current = _Block(line_no, {}, dict(context), warming)
            warming = None
            continue
        if (found := _WARMING.match(line)) is not None:
            warming = int(found.group(1))
        elif (match := _LABEL.match(line)) and (key := _BEFORE.get(match.group(1).lower())):
            context[key] = _value(match.group(2))
        elif not facts and (model := _MODEL.search(line)) is not None:
            facts.append(Fact("model", model.group(1), line_no))
    if current is not None:
        raise EvidenceError("the Serving Benchmark Result block is cut off (no closing line "
                            "of '=')", file=path, line=current.line,
                            fix="submit benchmark.out as the run left it, after it finished")
    return blocks, facts


def _measured(blocks: list[_Block]) -> list[_Block]:
    """The measured blocks, each with the warm-up requests that preceded it."""
    out: list[_Block] = []
    i = 0
    while i < len(blocks):
        block = blocks[i]
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        if (after is not None and after.get("concurrency") == block.get("concurrency")
                and (block.get("completed") or 0) < (after.get("completed") or 0)):
            after.warmup_requests = int(block.get("completed") or 0)
            out.append(after)
            i += 2
            continue
        if block.warmup_requests is None:
            block.warmup_requests = 0
        out.append(block)
        i += 1
    return out


def _row(block: _Block, path: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"tool": "sa-bench", "line": block.line,
                           "warmup_requests": block.warmup_requests}
    for column in {*SA_BENCH_LABELS.values(), "request_rate"}:
        row[column] = block.get(column)
    for column in _NEEDS:
        if row[column] is None:
            label = next(k for k, v in SA_BENCH_LABELS.items() if v == column)
            raise EvidenceError(f"the result block has no {label!r} line", file=path,
                                line=block.line, expected="the block benchmark_serving.py "
                                "prints", fix="submit benchmark.out as the run left it")
    for column in ("completed", "failed", "input_tokens", "output_tokens"):
        if row[column] is not None:
            if not float(row[column]).is_integer():
                raise EvidenceError(f"{column.replace('_', ' ')} is not a whole number",
                                    file=path, line=block.line,
                                    fix="submit benchmark.out as the run left it")
            row[column] = int(row[column])
    return row


class SaBenchLog(ServingResult):
    id = "sa-bench"
    title = "sa-bench `benchmark.out` (Serving Benchmark Result blocks)"
    tool = ("`benchmark_serving.py` (sa-bench) run by the Exemplar agentic-inference recipes "
            "(NVIDIA/exemplar-performance agenticInference/inference_short @ e249aa3; printer: "
            "SemiAnalysisAI/InferenceX utils/bench_serving/benchmark_serving.py @ 843c625)")
    sample = "inference/sa_bench_benchmark.out"

    def parse(self, probe: Probe) -> Results:
        blocks, facts = _blocks(probe.text, probe.path)
        if not blocks:
            raise EvidenceError("no complete Serving Benchmark Result block", file=probe.path,
                                fix="submit benchmark.out after the sweep finished")
        measured = _measured(blocks)
        return Results([_row(b, probe.path) for b in measured], facts)


register(SaBenchLog())
