"""The history on object storage: an S3-compatible server (moto) on 127.0.0.1, no network.

The store reads its credentials, region and endpoint from the standard AWS environment
variables, as every AWS tool does, so the tests only set those.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.history import HistoryStore, run_audit
from tests.history.history_fakes import fake_assess, write_run

WL = [["llama3.1-70b", "fp8", 512, 1.0, 0.99, 1.01]]


def _serve(conn: Any) -> None:
    """Child process: a moto S3 server on a free port; reports the port, stops when told."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    conn.send(server.get_host_and_port()[1])
    conn.recv()
    server.stop()


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1, with the AWS variables pointing at it.

    It runs in its own process: some delta-rs calls (``history()``) wait on the network
    while holding the GIL, which would stall a server thread in this process.
    """
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("moto.server")
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    try:
        if not parent.poll(60):
            pytest.fail("the moto S3 server did not start")
        endpoint = f"http://127.0.0.1:{parent.recv()}"
        with pytest.MonkeyPatch.context() as env:
            for key, value in {"AWS_ACCESS_KEY_ID": "testing",
                               "AWS_SECRET_ACCESS_KEY": "testing",
                               "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
                               "AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true"}.items():
                env.setenv(key, value)
            env.delenv("AWS_PROFILE", raising=False)
            boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="audits")
            yield "s3://audits"
    finally:
        parent.send("stop")
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join()


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    for cluster in ("east", "west"):
        for month in range(1, 4):
            write_run(root, cluster, f"2026-{month:02d}-01", workloads=WL)
    return root


def test_an_audit_records_to_s3_and_travels_back(s3: str, tmp_path: Path) -> None:
    root, uri = _root(tmp_path), f"{s3}/fleet-history"
    first = run_audit(root, uri, assess=fake_assess, workers=1)
    assert len(first.scored) == 6 and first.history_path == uri
    assert not (root / ".cmax-history").exists()
    write_run(root, "east", "2026-04-01", workloads=[["llama3.1-70b", "fp8", 512, 0.9, 0.89,
                                                      0.91]])
    second = run_audit(root, uri, assess=fake_assess, workers=1)
    assert [r.run_dir for r in second.scored] == ["2026-04-01"]
    assert [i.kind for i in second.items] == ["regression_vs_previous"]
    assert run_audit(root, uri, assess=fake_assess, workers=1).scored == []
    then = run_audit(root, uri, assess=fake_assess, history_version=first.history_version)
    assert then.history.filter(pl.col("row_kind") == "run").height == 6
    assert then.items == []
    now = HistoryStore(uri)
    assert now.version() == second.history_version
    assert now.resolve_as_of(dt.datetime.now(dt.UTC)) == second.history_version


def _audit(root: str, uri: str) -> int:
    return len(run_audit(root, uri, assess=fake_assess, batch_runs=1, workers=1).scored)


def test_two_concurrent_audits_on_s3_record_each_run_once(s3: str, tmp_path: Path) -> None:
    root, uri = _root(tmp_path), f"{s3}/concurrent"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        scored = pool.starmap(_audit, [(str(root), uri), (str(root), uri)])
    assert sum(scored) == 6
    runs = HistoryStore(uri).read().filter(pl.col("row_kind") == "run")
    assert runs.height == 6
    assert runs.select("cluster", "run_dir").is_duplicated().sum() == 0


def _first_append(uri: str, root: str, barrier: Any) -> int:
    """A first-time writer: its runs scored, it waits for the other, then records them."""
    from cmax.history.discover import discover_runs
    from cmax.history.store import rows_for_run

    runs, _ = discover_runs(Path(root))
    batch = [(run, rows_for_run(run, fake_assess(run.path))) for run in runs]
    store = HistoryStore(uri)
    barrier.wait()
    return len(store.append(batch))


def _table_ids(uri: str) -> set[str]:
    import json

    import boto3

    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    client = boto3.client("s3")
    ids = set()
    for item in client.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/_delta_log/")["Contents"]:
        if item["Key"].endswith(".json"):
            body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read().decode()
            ids |= {json.loads(line)["metaData"]["id"] for line in body.splitlines()
                    if "metaData" in json.loads(line)}
    return ids


def test_concurrent_first_writers_on_s3_make_one_table_and_lose_no_row(
        s3: str, tmp_path: Path) -> None:
    """Two writers that both find no table both commit version 0; delta-rs used to retry the
    loser's as version 1 with its own metadata: two table ids in 3 of 6 races."""
    roots = []
    for cluster in ("east", "west"):
        root = tmp_path / cluster
        for month in range(1, 3):
            write_run(root, cluster, f"2026-{month:02d}-01", workloads=WL)
        roots.append(str(root))
    ctx = multiprocessing.get_context("spawn")
    for attempt in range(4):
        uri = f"{s3}/first-{attempt}"
        barrier = ctx.Manager().Barrier(2)
        with ctx.Pool(2) as pool:
            written = pool.starmap(_first_append, [(uri, root, barrier) for root in roots])
        assert written == [2, 2], f"attempt {attempt}"
        assert len(_table_ids(uri)) == 1, f"attempt {attempt}"
        runs = HistoryStore(uri).read().filter(pl.col("row_kind") == "run")
        assert sorted(zip(runs["cluster"], runs["run_dir"], strict=True)) == [
            (c, f"2026-{m:02d}-01") for c in ("east", "west") for m in (1, 2)]
