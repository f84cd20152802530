"""Across GPU types the leaderboard and the brief compare $ per million training tokens,
never per-GPU-hour value (docs/scoring.md section 7)."""

from __future__ import annotations

import re

import pytest

from cmax.render import views
from cmax.scorecard import POWER_CLAIM, Judgement, Scorecard, TokenCost
from cmax.states import State
from cmax.throughput import usd_per_million_tokens
from tests.score.scorecard_factory import make_scorecard, make_weak_scorecard


def _with_tokens(card: Scorecard, gpu: str, tps: float, watts: float | None = None,
                 **update: object) -> Scorecard:
    assert card.price is not None
    price = card.price.model_copy(update=update)
    cost = TokenCost(
        workload="llama3.1-405b", precision="bf16", gpu=gpu, num_gpus=512, basis="measured",
        basis_detail="log", tokens_per_s_per_gpu=tps, goodput_ratio=price.goodput_ratio,
        usd_per_million_tokens=usd_per_million_tokens(price.quoted_usd_per_gpu_hour, tps,
                                                      price.goodput_ratio),
        joules_per_token=watts / tps if watts is not None else None)
    return card.model_copy(update={"gpu": gpu, "price": price.model_copy(
        update={"token_costs": [cost]})})


@pytest.fixture()
def board() -> list[tuple[str, Scorecard]]:
    h100 = _with_tokens(make_scorecard(provider="H"), "h100-sxm", 200.0,
                        quoted_usd_per_gpu_hour=2.0, goodput_ratio=1.0)
    weak = _with_tokens(make_weak_scorecard(provider="W"), "h100-sxm", 150.0,
                        quoted_usd_per_gpu_hour=1.8, goodput_ratio=1.0)
    gb200 = _with_tokens(make_scorecard(provider="G"), "gb200", 400.0,
                         quoted_usd_per_gpu_hour=3.2, goodput_ratio=0.9)
    return [("h", h100), ("w", weak), ("g", gb200)]


def test_leaderboard_ranks_tokens_across_types_and_value_within_a_type(
        board: list[tuple[str, Scorecard]]) -> None:
    rows = {r.slug: r for r in views.leaderboard_rows(board)}
    # G $2.4691, H $2.7778, W 1.8e6 / (150 x 3600) = $3.3333
    assert [rows[s].tokens_rank for s in "gwh"] == [1, 3, 2]
    assert rows["g"].tokens_usd == pytest.approx(3.2e6 / (400 * 3600) / 0.9)
    # the GB200 offer's per-GPU-hour value is ranked only among GB200 offers
    assert rows["g"].value_rank == 1
    assert sorted(r.value_rank or 0 for s, r in rows.items() if s != "g") == [1, 2]
    order = [slug for slug, _ in views.leaderboard_order(board, "value")]
    assert order == ["g", "h", "w"]


def test_brief_says_how_much_faster_per_gpu_and_whether(
        board: list[tuple[str, Scorecard]]) -> None:
    cards = [c for _, c in board]
    h100 = cards[0]
    line = views.tokens_sentence(h100, cards)
    assert line is not None
    # G must train (3.2 / 0.9) / (2.0 / 1.0) = 1.78x as fast per GPU; it trains 400 / 200 = 2x
    # with the other offer's rating beside its price: cheaper is not better when the rating
    # says not to sign
    assert "costs $2.78 against $2.47 at G (gb200, Silver: do not sign without fixes)" in line
    assert "G must train 1.78x as fast per GPU as this offer" in line
    assert "it trains 2.00x: it does." in line
    slow = _with_tokens(cards[2], "gb200", 340.0)
    line = views.tokens_sentence(h100, [h100, cards[1], slow])
    assert line is not None and "it trains 1.70x: it does not." in line


def test_no_cross_type_sentence_and_no_cross_type_value_on_one_gpu_type(
        board: list[tuple[str, Scorecard]]) -> None:
    cards = [c for _, c in board]
    assert views.tokens_sentence(cards[0], cards[:2]) is None
    rows = views.value_comparison(cards[0], cards)
    assert {r.provider for r in rows} == {"H", "W"}


