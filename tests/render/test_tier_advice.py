"""What would change the tier, on the three shipped samples: only what can change it, read
from the scorecard's typed thresholds and binding caps (no prose parsed)."""

from __future__ import annotations

import functools

import pytest

from cmax.pipeline import assess
from cmax.render import page_one, views
from cmax.score.tier_changes import tier_thresholds
from cmax.scorecard import Scorecard
from tests.paths import SAMPLES


@functools.cache
def sample(name: str) -> Scorecard:
    return assess(SAMPLES / name)


def test_aurora_gold_needs_points_for_platinum_and_holds_a_margin() -> None:
    card = sample("aurora-compute")
    assert (card.tier, card.score_tier) == ("Gold", "Gold")
    assert views.tier_changes(card) == [
        "Platinum needs 90 points, 2.7 more than today (security 85 → 100 would add 1.9; "
        "partnerships 40 → 100 would add 1.8).",
        "A drop of 7.3 points (below 80) would lose Gold.",
    ]
    assert page_one.capping_gates(card) == []


def test_borealis_bronze_lists_no_gate_that_cannot_change_bronze() -> None:
    """Its three failed gates cap at Gold or Silver: none of them can move Bronze, so the one
    useful line (the points to Silver) comes first and nothing reads as a cap."""
    card = sample("borealis-cloud")
    assert (card.tier, card.score_tier) == ("Bronze", "Bronze")
    assert sorted(g.binding_cap or "" for g in card.gates if g.binding_cap) == [
        "Gold", "Gold", "Gold", "Silver"]
    changes = views.tier_changes(card)
    assert changes[0].startswith("Silver needs 68 points, 5.0 more than today")
    assert changes[1] == "A drop of 8.0 points (below 55) would lose Bronze."
    assert len(changes) == 2 and not any("gate" in c for c in changes)
    assert page_one.capping_gates(card) == []


def test_cinder_needs_both_the_attestation_and_the_points() -> None:
    card = sample("cinder-gpu")
    assert (card.tier, card.score_tier) == ("Underperforming", "Underperforming")
    changes = views.tier_changes(card)
    assert changes == [
        "To rise above Underperforming, all of these are needed:",
        "Pass the “Third-party security attestation (SOC 2 Type I/II or ISO 27001)” gate: "
        "failed, it caps the tier at Underperforming.",
        changes[2],
    ]
    assert changes[2].startswith("Bronze needs 55 points, 3.1 more than today")
    # the ACS gate was not evaluated and caps at Gold: it cannot move Underperforming
    assert not any("ACS" in c for c in changes)


@pytest.mark.parametrize("name", ["aurora-compute", "borealis-cloud", "cinder-gpu"])
def test_the_scorecard_page_shows_binding_caps_and_passed_gates_cap_nothing(name: str) -> None:
    from cmax.render import reports

    card = sample(name)
    html = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    for g in card.gates:
        if g.binding_cap is None:
            assert f"none <span class=\"note\">(failing: <span class=\"nobreak\">{g.cap}" \
                in html
    # "capped by N gates" only for gates that hold the tier where it is
    assert "capped by" not in html
    for line in views.tier_changes(card):
        assert line.replace("“", "&ldquo;") in html or line in html


def test_tier_thresholds_come_from_typed_data_not_from_notes() -> None:
    card = sample("borealis-cloud")
    stripped = card.model_copy(update={"notes": []})
    assert tier_thresholds(stripped) == {"Platinum": 90.0, "Gold": 80.0, "Silver": 68.0,
                                               "Bronze": 55.0}
    assert views.tier_changes(stripped) == views.tier_changes(card)
