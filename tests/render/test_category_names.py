"""Categories named for what they hold (issue 30): the networking category carries training
throughput too, so every output names it by its title and shows each part's points; a weak
score then says which part is weak (Borealis: throughput, not the fabric alone)."""

from __future__ import annotations

import re

from cmax.render import reports, views
from cmax.score.tier_changes import weakest_parts
from cmax.scorecard import COMPONENT_LABELS, CategoryScore
from tests.render.test_tier_advice import sample


def _networking() -> CategoryScore:
    return next(c for c in sample("borealis-cloud").categories if c.name == "networking")


def test_the_networking_category_says_it_holds_training_throughput() -> None:
    cat = _networking()
    assert cat.heading == "Networking and delivered performance"
    parts = {p.kind: (p.label, round(p.score, 1), p.weight) for p in cat.components}
    assert parts == {"training": ("training throughput", 59.9, 5.0),
                     "nccl": ("fabric bus bandwidth", 20.9, 2.0),
                     "audit": ("audit checks", 87.5, 1.0),
                     "declarations": ("declarations", 40.0, 1.0)}
    # the category score is the weight-averaged mean of the parts shown
    mean = sum(p.score * p.weight for p in cat.components) / sum(p.weight for p in cat.components)
    assert round(mean, 2) == round(cat.score, 2)


def test_tier_advice_names_the_weak_parts_of_a_mixed_category() -> None:
    line = views.tier_changes(sample("borealis-cloud"))[0]
    assert ("networking and delivered performance 52 → 100 would add 12.4: weakest training "
            "throughput 60, fabric bus bandwidth 21;") in line
    assert "(networking 52" not in line


def test_a_category_of_one_measured_kind_lists_no_parts() -> None:
    security = next(c for c in sample("aurora-compute").categories if c.name == "security")
    assert [p.kind for p in security.components] == ["audit", "declarations"]
    assert views.components_line(security) == "" and weakest_parts(security) == []


def test_the_scorecard_page_shows_titles_parts_and_not_scored() -> None:
    card = sample("cinder-gpu")
    html = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    appendix = html[html.index("Appendix A"):]
    assert ">Networking and delivered performance</a><br><span class=\"note\">training " \
           "throughput 93.5 ×5 · fabric bus bandwidth 82.5 ×2" in appendix
    # a category without evidence is neither a 0.0 score nor "declared only"
    pricing = re.search(r"<h4>Pricing: (.*?)</h4>", appendix)
    assert pricing and "not scored" in pricing.group(1) and "declared" not in pricing.group(1)
    assert re.search(r">Pricing</a></td>\s*<td class=\"n\">—</td>", appendix)


def test_score_text_names_categories_by_title_with_parts() -> None:
    from cmax.cli.score_cmd import scorecard_text

    text = "\n".join(scorecard_text(sample("borealis-cloud")))
    assert "Networking and delivered performance   52.1 × 25" in text
    assert ("training throughput 59.9 ×5 · fabric bus bandwidth 20.9 ×2 · audit checks 87.5 ×1 "
            "· declarations 40.0 ×1") in text


def test_category_columns_balance_the_text() -> None:
    long = CategoryScore(name="a", score=1, weight=1, verified=True, evidence=["x" * 2000])
    short = [CategoryScore(name=n, score=1, weight=1, verified=True, evidence=["y" * 100])
             for n in "bcdefghij"]
    left, right = views.category_columns([long, *short])
    assert left == [long] and len(right) == 9  # not five and five
    assert views.category_columns([long]) == [[long]]


def test_component_labels_cover_every_rubric_kind() -> None:
    from typing import get_args

    from cmax.score.rubric import ComponentKind

    for kind in get_args(ComponentKind):
        assert kind in COMPONENT_LABELS, kind


def test_tier_advice_keeps_proper_names_in_a_title() -> None:
    """Seen on the GB200 sample: 'orchestration (slurm / kubernetes) 40 → 100'."""
    line = views.tier_changes(sample("zenith-nvl72"))[0]
    assert "orchestration (Slurm / Kubernetes) 40 → 100" in line
