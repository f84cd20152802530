"""Fabric traps: NCCL on sockets instead of RDMA, and bandwidth far below the declared fabric.

The most common way a multi-node nccl-tests result is wrong without anyone noticing is that
NCCL never used the RDMA fabric: no InfiniBand device was visible in the container, the AWS
EFA plugin (aws-ofi-nccl) or an IB plugin was missing or failed to load, or libfabric picked
its TCP provider. NCCL then silently falls back to its built-in socket transport and the run
"works" at a few percent of the fabric's bandwidth. With ``NCCL_DEBUG=INFO`` the log says so
(``NET/IB : No device found``, ``NET/Plugin : No plugin found``, ``Using network Socket``,
channels ``via NET/Socket``; ``NET/OFI Selected Provider is tcp``), and nccl-tests JSON
records the environment (``NCCL_NET=Socket``, ``NCCL_IB_DISABLE=1``); the parsers record those
as ``fabric`` facts and these rules read them. Without the debug lines, bandwidth far
below the declared fabric's class is the tell, and the error lists the likely causes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import partial

import polars as pl

from cmax.findings import Finding
from cmax.ingest.facts import facts_of
from cmax.ingest.formats._nccl_datatypes import rated_rows
from cmax.ingest.formats.dcgm_diag import CONFIG_CHECK
from cmax.reference.view import num, optional_lookup
from cmax.resolve.hosts import other_hosts
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register

# "far below" the fabric's class: under half its bar. Half is well clear of run-to-run noise
# and of the 2-node tree/ring difference, and below the worst misconfiguration short of a
# fallback that ClusterMAX 2.0 reports (129 GB/s with PCIe ACS on vs >= 300 GB/s, 43 %).
FAR_BELOW = 0.5
LARGE_MESSAGE = 1 << 30  # bandwidth is judged at 1 GiB or larger; small sizes are latency-bound

_SOCKET = ("Using network Socket", "via NET/Socket")
NCCL_KINDS = frozenset({"nccl-tests", "nccl-tests-json"})

register(Rule(
    "network.hosts-outside-cluster", "error", "nccl-tests ran on hosts foreign to the cluster",
    "The host names in the nccl-tests device lines belong to no other evidence of the "
    "cluster: no incident, audit, DCGM or training log names them or a host of the same "
    "naming scheme (the same name without its node number). A sweep from another cluster or "
    "operator says nothing about this fabric.",
    "Submit the nccl-tests output of the cluster being rated (its device lines name its "
    "hosts), or explain the naming in the bundle and rename nothing by hand.",
    "NVIDIA/nccl-tests src/util.cu (device lines: rank, host, device); cmax/resolve/hosts.py",
    effect="not_counted",
))
register(Rule(
    "network.hosts-beyond-claim", "error", "More nccl-tests hosts than the nodes claimed",
    "The nccl-tests files name more distinct hosts than [system] nodes: either the manifest "
    "understates the system or the sweeps come from more than this cluster.",
    "Correct [system] nodes, or keep only the sweeps of the cluster being rated.",
    "NVIDIA/nccl-tests src/util.cu (device lines name each rank's host)",
))

register(Rule(
    "network.socket-fallback", "error", "NCCL fell back to TCP sockets",
    "The NCCL debug lines in the nccl-tests output show the socket transport carrying the "
    "traffic (`Using network Socket`, channels `via NET/Socket`) or libfabric's TCP provider "
    "(`NET/OFI Selected Provider is tcp`): the RDMA fabric (InfiniBand, RoCE, EFA) was not "
    "used, so the bandwidth measured is not the fabric's.",
    "Make the RDMA devices and NCCL's network plugin visible to the job (IB: the mlx5 devices "
    "and rdma-core in the container; AWS: the EFA device and aws-ofi-nccl on LD_LIBRARY_PATH; "
    "set NCCL_NET=IB or NCCL_NET='AWS Libfabric' so a fallback fails loudly), then re-run.",
    "NCCL environment documentation (NCCL_NET, NCCL_IB_HCA); NVIDIA/nccl issue #352 "
    "(`NET/IB : No device found` then `NET/Socket`); aws/aws-ofi-nccl (EFA provider).",
))
register(Rule(
    "network.below-fabric", "error", "Bus bandwidth far below the declared fabric's class",
    "At large messages the nccl-tests bus bandwidth is under half of the reference for the "
    "interconnect the manifest declares. That is not a tuning gap but a fabric that is not "
    "working as declared: a socket/TCP fallback, GPUDirect RDMA off, fewer NICs in use than "
    "installed (NCCL_IB_HCA), PCIe ACS left on, or a wrong [system] interconnect.",
    "Check the NCCL_DEBUG=INFO lines (NET/IB, GDRDMA), the NIC count and ACS, or correct "
    "[system] interconnect; then re-run nccl-tests.",
    "reference/network.toml (per-NIC rules of thumb, NVIDIA/nccl-tests #119 and #290); "
    "SemiAnalysis ClusterMAX 2.0 (129 vs >= 300 GB/s with PCIe ACS on).",
))
register(Rule(
    "network.diag-not-evaluated", "warning", "GPU diagnostic tests skipped",
    "`dcgmi diag` skipped some of its tests on a node (a level too low for the plugin, a "
    "missing prerequisite, an unsupported GPU). A skipped test is not a pass: that part of "
    "the node's health was not evaluated.",
    "Find why DCGM skipped the test (its info lines say; `dcgmi diag -r 3` needs the "
    "prerequisites of the memory and PCIe plugins) and re-run it on that node.",
    "NVIDIA/DCGM nvvs/src/JsonOutput.cpp (a Skip result per GPU); NVIDIA/DCGM issues #55 "
    "and #139 (tests skipped on a healthy-looking run).",
))
register(Rule(
    "network.diag-configuration", "warning", "GPU diagnostic configuration finding",
    "`dcgmi diag` flagged the node's configuration, not its hardware: persistence mode off, "
    "an environment variable or library, another process on the GPU. The GPUs are not "
    "faulty and the node is not failed for it, but the setting should be right before a "
    "rated run.",
    "Apply the setting DCGM names (e.g. `nvidia-smi -pm 1` for persistence mode) and re-run "
    "the diagnostic.",
    "NVIDIA/DCGM nvvs software plugin (deployment checks; error 29 persistence mode).",
))


def _diag_findings(ctx: Context) -> Iterator[Finding]:
    health = ctx.case.node_health
    if health.is_empty():
        return
    rows = health.filter(pl.col("check").str.starts_with("dcgmi diag")
                         & (pl.col("check") != "dcgmi diag"))
    for (source, node), mine in rows.group_by("source_file", "node", maintain_order=True):
        skipped = mine.filter(pl.col("status") == "skip")
        if not skipped.is_empty():
            tests = skipped.group_by("check", maintain_order=True).len()
            named = ", ".join(f"{c.removeprefix('dcgmi diag: ')} ({n} GPU result(s))"
                              for c, n in tests.iter_rows())
            yield finding("network.diag-not-evaluated",
                          f"dcgmi diag on {node} skipped {named}: not evaluated, so these "
                          "tests say nothing about the node's health",
                          file=str(source) if source is not None else None)
        config = mine.filter(pl.col("check").str.starts_with(CONFIG_CHECK))
        if not config.is_empty():
            first = config.row(0, named=True)
            yield finding("network.diag-configuration",
                          f"dcgmi diag on {node}: configuration finding in "
                          f"{first['check'].removeprefix(CONFIG_CHECK)} on "
                          f"{config.height} GPU result(s), not a hardware fault: "
                          f"{first['detail']}",
                          file=str(source) if source is not None else None)


def _socket_findings(ctx: Context) -> Iterator[Finding]:
    for file in ctx.case.files:
        fabric = facts_of(file.facts, "fabric")
        if not fabric:
            continue
        nodes = [int(f.value) for f in facts_of(file.facts, "node_count") if f.value.isdigit()]
        if nodes and max(nodes) < 2:
            continue  # one node: NVLink carries the traffic whatever the network transport
        values = {f.value for f in fabric}
        plugin = any(v.startswith(("NCCL_NET_PLUGIN=", "FI_PROVIDER=")) for v in values)
        used = [f for f in fabric if f.value.startswith(_SOCKET)
                or (f.value.startswith("NET/OFI Selected Provider is")
                    and f.value.split()[-1].lower().startswith("tcp"))
                or f.value in ("NCCL_NET=Socket", "FI_PROVIDER=tcp")
                or (f.value == "NCCL_IB_DISABLE=1" and not plugin)]
        if not used:
            continue
        why = [f.value for f in fabric
               if "No device found" in f.value or f.value.startswith("NET/Plugin")]
        cause = ("likely cause: " + "; ".join(why) + " (no RDMA device or network plugin "
                 "was found)") if why else ("likely cause: the RDMA devices or NCCL's network "
                                            "plugin (IB, or aws-ofi-nccl for EFA) are not "
                                            "visible to the job")
        first = min(used, key=lambda f: f.line or 0)
        if first.where == "env":
            cause = f"the job set {first.value} (nccl-tests' recorded environment)"
        yield finding("network.socket-fallback",
                      f"NCCL carried the traffic over TCP sockets ({first.value!r}); {cause}",
                      file=file.path, line=first.line)


def _below_fabric(ctx: Context) -> Iterator[Finding]:
    system = ctx.manifest.system
    table = ctx.tables["nccl"]
    if table.is_empty() or not system.interconnect:
        return
    oop = table.filter((pl.col("in_place").not_() | pl.col("in_place").is_null())
                       & pl.col("busbw_gbps").is_finite() & pl.col("size_bytes").is_not_null())
    for (file, _block, collective), rows in oop.group_by(
            "source_file", "block", "collective", maintain_order=True):
        rows, _ = rated_rows(rows)
        if rows.is_empty() or collective is None:
            continue
        biggest = int(rows["size_bytes"].max())  # type: ignore[arg-type]
        if biggest < LARGE_MESSAGE:
            continue
        at = rows.filter(pl.col("size_bytes") == biggest)
        busbw = float(at["busbw_gbps"].max())  # type: ignore[arg-type]
        ranks = at["ranks"].max()
        nodes_max = at["nodes"].max()
        nodes = (int(nodes_max) if nodes_max is not None  # type: ignore[arg-type]
                 else max(1, math.ceil(int(ranks or 0) / system.gpus_per_node)))  # type: ignore[arg-type]
        if nodes < 2:
            continue  # NVLink-bound: the network class does not apply
        base = optional_lookup(partial(ctx.ref.reference.network_baseline,
                                       system.interconnect or "", str(collective), nodes,
                                       sizes=[biggest]))
        bar = num(base, "busbw_gbps")
        if bar is None or busbw >= FAR_BELOW * bar:
            continue
        line = at.sort("busbw_gbps", descending=True)["line"][0]
        yield finding(
            "network.below-fabric",
            f"{collective} on {nodes} nodes reaches {busbw:g} GB/s bus bandwidth at "
            f"{biggest} B, {busbw / bar:.0%} of the {bar:g} GB/s expected on "
            f"{system.interconnect}; likely causes: a socket/TCP fallback, GPUDirect RDMA off, "
            "fewer NICs in use than installed, PCIe ACS on, or a wrong [system] interconnect",
            file=str(file) if file is not None else None,
            line=int(line) if line is not None else None)


def _nccl_hosts(ctx: Context) -> list[tuple[str, list[str]]]:
    """(file, hosts in file order) for every nccl-tests file that names its hosts."""
    out = []
    for f in ctx.case.files:
        if f.kind in NCCL_KINDS:
            hosts = list(dict.fromkeys(x.value for x in facts_of(f.facts, "host")))
            if hosts:
                out.append((f.path, hosts))
    return out


def _hosts_outside_cluster(ctx: Context) -> Iterator[Finding]:
    named = _nccl_hosts(ctx)
    if not named:
        return
    others = other_hosts(ctx.case, exclude_kinds=NCCL_KINDS)
    if not others:
        return
    for path, hosts in named:
        foreign = [h for h in hosts if not others.belongs(h)]
        if not foreign:
            continue
        shown = ", ".join(foreign[:8]) + (f" and {len(foreign) - 8} more" if len(foreign) > 8
                                          else "")
        yield finding(
            "network.hosts-outside-cluster",
            f"{len(foreign)} of {len(hosts)} host(s) this sweep ran on appear in no other "
            f"evidence of the cluster ({shown}); the other evidence names hosts such as "
            f"{', '.join(sorted(others.hosts)[:3])} (in {', '.join(others.files[:3])})",
            file=path)
    every = {h.strip().lower() for _, hosts in named for h in hosts}
    claimed = ctx.manifest.system.nodes
    # one nccl-tests text file naming too many hosts is identity.node-count's finding
    alone = any(len(set(hosts)) > claimed for path, hosts in named
                if next((f.kind for f in ctx.case.files if f.path == path), "") == "nccl-tests")
    if len(every) > claimed and not alone:
        yield finding(
            "network.hosts-beyond-claim",
            f"the nccl-tests files name {len(every)} distinct hosts, more than the {claimed} "
            "nodes [system] claims", file=named[0][0])


def check(ctx: Context) -> Iterator[Finding]:
    yield from _socket_findings(ctx)
    yield from _below_fabric(ctx)
    yield from _hosts_outside_cluster(ctx)
    yield from _diag_findings(ctx)
