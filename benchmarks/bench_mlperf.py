"""MLPerf official scores: cmax beside MLCommons' ``result_summarizer`` on the same folders.

For every submitter folder under ``--data`` (laid out ``v<round>/<submitter>/results/...`` and
``.../systems/...``, as tests/data/mlperf/ keeps the collected public result sets), it runs

* ``mlperf_logging.result_summarizer.summarize_results(folder, "training", "<round>.0")``,
  the official summarizer (package mlperf-logging, dev extra), on a fresh temporary copy each
  repeat: the summarizer's RCP check rewrites or deletes ``scaling.json`` in the folder it
  reads when its own RCP evaluation differs from the shipped factor, so reading the original
  twice would not give the same scores;
* ``cmax.ingest.formats.mlperf.read_tree(folder)``, which parses every result file once and scores
  each benchmark folder (olympic mean x scaling.json, failed runs, run counts).

Both run in this process after a warm-up pass (files in the page cache); the best wall time of
``--repeat`` runs is printed for each, with the ratio. The scores are compared benchmark by
benchmark and must be identical (bit for bit); the script exits 1 if any differs or if cmax is
not at least ``--floor`` (5) times faster. Not a test: figures depend on the machine.

Usage: ``python benchmarks/bench_mlperf.py [--data tests/data/mlperf] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cmax.ingest.formats.mlperf import read_tree  # noqa: E402

Scores = dict[tuple[str, str, str, str], float | None]


def submitter_folders(data: Path) -> list[tuple[str, Path]]:
    """(round, submitter folder) for every ``v<round>/<submitter>`` under ``data``."""
    return [(rnd.name.removeprefix("v"), org)
            for rnd in sorted(data.glob("v*")) if rnd.is_dir()
            for org in sorted(rnd.iterdir()) if (org / "results").is_dir()]


def official(folders: list[tuple[str, Path]], tmp: Path) -> tuple[float, Scores]:
    from mlperf_logging.result_summarizer.result_summarizer import summarize_results

    copies = []
    for i, (rnd, org) in enumerate(folders):
        copy = tmp / str(i) / org.name
        shutil.copytree(org, copy)
        copies.append((rnd, org, copy))
    scores: Scores = {}
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        for rnd, org, copy in copies:
            _, _, detailed, _ = summarize_results(str(copy), "training", f"{rnd}.0")
            for rec in detailed.to_dict(orient="records"):
                system = str(rec["details_url"]).rsplit("/", 1)[-1].removesuffix(".json")
                for key, value in rec.items():
                    if key.endswith(":time_to_train") and value == value and value is not None:
                        scores[(rnd, org.name, system, key.split(":")[0])] = float(value)
    return time.perf_counter() - start, scores


def cmax_scores(folders: list[tuple[str, Path]]) -> tuple[float, Scores]:
    scores: Scores = {}
    start = time.perf_counter()
    for rnd, org in folders:
        for s in read_tree(org / "results", root=org):
            scores[(rnd, org.name, s.folder.parent.name, s.benchmark)] = s.score.score_min
    return time.perf_counter() - start, scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "mlperf")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--floor", type=float, default=5.0, help="required speed-up")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # the RCP checker logs every non-converged run
    folders = submitter_folders(args.data)
    if not folders:
        print(f"no v<round>/<submitter>/results folders under {args.data}")
        return 1
    files = sum(1 for _, org in folders for _ in org.rglob("result_*.txt"))
    size = sum(p.stat().st_size for _, org in folders for p in org.rglob("result_*.txt"))
    cmax_scores(folders)  # warm-up: page cache
    with tempfile.TemporaryDirectory() as tmp:
        times_off, times_cmax = [], []
        ref: Scores = {}
        got: Scores = {}
        for i in range(args.repeat):
            t, ref = official(folders, Path(tmp) / f"r{i}")
            times_off.append(t)
            t, got = cmax_scores(folders)
            times_cmax.append(t)
    same = [k for k in ref if got.get(k) == ref[k]]
    differ = sorted(set(ref) ^ set(got) | {k for k in ref if got.get(k) != ref[k]})
    best_off, best_cmax = min(times_off), min(times_cmax)
    speedup = best_off / best_cmax
    print(f"{len(folders)} submitter folders, {len(ref)} benchmark results, {files} result "
          f"files, {size / 1e6:.1f} MB; best of {args.repeat}")
    print(f"  mlperf_logging.result_summarizer  {best_off:8.3f} s")
    print(f"  cmax ...formats.mlperf.read_tree  {best_cmax:8.3f} s   {speedup:5.1f}x faster "
          f"(floor {args.floor:g}x)")
    print(f"  scores identical: {len(same)}/{len(ref)}")
    for key in differ:
        print(f"  DIFFERENT {'/'.join(key)}: official {ref.get(key)!r}, cmax {got.get(key)!r}")
    return 0 if not differ and speedup >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
