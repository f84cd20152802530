"""Benchmark `cmax audit`: generate a runs root of N runs, audit it, print runs/s and memory.

    python benchmarks/bench_history.py [--runs 1000] [--clusters 40] [--out DIR] [--reports]

The runs root is built from the sample bundles that ship with cmax (real evidence formats):
each cluster copies one sample and each monthly run rescales its training step times
(a per-cluster level, run-to-run jitter, and on some clusters a late regression), shifts the
benchmark date, the reliability window and the incident timestamps to the run's month, and
hard-links the files it does not change. ``cmax audit`` then runs in-process through the CLI
(so its progress bar shows on stderr); the script prints the first pass (scoring every run),
the second pass (nothing new: the idempotent path) and, with ``--reports``, the trend reports.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import io
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cmax.cli import main
from cmax.history.drift import add_months
from cmax.samples import sample_bundles

_STEP = re.compile(r"(train_step_timing in s[:=] ?)([0-9.]+(?:e[+-]?\d+)?)")
_TFLOPS = re.compile(r"(TFLOPS_per_GPU[:=] ?)([0-9.]+(?:e[+-]?\d+)?)")
_TOML_DATE_KEYS = re.compile(r"^(date|period_start|period_end)(\s*=\s*)(\d{4}-\d{2}-\d{2})\s*$",
                             re.MULTILINE)


def _shift_day(day: dt.date, months: int) -> dt.date:
    """Whole months earlier or later; a month's last day stays the last day."""
    if (day + dt.timedelta(days=1)).month != day.month:
        return add_months(day.replace(day=1), months + 1) - dt.timedelta(days=1)
    return add_months(day, months)


def _shift(text: str, pattern: re.Pattern[str], months: int, group: int) -> str:
    def repl(m: re.Match[str]) -> str:
        day = _shift_day(dt.date.fromisoformat(m.group(group)), months)
        parts = list(m.groups())
        parts[group - 1] = day.isoformat()
        return "".join(parts)
    return pattern.sub(repl, text)


def _shift_incidents(text: str, months: int) -> str:
    """Move each incident's start by whole months and keep its duration (end after start)."""
    rows = list(csv.reader(io.StringIO(text)))
    head, body = rows[0], rows[1:]
    i_start, i_end = head.index("start"), head.index("end")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    for row in body:
        start = dt.datetime.fromisoformat(row[i_start].replace("Z", "+00:00"))
        end = dt.datetime.fromisoformat(row[i_end].replace("Z", "+00:00"))
        day = _shift_day(start.date(), months)
        new_start = start.replace(year=day.year, month=day.month, day=day.day)
        row[i_start] = new_start.strftime("%Y-%m-%dT%H:%M:%SZ")
        row[i_end] = (new_start + (end - start)).strftime("%Y-%m-%dT%H:%M:%SZ")
        writer.writerow(row)
    return out.getvalue()


