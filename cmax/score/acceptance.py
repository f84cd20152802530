"""Acceptance per scalable unit: NVIDIA's Requirements for AI Clouds judged unit by unit.

Buyers accept a cluster per scalable unit (SU, "e.g. 512 GPUs"): NVIDIA's Requirements for AI
Clouds v2.3.1 (``NVIDIA/ai-cloud-validation:docs/requirements/offtake-requirements.yaml``
@ 1207cb7, 2026-08-19) ask in BM01 for the Exemplar benchmarks "within 5% of an NVIDIA provided
target performance number" on every SU handed over (test BM01-02), and the suite's own NCCL
multi-node test (SLURM08-01, BMAAS11-01, K8S33-01) checks bus bandwidth against
``min_bus_bw_gbps: 100`` (``isvctl/configs/suites/slurm.yaml`` @ 1207cb7). Those are the items
cmax's evidence can decide; the rest of the 128 ids need provisioning, API and security
records cmax does not read, and are not listed as if they had been checked.

The units, first that applies:

- the llmb-run packages of a bundle of several side by side, one per unit
  (``case.package.units``): each unit holds the runs of its own jobs;
- ``[[units]]`` in cmax.toml: a name and the unit's hosts (names, Slurm host lists, shell
  patterns); a result belongs to the unit that holds every host its file names, and a file
  naming hosts of two units belongs to neither (it is said). A file that names no host (most
  training logs) belongs to the unit whose ``files`` list it; a listed file whose hosts are
  not all the unit's counts for no unit;
- else the whole bundle is one unit.

A unit is accepted when every requirement listed for it passed: a requirement the unit's
evidence cannot decide is ``not_evaluated``, and a unit with BM01 not evaluated is not
accepted (there is nothing to accept it on). The per-run verdicts are the scorecard's own
(``WorkloadResult.verdict`` at the Exemplar bar, ``NetworkResult.busbw_gbps``): this module
decides nothing about a run, only which unit it belongs to and what the unit's runs add up to.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from cmax.ingest.evidence import Evidence
from cmax.ingest.formats.llmb_sqlite import expand_hostlist
from cmax.judgement.exemplar import judge_exemplar
from cmax.resolve.hosts import short_host, witnesses
from cmax.scorecard import NetworkResult, UnitAcceptance, UnitRequirement, WorkloadResult
from cmax.states import State

_BM01_STATUS: dict[State, Literal["passed", "failed", "not_evaluated"]] = {
    State.MET: "passed", State.NOT_MET: "failed", State.NOT_EVALUATED: "not_evaluated"}
"""A unit's BM01 status from its runs' Exemplar judgement."""

SOURCE = ("NVIDIA Requirements for AI Clouds v2.3.1 (NVIDIA/ai-cloud-validation:docs/"
          "requirements/offtake-requirements.yaml @ 1207cb7)")


@dataclass(frozen=True)
class Requirement:
    """A requirement id cmax judges per unit, its test, and what it asks."""

    id: str
    test: str
    title: str


BM01 = Requirement("BM01", "BM01-02", "every Exemplar benchmark within 5% of NVIDIA's target")
NCCL_MULTI_NODE = Requirement(
    "SLURM08", "SLURM08-01", "NCCL multi-node all-reduce bus bandwidth of at least 100 GB/s")
#: isvctl/configs/suites/slurm.yaml @ 1207cb7 ``min_bus_bw_gbps`` (also BMAAS11-01, K8S33-01)
MIN_BUS_BW_GBPS = 100.0
REQUIREMENTS: tuple[Requirement, ...] = (BM01, NCCL_MULTI_NODE)


@dataclass(frozen=True)
class _Unit:
    name: str
    source: str
    hosts: frozenset[str]
    files: frozenset[str]


def _file_hosts(evidence: Evidence) -> dict[str, frozenset[str]]:
    """The hosts each evidence file names (incident logs witness none: cmax.resolve.hosts)."""
    named = {w.path: w.hosts for w in witnesses(evidence)}
    return {f.path: named.get(f.path, frozenset()) for f in evidence.files}


def _matches(patterns: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Host names a unit's ``hosts`` spell out, and the shell patterns among them."""
    names: set[str] = set()
    globs: list[str] = []
    for pattern in patterns:
        if any(c in pattern for c in "*?"):  # a shell pattern ([4-6] a set within it)
            globs.append(short_host(pattern))
            continue
        expanded = expand_hostlist(pattern) if "[" in pattern else [pattern]
        names.update(short_host(h) for h in expanded or [pattern])
    return frozenset(names), tuple(globs)


