"""The fabric is judged once, from the sweeps spanning the claimed system, and the fabric gate
reads that judgement: a deciding sweep an error names is not counted as a pass (an NCCL job
that fell back to sockets passes no fabric gate however fast its numbers), while a sweep an
error says is far below its fabric's class still fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.findings import Finding
from cmax.judgement.bearings import Bearings
from cmax.judgement.fabric import FabricScale, fabric_standing
from cmax.pipeline import assess
from cmax.scorecard import NetworkResult, Scorecard
from cmax.states import State
from tests.validate.validate_fakes import HonestBundle, nccl_rows


def _card(tmp_path: Path, **change: object) -> Scorecard:
    bundle = HonestBundle()
    bundle.system["interconnect"] = "infiniband-ndr-8x400"
    for name, value in change.items():
        setattr(bundle, name, value)
    return assess(bundle.write_bundle(tmp_path / "bundle"))


def _fabric(card: Scorecard) -> tuple[str, State, State | None, str | None]:
    gate = next(g for g in card.gates if g.id == "network_bar")
    judged = card.judgement("fabric", "fabric")
    assert judged is not None
    return gate.status, judged.state, judged.bar_state, judged.verdict


def test_an_honest_sweep_across_the_claimed_system_passes(tmp_path: Path) -> None:
    card = _card(tmp_path)
    assert [(n.nodes, n.verdict) for n in card.network] == [(64, "pass")]
    assert _fabric(card) == ("passed", State.EARNED, State.MET, "pass")


def test_a_sweep_over_sockets_passes_no_fabric_gate(tmp_path: Path) -> None:
    """nccl-tests at the fabric's bandwidth, but NCCL says it used sockets: the error names
    the one deciding sweep, so the fabric is contradicted and its pass withheld: the sweep is
    counted and does not pass, so the gate fails (it was passed on the sweep's own verdict
    before the gate read the judgement, then not evaluated while a contested sweep dropped
    out of the fabric)."""
    card = _card(tmp_path, nccl_info=("Using network Socket",))
    assert [(n.nodes, n.verdict) for n in card.network] == [(64, "pass")]
    status, state, bar, verdict = _fabric(card)
    assert (status, state, bar, verdict) == (
        "failed", State.CONTRADICTED, State.NOT_MET, "withheld")
    gate = next(g for g in card.gates if g.id == "network_bar")
    assert "withheld by network.socket-fallback" in gate.reason
    assert gate.binding_cap == "Gold"


def test_an_error_withholds_a_pass_never_a_fail(tmp_path: Path) -> None:
    """A sweep at a quarter of its fabric's class raises network.below-fabric (an error that
    names the sweep): the sweep still fails the bar and the gate fails."""
    bundle = HonestBundle()
    card = _card(tmp_path, nccl=nccl_rows(bundle.nccl_path or "", peak=100.0))
    assert [n.verdict for n in card.network] == ["fail"]
    assert _fabric(card) == ("failed", State.CONTRADICTED, State.NOT_MET, "fail")


def _sweep(nodes: int, ratio: float, verdict: str, file: str) -> NetworkResult:
    return NetworkResult(file=file, collective="all_reduce", ranks=8 * nodes, nodes=nodes,
                         large_message_bytes=1 << 33, busbw_gbps=368 * ratio,
                         max_busbw_gbps=368 * ratio, reference_busbw_gbps=368.0, ratio=ratio,
                         verdict=verdict)


@pytest.mark.parametrize(("sweeps", "verdict", "bar"), [
    ([("a", 1.0, "pass"), ("b", 0.95, "pass")], "pass", State.MET),
    ([("a", 1.0, "pass"), ("b", 0.80, "fail")], "fail", State.NOT_MET),
    ([("a", 1.0, "pass"), ("b", 0.90, "inconclusive")], "inconclusive", State.NOT_MET),
])
def test_every_deciding_sweep_must_pass(sweeps: list[tuple[str, float, str]], verdict: str,
                                        bar: State) -> None:
    deciding = [_sweep(64, r, v, f) for f, r, v in sweeps]
    standing = fabric_standing(FabricScale(deciding, "proven at 64 nodes", 0.9), Bearings([]))
    assert (standing.verdict, standing.bar_state) == (verdict, bar)


@pytest.mark.parametrize(("b", "verdict"), [((1.0, "pass"), "withheld"),
                                             ((0.80, "fail"), "fail")])
def test_a_contested_sweep_counts_as_not_passing(b: tuple[float, str], verdict: str) -> None:
    """Sweep b is named by an error (NCCL fell back to sockets): it is counted and does not
    pass, so it never drops out and leaves the fabric to sweep a; failing, it still fails."""
    deciding = [_sweep(64, 1.0, "pass", "a.txt"), _sweep(64, *b, "b.txt")]
    error = Finding(rule="network.socket-fallback", severity="error", file="b.txt",
                    message="NCCL used sockets", fix="use the fabric")
    standing = fabric_standing(FabricScale(deciding, "proven at 64 nodes", 0.9),
                               Bearings([error]))
    assert (standing.verdict, standing.bar_state) == (verdict, State.NOT_MET)
    if verdict == "withheld":
        assert "withheld by network.socket-fallback" in standing.reason


def test_no_deciding_sweep_leaves_the_fabric_not_evaluated() -> None:
    standing = fabric_standing(FabricScale((), "the gate needs at least 32 nodes", 0.9),
                               Bearings([]))
    assert (standing.verdict, standing.bar_state) == ("not_rated", State.NOT_EVALUATED)
    assert standing.reason == "the gate needs at least 32 nodes"
