"""The claims ledger beyond the runs: cluster identity, the reliability period and fleet, the
price unit (:mod:`cmax.resolve.claims` holds the vocabulary; :func:`cmax.resolve.case.resolve` adds
these).

Each entry is resolved from what the evidence states, with citations:

* ``cluster`` / ``cluster_name``: ``[provider] cluster`` against the cluster the audit names;
* ``cluster`` / ``nodes``: ``[system] nodes`` against the node counts and distinct hosts the
  nccl-tests, DCGM, audit, incident and MLPerf files state (a count above the claim
  contradicts it; the audit's smaller one is a partial audit, noted);
* ``cluster`` / ``hosts``: whether the host names of each kind of evidence belong to the same
  cluster (:mod:`cmax.resolve.hosts`), the foreign ones quoted;
* ``reliability`` / ``period`` and ``fleet``: the period against the incident log's own dates
  and the months it covers, ``gpus_in_service`` against the GPUs the evidence supports
  (:mod:`cmax.resolve.incident_review`);
* ``pricing`` / ``price_unit``: the quote against the GPU's sourced market band
  (:mod:`cmax.price.units`; a quote outside it never reaches the ledger: it is an error).

The findings that report the same contradictions (``audit.cluster-mismatch``,
``network.hosts-outside-cluster``, ``reliability.*``, ``mlperf.system-mismatch``) stay the
errors; the ledger is where a reader sees every claim and what backs it in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmax.ingest.evidence import Evidence
from cmax.ingest.facts import facts_of
from cmax.resolve.claims import Citation, Claim, fact_int, status_of
from cmax.resolve.hosts import other_hosts
from cmax.resolve.incident_review import IncidentReview

CLUSTER, RELIABILITY, PRICING = "cluster", "reliability", "pricing"


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _cluster_name(evidence: Evidence) -> Claim:
    claimed = evidence.manifest.provider.cluster
    support: list[Citation] = []
    against: list[Citation] = []
    for f in evidence.files:
        for fact in facts_of(f.facts, "cluster"):
            (support if _norm(fact.value) == _norm(claimed) else against).append(
                Citation.of(f.path, fact))
    return Claim(CLUSTER, "cluster_name", claimed, status_of(support, against, True),
                 "cmax.toml [provider] cluster", tuple(support), tuple(against))


def _nodes(evidence: Evidence) -> Claim:
    claimed = evidence.manifest.system.nodes
    support: list[Citation] = []
    against: list[Citation] = []
    notes: list[str] = []
    for f in evidence.files:
        for fact in facts_of(f.facts, "node_count"):
            count = fact_int(fact)
            if count is None:
                continue
            cite = Citation.of(f.path, fact, f"{count} nodes")
            if count > claimed:
                against.append(cite)
            elif count == claimed:
                support.append(cite)
            elif f.kind == "clustermax-audit":
                notes.append(f"the audit covers {count} of {claimed} nodes")
        hosts = {x.value.strip().lower() for x in facts_of(f.facts, "host")}
        if f.kind in ("nccl-tests", "nccl-tests-json") and hosts:
            cite = Citation(f.path, None, f"{len(hosts)} distinct hosts")
            if len(hosts) > claimed:
                against.append(cite)
            elif len(hosts) == claimed:
                support.append(cite)
    return Claim(CLUSTER, "nodes", str(claimed), status_of(support, against, True),
                 "cmax.toml [system] nodes", tuple(support), tuple(against), "; ".join(notes))


def _hosts(evidence: Evidence) -> Claim | None:
    kinds = sorted({f.kind for f in evidence.files if facts_of(f.facts, "host")})
    if len(kinds) < 2 and evidence.incidents.is_empty():
        return None
    support: list[Citation] = []
    against: list[Citation] = []
    for f in evidence.files:
        named = list(dict.fromkeys(x.value for x in facts_of(f.facts, "host")))
        if not named:
            continue
        others = other_hosts(evidence, exclude_kinds={f.kind})
        if not others:
            continue
        foreign = [h for h in named if not others.belongs(h)]
        if foreign:
            against.append(Citation(f.path, None, ", ".join(foreign[:5])
                                    + (f" (+{len(foreign) - 5})" if len(foreign) > 5 else "")))
        else:
            support.append(Citation(f.path, None, f"{len(named)} host(s) of the cluster"))
    if not support and not against:
        return None
    return Claim(CLUSTER, "hosts", evidence.manifest.provider.cluster,
                 status_of(support, against, False), "the evidence's host names",
                 tuple(support), tuple(against),
                 "a file's hosts belong when other evidence names them or their naming scheme")


def _reliability(evidence: Evidence, review: IncidentReview | None) -> list[Claim]:
    spec = evidence.manifest.reliability
    if spec is None or review is None:
        return []
    log = spec.incidents
    inside = [Citation(str(r["source_file"] or log), r["line"], f"{r['start']:%Y-%m-%d}")
              for r in review.counted.head(3).iter_rows(named=True)]
    outside = [Citation(str(r["source_file"] or log), r["line"],
                        f"{r['start']:%Y-%m-%d} outside the period")
               for r in review.outside.head(5).iter_rows(named=True)]
    note = ""
    if review.partial:
        note = (f"the log records something in {len(review.covered)} of the period's "
                f"{len(review.period_months)} months; rated over those")
    period = Claim(RELIABILITY, "period", f"{spec.period_start}..{spec.period_end}",
                   status_of(inside, outside, True), "cmax.toml [reliability] period",
                   tuple(inside), tuple(outside), note)
    fleet_support: list[Citation] = []
    fleet_against: list[Citation] = []
    if review.claimed_gpus > review.evidence_gpus:
        fleet_against.append(Citation("cmax.toml", None, f"the evidence supports "
                                      f"{review.evidence_gpus:,} GPUs"))
    elif review.other:
        fleet_support.append(Citation("cmax.toml", None, f"[system] and the evidence's hosts "
                                      f"support {review.evidence_gpus:,} GPUs"))
    fleet = Claim(RELIABILITY, "fleet", str(review.claimed_gpus),
                  status_of(fleet_support, fleet_against, True),
                  "cmax.toml [reliability] gpus_in_service", tuple(fleet_support),
                  tuple(fleet_against),
                  f"rate and SLA use {review.fleet_gpus:,}"
                  if review.fleet_gpus != review.claimed_gpus else "")
    return [period, fleet]


def _price_unit(evidence: Evidence, economics: Mapping[str, Any], gpu: str) -> Claim | None:
    from cmax.reference.economics import price_band

    pricing = evidence.manifest.pricing
    if pricing is None:
        return None
    band = price_band(economics, gpu)
    value = f"${pricing.usd_per_gpu_hour:g} per GPU-hour"
    if band is None:
        return Claim(PRICING, "price_unit", value, "declared", "cmax.toml [pricing]",
                     note=f"no sourced price band for {gpu}")
    low, high = float(band["low"]), float(band["high"])
    cite = Citation("reference/economics.toml", None,
                    f"{gpu} quotes ${low:g}-${high:g} per GPU-hour", f"price_bands.{gpu}")
    inside = low <= pricing.usd_per_gpu_hour <= high
    return Claim(PRICING, "price_unit", value,
                 status_of([cite] if inside else [], [] if inside else [cite], True),
                 "cmax.toml [pricing] usd_per_gpu_hour", (cite,) if inside else (),
                 () if inside else (cite,))


def bundle_claims(evidence: Evidence, review: IncidentReview | None,
                  economics: Mapping[str, Any], gpu: str) -> tuple[Claim, ...]:
    """The ledger entries about the cluster, the reliability period and fleet, and the price
    unit; ``review`` is the case's reading of the incident log, ``gpu`` the canonical
    catalogue id."""
    claims: list[Claim | None] = [_cluster_name(evidence), _nodes(evidence), _hosts(evidence),
                                  *_reliability(evidence, review),
                                  _price_unit(evidence, economics, gpu)]
    return tuple(c for c in claims if c is not None)
