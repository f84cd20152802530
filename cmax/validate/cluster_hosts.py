"""Every file that names hosts is a witness of the cluster: one that shares none of them is of
another cluster.

nccl-tests device lines, ``dcgmi diag`` results, power telemetry, the audit and llmb-run's job
database each name the hosts they ran on (:func:`cmax.resolve.hosts.witnesses`). The hosts of one
cluster overlap from file to file; a sweep or a diagnostic that shares no host with the other
witnesses, where the two together name more hosts than the cluster has nodes, cannot be of this
cluster (an nccl sweep of ``node100``-``node163`` beside telemetry of ``node000``-``node063`` on
a 64-node claim). The naming scheme does not vouch for it (``cmax.resolve.hosts.HostSet.belongs``
does
accept a shared stem): a sister partition is named the same way.

A file is compared with the witnesses of the *other* classes (:data:`cmax.resolve.hosts.
WITNESS_CLASSES`): two sweeps copied from elsewhere do not vouch for each other. Incident logs
witness nothing (a padded log would vouch for any sweep). Nothing is said when no other class
names a host: there is nothing to cross-examine.
"""

from __future__ import annotations

from collections.abc import Iterator

from cmax.findings import Finding
from cmax.resolve.hosts import Witness, host_stem, witnesses
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register

RULE = "crossfile.hosts-of-another-cluster"

register(Rule(
    RULE, "error", "A file's hosts are another cluster's",
    "Every file that names hosts (nccl-tests device lines, dcgmi diag results, power "
    "telemetry, the audit, llmb-run's job database) is a witness of the cluster. This file "
    "shares no host with the witnesses of the other kinds, and with their hosts of the "
    "same naming scheme it makes more hosts than [system] nodes: it ran on another cluster "
    "or partition (a shared naming scheme does not make it this one). It is not counted: "
    "an nccl sweep of it does not decide the fabric gate, and neither a sweep nor a "
    "diagnostic of it names, or clears, a suspect node of this cluster.",
    "Submit the file measured on the cluster being rated (its hosts appear in the other "
    "evidence), or add the evidence that shows these hosts are part of it.",
    "cmax/resolve/hosts.py (witnesses); NVIDIA/nccl-tests src/util.cu (device lines name each "
    "rank's "
    "host); NVIDIA/DCGM dcgmi diag JSON (per-node results).",
    effect="not_counted",
))

#: the witness classes whose files decide something (the fabric gate, a node's health)
DECIDING = frozenset({"nccl", "diag"})

def _shown(hosts: frozenset[str], limit: int = 4) -> str:
    ordered = sorted(hosts)
    more = f" and {len(ordered) - limit} more" if len(ordered) > limit else ""
    return ", ".join(ordered[:limit]) + more


def foreign_witnesses(found: list[Witness], nodes: int) -> Iterator[tuple[Witness, frozenset[str],
                                                                          list[str]]]:
    """Each deciding file (a sweep, a diagnostic) whose hosts are another cluster's, with the
    witnesses' hosts and files.

    The witnesses are the files of the other kinds that decide nothing (telemetry, the audit,
    logs, job records) when there are any, else the other deciding class (and then the one
    naming fewer hosts is the odd one out). The hosts counted
    together are the file's and the witnesses' of the same naming scheme: an audit's login
    node or a telemetry exporter's address is not a compute node of either."""
    for w in found:
        if w.witness_class not in DECIDING:
            continue
        others = [o for o in found if o.witness_class not in DECIDING]
        deciding = not others
        others = others or [o for o in found if o.witness_class != w.witness_class]
        hosts = frozenset().union(*(o.hosts for o in others)) if others else frozenset()
        if not hosts or w.hosts & hosts or (deciding and len(w.hosts) > len(hosts)):
            continue  # deciding files only: the one naming more hosts is taken as the cluster
        stems = {host_stem(h) for h in w.hosts}
        if len(w.hosts | {h for h in hosts if host_stem(h) in stems}) > nodes:
            yield w, hosts, [o.path for o in others]


def check(ctx: Context) -> Iterator[Finding]:
    nodes = ctx.manifest.system.nodes
    for w, hosts, files in foreign_witnesses(witnesses(ctx.case), nodes):
        yield finding(
            RULE,
            f"{w.kind} names {len(w.hosts)} host(s) ({_shown(w.hosts)}), none of them among "
            f"the {len(hosts)} the other evidence names ({_shown(hosts)}, in "
            f"{', '.join(files[:3])}); together more hosts of one naming scheme than the "
            f"{nodes} nodes [system] claims: not counted",
            file=w.path)
