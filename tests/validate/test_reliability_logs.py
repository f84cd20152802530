"""The incident log against the training logs' clocks and the benchmark's dates: each rule's
trip is in TRIPS (test_validate_rules.py); here the honest variants that must stay clean."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cmax.resolve.incident_review import review_incidents
from cmax.validate import validate
from tests.fakes import FakeReference
from tests.validate.reliability_fakes import restarted_run
from tests.validate.validate_fakes import HonestBundle

RULES = {"reliability.restart-not-in-log", "reliability.outage-ends-before-resume",
         "reliability.period-away-from-evidence", "reliability.planned-without-announcement"}


def fired(bundle: HonestBundle, root: Path) -> set[str]:
    return {f.rule for f in validate(bundle.ingest(root), FakeReference())} & RULES


def test_a_restart_the_log_records_to_its_resume_is_clean(tmp_path: Path) -> None:
    bundle = HonestBundle()
    restarted_run(logged=(5, 125))(bundle)  # down 2 h; the row ends 5 min after the resume
    assert fired(bundle, tmp_path) == set()


def test_a_row_ending_within_restart_min_of_the_resume_is_clean(tmp_path: Path) -> None:
    bundle = HonestBundle()
    restarted_run(logged=(2, 110))(bundle)  # ends 10 min before the resume; restart_min 15
    assert fired(bundle, tmp_path) == set()


def test_an_outage_ended_early_is_counted_to_the_resume(tmp_path: Path) -> None:
    bundle = HonestBundle()
    restarted_run(logged=(5, 30))(bundle)
    review = review_incidents(bundle.ingest(tmp_path))
    assert review is not None and len(review.ended_before_resume) == 1
    restart, _, logged = review.ended_before_resume[0]
    counted = review.counted.filter(review.counted["line"] == 6)["end"][0]
    assert counted == restart.resumed - dt.timedelta(minutes=15)
    # logged 30 min after the first attempt's last step; the job was back 2 h after it
    assert dt.timedelta(minutes=75) <= counted - logged <= dt.timedelta(minutes=77)


def test_a_benchmark_date_within_a_month_of_the_period_is_clean(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.manifest_extra["benchmark"] = {"date": dt.date(2026, 10, 28), "reference": "latest"}
    assert fired(bundle, tmp_path) == set()  # the period ends 2026-09-30: 28 days before


def test_announced_maintenance_stays_planned(tmp_path: Path) -> None:
    review = review_incidents(HonestBundle().ingest(tmp_path))
    assert review is not None and review.unannounced.height == 0
    assert review.counted["planned"].sum() == 3


def test_hosts_only_the_incident_log_names_do_not_dilute_the_sla(tmp_path: Path) -> None:
    """A log padded with 100 hosts of the cluster's naming scheme (node-100..node-199), each
    down a minute, spreads no downtime over more node-hours: the SLA keeps the 64 nodes the
    evidence names, so the credit owed for node-036's outage does not shrink."""
    from cmax.score.reliability import sla_result

    def card(pad: bool, root: Path) -> tuple[float, float]:
        bundle = HonestBundle(manifest_extra={"sla": {"uptime_pct": 99.9,
                                                      "credits": [[99.9, 10], [99.0, 25]]}})
        rows = bundle.incident_rows()
        rows[0] = {**rows[0], "end": rows[0]["start"] + dt.timedelta(hours=12)}
        if pad:
            rows += [{**rows[0], "node": f"node-{100 + i}", "line": 10 + i,
                      "end": rows[0]["start"] + dt.timedelta(minutes=1)} for i in range(100)]
        bundle.incidents = rows
        sla = sla_result(bundle.ingest(root), FakeReference())
        assert sla is not None
        return sla.node_hours, sla.credit_pct

    honest, padded = card(False, tmp_path / "a"), card(True, tmp_path / "b")
    assert padded == honest
    assert honest[0] == 64 * (31 + 31 + 30) * 24  # July to September, 64 nodes


def test_a_restart_the_log_leaves_out_is_an_interruption(tmp_path: Path) -> None:
    from cmax.score.reliability import reliability_result

    def interruptions(logged: tuple[int, int] | None, root: Path) -> int:
        bundle = HonestBundle()
        restarted_run(logged=logged)(bundle)
        rel = reliability_result(bundle.ingest(root), FakeReference())
        assert rel is not None
        return rel.unexpected_interruptions

    # the honest log's one fault, plus the restart: as a row of its own or, left out, counted
    assert interruptions((5, 125), tmp_path / "a") == interruptions(None, tmp_path / "b") == 2
