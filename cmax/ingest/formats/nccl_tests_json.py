"""nccl-tests JSON output (``-J file.json``, format version 3, nccl-tests v2.17+).

Recognised by its shape (``version``, ``config``, ``results`` and ``nccl_version`` or
``average_bus_bandwidth``). Per-process times also become node-health rows (see
:mod:`cmax.ingest.network_files`).

The shape is taken from the writer in NVIDIA/nccl-tests ``src/util.cu`` (``JSON_FILE_VERSION
3``): top-level ``version``, ``start_time``, ``args``, ``env``, ``nccl_version``, ``config``
(``nthreads``, ``ngpus``, ..., and ``devices``: one ``{rank, group, pid, hostname, device,
device_hex, device_info}`` per *process*, parsed from that process's first device line),
``results`` (per size: ``size``, ``count``, ``type``, ``redop``, ``root``; ``out_of_place`` and
``in_place`` objects with ``time``/``cpu_time``, ``alg_bw``, ``bus_bw``, ``nwrong``; with
``-I 1`` also ``out_of_place_per_iter``/``in_place_per_iter`` holding ``min_us`` ...
``p50_us``/``p95_us``/``p99_us``, ``cv_pct``, ``times_us`` and ``per_process_max_times_us``),
``out_of_bounds``, ``average_bus_bandwidth``, ``errors`` and ``end_time``. Doubles that are
NaN are written as the string ``"nan"``.

Per-process times name the slow node directly: every process row belongs to the host of
``config.devices[p]``, so a host whose processes take longer than the median of the *other*
hosts' is recorded as node-health evidence (NVIDIA's own ``tools/analyze_perf_json.py
--nodes`` groups the rows the same way).
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import EvidenceError, EvidenceFormatError
from cmax.ingest.evidence import NODE_HEALTH_SCHEMA
from cmax.ingest.facts import Fact
from cmax.ingest.formats import nccl_tests as nccl
from cmax.ingest.formats._protocol import NcclFormat, Probe, register
from cmax.ingest.formats.nccl_tests import NcclTest, solve_ranks
from cmax.ingest.textlines import table
from cmax.reading.limits import MAX_JSON_BYTES, read_bounded_text

JSON_VERSION = 3
# a node whose per-process time is this much above the other nodes' median is slow; the 10 % matches
# nccl-tests' own -c check, which fails an average bus bandwidth below 90 % of the expected
SLOW_NODE_RATIO = 1.10
_COLLECTIVE_OF_BINARY = ("reduce_scatter", "all_reduce", "all_gather", "alltoall", "broadcast",
                         "sendrecv", "hypercube", "scatter", "gather", "reduce")


def is_nccl_json(data: object) -> bool:
    """The nccl-tests ``-J`` document: a version, a config and a results list."""
    return (isinstance(data, dict) and isinstance(data.get("results"), list)
            and isinstance(data.get("config"), dict) and "version" in data
            and ("nccl_version" in data or "average_bus_bandwidth" in data))


def _bad(path: Path, what: str, field: str,
         cls: type[EvidenceError] = EvidenceError) -> EvidenceError:
    """A JSON document that is not (or not wholly) what nccl-tests -J writes."""
    return cls(f"nccl-tests JSON: {what}", file=path, field=field,
               expected=f"the document nccl-tests -J writes (format version {JSON_VERSION})",
               fix="submit the .json file exactly as nccl-tests wrote it")


def _float(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer beyond any double: no real time or bandwidth
            return math.inf
    if isinstance(value, str) and value.strip().lower() in ("nan", "-nan"):
        return math.nan
    return None


def _collective(data: dict[str, Any], path: Path) -> str | None:
    names = [str(r.get("experiment_name", "")) for r in data["results"] if isinstance(r, dict)]
    names += [str(a) for a in data.get("args", []) if isinstance(a, str)][:1]
    names.append(path.name)
    for name in names:
        low = name.lower()
        for coll in _COLLECTIVE_OF_BINARY:
            if coll in low:
                return coll
    return None


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_bounded_text(path, limit=MAX_JSON_BYTES))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise EvidenceError(f"not valid JSON ({type(exc).__name__})", file=path,
                            fix="submit the .json file exactly as nccl-tests wrote it "
                            "(a run killed mid-write leaves it unterminated)") from None
    if not is_nccl_json(data):
        raise _bad(path, "no version/config/results", "results", EvidenceFormatError)
    version = data.get("version")
    if version != JSON_VERSION:
        raise _bad(path, f"format version {version!r} is not supported", "version")
    return data  # type: ignore[no-any-return]


def parse_nccl_json(path: Path) -> tuple[list[NcclTest], pl.DataFrame]:
    """The run as one :class:`NcclTest` (rows keyed by result index) and per-node times."""
    data = load(path)
    config = data["config"]
    devices = config.get("devices") if isinstance(config.get("devices"), list) else []
    test = NcclTest(collective=_collective(data, path))
    test.env = env_facts(data)
    test.threads = config.get("nthreads") if isinstance(config.get("nthreads"), int) else None
    test.gpus_per_thread = config.get("ngpus") if isinstance(config.get("ngpus"), int) else None
    for i, dev in enumerate(devices):
        if not isinstance(dev, dict):
            raise _bad(path, f"config.devices[{i}] is not an object", f"config.devices[{i}]")
        host = str(dev.get("hostname", "")).strip()
        if host:
            test.hosts.add(host)
            test.host_lines.setdefault(host, 0)
            if isinstance(dev.get("rank"), int):
                test.rank_hosts[dev["rank"]] = host
        name = str(dev.get("device_info", "")).strip()
        if name:
            test.gpu_names.setdefault(name, 0)
    avg = data.get("average_bus_bandwidth")
    if isinstance(avg, dict) and (bw := _float(avg.get("bandwidth"))) is not None:
        test.avg_busbw_gbps = bw if math.isfinite(bw) else None
    per_node: list[dict[str, Any]] = []
    for i, res in enumerate(data["results"]):
        field = f"results[{i}]"
        if not isinstance(res, dict) or not isinstance(res.get("size"), int) \
                or isinstance(res.get("size"), bool) or not 0 <= res["size"] < 2**63:
            raise _bad(path, f"{field} has no integer size", field)
        test.sizes += 1
        for key, in_place in (("out_of_place", False), ("in_place", True)):
            half = res.get(key)
            if half is None:
                continue
            if not isinstance(half, dict):
                raise _bad(path, f"{field}.{key} is not an object", f"{field}.{key}")
            wrong = _float(half.get("nwrong"))
            test.rows.append({
                "size_bytes": res["size"], "dtype": str(res.get("type", "")) or None,
                "time_us": _float(half.get("time", half.get("cpu_time"))),
                "algbw_gbps": _float(half.get("alg_bw")), "busbw_gbps": _float(half.get("bus_bw")),
                "wrong": int(wrong) if wrong is not None and math.isfinite(wrong)
                and abs(wrong) < 2**63 else None,
                "in_place": in_place, "line": None,
            })
    stats = _iteration_stats(data["results"])
    if stats:
        test.notes.append(stats)
    processes = len(devices)
    per_proc = (test.threads or 1) * (test.gpus_per_thread or 1)
    if processes:
        test.rank_count = processes * per_proc
        test.node_count = len(test.hosts) or None
        test.notes.append(f"ranks = {processes} process(es) in config.devices x nthreads x "
                          f"ngpus = {test.rank_count}")
    elif (solved := solve_ranks(test.collective, test.rows)) is not None:
        test.rank_count = solved[0]
        test.notes.append(f"ranks {solved[1]}")
    if data["results"] and devices:
        per_node = _node_times(data["results"], devices)
    health = table([{**row, "source_file": None} for row in per_node], NODE_HEALTH_SCHEMA)
    return [test], health


def _iteration_stats(results: list[Any]) -> str | None:
    """The per-iteration spread at the largest size, as nccl-tests ``-I 1`` recorded it."""
    sized = [r for r in results if isinstance(r, dict) and isinstance(r.get("size"), int)]
    for res in sorted(sized, key=lambda r: -int(r["size"])):
        per_iter = res.get("out_of_place_per_iter")
        if not isinstance(per_iter, dict):
            continue
        vals = {k: _float(per_iter.get(k)) for k in ("p50_us", "p95_us", "p99_us", "cv_pct")}
        if any(v is None or not math.isfinite(v) for v in vals.values()):
            continue
        return (f"per-iteration times at {res['size']} B (out-of-place): p50 "
                f"{vals['p50_us']:g} us, p95 {vals['p95_us']:g} us, p99 {vals['p99_us']:g} us, "
                f"CV {vals['cv_pct']:g}%")
    return None


def _node_times(results: list[Any], devices: list[Any]) -> list[dict[str, Any]]:
    """Each host's mean per-process time at the largest size that has per-process rows."""
    for res in sorted((r for r in results if isinstance(r, dict)),
                      key=lambda r: -int(r.get("size", 0))):
        per_iter = res.get("out_of_place_per_iter") or res.get("in_place_per_iter")
        rows = per_iter.get("per_process_max_times_us") if isinstance(per_iter, dict) else None
        if not isinstance(rows, list) or len(rows) < 2 or len(rows) > len(devices):
            continue
        by_host: dict[str, list[float]] = {}
        for p, times in enumerate(rows):
            vals = [v for v in (_float(t) for t in (times if isinstance(times, list) else []))
                    if v is not None and math.isfinite(v)]
            host = str(devices[p].get("hostname", f"process {p}")) if isinstance(
                devices[p], dict) else f"process {p}"
            if vals:
                by_host.setdefault(host, []).append(sum(vals) / len(vals))
        if len(by_host) < 2:
            return []
        means = {h: sum(v) / len(v) for h, v in by_host.items()}
        out = []
        for host, mean in sorted(means.items()):
            # against the other nodes only: with two nodes a shared median would halve the gap
            median = statistics.median(m for h, m in means.items() if h != host)
            slow = median > 0 and mean > median * SLOW_NODE_RATIO
            out.append({
                "node": host, "gpus": len(by_host[host]), "check": "nccl per-process time",
                "status": "fail" if slow else "pass", "value": round(mean, 3),
                "median": round(median, 3),
                "detail": f"mean per-process time {mean:.1f} us at {res['size']} B vs the "
                          f"other nodes' median {median:.1f} us",
                "line": None,
            })
        return out
    return []


