"""nccl-tests bus bandwidth at large messages against the fabric's network baseline.

Small messages are latency-bound and say little about the fabric; NVIDIA's own sample only
reaches its peak bus bandwidth at multi-GiB sizes (480 GB/s at 8 GiB against 401 GB/s at
128 MiB). So the comparison uses the message size the baseline was measured at when the sweep
includes it, else the largest size in the sweep, and a sweep that never reaches
``network.large_message_min_bytes`` gets no verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from cmax.ingest.evidence import Evidence
from cmax.ingest.formats._nccl_datatypes import rated_rows
from cmax.judgement.bar import point_against_bar
from cmax.reference.gpus import gpu_family, rack_scale_families
from cmax.reference.network import gpu_applies
from cmax.score.reference_api import ReferenceData, canonical_gpu, num, text
from cmax.score.rubric import Rubric
from cmax.scorecard import NetworkResult

WRONG_RESULTS_NOTE = "nccl-tests reported"


def _size_label(size: int) -> str:
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


def nvl72_notes(gpu: str, nodes: int, domains: int | None) -> list[str]:
    """What an NVL72 result's scope is: inside one NVLink domain, split across racks, or
    unknown (GB200/GB300 runs over 1 node need the MNNVL lines or rack host names to tell)."""
    if nodes < 2 or gpu_family(gpu) not in rack_scale_families():
        return []
    if domains == 1:
        return ["intra-rack: every node in one NVLink domain (multi-node NVLink/NVLS), rated "
                "against the NVL72 rack bar; it says nothing about the network between racks"]
    if domains is not None:
        return [f"inter-rack: the job is split across {domains} NVLink domains, so its "
                "collectives cross the network; rated against the network bar"]
    return ["NVLink domain unknown: keep NCCL_DEBUG=INFO (its MNNVL lines) or rack names in "
            "the host names to tell an intra-rack result from an inter-rack one; rated as "
            "inter-node"]


def network_results(
    evidence: Evidence, reference: ReferenceData, rubric: Rubric,
) -> list[NetworkResult]:
    """One result per ([[nccl]] entry, collective, node count), in file order.

    A folder entry holds many runs (pairwise tests, repeats): runs on different node counts are
    judged separately (2 nodes use other algorithms than 64), and runs on the same count are
    summarised by their median at each size, so one slow pair neither hides behind the best
    run nor sinks the fabric's verdict (cmax.score.nodes names the slow node instead).
    """
    table = evidence.nccl
    if table.is_empty():
        return []
    system = evidence.manifest.system
    gpu = canonical_gpu(reference, system.gpu) or system.gpu
    out: list[NetworkResult] = []
    keys = table.select("run_id", "collective", "nodes", "nvlink_domains").unique(
        maintain_order=True)
    for run_id, collective, nodes, domains in keys.iter_rows():
        rows = table.filter((pl.col("run_id") == run_id) & (pl.col("collective") == collective)
                            & pl.col("nodes").eq_missing(nodes)
                            & pl.col("nvlink_domains").eq_missing(domains))
        out.append(_one(rows, str(collective), system.interconnect, system.gpus_per_node,
                        reference, rubric, gpu, domains))
    return out


def _one(rows: pl.DataFrame, collective: str, interconnect: str | None, gpus_per_node: int,
         reference: ReferenceData, rubric: Rubric, gpu: str = "",
         domains: int | None = None) -> NetworkResult:
    rows, notes = rated_rows(rows)  # one datatype of a '-d all' sweep
    file = str(rows["source_file"].drop_nulls().first() or "")
    oop = rows.filter(pl.col("in_place").not_() | pl.col("in_place").is_null())
    if oop.is_empty():
        oop = rows
        notes.append("no out-of-place rows: in-place bus bandwidth used")
    # NaN/inf bandwidth is reported by validation; it is neither a result nor a JSON number
    oop = (oop.filter(pl.col("busbw_gbps").is_not_null() & pl.col("busbw_gbps").is_finite()
                      & pl.col("size_bytes").is_not_null())
           .group_by("source_file", "block", "size_bytes").agg(pl.col("busbw_gbps").max())
           .group_by("size_bytes").agg(pl.col("busbw_gbps").median(), pl.len().alias("runs"))
           .sort("size_bytes"))
    runs = int(oop["runs"].max() or 0) if oop.height else 0  # type: ignore[arg-type]
    if runs > 1:
        notes.append(f"median of {runs} runs at each message size "
                     f"({rows['source_file'].n_unique()} file(s))")
    oop = oop.drop("runs")
    series = [(int(s), float(b)) for s, b in oop.iter_rows()]
    ranks = int(rows["ranks"].fill_null(0).max() or 0)  # type: ignore[arg-type]
    nodes_max = rows["nodes"].max()
    nodes = (int(nodes_max) if nodes_max is not None  # type: ignore[arg-type]
             else max(1, math.ceil(ranks / gpus_per_node)))
    wrong = int(rows["wrong"].fill_null(0).sum())
    if not series:
        return NetworkResult(file=file, collective=collective, ranks=ranks, nodes=nodes,
                             large_message_bytes=0, busbw_gbps=0.0, max_busbw_gbps=0.0,
                             verdict="inconclusive", notes=["no bus-bandwidth rows"])
    by_size = dict(series)
    max_busbw = max(b for _, b in series)
    in_rack = nodes > 1 and domains == 1
    notes += nvl72_notes(gpu, nodes, domains)
    base = (reference.network_baseline(interconnect or "", collective, nodes,
                                       sizes=list(by_size), nvlink_domain=True, gpu=gpu)
            if in_rack else
            reference.network_baseline(interconnect, collective, nodes, sizes=list(by_size))
            if interconnect else None)
    if base is not None and not gpu_applies(base, gpu):
        notes.append(f"the {base.get('id', 'matching')} baseline is sourced for "
                     f"{', '.join(base['gpus'])}, not {gpu}: a {gpu} fabric needs its own bar")
        base = None
    ref_bw = num(base, "busbw_gbps")
    ref_size = num(base, "message_bytes")
    size = series[-1][0]
    if ref_size is not None and int(ref_size) in by_size:
        size = int(ref_size)
    elif ref_size is not None:
        notes.append(f"the baseline was measured at {_size_label(int(ref_size))}, which the sweep "
                     f"does not include: compared at its largest size, {_size_label(size)}")
    busbw = by_size[size]
    common = {
        "file": file, "collective": collective, "ranks": ranks, "nodes": nodes,
        "large_message_bytes": size, "busbw_gbps": round(busbw, 3),
        "max_busbw_gbps": round(max_busbw, 3), "series": series, "nvlink_domains": domains,
    }
    if base is not None:
        notes.append(f"baseline {base.get('id')}: {base.get('scope')}, nodes "
                     f"{base.get('min_nodes')}-{base.get('max_nodes')}, "
                     f"{_size_label(int(base['message_bytes']))}")
    if interconnect is None and not in_rack:
        notes.append("the manifest names no [system] interconnect: no fabric baseline to use")
    if ref_bw is None:
        if interconnect is not None or in_rack:
            notes.append(f"no network baseline for {collective} on {interconnect} at {nodes} "
                         f"node(s) in reference release {reference.release}")
        return NetworkResult(**common, verdict="no_reference", notes=notes)
    ratio = busbw / ref_bw
    source = text(base, "source")
    if nodes < 2:
        notes.append(f"intra-node sweep ({ranks} GPUs on one node): rated against the NVLink "
                     "bar in its own row; it does not measure the scale-out fabric and never "
                     "decides the fabric gate")
    notes.append(f"bus bandwidth at {_size_label(size)}: {busbw:g} GB/s ÷ reference "
                 f"{ref_bw:g} GB/s; pass needs > {rubric.network.bar:.0%}")
    if wrong > 0:
        verdict = "fail"
        notes.append(f"{WRONG_RESULTS_NOTE} {wrong} wrong result(s): data corruption on the "
                     "fabric fails the check whatever the bandwidth")
    elif series[-1][0] < rubric.network.large_message_min_bytes:
        verdict = "inconclusive"
        notes.append(f"the sweep stops at {_size_label(series[-1][0])}, below the "
                     f"{_size_label(rubric.network.large_message_min_bytes)} needed to measure "
                     "large-message bandwidth")
    else:
        verdict = point_against_bar(ratio, rubric.network.bar)
    return NetworkResult(**common, reference_busbw_gbps=ref_bw,
                         reference_source=source, ratio=round(ratio, 6), verdict=verdict,
                         notes=notes)


def uncounted(results: Sequence[NetworkResult], files: set[str]) -> list[NetworkResult]:
    """``results`` with each sweep of ``files`` (another cluster's, or a copy of another
    sweep: the files a finding of effect ``not_counted`` names) made ``not_comparable``: it is
    shown, but decides neither the network score nor the fabric gate."""
    out = []
    for r in results:
        if r.file in files and r.verdict != "not_comparable":
            r = r.model_copy(update={"verdict": "not_comparable", "notes": [
                *r.notes, "not counted: a cross-file error names this sweep (another "
                "cluster's hosts, or a copy of another sweep)"]})
        out.append(r)
    return out
