"""The scale the evidence proves (cmax.score.scale): counted results only, against the claim."""

from __future__ import annotations

import json
from typing import Any

from cmax.pipeline import assess
from cmax.score.scale import proven_scale
from cmax.scorecard import MlperfResult, NetworkResult, Scorecard, WorkloadResult
from tests.paths import SAMPLES


def sweep(nodes: int, ranks: int, verdict: str = "pass", domains: int | None = None
          ) -> NetworkResult:
    return NetworkResult(file=f"nccl/{nodes}n.txt", collective="all_reduce", ranks=ranks,
                         nodes=nodes, large_message_bytes=8 << 30, busbw_gbps=380.0,
                         max_busbw_gbps=380.0, ratio=1.02, verdict=verdict,
                         nvlink_domains=domains)


def run(gpus: int, verdict: str = "pass", errors: tuple[str, ...] = ()) -> WorkloadResult:
    return WorkloadResult(workload="llama3.1-405b", precision="bf16", num_gpus=gpus,
                          log="t.log", status="success", steps_total=50, ratio=0.99,
                          verdict=verdict, bar=0.95, validation_errors=list(errors))


def mlperf(gpus: int, verdict: str) -> MlperfResult:
    return MlperfResult(benchmark="llama31_405b", system="Eos-dfw", runs=3, num_gpus=gpus,
                        ratio=1.0 if verdict == "pass" else None, verdict=verdict)


def scale(**kw: Any) -> Any:
    return proven_scale(claimed_nodes=64, gpus_per_node=8, min_node_share=0.5, **kw)


def test_a_two_node_sweep_does_not_prove_a_64_node_fabric() -> None:
    s = scale(network=[sweep(2, 16)])
    assert (s.nodes, s.gpus, s.share) == (2, 16, 0.0312)
    assert (s.fabric_nodes, s.fabric_ranks, s.fabric_needed_nodes) == (2, 16, 32)
    assert not s.fabric_proven
    assert "proven at 2 of 64 nodes (16 of 512 GPUs, 3%)" in s.summary
    assert "fabric measured across only 2 nodes / 16 ranks; the gate needs ≥ 32" in s.summary


def test_one_node_or_one_rack_proves_no_fabric() -> None:
    s = scale(network=[sweep(1, 8), sweep(18, 72, domains=1)])
    assert s.nodes == 18 and s.fabric_nodes is None and not s.fabric_proven
    assert "no inter-node sweep measures the fabric" in s.summary


def test_only_counted_results_prove_scale() -> None:
    """An unverified run, a run with a validation error, a foreign or copied MLPerf result and
    a sweep without a comparison prove nothing; the claim alone proves nothing either."""
    s = scale(workloads=[run(512, "unverified"), run(256, errors=("identity.gpu-count",))],
              mlperf=[mlperf(512, "not_comparable"), mlperf(512, "fail")],
              network=[sweep(64, 512, verdict="no_reference")])
    assert s.nodes is None and s.gpus is None and s.evidence == []
    assert s.summary.startswith("no counted result proves any part of the 64 nodes / 512 GPUs")
    s = scale(workloads=[run(128), run(512, "unverified")], mlperf=[mlperf(256, "pass")],
              network=[sweep(64, 512)])
    assert [(e.kind, e.nodes, e.gpus) for e in s.evidence] == [
        ("network", 64, 512), ("training", 16, 128), ("mlperf", 32, 256)]
    assert (s.nodes, s.gpus, s.share, s.fabric_proven) == (64, 512, 1.0, True)


def test_the_scorecard_states_the_scale_in_json_and_text() -> None:
    from cmax.cli.score_cmd import scorecard_text

    card = assess(SAMPLES / "borealis-cloud")
    assert card.scale is not None
    assert (card.scale.nodes, card.scale.claimed_nodes, card.scale.fabric_nodes) == (64, 64, 64)
    data = json.loads(card.model_dump_json())
    assert data["scale"]["fabric_proven"] is True and data["scale"]["share"] == 1.0
    assert Scorecard.model_validate(data).scale == card.scale  # a written card reads back
    assert any(line.startswith("  scale: proven at 64 of 64 nodes")
               for line in scorecard_text(card))