# environment settings that decide the transport NCCL uses (NCCL env documentation)
FABRIC_ENV = ("NCCL_NET=", "NCCL_IB_DISABLE=", "NCCL_NET_PLUGIN=", "FI_PROVIDER=", "NCCL_IB_HCA=")


def env_facts(data: dict[str, Any]) -> tuple[Fact, ...]:
    """Transport-deciding settings from the ``env`` list nccl-tests records (``NCCL_NET=Socket``,
    ``NCCL_IB_DISABLE=1``, ``FI_PROVIDER=efa``, ...), as ``fabric`` facts."""
    env = data.get("env")
    if not isinstance(env, list):
        return ()
    return tuple(Fact("fabric", str(e).strip(), None, "env") for e in env
                 if isinstance(e, str) and e.startswith(FABRIC_ENV))


def json_facts(tests: list[NcclTest], path: Path) -> tuple[Fact, ...]:
    """GPU names, hosts and counts stated in ``config`` (JSON has no lines: ``where`` says)."""
    facts: list[Fact] = list(tests[0].env) if tests else []
    for test in tests:
        facts += [Fact("gpu", n, None, "config.devices[].device_info") for n in test.gpu_names]
        facts += [Fact("host", h, None, "config.devices[].hostname") for h in sorted(test.hosts)]
        if test.rank_count is not None:
            facts.append(Fact("gpu_count", str(test.rank_count), None, "config.devices"))
        if test.node_count is not None:
            facts.append(Fact("node_count", str(test.node_count), None,
                              "config.devices[].hostname"))
    return tuple(facts)


