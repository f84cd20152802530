"""GPU power telemetry: ``nvidia-smi --query-gpu=timestamp,index,power.draw,... --format=csv -l 1``.

The CSV nvidia-smi writes while a job runs (as SemiAnalysisAI/InferenceX
``benchmarks/benchmark_lib.sh`` ``start_gpu_monitor`` collects it): a header naming each queried
field with its unit (``timestamp, index, power.draw [W], temperature.gpu, ...``), then one row per
GPU per interval, fields separated by ``", "``: ``2026/03/01 00:00:00.000, 0, 300.00 W, 65, ...``
(``--format=csv,nounits`` drops the `` W``; a GPU that cannot report prints ``[N/A]``). The
stamp is the host's clock without a zone; cmax reads it as UTC, the way it reads training-log
stamps, so a run and its telemetry line up when both hosts keep UTC. nvidia-smi names no host:
each file is one host's and is named after it (the file's stem is the host). A last row cut
mid-write (the monitor killed while writing) is left out with a note; any other malformed row
is an error naming its line.
"""

from __future__ import annotations

import datetime as dt
import itertools
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.evidence import POWER_SCHEMA, conform
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import PowerFormat, Probe, register
from cmax.reading.limits import read_bounded_lines

_REQUIRED = ("timestamp", "index", "power.draw")
_STAMP = "%Y/%m/%d %H:%M:%S.%f"
_NO_READING = ("[N/A]", "[Not Supported]", "[Unknown Error]", "N/A")


@dataclass
class PowerLog:
    host: str
    samples: list[tuple[int, int, float, float | None]] = field(default_factory=list)
    """(line, GPU index, UTC epoch seconds, watts or None)"""
    notes: list[str] = field(default_factory=list)


def _columns(header: str) -> dict[str, int] | None:
    names = [c.strip().split(" [", 1)[0].lower() for c in header.split(",")]
    if not all(n in names for n in _REQUIRED):
        return None
    return {n: names.index(n) for n in _REQUIRED}


def _row(text: str, cols: dict[str, int]) -> tuple[int, float, float | None]:
    cells = [c.strip() for c in text.split(",")]
    stamp = dt.datetime.strptime(cells[cols["timestamp"]], _STAMP).replace(tzinfo=dt.UTC)
    gpu = int(cells[cols["index"]])
    power = cells[cols["power.draw"]]
    if power in _NO_READING:
        return gpu, stamp.timestamp(), None
    value = float(power.removesuffix("W").strip())
    if not 0 <= value < 1e5 or value != value:
        raise ValueError("power out of range")
    return gpu, stamp.timestamp(), value


def parse(path: Path) -> PowerLog:
    lines = [b.decode("utf-8", errors="replace").rstrip("\r\n") for b in read_bounded_lines(path)]
    numbered = [(i + 1, t) for i, t in enumerate(lines) if t.strip()]
    if not numbered or (cols := _columns(numbered[0][1].lstrip("\ufeff"))) is None:
        raise EvidenceError("no nvidia-smi header naming timestamp, index and power.draw",
                            file=path, line=numbered[0][0] if numbered else None,
                            expected="nvidia-smi --query-gpu=timestamp,index,power.draw "
                            "--format=csv output, its header first",
                            fix="collect with --format=csv (a header is printed once)")
    log = PowerLog(host=path.stem)
    width = len(numbered[0][1].split(","))
    for pos, (line, text) in enumerate(numbered[1:], start=1):
        if _columns(text) is not None:
            continue  # a header printed again (monitor restarted into the same file)
        try:
            if len(text.split(",")) != width:
                raise ValueError("wrong number of fields")
            gpu, stamp, power = _row(text, cols)
        except (ValueError, IndexError):
            if pos == len(numbered) - 1:
                log.notes.append(f"line {line}: the last row is cut mid-write; left out")
                continue
            raise EvidenceError(f"malformed nvidia-smi row: {text[:80]!r}", file=path,
                                line=line, expected="'YYYY/MM/DD HH:MM:SS.fff, <index>, "
                                "<watts> W, ...' with the header's fields",
                                fix="use the unmodified nvidia-smi CSV") from None
        log.samples.append((line, gpu, stamp, power))
    return log


def power_frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    """Rows of the ``power`` table, whichever telemetry format they came from."""
    return conform(pl.DataFrame(rows, schema=POWER_SCHEMA) if rows
                   else pl.DataFrame(schema=POWER_SCHEMA), POWER_SCHEMA)


def frame(log: PowerLog, *, source_file: str) -> pl.DataFrame:
    return power_frame([{"host": log.host, "gpu": g, "time_s": t, "power_w": w,
                         "source_file": source_file, "line": line}
                        for line, g, t, w in log.samples])


class NvidiaSmiPower(PowerFormat[PowerLog]):
    id = "nvidia-smi-power"
    title = "GPU power telemetry (nvidia-smi CSV)"
    tool = ("nvidia-smi --query-gpu=timestamp,index,power.draw[,...] --format=csv -l <s> "
            "(as SemiAnalysisAI/InferenceX benchmarks/benchmark_lib.sh collects it)")
    sample = "ingest/power/gpu-node-01.csv"

    def sniff(self, probe: Probe) -> bool:
        return _columns(probe.first_line) is not None

    def parse(self, probe: Probe) -> PowerLog:
        return parse(probe.path)

    def summarise(self, parsed: PowerLog, probe: Probe) -> dict[str, Any]:
        times = sorted({t for _, _, t, _ in parsed.samples})
        by_gpu: dict[int, list[float]] = {}
        for _, gpu, t, _ in parsed.samples:
            by_gpu.setdefault(gpu, []).append(t)
        gaps = [b - a for ts in by_gpu.values() for a, b in itertools.pairwise(ts)]
        read = [w for *_, w in parsed.samples if w is not None]
        out: dict[str, Any] = {
            "format": self.id, "host": parsed.host,
            "gpus": len({g for _, g, _, _ in parsed.samples}),
            "samples": len(parsed.samples),
            "missing_readings": len(parsed.samples) - len(read),
            "first": (dt.datetime.fromtimestamp(times[0], dt.UTC).isoformat()
                      if times else None),
            "seconds": round(times[-1] - times[0], 3) if times else None,
            "median_interval_s": round(statistics.median(gaps), 3) if gaps else None,
            "mean_power_w": round(statistics.fmean(read), 3) if read else None,
        }
        if parsed.notes:
            out["notes"] = parsed.notes
        return out

    def facts(self, parsed: PowerLog) -> tuple[Fact, ...]:
        first = parsed.samples[0][0] if parsed.samples else None
        return (Fact("host", parsed.host, first, where="file name"),)

    def frame(self, parsed: PowerLog, *, source_file: str) -> pl.DataFrame:
        return frame(parsed, source_file=source_file)


register(NvidiaSmiPower())
