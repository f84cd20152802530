"""Which host names belong to the cluster: the evidence's host names, compared across files.

Read by the network and reliability rules and by the reliability score (one home for "is this
host one of the cluster's").

A file's hosts *belong* when another kind of evidence of the same bundle names the same host
or a host of the same naming scheme (``borealis-h100-b-017`` and ``borealis-h100-b-052``
share the stem ``borealis-h100-b-``), or when they carry the audit's cluster name. A sweep
copied from another operator (``eos0001``) shares neither with the provider's incident log.
When no other evidence names a host there is nothing to compare with, and nothing is said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from cmax.ingest.evidence import Evidence
from cmax.ingest.facts import facts_of

_TRAILING = re.compile(r"[0-9]+$")


def host_stem(host: str) -> str:
    """The naming scheme of a host: its short name without the trailing node number."""
    short = host.strip().lower().split(".", 1)[0]
    return _TRAILING.sub("", short)


@dataclass(frozen=True)
class HostSet:
    """Host names some evidence states, with their stems and the files that state them."""

    hosts: frozenset[str]
    stems: frozenset[str]
    files: tuple[str, ...]
    prefixes: tuple[str, ...] = ()

    def belongs(self, host: str) -> bool:
        name = host.strip().lower()
        short = name.split(".", 1)[0]
        return (name in self.hosts or short in self.hosts or host_stem(host) in self.stems
                or any(short.startswith(p) for p in self.prefixes))

    def __bool__(self) -> bool:
        return bool(self.hosts)


def other_hosts(evidence: Evidence, exclude_kinds: Iterable[str] = (),
                exclude_files: Iterable[str] = ()) -> HostSet:
    """Every host the bundle's evidence names, except in files of ``exclude_kinds`` or the
    named files: per-file host facts, incident nodes, per-node health checks (DCGM)."""
    kinds, skip = set(exclude_kinds), set(exclude_files)
    hosts: set[str] = set()
    files: list[str] = []
    for f in evidence.files:
        if f.kind in kinds or f.path in skip:
            continue
        named = {x.value.strip().lower() for x in facts_of(f.facts, "host") if x.value.strip()}
        if named:
            hosts |= named
            files.append(f.path)
    for table, column in (("incidents", "node"), ("node_health", "node")):
        frame = getattr(evidence, table)
        if frame.is_empty() or column not in frame.columns:
            continue
        rows = frame.select(column, "source_file").drop_nulls(column).unique()
        for node, source in rows.iter_rows():
            kind = next((f.kind for f in evidence.files if f.path == source), None)
            if source in skip or kind in kinds:
                continue
            hosts.add(str(node).strip().lower())
            if source not in files:
                files.append(str(source))
    hosts.discard("")
    cluster = (evidence.audit_cluster or "").strip().lower()
    prefixes = (cluster,) if len(cluster) >= 3 else ()
    stems = frozenset(s for s in (host_stem(h) for h in hosts) if len(s) >= 2)
    return HostSet(frozenset(hosts), stems, tuple(files), prefixes)


#: the classes of witness a file of each kind is: a file is checked against the hosts the
#: other classes name, so two sweeps (or two diagnostics) of another cluster do not vouch for
#: each other; any kind not listed is its own class
WITNESS_CLASSES: dict[str, str] = {
    "nccl-tests": "nccl", "nccl-tests-json": "nccl", "dcgm-diag": "diag",
}
#: provider-written lists of nodes: they name hosts but witness nothing (a padded incident log
#: would otherwise vouch for any sweep and enlarge the fleet)
UNWITNESSED_KINDS = frozenset({"incidents-csv", "incidents-json"})


def short_host(host: str) -> str:
    """A host name as compared across files: lower case, without its domain."""
    return host.strip().lower().split(".", 1)[0]


@dataclass(frozen=True)
class Witness:
    """One evidence file that names hosts of the cluster: its kind, class and host names."""

    path: str
    kind: str
    hosts: frozenset[str]

    @property
    def witness_class(self) -> str:
        return WITNESS_CLASSES.get(self.kind, self.kind)


def witnesses(evidence: Evidence) -> list[Witness]:
    """Every file that names hosts (its host facts and its per-node health rows), in file
    order; incident logs are left out (:data:`UNWITNESSED_KINDS`)."""
    named: dict[str, set[str]] = {}
    kinds: dict[str, str] = {}
    for f in evidence.files:
        kinds[f.path] = f.kind
        if f.kind in UNWITNESSED_KINDS:
            continue
        hosts = {short_host(x.value) for x in facts_of(f.facts, "host") if x.value.strip()}
        if hosts:
            named.setdefault(f.path, set()).update(hosts)
    health = evidence.node_health
    if not health.is_empty() and "node" in health.columns:
        for node, source in health.select("node", "source_file").drop_nulls().unique(
                maintain_order=True).iter_rows():
            if kinds.get(str(source)) in UNWITNESSED_KINDS or not str(node).strip():
                continue
            named.setdefault(str(source), set()).add(short_host(str(node)))
    return [Witness(path, kinds.get(path, "unknown"), frozenset(hosts))
            for path, hosts in named.items() if hosts]
