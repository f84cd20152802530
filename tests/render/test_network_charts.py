"""The pair-bandwidth heatmap reads only the scorecard and renders deterministically."""

from __future__ import annotations

import itertools

from cmax.render.network_charts import pair_heatmap_svg, pair_matrix
from cmax.scorecard import PairResult, Scorecard, SuspectNode
from tests.score.scorecard_factory import make_scorecard


def _card(pairs: list[PairResult], suspects: list[SuspectNode]) -> Scorecard:
    return make_scorecard().model_copy(update={"network_pairs": pairs,
                                               "suspect_nodes": suspects})


def _pairs() -> list[PairResult]:
    return [PairResult(hosts=[a, b], busbw_gbps=150.0 if "n3" in (a, b) else 368.0,
                       size_bytes=1 << 33, file=f"nccl/{a}_{b}.txt", line=30)
            for a, b in itertools.combinations(["n1", "n2", "n3", "n4"], 2)]


def test_matrix_is_symmetric_with_an_empty_diagonal() -> None:
    hosts, matrix = pair_matrix(_card(_pairs(), []))
    assert hosts == ["n1", "n2", "n3", "n4"]
    assert matrix[0][2] == matrix[2][0] == 150.0 and matrix[0][1] == 368.0
    assert all(matrix[i][i] is None for i in range(4))


def test_heatmap_marks_suspects_and_is_byte_identical() -> None:
    suspect = SuspectNode(node="n3", sources=["nccl/n1_n3.txt:30"], shortfall_pct=59.2,
                          impact="slow", gpus=8)
    card = _card(_pairs(), [suspect])
    svg = pair_heatmap_svg(card)
    assert svg is not None and svg == pair_heatmap_svg(card)
    assert "suspect nodes in red" in svg and "#c62828" in svg


def test_no_heatmap_without_enough_pairs() -> None:
    assert pair_heatmap_svg(_card(_pairs()[:2], [])) is None
    assert pair_heatmap_svg(_card([], [])) is None