def json_summary(path: Path) -> dict[str, object]:
    from cmax.ingest.formats.nccl_tests import nccl_summary

    tests, health = parse_nccl_json(path)
    out = nccl_summary(tests, path)
    out["format"] = "nccl-tests-json"
    slow = health.filter(pl.col("status") == "fail")["node"].to_list()
    if health.height:
        out["slow_nodes"] = slow
    return out


Parsed = tuple[list[NcclTest], pl.DataFrame]


class NcclTestsJson(NcclFormat[Parsed]):
    id = "nccl-tests-json"
    title = "nccl-tests output (JSON)"
    tool = "NVIDIA nccl-tests `-J` (src/util.cu, JSON_FILE_VERSION 3)"
    sample = "nccl/all_reduce_2node.json"
    json_shape = staticmethod(is_nccl_json)

    def parse(self, probe: Probe) -> Parsed:
        return parse_nccl_json(probe.path)

    def summarise(self, parsed: Parsed, probe: Probe) -> dict[str, Any]:
        return dict(json_summary(probe.path))

    def facts(self, parsed: Parsed) -> tuple[Fact, ...]:
        return json_facts(parsed[0], Path())

    def frame(self, parsed: Parsed, *, run_id: str, source_file: str,
              path: Path) -> pl.DataFrame:
        return nccl.nccl_frame(parsed[0], run_id=run_id, source_file=source_file, path=path)

    def node_health(self, parsed: Parsed, *, source_file: str) -> pl.DataFrame:
        return parsed[1].with_columns(pl.lit(source_file).alias("source_file"))


register(NcclTestsJson())
