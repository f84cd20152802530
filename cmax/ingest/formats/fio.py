"""fio ``--output-format=json`` results, fio 2.x and 3.x.

fio writes ``{"fio version": ..., "jobs": [...]}``; each job (or, with ``group_reporting``,
each reporting group folded into one entry) carries ``groupid`` and per direction (``read``,
``write``, ``trim``) ``io_bytes``, ``bw`` (KiB/s), ``iops``, ``runtime`` (ms) and completion
latency (axboe/fio ``stat.c`` ``add_ddir_status_json``). Two version traps:

- before fio 2.21, ``io_bytes`` held KiB (``ts->io_bytes[ddir] >> 10``; fio-2.15 @ a029096);
  2.21 made it bytes and added ``io_kbytes`` (e5aaf1e). A file with ``io_kbytes`` is read as
  bytes, one without as KiB;
- fio 3.0 (bdadbb8) moved latencies to nanoseconds (``clat_ns``); 2.x prints ``clat`` in
  microseconds.

The aggregate of a direction is what fio's own "Run status group" line reports: the data the
group's jobs moved over the group's wall time, the longest job's ``runtime`` (``stat.c``
``show_group_stats``: ``agg[ddir]`` over ``max_run[ddir]``). Summing per-job bandwidths instead
overstates it whenever jobs stop at different times: two ungrouped readers of 96 and 32 MiB
rate-limited to 48 and 32 MiB/s moved 128 MiB in 1.98 s, 64.6 MiB/s, where their ``bw``
figures add up to 81.5 MiB/s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.formats._protocol import Probe, StorageFormat, register

DIRECTIONS = ("read", "write", "trim")
MIB = 1024**2


def _looks_like(data: Any) -> bool:
    return (isinstance(data, dict) and str(data.get("fio version", "")).startswith("fio-")
            and isinstance(data.get("jobs"), list))


@dataclass
class Group:
    """One reporting group's traffic in one direction, summed as fio's group line sums it."""

    groupid: int
    direction: str
    jobs: list[str]
    bytes: float
    wall_ms: int
    ios: int
    clat_us_sum: float  # mean completion latency × ios, summed over jobs
    job_bw_sum_kib: float  # the per-job figures added up, for comparison only

    @property
    def mib_per_s(self) -> float:
        return self.bytes / MIB / (self.wall_ms / 1000)

    @property
    def lat_mean_us(self) -> float | None:
        return self.clat_us_sum / self.ios if self.ios else None


@dataclass
class FioResult:
    version: str
    groups: list[Group] = field(default_factory=list)

    @property
    def facts(self) -> tuple[()]:
        return ()


def _int(job: dict[str, Any], direction: str, key: str, where: str, path: Path) -> int:
    value = job.get(direction, {}).get(key) if isinstance(job.get(direction), dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            0 <= value < 2**63):  # NaN and infinity fail this too
        raise EvidenceError(f"{where}.{direction}.{key} is {value!r}", file=path,
                            expected="a non-negative number, as fio writes it",
                            fix="submit the unmodified fio --output-format=json file")
    return int(value)


def read_fio(probe: Probe) -> FioResult:
    data = probe.require_json("fio --output-format=json output")
    path = probe.path
    version = str(data["fio version"])
    groups: dict[tuple[int, str], Group] = {}
    for i, job in enumerate(data["jobs"]):
        where = f"jobs[{i}]"
        if not isinstance(job, dict):
            raise EvidenceError(f"{where} is not a job object", file=path)
        name = str(job.get("jobname", where))
        if job.get("error"):
            raise EvidenceError(f"{where} ({name!r}) ended with error {job['error']}",
                                file=path, expected="a fio run whose jobs all completed",
                                fix="rerun the job that failed; a failed job's figures are "
                                "not a measurement")
        groupid = job.get("groupid", 0)
        if isinstance(groupid, bool) or not isinstance(groupid, int):
            raise EvidenceError(f"{where}.groupid is {str(groupid)[:40]!r}", file=path,
                                expected="a whole group number, as fio writes it",
                                fix="submit the unmodified fio --output-format=json file")
        gid = groupid
        for direction in DIRECTIONS:
            if not isinstance(job.get(direction), dict):
                continue
            moved = _int(job, direction, "io_bytes", where, path)
            if moved == 0:
                continue
            in_kib = "io_kbytes" not in job[direction]  # fio < 2.21: io_bytes held KiB
            clat = job[direction].get("clat_ns")
            scale = 1e-3  # ns -> us
            if not isinstance(clat, dict):
                clat, scale = job[direction].get("clat"), 1.0  # fio 2.x: microseconds
            ios = _int(job, direction, "total_ios", where, path)
            mean = clat.get("mean") if isinstance(clat, dict) else None
            group = groups.setdefault((gid, direction), Group(gid, direction, [], 0.0, 0, 0,
                                                              0.0, 0.0))
            group.jobs.append(name)
            group.bytes += moved * (1024 if in_kib else 1)
            group.wall_ms = max(group.wall_ms, _int(job, direction, "runtime", where, path))
            if isinstance(mean, int | float) and ios:
                group.ios += ios
                group.clat_us_sum += float(mean) * scale * ios
            group.job_bw_sum_kib += _int(job, direction, "bw", where, path)
    out = [g for _, g in sorted(groups.items())]
    if not out:
        raise EvidenceError("no job moved any data", file=path,
                            expected="fio jobs with io_bytes > 0 in some direction")
    for g in out:
        if g.wall_ms <= 0:
            raise EvidenceError(f"group {g.groupid} {g.direction}: data moved in a runtime of "
                                "0 ms", file=path, expected="a runtime in milliseconds")
    return FioResult(version, out)


class FioJson(StorageFormat[FioResult]):
    id = "fio"
    title = "fio result (--output-format=json, fio 2.x and 3.x)"
    tool = "fio (axboe/fio stat.c JSON output; io_bytes/clat units per version, see the module)"
    sample = "storage/fio/fio3_read_ungrouped_uneven.json"
    json_shape = staticmethod(_looks_like)

    def parse(self, probe: Probe) -> FioResult:
        return read_fio(probe)

    def summarise(self, parsed: FioResult, probe: Probe) -> dict[str, Any]:
        return {"format": self.id, "version": parsed.version, "groups": [
            {"group": g.groupid, "direction": g.direction, "jobs": g.jobs,
             "mib_per_s": round(g.mib_per_s, 3), "wall_s": g.wall_ms / 1000,
             "per_job_bw_sum_mib_per_s": round(g.job_bw_sum_kib / 1024, 3),
             "lat_mean_us": None if g.lat_mean_us is None else round(g.lat_mean_us, 3)}
            for g in parsed.groups]}

    def frame(self, parsed: FioResult, *, run_id: str, source_file: str) -> pl.DataFrame:
        return pl.DataFrame([
            {"run_id": run_id if len(parsed.groups) == 1 else f"{run_id}#{k}",
             "tool": self.id, "tool_version": parsed.version, "benchmark": "fio",
             "workload": f"group {g.groupid}: {', '.join(dict.fromkeys(g.jobs))}",
             "direction": g.direction, "mib_per_s": g.mib_per_s,
             "gib_per_s": g.mib_per_s / 1024, "duration_s": g.wall_ms / 1000,
             "lat_mean_us": g.lat_mean_us, "source_file": source_file, "line": 1}
            for k, g in enumerate(parsed.groups)], infer_schema_length=None)


register(FioJson())
