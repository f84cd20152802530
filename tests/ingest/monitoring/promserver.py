"""A real Prometheus for tests: OpenMetrics text backfilled with promtool, served on loopback.

Nothing here imitates Prometheus: the test writes node series in the OpenMetrics text format
(openmetrics.io; ``# TYPE``, ``name{labels} value timestamp``, ``# EOF``), Debian's
``promtool tsdb create-blocks-from openmetrics`` turns it into TSDB blocks, and Debian's
``prometheus`` serves them on a free loopback port until the test stops it. CI installs both
(``tools/install-system-deps.sh --tests``); elsewhere the tests skip when the binaries are
absent, and fail in CI (``CI`` set) so a missing package is never a silent pass.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

Span = tuple[dt.datetime, dt.datetime]


def binaries() -> tuple[str, str]:
    """(prometheus, promtool), or skip (fail in CI) naming the package to install."""
    prom, tool = shutil.which("prometheus"), shutil.which("promtool")
    if prom and tool:
        return prom, tool
    reason = ("Debian's prometheus package (prometheus, promtool) is not installed: "
              "bash tools/install-system-deps.sh --tests")
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the real-Prometheus tests: {reason}")
    pytest.skip(reason)


@dataclass
class Node:
    """One node's series: down and unscraped spans; GPUs lost (a DCGM GPU series stopping)
    and Xid codes raised, for nodes with a DCGM exporter."""

    host: str
    down: list[Span] = field(default_factory=list)
    unscraped: list[Span] = field(default_factory=list)
    dcgm: dt.datetime | None = None
    """when its DCGM exporter was deployed (None: never)"""
    gpu_lost: list[tuple[int, Span]] = field(default_factory=list)
    xid: list[tuple[int, dt.datetime, int]] = field(default_factory=list)


def _inside(t: float, spans: Iterable[Span]) -> bool:
    return any(a.timestamp() <= t < b.timestamp() for a, b in spans)


def openmetrics(nodes: Sequence[Node], start: dt.datetime, end: dt.datetime, scrape_s: int,
                gpus_per_node: int = 8) -> str:
    """The series a node exporter job and DCGM exporter would leave, as OpenMetrics text."""
    times = range(int(start.timestamp()), int(end.timestamp()), scrape_s)
    out = ["# HELP up 1 if the target was scraped", "# TYPE up gauge"]
    for n in nodes:
        labels = f'instance="{n.host}:9100",job="node"'
        out += [f"up{{{labels}}} {0 if _inside(t, n.down) else 1} {t}" for t in times
                if not _inside(t, n.unscraped)]
    dcgm = [n for n in nodes if n.dcgm is not None]
    if dcgm:
        out += ["# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).",
                "# TYPE DCGM_FI_DEV_GPU_TEMP gauge"]
        for n in dcgm:
            assert n.dcgm is not None
            for gpu in range(gpus_per_node):
                lost = [s for g, s in n.gpu_lost if g == gpu]
                out += [f"DCGM_FI_DEV_GPU_TEMP{{{_gpu_labels(n.host, gpu)}}} 41 {t}"
                        for t in times if not _inside(t, n.down + n.unscraped + lost)
                        and t >= n.dcgm.timestamp()]
        out += ["# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.",
                "# TYPE DCGM_FI_DEV_XID_ERRORS gauge"]
        for n in dcgm:
            assert n.dcgm is not None
            for gpu in range(gpus_per_node):
                lost = [s for g, s in n.gpu_lost if g == gpu]
                raised = sorted((at.timestamp(), code) for g, at, code in n.xid if g == gpu)
                for t in times:
                    if _inside(t, n.down + n.unscraped + lost) or t < n.dcgm.timestamp():
                        continue
                    code = max((c for at, c in raised if at <= t), default=0)
                    out.append(f"DCGM_FI_DEV_XID_ERRORS{{{_gpu_labels(n.host, gpu)}}} {code} {t}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _gpu_labels(host: str, gpu: int) -> str:
    return (f'Hostname="{host}",UUID="GPU-{zlib.crc32(host.encode()):08x}-{gpu:04d}",'
            f'device="nvidia{gpu}",gpu="{gpu}",modelName="NVIDIA H100 80GB HBM3"')


def backfill(text: str, data_dir: Path) -> None:
    """TSDB blocks in ``data_dir`` from OpenMetrics ``text`` (promtool)."""
    _, tool = binaries()
    source = data_dir.parent / "series.om"
    source.write_text(text)
    subprocess.run([tool, "tsdb", "create-blocks-from", "openmetrics", "-q", str(source),
                    str(data_dir)], check=True, capture_output=True, timeout=900)
    source.unlink()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(data_dir: Path) -> Iterator[str]:
    """Prometheus serving ``data_dir`` on a free loopback port: its URL; stopped after."""
    prom, _ = binaries()
    config = data_dir.parent / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
    port = free_port()
    log = (data_dir.parent / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [prom, f"--config.file={config}", f"--storage.tsdb.path={data_dir}",
         "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("prometheus did not start: "
                                   + (data_dir.parent / "prometheus.log").read_text()[-2000:])
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
