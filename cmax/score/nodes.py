"""Which node is slow? Suspect nodes from pairwise/split runs, per-process times and diagnostics.

Buyers' acceptance tests run nccl-tests on node pairs (or other subsets) precisely to answer
this: a bad NIC, cable or GPU slows every run that includes its node and no other. The rule
here is that elimination, as GoogleCloudPlatform/cluster-health-scanner does with its
pairwise NCCL pass:

1. Runs of the same collective on the same number of hosts, with complete device lists (the
   host names), form a group; a group needs at least three runs to tell nodes apart.
2. Each run is judged by its out-of-place bus bandwidth at the largest message size every run
   of the group reached. A run is *slow* below 90 % of the group's median, the margin
   nccl-tests' own ``-c`` check uses (``src/util.cu``: FAILED below 0.9 x the expected).
3. A node is suspect when every run that includes it is slow and the group also has healthy
   runs (a fabric that is slow everywhere is the network verdict's business, not a node's).
   Its shortfall is how far the median of its runs falls below the healthy runs' median.

Two more sources name nodes directly: nccl-tests JSON per-process times (a host whose
processes take more than 10 % longer than the node median, see
cmax.ingest.formats.nccl_tests_json) and
``dcgmi diag`` results that failed. All sources for one host merge into one entry.

A file validation does not count (a sweep or diagnostic of another cluster, a copied sweep:
a finding of effect ``not_counted`` names it, ``cmax/judgement/bearings.py``) decides nothing
here: its runs join no group, so they neither make a node suspect nor vouch for one, and its
failed tests name no node of this cluster.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection
from dataclasses import dataclass, field

import polars as pl

from cmax.ingest.evidence import Evidence
from cmax.ingest.formats.dcgm_diag import CONFIG_CHECK
from cmax.scorecard import PairResult, SuspectNode

SLOW_RATIO = 0.9
MIN_RUNS = 3


def _size_label(size: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


def _counted(uncounted: Collection[str]) -> pl.Expr:
    """Rows of a file validation counts (a row naming no file is kept)."""
    return pl.col("source_file").is_in(list(uncounted)).fill_null(False).not_()


def network_pairs(evidence: Evidence,
                  uncounted: Collection[str] = frozenset()) -> list[PairResult]:
    """Every run with named hosts, at the largest size common to its group (file order),
    leaving out the files in ``uncounted``."""
    table = evidence.nccl.filter(
        _counted(uncounted) & pl.col("hosts").is_not_null() & pl.col("busbw_gbps").is_not_null()
        & pl.col("busbw_gbps").is_finite() & (pl.col("in_place").not_()
                                              | pl.col("in_place").is_null()))
    if table.is_empty():
        return []
    runs = (table.group_by("source_file", "block", maintain_order=True)
            .agg(pl.col("collective").first(), pl.col("hosts").first(),
                 pl.col("size_bytes"), pl.col("busbw_gbps"), pl.col("line")))
    groups: dict[tuple[str, int], list[dict[str, object]]] = {}
    for run in runs.iter_rows(named=True):
        hosts = str(run["hosts"]).split(",")
        if len(hosts) < 2:
            continue  # one node: NVLink-bound, says nothing about the network
        groups.setdefault((str(run["collective"]), len(hosts)), []).append(run)
    out: list[PairResult] = []
    for members in groups.values():
        common = set.intersection(*(set(m["size_bytes"]) for m in members))  # type: ignore[call-overload]
        for m in members:
            sizes: list[int] = m["size_bytes"]  # type: ignore[assignment]
            size = max(common) if common else max(sizes)
            at = [i for i, s in enumerate(sizes) if s == size]
            best = max(at, key=lambda i: m["busbw_gbps"][i])  # type: ignore[index]
            out.append(PairResult(
                hosts=str(m["hosts"]).split(","), size_bytes=size,
                busbw_gbps=round(float(m["busbw_gbps"][best]), 3),  # type: ignore[index]
                file=str(m["source_file"]), line=int(m["line"][best])  # type: ignore[index]
                if m["line"][best] is not None else None))  # type: ignore[index]
    return out


@dataclass
class _Suspect:
    sources: list[str] = field(default_factory=list)
    shortfall: float | None = None
    impact: str = ""
    gpus: int | None = None


def _from_pairs(pairs: list[PairResult], evidence: Evidence,
                found: dict[str, _Suspect]) -> None:
    groups: dict[tuple[int, int], list[PairResult]] = {}
    for p in pairs:
        groups.setdefault((len(p.hosts), p.size_bytes), []).append(p)
    gpn = evidence.manifest.system.gpus_per_node
    for members in groups.values():
        if len(members) < MIN_RUNS:
            continue
        median = statistics.median(p.busbw_gbps for p in members)
        slow = [p for p in members if p.busbw_gbps < SLOW_RATIO * median]
        healthy = [p for p in members if p not in slow]
        if not slow or not healthy:
            continue
        healthy_median = statistics.median(p.busbw_gbps for p in healthy)
        hosts = sorted({h for p in members for h in p.hosts})
        for host in hosts:
            mine = [p for p in members if host in p.hosts]
            if not mine or any(p not in slow for p in mine):
                continue
            own = statistics.median(p.busbw_gbps for p in mine)
            shortfall = round((1 - own / healthy_median) * 100, 1)
            entry = found.setdefault(host, _Suspect())
            entry.sources += [
                f"{p.file}{f':{p.line}' if p.line is not None else ''} "
                f"{' + '.join(p.hosts)}: {p.busbw_gbps:g} GB/s at {_size_label(p.size_bytes)} "
                f"(healthy median {healthy_median:g} GB/s)" for p in mine]
            entry.shortfall = max(entry.shortfall or 0.0, shortfall)
            entry.impact = entry.impact or (
                f"every run that includes {host} reaches only {100 - shortfall:.0f}% of the "
                "healthy bus bandwidth; a job spanning it runs its collectives at that pace")
            entry.gpus = entry.gpus or gpn


def _from_health(health: pl.DataFrame, evidence: Evidence,
                 found: dict[str, _Suspect]) -> None:
    # a configuration finding (persistence mode off, ...) is set right, not repaired: only
    # hardware faults name a suspect node
    bad = health.filter((pl.col("status") == "fail")
                        & pl.col("check").str.starts_with(CONFIG_CHECK).not_())
    for row in bad.iter_rows(named=True):
        check = str(row["check"])
        if check == "dcgmi diag":
            continue  # the per-node summary row; the failing tests have rows of their own
        host = str(row["node"])
        entry = found.setdefault(host, _Suspect())
        where = f"{row['source_file']}:{row['line']}" if row["line"] else str(row["source_file"])
        entry.sources.append(f"{where} {check}: {row['detail']}")
        if row["gpus"] is not None:
            entry.gpus = int(row["gpus"])
        if check.startswith("dcgmi diag"):
            entry.impact = entry.impact or (
                f"{check} failed on {host}: a job placed on it risks errors and restarts "
                "until the GPU is repaired or replaced")
        elif row["value"] and row["median"]:
            shortfall = round((1 - float(row["median"]) / float(row["value"])) * 100, 1)
            entry.shortfall = max(entry.shortfall or 0.0, shortfall)
            entry.impact = entry.impact or (
                f"{host}'s processes take {float(row['value']) / float(row['median']) - 1:.0%} "
                "longer per collective than the other nodes': every job spanning it waits "
                "for it")
    if found:
        gpn = evidence.manifest.system.gpus_per_node
        for entry in found.values():
            entry.gpus = entry.gpus or gpn


def suspect_nodes(evidence: Evidence, pairs: list[PairResult] | None = None,
                  uncounted: Collection[str] = frozenset()) -> list[SuspectNode]:
    """The suspect nodes, worst first; a healthy set gives an empty list. ``pairs`` defaults
    to :func:`network_pairs` of the counted files; ``uncounted`` files decide nothing."""
    found: dict[str, _Suspect] = {}
    _from_pairs(network_pairs(evidence, uncounted) if pairs is None else pairs, evidence, found)
    health = evidence.node_health
    _from_health(health.filter(_counted(uncounted)), evidence, found)
    out = [SuspectNode(node=host, sources=e.sources, shortfall_pct=e.shortfall,
                       impact=e.impact, gpus=int(e.gpus or 0))
           for host, e in found.items()]
    return sorted(out, key=lambda s: (-(s.shortfall_pct or 0.0), s.node))
