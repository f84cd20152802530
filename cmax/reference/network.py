"""Collective-network baselines (nccl-tests bus bandwidth) and the rule that picks one.

A fabric is judged against the bar for its own class: one node is NVLink-bound whatever the
NICs are, several nodes are network-bound and need the interconnect named. Provider
health-check pass marks are kept for reference but never used as the bar.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError
from cmax.reference._files import read_reference_toml

_COLLECTIVES = {
    "allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
    "alltoall": "alltoall", "sendrecv": "sendrecv", "broadcast": "broadcast", "reduce": "reduce",
}
_KIND_RANK = {"measured": 0, "stated": 1, "derived": 2}


def normalize_collective(name: str) -> str:
    key = name.strip().lower().removesuffix("_perf").replace("_", "").replace("-", "")
    return _COLLECTIVES.get(key, name.strip().lower())


def load_network(path: Path) -> list[dict[str, Any]]:
    data = read_reference_toml(path, what="network baselines")
    rows = data.get("baselines")
    if not isinstance(rows, list) or not rows:
        raise ReferenceDataError("no [[baselines]] entries", file=path)
    required = ("id", "fabric", "interconnects", "scope", "min_nodes", "max_nodes",
                "collective", "busbw_gbps", "message_bytes", "kind", "source")
    for i, row in enumerate(rows):
        missing = [k for k in required if k not in row]
        if missing:
            raise ReferenceDataError(f"network baseline #{i + 1} lacks {missing}", file=path)
        if row["kind"] not in (*_KIND_RANK, "threshold"):
            raise ReferenceDataError(
                f"network baseline {row['id']!r}: unknown kind {row['kind']!r}",
                file=path, expected="measured / stated / derived / threshold")
    return [dict(r) for r in rows]


def interconnect_aliases(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Every interconnect id the inter-node rows name, mapped to its row's fabric id."""
    table: dict[str, str] = {}
    for row in rows:
        if row["scope"] != "inter-node":
            continue
        for name in (row["fabric"], *row["interconnects"]):
            if name != "*":
                table.setdefault(str(name).strip().lower(), str(row["fabric"]))
    return table


def resolve_interconnect(rows: list[dict[str, Any]], value: str) -> str:
    """The fabric id of a manifest's ``[system] interconnect``; an id no row names is an
    error listing the known ones (an unknown id left the network silently unrated)."""
    table = interconnect_aliases(rows)
    fabric = table.get(value.strip().lower())
    if fabric is None:
        by_fabric: dict[str, list[str]] = {}
        for name, fab in sorted(table.items()):
            if name != fab:
                by_fabric.setdefault(fab, []).append(name)
        known = "; ".join(f"{fab} (also {', '.join(names)})" if names else fab
                          for fab, names in sorted(by_fabric.items()))
        raise ReferenceDataError(
            f"unknown interconnect {value!r}", field="interconnect",
            expected=f"one of {known}",
            fix="use a fabric id from reference/network.toml, or leave interconnect out to "
                "have the network reported unrated")
    return fabric


def gpu_applies(row: Mapping[str, Any], gpu: str | None) -> bool:
    """Whether a baseline row was sourced for this GPU (rows without a ``gpus`` list apply to
    all). An 8 x H100 NVLink figure says nothing about a GB200 tray, even on the same NICs."""
    gpus = row.get("gpus")
    if not gpu or not isinstance(gpus, list) or not gpus:
        return True
    return gpu.strip().lower() in {str(g).lower() for g in gpus}


def find_network_baseline(
    rows: list[dict[str, Any]], interconnect: str | None, collective: str, nodes: int,
    *, sizes: Collection[int] = (), nvlink_domain: bool = False, gpu: str | None = None,
) -> dict[str, Any] | None:
    """The bar for ``collective`` on ``nodes`` nodes of ``interconnect`` (None if unsourced).

    Rule: one node -> intra-node (NVLink) rows, interconnect ignored; more nodes -> rows whose
    interconnect list names it. Among matches: a bar measured at a message size the sweep
    holds (``sizes``, when given) before one it must be compared off-size with, then the
    collective itself before the "*" rows, then the largest message size (the large-message
    bar), then measured > stated > derived. So a two-node sweep without 128 MiB is judged
    by the two-node 8 GiB bar, not by the 128 MiB one at its 8 GiB figure.

    ``nvlink_domain``: the nodes are all in one NVLink domain (a GB200/GB300 NVL72 rack), so
    only ``scope = "nvlink-domain"`` rows sourced for ``gpu`` apply (multi-node NVLink, not the
    network); those rows never apply otherwise.
    """
    coll = normalize_collective(collective)
    wanted = (interconnect or "").strip().lower()
    candidates = []
    for row in rows:
        if row["kind"] == "threshold":
            continue
        if not row["min_nodes"] <= max(nodes, 1) <= row["max_nodes"]:
            continue
        if row["collective"] not in ("*", coll):
            continue
        if (row["scope"] == "nvlink-domain") != (nvlink_domain and nodes > 1):
            continue
        if row["scope"] == "nvlink-domain" and not gpu_applies(row, gpu or None):
            continue
        if row["scope"] == "inter-node" and wanted not in row["interconnects"]:
            continue
        candidates.append(row)
    if not candidates:
        return None
    measured = set(sizes)

    def rank(r: dict[str, Any]) -> tuple[bool, bool, int, int, str]:
        size = int(r["message_bytes"])
        return (bool(measured) and size not in measured, r["collective"] == "*", -size,
                _KIND_RANK[r["kind"]], r["id"])

    best = min(candidates, key=rank)
    out = {k: v for k, v in best.items() if k != "interconnects"}
    out["collective"] = coll
    return out
