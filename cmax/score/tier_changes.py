"""What can change a scorecard's tier, decided once from the finished scorecard: every gate
whose binding cap holds the tier where it is, the points the score needs for the next tier
(and which categories would add most of them), and the margin before the tier drops. A gate
whose cap is above the tier, or a passed gate, is not listed: changing it changes nothing.

Scorecard models only, as ``cmax/score/verdicts.py``: report code reads this from finished
scorecards (the document worker included) without the scoring stack; renderers phrase it
(``cmax/render/views.py`` ``tier_changes``) and decide none of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cmax.scorecard import TIERS, CategoryScore, ComponentScore, Gate, Scorecard, Tier, tier_rank
from cmax.states import State


@dataclass(frozen=True)
class CategoryGain:
    """A scored category below 100 and the weighted points raising it to 100 would add."""

    category: CategoryScore
    points: float
    weakest: tuple[ComponentScore, ...]
    """its parts that lose it most points, worst first (a category mixing measurements)"""


@dataclass(frozen=True)
class TierChanges:
    """Only what can change the tier."""

    tier: Tier
    holding: tuple[Gate, ...]
    """the gates whose binding cap is the tier awarded: each must be passed to rise"""
    next_tier: Tier | None
    """the tier one step up; None at the top"""
    next_threshold: float | None
    """its minimum score, when the score (not only a gate) holds the tier where it is"""
    points_needed: float | None
    """the points the score is short of it"""
    gains: tuple[CategoryGain, ...]
    """the (at most two) categories that would add most points"""
    threshold: float | None
    """the tier's own minimum score, when the score holds the tier"""
    margin: float | None
    """the points the score has above it"""


def tier_thresholds(card: Scorecard) -> dict[Tier, float]:
    """The rubric's minimum score per tier, as the scorecard carries them (empty on a
    scorecard written before they were recorded)."""
    return {t.tier: t.min_score for t in card.tier_thresholds}


def mixed(category: CategoryScore) -> bool:
    """Whether the category's score mixes measurements of different kinds."""
    return sum(p.measured for p in category.components) >= 2


def weakest_parts(category: CategoryScore, n: int = 2) -> list[ComponentScore]:
    """The ``n`` parts of a category that mixes measurements (networking: training
    throughput, bus bandwidth, audit checks) that lose it most points, worst first; none for a
    category of one measured kind (audit checks and declarations), whose score says it."""
    if not mixed(category):
        return []
    lost = sorted(category.components, key=lambda p: (-(p.weight * (100.0 - p.score)), p.kind))
    return [p for p in lost[:n] if p.score < 100.0]


def _gains(categories: Sequence[CategoryScore]) -> tuple[CategoryGain, ...]:
    scored = [c for c in categories if c.weight > 0]
    total = sum(c.weight for c in scored)
    if total <= 0:
        return ()
    best = sorted(scored, key=lambda c: (-(c.weight * (100.0 - c.score)), c.name))[:2]
    return tuple(CategoryGain(c, c.weight * (100.0 - c.score) / total, tuple(weakest_parts(c)))
                 for c in best if c.score < 100.0)


def tier_changes(card: Scorecard) -> TierChanges | None:
    """What can change ``card``'s tier; None when it carries no thresholds or no score."""
    thresholds = tier_thresholds(card)
    if not thresholds or card.score_state is State.NOT_SCORED:
        return None
    tier = card.tier
    score_holds = tier_rank(card.score_tier or tier) >= tier_rank(tier)
    nxt = TIERS[tier_rank(tier) - 1] if tier_rank(tier) > 0 else None
    rising = nxt is not None and score_holds
    own = score_holds and tier in thresholds
    return TierChanges(
        tier=tier,
        holding=tuple(g for g in card.gates if g.binding_cap == tier),
        next_tier=nxt,
        next_threshold=thresholds[nxt] if rising and nxt is not None else None,
        points_needed=thresholds[nxt] - card.score if rising and nxt is not None else None,
        gains=_gains(card.categories) if rising else (),
        threshold=thresholds[tier] if own else None,
        margin=card.score - thresholds[tier] if own else None)
