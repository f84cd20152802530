"""Interruption rates, MTBF, E[ETTR] and SLA credits, pinned on hand-computed cases."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

import pytest

from cmax.score.reliability import credit_for, expected_ettr, reliability_result, sla_result
from cmax.scorecard import ReliabilityResult, SlaResult
from cmax.submission.manifest import Manifest
from tests.fakes import FakeReference
from tests.score.score_fakes import (
    LLAMA3_PER_GPU_HOUR,
    evidence,
    incident,
    manifest,
)

SYSTEM_512 = {"gpu": "h100-sxm", "nodes": 64, "gpus_per_node": 8,
              "interconnect": "infiniband-ndr-8x400"}
TIERS = [[99.9, 10], [99.0, 25], [95.0, 100]]


def _fleet(nodes: int, start: dt.date, end: dt.date, gpus: int, *, sla: bool = False,
           job_gpus: int | None = None) -> Manifest:
    """An H100 system of ``nodes`` nodes whose incident log covers ``start`` to ``end`` on
    ``gpus`` GPUs in service; with ``sla``, a 99.9 % uptime contract on the TIERS credits."""
    reliability: dict[str, object] = {"incidents": "i.csv", "period_start": start,
                                      "period_end": end, "gpus_in_service": gpus}
    if job_gpus is not None:
        reliability["job_gpus"] = job_gpus
    return manifest(system={**SYSTEM_512, "nodes": nodes}, reliability=reliability,
                    sla={"uptime_pct": 99.9, "credits": TIERS} if sla else None)



def test_llama3_reproduces_its_own_figures() -> None:
    # 16,384 GPUs for 54 days (2024-01-01..2024-02-23 inclusive), 419 unexpected + 47 planned
    # spread over both months: a log recording nothing in a month is not rated over it
    rows = [incident(f"2024-0{1 + i % 2}-10T00:00:00", f"2024-0{1 + i % 2}-10T01:00:00", f"n{i}")
            for i in range(419)]
    rows += [incident("2024-01-11T00:00:00", "2024-01-11T01:00:00", "m", planned=True)] * 47
    m = _fleet(2048, dt.date(2024, 1, 1), dt.date(2024, 2, 23), 16384, job_gpus=16384)
    r = reliability_result(evidence(m, incidents=rows), FakeReference())
    assert r is not None
    assert r.gpu_days == 16384 * 54
    assert (r.unexpected_interruptions, r.planned_interruptions) == (419, 47)
    # 419 / 884,736 GPU-days × 1,000 = 0.4735876; MTBF = 21,233,664 GPU-h / 419 = 50,677.002
    assert r.per_1000_gpu_days == pytest.approx(0.4735876, abs=1e-7)
    assert r.mtbf_gpu_hours == pytest.approx(50677.002, abs=1e-3)
    assert r.ratio_vs_reference == pytest.approx(1.0)
    # E[ETTR] for the whole 16,384-GPU job, 30-min checkpoints, 15-min restarts:
    # job rate = 419 / (54 × 24) = 0.323302 /h; lost = 0.323302 × (0.25 + 0.25) = 0.161651
    assert r.ettr == pytest.approx(1 - 419 / 1296 / 2, abs=1e-6)
    assert r.ettr == pytest.approx(0.838349, abs=1e-6)
    assert r.goodput_ratio == 1.0
    assert len(r.incident_series) == 54 and sum(n for _, n in r.incident_series) == 419


def test_small_cluster_hand_computation() -> None:
    # 512 GPUs, June 2026 (30 days): 3 unexpected interruptions, 1 planned
    rows = [incident("2026-06-02T10:00:00", "2026-06-02T11:00:00"),
            incident("2026-06-10T10:00:00", "2026-06-10T10:30:00"),
            incident("2026-06-20T10:00:00", "2026-06-20T10:10:00"),
            incident("2026-06-21T02:00:00", "2026-06-21T06:00:00", planned=True),
            incident("2026-07-02T10:00:00", "2026-07-02T11:00:00")]  # outside the period
    m = _fleet(64, dt.date(2026, 6, 1), dt.date(2026, 6, 30), 512)
    r = reliability_result(evidence(m, incidents=rows), FakeReference())
    assert r is not None
    assert r.gpu_days == 15360 and r.unexpected_interruptions == 3
    assert r.per_1000_gpu_days == pytest.approx(0.1953125)  # 3 / 15,360 × 1,000
    assert r.mtbf_gpu_hours == pytest.approx(122880.0)  # 368,640 GPU-h / 3
    assert r.ratio_vs_reference == pytest.approx(0.1953125 / 0.4735875, rel=1e-5)
    # job = 512 GPUs (64 × 8). Provider job rate = 512 × 3 / 368,640 = 1/240 per hour
    assert r.job_gpus == 512
    assert r.ettr == pytest.approx(1 - 0.5 / 240, abs=1e-6)          # 0.997917
    # reference job rate = 512 × 419 / 21,233,664 = 419 / 41,472 per hour
    assert r.reference_ettr == pytest.approx(1 - 0.5 * 419 / 41472, abs=1e-6)  # 0.994948
    assert r.goodput_ratio == pytest.approx((1 - 0.5 / 240) / (1 - 0.5 * 419 / 41472), abs=1e-6)
    assert any("outside the period" in n for n in r.notes)


def test_expected_ettr_formula() -> None:
    # 1,024 GPUs at the Llama 3 rate, 60-min checkpoints, 5-min restarts
    lam = 1024 * LLAMA3_PER_GPU_HOUR
    expected = 1 - lam * (5 / 60 + 0.5)
    assert expected_ettr(1024, LLAMA3_PER_GPU_HOUR, 60, 5) == pytest.approx(expected)
    assert expected_ettr(10**9, 1.0, 60, 5) == 0.0  # clamped where the model breaks down


def test_no_reliability_section_gives_none() -> None:
    assert reliability_result(evidence(manifest()), FakeReference()) is None
    assert sla_result(evidence(manifest()), FakeReference()) is None


@pytest.mark.parametrize(("uptime", "credit"), [
    (100.0, 0.0), (99.9, 0.0), (99.89, 10.0), (99.0, 10.0), (98.99, 25.0), (95.0, 25.0),
    (94.99, 100.0),
])
def test_credit_tiers(uptime: float, credit: float) -> None:
    assert credit_for(uptime, [(99.9, 10.0), (99.0, 25.0), (95.0, 100.0)]) == credit


def test_sla_per_node_month() -> None:
    # 2 nodes (16 GPUs), June 2026 = 720 h. Node n1 down 10 h → 98.6111 % (credit 25 %);
    # n2's 4-h planned maintenance is excluded; n2 up 100 %.
    rows = [incident("2026-06-05T00:00:00", "2026-06-05T06:00:00", "n1"),
            incident("2026-06-05T04:00:00", "2026-06-05T10:00:00", "n1"),  # overlaps: merged
            incident("2026-06-08T00:00:00", "2026-06-08T04:00:00", "n2", planned=True)]
    m = _fleet(2, dt.date(2026, 6, 1), dt.date(2026, 6, 30), 16, sla=True)
    s = sla_result(evidence(m, incidents=rows), FakeReference())
    assert s is not None
    assert s.node_hours == 1440 and s.downtime_node_hours == pytest.approx(10.0)
    assert s.measured_uptime_pct == pytest.approx(100 * (1 - 10 / 1440), abs=1e-6)  # 99.3056
    assert s.credit_pct == pytest.approx(12.5)  # 25 % on one of two equal node-months
    assert not s.met and s.node_months == 2 and s.node_months_below == 1
    assert s.worst_uptime_pct == pytest.approx(100 * (1 - 10 / 720), abs=1e-6)


def test_sla_splits_downtime_across_months() -> None:
    # one node, 2026-06-15..2026-07-14: June part 384 h, July part 336 h. 8 h down across
    # midnight 30 Jun → 4 h in each: 98.958 % and 98.810 %, both credit 25 %.
    rows = [incident("2026-06-30T20:00:00", "2026-07-01T04:00:00", "n1")]
    m = _fleet(1, dt.date(2026, 6, 15), dt.date(2026, 7, 14), 8, sla=True)
    s = sla_result(evidence(m, incidents=rows), FakeReference())
    assert s is not None
    assert s.node_months == 2 and s.node_months_below == 2
    assert s.worst_uptime_pct == pytest.approx(100 * (1 - 4 / 336), abs=1e-6)
    assert s.credit_pct == pytest.approx(25.0)
    assert s.measured_uptime_pct == pytest.approx(100 * (1 - 8 / 720), abs=1e-6)


def test_sla_met_and_open_ended_incidents() -> None:
    rows = [incident("2026-06-05T00:00:00", "2026-06-05T00:30:00", "n1")]  # 99.93 %: met
    m = _fleet(4, dt.date(2026, 6, 1), dt.date(2026, 6, 30), 32, sla=True)
    s = sla_result(evidence(m, incidents=rows), FakeReference())
    assert s is not None
    assert s.met and s.credit_pct == 0.0 and s.node_months == 4
    # no end time: down until the end of the period (the worst case), never "no downtime"
    s = sla_result(evidence(m, incidents=[*rows, incident("2026-06-06T00:00:00", None, "n2")]),
                   FakeReference())
    assert s is not None and not s.met
    assert s.worst_uptime_pct == pytest.approx(100 * 5 / 30, abs=1e-6)  # up 1-5 June only
    assert s.credit_pct == pytest.approx(25.0)  # 100 % on one of four equal node-months
    assert any("without a usable end time: the worst case is assumed" in n for n in s.notes)


def test_a_reliability_baseline_without_a_rate_is_a_reference_data_error() -> None:
    from cmax.errors import ReferenceDataError
    from cmax.score.reliability import reference_rate

    with pytest.raises(ReferenceDataError, match="no usable rate"):
        reference_rate({"source": "broken"})


def _month_of_faults(**changes: Mapping[str, object]
                     ) -> tuple[SlaResult | None, ReliabilityResult | None]:
    """512 GPUs, July 2026, three 1-hour GPU faults on n1-n3, 99.9 % contracted; ``changes``
    edits incident i (by node name)."""
    rows = [incident("2026-07-05T00:00:00", "2026-07-05T01:00:00", f"n{i}", line=i + 1)
            for i in (1, 2, 3)]
    rows = [{**r, **changes.get(str(r["node"]), {})} for r in rows]
    m = _fleet(64, dt.date(2026, 7, 1), dt.date(2026, 7, 31), 512, sla=True)
    ev = evidence(m, incidents=rows)
    return sla_result(ev, FakeReference()), reliability_result(ev, FakeReference())


def test_tampered_incidents_never_lower_the_credit_owed() -> None:
    """issue 26: moved out of the period, relabelled planned or without an end time, the three
    faults cut the credit owed from $3,749.76 to $0 and marked the SLA met."""
    honest, _ = _month_of_faults()
    assert honest is not None and honest.node_months_below == 3 and not honest.met
    shifted = {"start": dt.datetime(2026, 6, 30, 23, 0, tzinfo=dt.UTC)}  # starts 1 h early
    relabelled = {"planned": True, "description": "Xid 79: GPU has fallen off the bus"}
    open_ended = {"end": None}
    for change in (relabelled, open_ended, shifted):
        s, r = _month_of_faults(n1=change, n2=change, n3=change)
        assert s is not None and r is not None
        assert not s.met and s.credit_pct >= honest.credit_pct, change
        assert r.unexpected_interruptions == 3, change
    s, _ = _month_of_faults(n1=open_ended)
    assert s is not None and any("worst case" in n for n in s.notes)
    s, r = _month_of_faults(n1=relabelled)
    assert s is not None and r is not None
    assert any("hardware fault counted as unexpected" in n for n in r.notes)
    moved = {"start": dt.datetime(2026, 8, 5, tzinfo=dt.UTC),
             "end": dt.datetime(2026, 8, 5, 1, tzinfo=dt.UTC)}
    _, r = _month_of_faults(n3=moved)  # really outside: not counted, and said
    assert r is not None and r.unexpected_interruptions == 2
    assert any("outside the period not counted (line 4)" in n for n in r.notes)


def test_a_fleet_larger_than_the_evidence_is_not_believed() -> None:
    """gpus_in_service = 100000 on a 512-GPU system whose incidents name 10 nodes made the
    MTBF 195x better."""
    rows = [incident(f"2026-07-{d:02d}T00:00:00", f"2026-07-{d:02d}T01:00:00", f"n{d % 10}")
            for d in range(1, 31)]

    def rel(gpus: int) -> ReliabilityResult | None:
        m = _fleet(64, dt.date(2026, 7, 1), dt.date(2026, 7, 31), gpus)
        return reliability_result(evidence(m, incidents=rows), FakeReference())

    honest, inflated = rel(512), rel(100_000)
    assert honest is not None and inflated is not None
    assert inflated.gpus_in_service == 512 and inflated.mtbf_gpu_hours == honest.mtbf_gpu_hours
    assert any("gpus_in_service = 100,000 is more than the evidence shows" in n
               for n in inflated.notes)


def test_a_log_covering_part_of_the_period_is_rated_over_what_it_covers() -> None:
    """A six-month period with a log of August only made the interruption rate 6x lower."""
    rows = [incident(f"2026-08-{d:02d}T00:00:00", f"2026-08-{d:02d}T01:00:00", f"n{d}")
            for d in range(1, 13)]

    def rel(start: dt.date, end: dt.date) -> ReliabilityResult | None:
        m = _fleet(64, start, end, 512)
        return reliability_result(evidence(m, incidents=rows), FakeReference())

    august = rel(dt.date(2026, 8, 1), dt.date(2026, 8, 31))
    half_year = rel(dt.date(2026, 6, 1), dt.date(2026, 11, 30))
    assert august is not None and half_year is not None
    assert half_year.per_1000_gpu_days == august.per_1000_gpu_days
    assert half_year.gpu_days == 512 * 31
    assert any("records nothing in 5 of the period's 6 months" in n for n in half_year.notes)
