"""Benchmark network evidence: nccl-tests logs full of NCCL_DEBUG chatter, and suspect nodes.

    python benchmarks/bench_network.py [--info-lines 200000] [--nodes 32]

A real multi-node nccl-tests log with ``NCCL_DEBUG=INFO`` holds every rank's transport and
channel lines around a table of a few dozen rows; the parser must get through the chatter.
The script builds such a log from the ``tag_output_2node.txt`` test file (Open MPI
``--tag-output`` prefixes on every line), parses it and prints MB/s beside the floor; then it
builds a pairwise folder for ``--nodes`` nodes (every pair, one slow node), ingests it as a
bundle, finds the suspect node and prints the time. Figures, not assertions: run it by hand.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cmax.ingest import ingest
from cmax.ingest.formats import nccl_tests as nccl
from cmax.score.nodes import suspect_nodes
from cmax.submission.bundle import open_bundle

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "nccl"
FLOOR_MB_S = 10.0  # a 1 GB debug log in under two minutes
INFO = ("[1,{r}]<stdout>:node-a:2001:2040 [{r}] NCCL INFO Channel {c:02d}/0 : 15[7] -> 0[0] "
        "[receive] via NET/IB/{r}/GDRDMA")
MANIFEST = """[provider]
name = "Bench"
cluster = "bench"

[system]
gpu = "h100-sxm"
nodes = {nodes}
gpus_per_node = 8
interconnect = "infiniband-ndr-8x400"

[benchmark]
date = 2026-10-01

[[nccl]]
path = "pairs"
"""


def _chatty_log(root: Path, lines: int) -> Path:
    src = (DATA / "tag_output_2node.txt").read_text().splitlines()
    head, tail = src[:30], src[30:]
    chatter = [INFO.format(r=i % 16, c=i % 32) for i in range(lines)]
    path = root / "all_reduce_perf.txt"
    path.write_text("\n".join(head + chatter + tail) + "\n")
    return path


def _pairs_bundle(root: Path, nodes: int) -> Path:
    template = (DATA / "pairs" / "all_reduce_node-a_node-b.txt").read_text()
    slow = (DATA / "pairs" / "all_reduce_node-a_node-c.txt").read_text()
    (root / "pairs").mkdir()
    hosts = [f"gpu-{i:03d}" for i in range(nodes)]
    for a, b in itertools.combinations(hosts, 2):
        text = slow if hosts[3] in (a, b) else template
        text = text.replace("node-a", a).replace("node-b", b).replace("node-c", b)
        (root / "pairs" / f"all_reduce_{a}_{b}.txt").write_text(text)
    (root / "cmax.toml").write_text(MANIFEST.format(nodes=nodes))
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--info-lines", type=int, default=200_000)
    parser.add_argument("--nodes", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        log = _chatty_log(root, args.info_lines)
        size_mb = log.stat().st_size / 1e6
        start = time.perf_counter()
        tests = nccl.parse_nccl_tests(log)
        took = time.perf_counter() - start
        rate = size_mb / took
        print(f"nccl-tests log: {size_mb:.1f} MB ({args.info_lines} INFO lines, "
              f"{tests[0].sizes} rows): {took:.2f} s = {rate:.1f} MB/s "
              f"(floor {FLOOR_MB_S:g} MB/s) {'OK' if rate >= FLOOR_MB_S else 'BELOW FLOOR'}")
        (root / "bundle").mkdir()
        bundle_root = _pairs_bundle(root / "bundle", args.nodes)
        start = time.perf_counter()
        with open_bundle(bundle_root) as bundle:
            evidence = ingest(bundle)
        found = suspect_nodes(evidence)
        took = time.perf_counter() - start
        pairs = args.nodes * (args.nodes - 1) // 2
        print(f"pairwise folder: {args.nodes} nodes, {pairs} runs -> suspects "
              f"{[s.node for s in found]} in {took:.2f} s ({pairs / took:.0f} runs/s)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
