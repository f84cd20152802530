"""The scale the evidence proves: one home for "how much of the claimed cluster was measured".

A manifest claims ``[system] nodes``; a two-node sweep or an eight-GPU run does not show that
the 64-node system works as one. The scorecard states the largest scale the counted results
ran at (:class:`cmax.scorecard.ProvenScale`), and the fabric gate reads the same numbers:
only inter-node sweeps measure the scale-out fabric, and only one spanning at least
``[network] min_node_share`` of the claimed nodes decides the gate (docs/network.md, Scale).

Counted results are those whose scale is earned: a rated training run (comparable, its scale
corroborated by the log and its evidence clean, :func:`cmax.score.verdicts.rated`), a
compared nccl-tests sweep, and an MLPerf result of the provider's own that was compared (a
foreign, cited, copied or other system's result is never rated, so it proves nothing here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cmax.judgement.bar import counted
from cmax.judgement.fabric import FabricScale
from cmax.score.verdicts import rated
from cmax.scorecard import (
    MlperfResult,
    NetworkResult,
    ProvenScale,
    ScaleEvidence,
    WorkloadResult,
)


def compared_sweeps(network: Sequence[NetworkResult]) -> list[NetworkResult]:
    """Sweeps with a ratio against a bar (intra-node and intra-rack ones included)."""
    return [n for n in network if counted(n.verdict, n.ratio)]


def fabric_sweeps(network: Sequence[NetworkResult]) -> list[NetworkResult]:
    """The compared sweeps that cross the scale-out fabric: 2+ nodes, not inside one NVL72
    rack (an intra-rack sweep runs over multi-node NVLink)."""
    return [n for n in compared_sweeps(network) if n.nodes >= 2 and n.nvlink_domains != 1]


def needed_nodes(claimed: int, share: float) -> int:
    """The nodes a sweep must span to decide the fabric gate: ``share`` of the claim, at
    least 2."""
    return max(2, math.ceil(claimed * share))


def fabric_scale(network: Sequence[NetworkResult], *, claimed_nodes: int,
                 min_node_share: float, bar: float) -> FabricScale:
    """The sweeps that may decide the fabric (its judgement, and so the fabric gate), and the
    sentence saying why.

    Only inter-node sweeps (2+ nodes) measure the scale-out fabric; one node is NVLink-bound
    and is rated against the NVLink bar in its own row. Of those, only sweeps spanning at
    least ``[network] min_node_share`` of the claimed nodes decide (docs/network.md, Scale).
    """
    inter = fabric_sweeps(network)
    intra = len(compared_sweeps(network)) - len(inter)
    need = needed_nodes(claimed_nodes, min_node_share)
    if not inter:
        return FabricScale((), "no inter-node nccl-tests sweep" + (
            f" ({intra} intra-node NVLink sweep(s) rated in their own row; they say nothing "
            "about the scale-out fabric)" if intra else ""), bar)
    widest = max(inter, key=lambda n: (n.nodes, n.ranks))
    scale = (f"largest inter-node sweep {widest.nodes} nodes / {widest.ranks} ranks of "
             f"{claimed_nodes} nodes claimed" if claimed_nodes else
             f"largest inter-node sweep {widest.nodes} nodes / {widest.ranks} ranks")
    deciding = tuple(n for n in inter if n.nodes >= need)
    if not deciding:
        return FabricScale((), f"{scale}: the fabric gate needs a sweep across at least {need} "
                           f"nodes ({min_node_share:.0%} of the claimed system)", bar)
    return FabricScale(deciding, f"proven at {scale} (needs ≥ {need}, {min_node_share:.0%} "
                       "of the claimed system)", bar)


def _nodes_for(gpus: int, gpus_per_node: int) -> int:
    return max(1, math.ceil(gpus / gpus_per_node)) if gpus_per_node > 0 else 1


def proven_scale(*, claimed_nodes: int, gpus_per_node: int, min_node_share: float,
                 workloads: Sequence[WorkloadResult] = (),
                 network: Sequence[NetworkResult] = (),
                 mlperf: Sequence[MlperfResult] = ()) -> ProvenScale:
    """The widest counted result of each kind, the largest overall, and the fabric's scale."""
    claimed_gpus = claimed_nodes * gpus_per_node
    evidence: list[ScaleEvidence] = []
    sweeps = compared_sweeps(network)
    if sweeps:
        n = max(sweeps, key=lambda r: (r.nodes, r.ranks))
        evidence.append(ScaleEvidence(
            kind="network", what=f"nccl-tests {n.collective} {n.nodes} node(s) / {n.ranks} "
            f"ranks ({n.file})", nodes=n.nodes, gpus=n.ranks))
    runs = [w for w in workloads if rated(w)]
    if runs:
        w = max(runs, key=lambda r: r.num_gpus)
        evidence.append(ScaleEvidence(
            kind="training", what=f"training {w.workload} {w.precision} {w.num_gpus} GPUs",
            nodes=_nodes_for(w.num_gpus, gpus_per_node), gpus=w.num_gpus))
    own = [m for m in mlperf
           if counted(m.verdict, m.ratio) and m.num_gpus]
    if own:
        m = max(own, key=lambda r: r.num_gpus or 0)
        gpus = m.num_gpus or 0
        evidence.append(ScaleEvidence(
            kind="mlperf", what=f"MLPerf {m.benchmark} {gpus} GPUs ({m.system or 'system'})",
            nodes=_nodes_for(gpus, gpus_per_node), gpus=gpus))
    fabric = fabric_sweeps(network)
    widest = max(fabric, key=lambda r: (r.nodes, r.ranks)) if fabric else None
    need = needed_nodes(claimed_nodes, min_node_share)
    nodes = max((e.nodes for e in evidence), default=None)
    gpus_max = max((e.gpus for e in evidence), default=None)
    share = (round(gpus_max / claimed_gpus, 4) if gpus_max is not None and claimed_gpus
             else None)
    return ProvenScale(
        claimed_nodes=claimed_nodes, claimed_gpus=claimed_gpus, nodes=nodes, gpus=gpus_max,
        share=share, fabric_nodes=None if widest is None else widest.nodes,
        fabric_ranks=None if widest is None else widest.ranks, fabric_needed_nodes=need,
        evidence=evidence,
        summary=_summary(claimed_nodes, claimed_gpus, nodes, gpus_max, share, widest, need,
                         evidence))


def _summary(claimed_nodes: int, claimed_gpus: int, nodes: int | None, gpus: int | None,
             share: float | None, widest: NetworkResult | None, need: int,
             evidence: Sequence[ScaleEvidence]) -> str:
    if nodes is None or gpus is None:
        head = (f"no counted result proves any part of the {claimed_nodes} nodes / "
                f"{claimed_gpus:,} GPUs claimed")
    else:
        pct = f", {share:.0%}" if share is not None else ""
        head = (f"proven at {nodes} of {claimed_nodes} nodes ({gpus:,} of {claimed_gpus:,} "
                f"GPUs{pct}): " + "; ".join(e.what for e in evidence))
    if widest is None:
        fabric = f"no inter-node sweep measures the fabric (the gate needs ≥ {need} nodes)"
    elif widest.nodes >= need:
        fabric = (f"fabric measured across {widest.nodes} nodes / {widest.ranks} ranks "
                  f"(the gate needs ≥ {need})")
    else:
        fabric = (f"fabric measured across only {widest.nodes} nodes / {widest.ranks} ranks; "
                  f"the gate needs ≥ {need}")
    return f"{head}. {fabric}"