def _scale_log(text: str, factor: float) -> str:
    text = _STEP.sub(lambda m: f"{m.group(1)}{float(m.group(2)) * factor:.4g}", text)
    return _TFLOPS.sub(lambda m: f"{m.group(1)}{float(m.group(2)) / factor:.4e}", text)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def make_runs_root(out: Path, runs: int, clusters: int, seed: int = 7) -> int:
    """Write ``runs`` monthly runs spread over ``clusters`` clusters; returns runs written."""
    rnd = random.Random(seed)
    samples = sample_bundles()
    per_cluster = [runs // clusters + (1 if i < runs % clusters else 0) for i in range(clusters)]
    written = 0
    for c, count in enumerate(per_cluster):
        sample = samples[c % len(samples)]
        manifest = (sample / "cmax.toml").read_text()
        base = dt.date.fromisoformat(re.search(r"^date\s*=\s*(\S+)", manifest, re.M)
                                     .group(1))  # type: ignore[union-attr]
        level = rnd.uniform(0.97, 1.03)
        regress_at = count - 1 if c % 5 == 0 else None
        cluster = f"{sample.name}-{c:02d}"
        for k in range(count):
            months = k - (count - 1)
            run_day = add_months(base, months)
            factor = level * rnd.gauss(1.0, 0.01) * (1.08 if k == regress_at else 1.0)
            run = out / cluster / f"{run_day:%Y%m%d}-090000"
            for src in sorted(sample.rglob("*")):
                rel = src.relative_to(sample)
                dst = run / rel
                if src.is_dir():
                    dst.mkdir(parents=True, exist_ok=True)
                    continue
                dst.parent.mkdir(parents=True, exist_ok=True)
                if src.name == "cmax.toml":
                    dst.write_text(_shift(src.read_text(), _TOML_DATE_KEYS, months, 3)
                                   .replace(f'cluster = "{_cluster_of(manifest)}"',
                                            f'cluster = "{cluster}"'))
                elif src.suffix == ".log":
                    dst.write_text(_scale_log(src.read_text(), factor))
                elif src.name.endswith(".csv") and "incident" in src.name:
                    dst.write_text(_shift_incidents(src.read_text(), months))
                else:
                    _link_or_copy(src, dst)
            written += 1
    return written


def _cluster_of(manifest: str) -> str:
    match = re.search(r'^cluster\s*=\s*"([^"]*)"', manifest, re.M)
    return match.group(1) if match else ""


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--clusters", type=int, default=40)
    parser.add_argument("--out", type=Path, default=None,
                        help="where to build the runs root (default: a temp dir, removed)")
    parser.add_argument("--reports", action="store_true", help="also time the trend reports")
    parser.add_argument("--jobs", type=int, default=1, help="cmax audit --jobs")
    parser.add_argument("--generate-only", action="store_true",
                        help="only build the runs root (use with --out)")
    args = parser.parse_args()
    tmp = None
    if args.out is None:
        tmp = tempfile.TemporaryDirectory(prefix="cmax-bench-history-")
        args.out = Path(tmp.name)
    root = args.out / "runs"
    try:
        t0 = time.perf_counter()
        n = make_runs_root(root, args.runs, args.clusters)
        t_gen = time.perf_counter() - t0
        print(f"generated {n} runs in {args.clusters} clusters under {root} in {t_gen:.1f} s",
              file=sys.stderr)
        if args.generate_only:
            return
        rss_before = _peak_rss_mib()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["audit", str(root), "--format", "json", "--jobs", str(args.jobs)])
        t_first = time.perf_counter() - t0
        rss_first = _peak_rss_mib()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code2 = main(["audit", str(root), "--format", "json"])
        t_second = time.perf_counter() - t0
        t_reports = None
        if args.reports:
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                main(["audit", str(root), "--format", "json", "-o", str(args.out / "reports")])
            t_reports = time.perf_counter() - t0
        hist = root / ".cmax-history"
        size = sum(p.stat().st_size for p in hist.rglob("*.parquet"))
        files = len(list(hist.rglob("*.parquet")))
        print(f"\nruns                         {n}")
        print(f"first pass (score + record)  {t_first:8.1f} s  {n / t_first:8.1f} runs/s"
              f"  exit {code}")
        print(f"second pass (nothing new)    {t_second:8.2f} s  {n / t_second:8.1f} runs/s"
              f"  exit {code2}")
        if t_reports is not None:
            pages = len(list((args.out / "reports").glob("*.pdf")))
            print(f"trend reports (HTML + PDF)   {t_reports:8.1f} s  {pages} PDFs")
        print(f"peak RSS                     {rss_first:8.1f} MiB after scoring, "
              f"{_peak_rss_mib():.1f} MiB overall (before audit {rss_before:.1f}; "
              f"--jobs {args.jobs}: workers not counted)")
        print(f"history                      {files} Parquet files, {size / 1024:.1f} KiB")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main_bench()
