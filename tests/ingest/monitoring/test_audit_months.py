"""``cmax audit`` over two months of one cluster, each month's bundle naming the same real
Prometheus: each period is pulled once, when its run is scored, and recorded in the history
with what its SLA rests on."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cmax.history.audit import run_audit
from cmax.history.store import HistoryStore
from cmax.scorecard import Scorecard
from tests.ingest.monitoring.test_prometheus_live import OCTOBER_LOG, bundle

pytestmark = pytest.mark.slow

SEPTEMBER_LOG = ("start,end,node,gpu,category,planned,description\n"
                 "2026-09-05T04:00:00Z,2026-09-05T08:00:00Z,gpu-003,,Host,false,PSU swap\n")


def test_an_audit_over_two_months_records_both_periods_once(tmp_path: Path,
                                                            prometheus_url: str) -> None:
    root = tmp_path / "runs"
    bundle(root / "example-h100-a" / "2026-09-30", prometheus_url, log=SEPTEMBER_LOG,
           month="09", last=30)
    bundle(root / "example-h100-a" / "2026-10-31", prometheus_url, log=OCTOBER_LOG)
    result = run_audit(root, executor="local", workers=1)
    assert len(result.scored) == 2
    runs = (HistoryStore(root / ".cmax-history").read()
            .filter(pl.col("row_kind") == "run").sort("period_start"))
    assert [str(d) for d in runs["period_start"]] == ["2026-09-01", "2026-10-01"]
    assert runs["sla_witness"].to_list() == ["both", "both"]
    september, october = runs["sla_downtime_monitoring_h"].to_list()
    assert september == pytest.approx(4.0, abs=2 * 300 / 3600)  # gpu-003, logged
    assert october == pytest.approx(55.0, abs=3 * 300 / 3600)
    assert runs["sla_unlogged_outages"].to_list() == [0, 1]
    assert runs["sla_nodes_in_breach"].to_list() == [["gpu-003"], ["gpu-001", "gpu-004"]]
    assert runs["sla_met"].to_list() == [False, False]
    breaches = [i.message for i in result.items if i.kind == "sla_breach"]
    assert any("nodes in breach: gpu-001, gpu-004; witness: both (1 outage(s)" in m
               for m in breaches), breaches

    def never(path: Path) -> Scorecard:
        raise AssertionError(f"{path} scored (and its period pulled) a second time")

    again = run_audit(root, assess=never)
    assert again.scored == [] and again.already_recorded == 2
