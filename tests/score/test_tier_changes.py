"""What can change the tier is decided once, as typed data, from the finished scorecard
(cmax/score/tier_changes.py); the reports only phrase it (tests/render/test_tier_advice.py)."""

from __future__ import annotations

import pytest

from cmax.score.tier_changes import TierChanges, tier_changes
from tests.render.test_tier_advice import sample


def _changes(name: str) -> TierChanges:
    changes = tier_changes(sample(name))
    assert changes is not None
    return changes


def test_a_score_bound_tier_needs_points_and_names_the_categories_that_give_them() -> None:
    c = _changes("aurora-compute")
    assert (c.tier, c.next_tier, c.holding) == ("Gold", "Platinum", ())
    assert c.next_threshold == 90.0 and c.points_needed == pytest.approx(2.693, abs=1e-3)
    assert [g.category.name for g in c.gains] == ["security", "partnerships"]
    assert [round(g.points, 1) for g in c.gains] == [1.9, 1.8]
    assert (c.threshold, round(c.margin or 0.0, 1)) == (80.0, 7.3)


def test_gates_capping_above_the_tier_change_nothing() -> None:
    """Borealis is Bronze by its score: its failed gates cap at Gold or Silver, so none of
    them holds the tier; the weakest parts of a mixed category come with its gain."""
    c = _changes("borealis-cloud")
    assert c.tier == "Bronze" and c.holding == ()
    assert c.next_tier == "Silver" and c.points_needed == pytest.approx(4.966, abs=1e-3)
    networking = next(g for g in c.gains if g.category.name == "networking")
    assert [p.kind for p in networking.weakest] == ["training", "nccl"]


def test_a_gate_holding_the_tier_is_listed_with_the_points() -> None:
    c = _changes("cinder-gpu")
    assert c.tier == "Underperforming"
    assert [g.id for g in c.holding] == ["attestation"]
    assert c.next_tier == "Bronze" and c.points_needed is not None


def test_a_tier_held_only_by_a_gate_has_no_points_to_gain() -> None:
    """When a gate, not the score, holds the tier, the score's points would not lift it: only
    the gate is listed, and no margin (the score is above the tier's minimum anyway)."""
    card = sample("aurora-compute")
    capped = card.model_copy(update={"tier": "Silver", "gates": [
        g.model_copy(update={"status": "failed", "cap": "Silver"}) if g.id == "network_bar"
        else g for g in card.gates]})
    c = tier_changes(capped)
    assert c is not None and [g.id for g in c.holding] == ["network_bar"]
    assert (c.next_threshold, c.points_needed, c.gains, c.threshold, c.margin) == (
        None, None, (), None, None)
