"""A real Prometheus holding a month of node series with known outages, read through cmax.

The series are written from ``CLUSTER`` (tests/ingest/monitoring/conftest.py), backfilled with
promtool and served by Debian's prometheus; cmax asks it over HTTP as it would a buyer's
server. Downtime and breaches must come back to within one scrape step of the truth, and the
outage the incident log leaves out must be named.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from cmax.errors import MonitoringError
from cmax.ingest.monitoring.witness import span_hours
from cmax.pipeline import assess
from tests.fakes import manifest_text
from tests.ingest.monitoring.conftest import CLUSTER, SCRAPE_S, at
from tests.ingest.monitoring.promserver import free_port

pytestmark = pytest.mark.slow

OCTOBER_LOG = """start,end,node,gpu,category,planned,description
2026-10-03T10:03:20Z,2026-10-03T22:33:20Z,gpu-001,,Host,false,kernel panic
2026-10-20T08:00:00Z,2026-10-20T08:10:00Z,gpu-006,,NIC,false,link flap
2026-10-28T02:00:00Z,2026-10-28T04:00:00Z,gpu-003,,Host Maintenance,true,firmware update \
announced 2026-10-21
"""
SLA = "[sla]\nuptime_pct = 99.9\ncredits = [[99.9, 10], [99.0, 25], [95.0, 100]]\n"


def bundle(root: Path, url: str, *, log: str = OCTOBER_LOG, month: str = "10",
           last: int = 31, monitoring: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "incidents.csv").write_text(log)
    (root / "cmax.toml").write_text(manifest_text(
        f'[reliability]\nincidents = "incidents.csv"\nperiod_start = 2026-{month}-01\n'
        f"period_end = 2026-{month}-{last}\ngpus_in_service = 64\n\n"
        f'[monitoring]\nprometheus = "{url}"\n{monitoring}\n{SLA}',
        nodes=8, date=f"2026-{month}-15"))
    return root


def truth_hours(host: str, lo: dt.datetime, hi: dt.datetime) -> float:
    node = next(n for n in CLUSTER if n.host == host)
    return span_hours(node.down, lo, hi)


def test_a_month_of_node_series_recovers_downtime_breaches_and_the_unlogged_outage(
        tmp_path: Path, prometheus_url: str) -> None:
    card = assess(bundle(tmp_path / "oct", prometheus_url))
    sla = card.sla
    assert sla is not None
    step_h = SCRAPE_S / 3600
    lo, hi = at("2026-10-01T00:00:00"), at("2026-11-01T00:00:00")
    # the log's own downtime: gpu-001 12.5 h and gpu-006 10 min (planned maintenance excluded)
    assert sla.downtime_node_hours_log == pytest.approx(12.5 + 10 / 60)
    # the monitoring: gpu-001 12.5 h, gpu-004 42 h, gpu-006 0.5 h; gpu-003's announced
    # maintenance removed; gpu-005's four unscraped days are not downtime
    expected = sum(truth_hours(h, lo, hi) for h in ("gpu-001", "gpu-004", "gpu-006"))
    assert expected == pytest.approx(55.0)
    assert sla.downtime_node_hours_monitoring == pytest.approx(expected, abs=3 * step_h)
    assert sla.downtime_node_hours == pytest.approx(expected, abs=3 * step_h)
    assert sla.witness == "both" and sla.monitoring_resolution_s == 60  # [monitoring] step_s
    # gpu-004 (94.4 %) and gpu-001 (98.3 %) miss 99.9 %; gpu-006 (99.93 %) meets it
    assert sla.nodes_in_breach == ["gpu-001", "gpu-004"]
    assert not sla.met and sla.node_months == 8 and sla.node_months_below == 2
    assert sla.worst_uptime_pct == pytest.approx(100 * (1 - 42 / 744), abs=100 * step_h / 744)
    # credit: 100 % for gpu-004's month, 25 % for gpu-001's, over 8 node-months
    assert sla.credit_pct == pytest.approx((100 + 25) / 8)
    assert sla.unlogged_outages == 1
    # the interruption rate counts gpu-004's outage too, over the whole month
    rel = card.reliability
    assert rel is not None and rel.unexpected_interruptions == 3 and rel.gpu_days == 64 * 31
    notes = " ".join(sla.notes)
    assert "1 node-month(s) more than 10% unwitnessed" in notes  # gpu-005
    assert "1 host(s) the monitoring names but no other evidence" in notes  # login-01
    assert "node-hours with fewer GPUs reporting" in notes and "not counted" in notes

    found = {f.rule: f for f in card.findings}
    unlogged = found["reliability.outage-not-in-log"]
    assert "gpu-004" in unlogged.message and "2026-10-12 01:10" in unlogged.message
    shortened = found["reliability.outage-ended-early-in-log"]
    assert "gpu-006" in shortened.message and "08:10" in shortened.message
    assert shortened.line == 3
    xid = found["reliability.xid-not-in-log"]
    assert "gpu-002" in xid.message and "Xid 79" in xid.message
    assert "login-01" in found["reliability.monitoring-outside-cluster"].message
    assert "gpu-005" in found["reliability.monitoring-gaps"].message


def test_a_log_that_records_every_outage_is_clean_and_credits_the_same(
        tmp_path: Path, prometheus_url: str) -> None:
    """The honest control: the log records all four outages with their real ends and the
    GPU fault; nothing is said against it, and the credit is what the monitoring shows."""
    honest = OCTOBER_LOG.replace("2026-10-20T08:10:00Z", "2026-10-20T08:30:00Z") + (
        "2026-10-12T01:10:00Z,2026-10-13T19:10:00Z,gpu-004,,Host,false,PSU failure\n"
        "2026-10-24T23:55:00Z,2026-10-26T00:00:00Z,gpu-002,7,Faulty GPU,false,"
        "Xid 79 GPU fell off the bus\n")
    card = assess(bundle(tmp_path / "oct", prometheus_url, log=honest))
    rules = {f.rule for f in card.findings}
    assert not rules & {"reliability.outage-not-in-log", "reliability.outage-ended-early-in-log",
                        "reliability.xid-not-in-log"}
    assert card.sla is not None and card.sla.unlogged_outages == 0
    assert card.sla.nodes_in_breach == ["gpu-001", "gpu-002", "gpu-004"]


def test_gpu_faults_count_where_the_contract_counts_them(tmp_path: Path,
                                                         prometheus_url: str) -> None:
    root = bundle(tmp_path / "oct", prometheus_url)
    text = (root / "cmax.toml").read_text().replace("[sla]\n", "[sla]\ncounts_gpu_faults = true\n")
    (root / "cmax.toml").write_text(text)
    sla = assess(root).sla
    assert sla is not None and "gpu-002" in sla.nodes_in_breach
    assert sla.downtime_node_hours_monitoring == pytest.approx(55.0 + 24.0,
                                                               abs=4 * SCRAPE_S / 3600)


def test_a_period_with_no_samples_is_not_assessed_by_the_monitoring(
        tmp_path: Path, prometheus_url: str) -> None:
    card = assess(bundle(tmp_path / "jul", prometheus_url, log=OCTOBER_LOG.splitlines()[0] + "\n"
                         "2026-07-09T01:00:00Z,2026-07-09T02:00:00Z,gpu-001,,Host,false,reboot\n",
                         month="07"))
    assert card.sla is not None and card.sla.witness == "incident log"
    assert card.sla.downtime_node_hours_monitoring is None
    assert any("monitoring not assessed" in n for n in card.sla.notes)
    assert "reliability.monitoring-not-assessed" in {f.rule for f in card.findings}


def test_a_query_prometheus_refuses_is_one_error(tmp_path: Path, prometheus_url: str) -> None:
    root = bundle(tmp_path / "oct", prometheus_url, monitoring='up = "up{job=\\"node\\""\n')
    with pytest.raises(MonitoringError, match="Prometheus refused the query: bad_data"):
        assess(root)


def test_an_unreachable_prometheus_is_one_error_not_the_incident_log(tmp_path: Path) -> None:
    root = bundle(tmp_path / "oct", f"http://127.0.0.1:{free_port()}")
    with pytest.raises(MonitoringError, match="Prometheus unreachable"):
        assess(root)
