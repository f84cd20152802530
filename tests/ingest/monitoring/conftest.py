"""One real Prometheus per test session, holding September and October 2026 of a 9-host
cluster with known outages (``CLUSTER``), for the tests that read a live server."""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ingest.monitoring.promserver import Node, backfill, binaries, openmetrics, serving

UTC = dt.UTC
SCRAPE_S = 300


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


# The truth the test series are written from. Outage edges fall between scrapes on purpose.
CLUSTER = [
    Node("gpu-000"),
    Node("gpu-001", down=[(at("2026-10-03T10:03:20"), at("2026-10-03T22:33:20"))]),
    Node("gpu-002", dcgm=at("2026-10-20T00:00:00"),
         gpu_lost=[(7, (at("2026-10-25T00:00:00"), at("2026-10-26T00:00:00")))],
         xid=[(7, at("2026-10-24T23:55:00"), 79)]),
    Node("gpu-003", down=[(at("2026-09-05T04:00:00"), at("2026-09-05T08:00:00")),
                          (at("2026-10-28T02:00:00"), at("2026-10-28T04:00:00"))]),
    Node("gpu-004", down=[(at("2026-10-12T01:10:00"), at("2026-10-13T19:10:00"))]),
    Node("gpu-005", unscraped=[(at("2026-10-15T00:00:00"), at("2026-10-19T00:00:00"))]),
    Node("gpu-006", down=[(at("2026-10-20T08:00:00"), at("2026-10-20T08:30:00"))]),
    Node("gpu-007"),
    Node("login-01"),
]
START, END = at("2026-09-01T00:00:00"), at("2026-11-01T00:00:00")


def _blocks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The backfilled TSDB, built once per run: pytest-xdist workers share it (the first
    builds it under a lock, the rest wait) since promtool takes a minute over two months."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = shared / "prometheus-blocks" / "data"
    with (shared / "prometheus-blocks.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_dir():
            building = shared / "prometheus-blocks-building"
            shutil.rmtree(building, ignore_errors=True)
            building.mkdir()
            backfill(openmetrics(CLUSTER, START, END, SCRAPE_S), building / "data")
            building.rename(done.parent)
    return done


@pytest.fixture(scope="session")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binaries()
    root: Path = tmp_path_factory.mktemp("prometheus")
    shutil.copytree(_blocks(tmp_path_factory), root / "data")  # a server writes to its dir
    with serving(root / "data") as url:
        yield url
