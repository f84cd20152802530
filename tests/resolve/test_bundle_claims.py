"""The claims ledger beyond the runs (cmax/resolve/bundle_claims.py): cluster, reliability,
price."""

from __future__ import annotations

import shutil
from pathlib import Path

from cmax.pipeline import load
from cmax.resolve.claims import Ledger
from tests.paths import SAMPLES

KINDS = [("cluster", "cluster_name"), ("cluster", "nodes"), ("cluster", "hosts"),
         ("reliability", "period"), ("reliability", "fleet"), ("pricing", "price_unit")]


def _ledger(tmp_path: Path, edits: dict[str, tuple[str, str]] | None = None) -> Ledger:
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLES / "borealis-cloud", bundle)
    for rel, (old, new) in (edits or {}).items():
        path = bundle / rel
        text = path.read_text()
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new))
    with load(bundle) as loaded:
        return loaded.case.claims


def test_an_honest_sample_corroborates_every_bundle_claim(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    for subject, kind in KINDS:
        claim = ledger.get(subject, kind)
        assert claim is not None and claim.status == "corroborated", (subject, kind, claim)
    nodes = ledger.get("cluster", "nodes")
    assert nodes is not None and nodes.note == "the audit covers 16 of 64 nodes"
    price = ledger.get("pricing", "price_unit")
    assert price is not None and "$0.52-$14.9" in price.support[0].text


def test_contradictions_quote_both_sides(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, {
        "audit/audit.values.json": ('"clusterName": "borealis-h100-b"',
                                    '"clusterName": "other-h100-west"'),
        "cmax.toml": ("gpus_in_service = 512", "gpus_in_service = 100000")})
    name = ledger.get("cluster", "cluster_name")
    assert name is not None and name.status == "contradicted"
    assert name.value == "borealis-h100-b" and name.against[0].text == "other-h100-west"
    fleet = ledger.get("reliability", "fleet")
    assert fleet is not None and fleet.status == "contradicted" and fleet.value == "100000"
    # 64 hosts x 8: the audit's login node is no compute host
    assert "the evidence supports 512 GPUs" in fleet.against[0].text
    assert fleet.note == "rate and SLA use 512"


def test_incidents_outside_the_period_contradict_it(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, {"cmax.toml": ("period_end = 2026-09-30",
                                              "period_end = 2026-08-31")})
    period = ledger.get("reliability", "period")
    assert period is not None and period.status == "contradicted"
    assert all("outside the period" in c.text for c in period.against)
