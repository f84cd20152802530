"""One real Prometheus per test session, holding September and October 2026 of a 9-host
cluster with known outages (``CLUSTER``), for the tests that read a live server."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.monitoring.promserver import Node, backfill, binaries, openmetrics, serving

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


@pytest.fixture(scope="session")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binaries()
    root: Path = tmp_path_factory.mktemp("prometheus")
    data = root / "data"
    backfill(openmetrics(CLUSTER, START, END, SCRAPE_S), data)
    with serving(data) as url:
        yield url