def _declared_units(evidence: Evidence, hosts_of: dict[str, frozenset[str]],
                    notes: list[str]) -> list[_Unit]:
    units: list[_Unit] = []
    spelled = []
    for spec in evidence.manifest.units:
        names, globs = _matches(spec.hosts)
        spelled.append((spec.name, names, globs))

    def owners(host: str) -> set[str]:
        return {name for name, names, globs in spelled
                if host in names or any(fnmatch.fnmatchcase(host, g) for g in globs)}

    files: dict[str, set[str]] = {name: set() for name, _, _ in spelled}
    for path, hosts in hosts_of.items():
        if not hosts:
            continue
        held = set.intersection(*(owners(h) for h in hosts))
        if len(held) == 1:
            files[held.pop()].add(path)
        elif any(owners(h) for h in hosts):
            notes.append(f"{path} names hosts of more than one unit (or hosts no unit holds): "
                         "it counts for no unit")
    for spec in evidence.manifest.units:
        for path in spec.files:
            stated = hosts_of.get(path, frozenset())
            if stated and path not in files[spec.name]:
                notes.append(f"[[units]] {spec.name} lists {path}, whose hosts are not all "
                             "the unit's: it counts for no unit")
                continue
            files[spec.name].add(path)  # a file naming no host: the unit it is listed under
    seen = {h for hosts in hosts_of.values() for h in hosts}
    for name, names, globs in spelled:
        matched = {h for h in seen if any(fnmatch.fnmatchcase(h, g) for g in globs)}
        units.append(_Unit(name, "manifest [[units]]", frozenset(names | matched),
                           frozenset(files[name])))
    return units


def _package_units(evidence: Evidence, workloads: Sequence[WorkloadResult]) -> list[_Unit]:
    package = evidence.package
    if package is None or len(package.units) < 2:
        return []
    entry_of = {run_id: entry for run_id, entry
                in evidence.runs.select("run_id", "entry").iter_rows()}
    logs = {entry_of.get(w.run_id): w.log for w in workloads}
    return [_Unit(unit, "llmb-run package", frozenset(),
                  frozenset(logs[j.entry] for j in package.jobs
                            if j.unit == unit and j.entry in logs))
            for unit in package.units]


def _bm01(workloads: Sequence[WorkloadResult]) -> UnitRequirement:
    base = {"requirement": f"{BM01.id} ({BM01.test})", "title": BM01.title,
            "evidence": [f"{w.run_id} {w.log}" for w in workloads]}
    if not workloads:
        return UnitRequirement(status="not_evaluated", detail="no training run of this unit",
                               **base)
    # the unit's runs judged as the Exemplar suite is, by the one rule (a failing run or a
    # pool below the bar is not met)
    judged = judge_exemplar(workloads, workloads[0].bar)
    return UnitRequirement(status=_BM01_STATUS[judged.state],
                           detail=f"{judged.state.label}: {judged.reason}", **base)


def _nccl(network: Sequence[NetworkResult]) -> UnitRequirement:
    sweeps = [n for n in network if n.collective == "all_reduce" and n.nodes >= 2]
    base = {"requirement": f"{NCCL_MULTI_NODE.id} ({NCCL_MULTI_NODE.test})",
            "title": NCCL_MULTI_NODE.title, "evidence": sorted({n.file for n in sweeps})}
    if not sweeps:
        return UnitRequirement(status="not_evaluated", detail="no multi-node all_reduce sweep "
                               "of this unit", **base)
    low = [n for n in sweeps if n.busbw_gbps < MIN_BUS_BW_GBPS]
    shown = "; ".join(f"{n.file} {n.nodes} nodes {n.busbw_gbps:.1f} GB/s"
                      for n in (low or sweeps))
    if low:
        return UnitRequirement(status="failed", detail=f"below {MIN_BUS_BW_GBPS:g} GB/s: "
                               f"{shown}", **base)
    return UnitRequirement(status="passed", detail=f"at least {MIN_BUS_BW_GBPS:g} GB/s: {shown}",
                           **base)


def unit_acceptance(evidence: Evidence, workloads: Sequence[WorkloadResult],
                    network: Sequence[NetworkResult]) -> tuple[list[UnitAcceptance], list[str]]:
    """Each scalable unit judged on BM01 and NCCL multi-node bandwidth, and notes on results
    that belong to no unit."""
    notes: list[str] = []
    hosts_of = _file_hosts(evidence)
    units = _package_units(evidence, workloads) or _declared_units(evidence, hosts_of, notes)
    if not units:
        every = frozenset(h for hosts in hosts_of.values() for h in hosts)
        units = [_Unit(evidence.manifest.provider.cluster or "the cluster", "whole bundle",
                       every, frozenset(hosts_of))]
    out = []
    for unit in units:
        runs = [w for w in workloads if w.log in unit.files]
        sweeps = [n for n in network if n.file in unit.files]
        requirements = [_bm01(runs), _nccl(sweeps)]
        out.append(UnitAcceptance(
            name=unit.name, source=unit.source,
            hosts=sorted(unit.hosts), requirements=requirements,
            accepted=all(r.status == "passed" for r in requirements)))
    return out, notes