def test_energy_known_offers_are_ranked_by_joules_per_token(
        board: list[tuple[str, Scorecard]]) -> None:
    """J/token ranks only the offers whose energy is known: H 1989 W / 200 = 9.945 J/token,
    G 2600 W / 400 = 6.5; W has no power figure, so no J/token rank (its $ rank stays)."""
    h, w, g = (c for _, c in board)
    energy = [("h", _with_tokens(h, "h100-sxm", 200.0, 1989.0)), ("w", w),
              ("g", _with_tokens(g, "gb200", 400.0, 2600.0))]
    rows = {r.slug: r for r in views.leaderboard_rows(energy)}
    assert rows["g"].joules_per_token == pytest.approx(6.5) and rows["g"].joules_rank == 1
    assert rows["h"].joules_per_token == pytest.approx(9.945) and rows["h"].joules_rank == 2
    assert rows["w"].joules_per_token is None and rows["w"].joules_rank is None
    assert rows["w"].tokens_rank == 3
    from cmax.render.reports import leaderboard_csv

    lines = leaderboard_csv(views.leaderboard_rows(energy)).splitlines()
    head = lines[0].split(",")
    assert head[-6:] == ["gpu", "usd_per_million_tokens", "tokens_rank", "joules_per_token",
                         "joules_rank", "scorecard"]
    cells = {line.split(",")[1]: dict(zip(head, line.split(","), strict=True))
             for line in lines[1:]}
    assert cells["G"]["gpu"] == "gb200" and cells["G"]["tokens_rank"] == "1"
    assert float(cells["G"]["usd_per_million_tokens"]) == pytest.approx(2.4691, abs=1e-4)
    assert (cells["G"]["joules_per_token"], cells["G"]["joules_rank"]) == ("6.5", "1")
    assert (cells["W"]["joules_per_token"], cells["W"]["joules_rank"]) == ("", "")


def test_leaderboard_shows_a_runs_measured_j_per_token(board: list[tuple[str, Scorecard]]
                                                        ) -> None:
    """A run's own energy readings (Megatron --log-energy) appear on the board beside the
    nominal J/token: the mean over the runs that measured it, and how many did."""
    from cmax.render.reports import leaderboard_html

    slug, card = board[0]
    runs = [w.model_copy(update={"measured_joules_per_token": 0.4272 if i == 0 else None})
            for i, w in enumerate(card.workloads)]
    measured = card.model_copy(update={"workloads": runs})
    rows = views.leaderboard_rows([(slug, measured), *board[1:]])
    html = leaderboard_html(rows, "html", {"score": None, "price": None})
    assert f"0.427 J/tok measured (1 of {len(runs)} runs)" in html
    assert html.count("J/tok measured") == 1


def test_brief_sentence_compares_energy_per_token_where_both_are_known(
        board: list[tuple[str, Scorecard]]) -> None:
    h, w, g = (c for _, c in board)
    h = _with_tokens(h, "h100-sxm", 200.0, 1989.0)
    g = _with_tokens(g, "gb200", 400.0, 2600.0)
    line = views.tokens_sentence(h, [h, w, g])
    assert line is not None
    assert line.endswith("Energy per token (all-in): 9.95 J here against 6.50 J at G.")
    plain = views.tokens_sentence(board[0][1], [c for _, c in board])
    assert plain is not None and "Energy per token" not in plain


def _powered(card: Scorecard, state: State) -> Scorecard:
    """The card with the judgement of the power per GPU its J/token divides by."""
    power = Judgement(kind="energy", id=POWER_CLAIM, label="power per GPU for J/token",
                      state=state)
    return card.model_copy(update={"judgements": [*card.judgements, power]})


def test_each_j_per_token_is_labelled_with_what_its_power_rests_on(
        board: list[tuple[str, Scorecard]]) -> None:
    """The reference's default power is assumed, never measured: the brief's sentence and
    the leaderboard row say so beside each J/token; a stated [pricing] watts_per_gpu reads
    declared."""
    from cmax.render.reports import leaderboard_html

    h, w, g = (c for _, c in board)
    h = _powered(_with_tokens(h, "h100-sxm", 200.0, 1989.0), State.ASSUMED)
    g = _powered(_with_tokens(g, "gb200", 400.0, 2600.0), State.DECLARED)
    line = views.tokens_sentence(h, [h, w, g])
    assert line is not None and line.endswith(
        "Energy per token (all-in): 9.95 J here, assumed (reference default power), against "
        "6.50 J at G, declared.")
    rows = views.leaderboard_rows([("h", h), ("w", w), ("g", g)])
    assert {r.slug: r.power.short for r in rows if r.power} == {"h": "assumed", "g": "declared"}
    page = leaderboard_html(rows, "html", {"score": None, "price": None})
    assert re.search(r"J/tok <span class=\"note\">\(2\)</span> <span class=\"src "
                     r"src-assumed\">assumed</span>", page)
    assert page.count("src-declared") == 1
