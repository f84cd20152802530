"""Benchmark `cmax audit`: generate a runs root of N runs, audit it, print runs/s and memory.

    python benchmarks/bench_history.py [--runs 400] [--clusters 40] [--out DIR] [--reports]
                                       [--only local|ray]

The runs root is built from the sample bundles that ship with cmax (real evidence formats):
each cluster copies one sample and each monthly run rescales its training step times
(a per-cluster level, run-to-run jitter, and on some clusters a late regression), shifts the
benchmark date, the reliability window and the incident timestamps to the run's month, and
hard-links the files it does not change. ``cmax audit`` then runs in-process through the CLI
(so its progress bar shows on stderr), each time into a fresh history: the first pass (scoring
every run) with the local executor on 1 and 2 workers and Ray (started locally) on 2 workers,
against the floor of issue 16 (20 runs/s on 2 cores); then the second pass (nothing new: the
idempotent path) and, with ``--reports``, the trend reports; and peak memory.
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
from cmax.submission.samples import sample_bundles

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


def _peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0


FLOOR_RUNS_PER_S = 20.0  # issue 16: first pass on 2 cores, generated root, no PDFs

CONFIGS: list[tuple[str, list[str]]] = [
    ("local, 1 worker", ["--executor", "local", "--workers", "1"]),
    ("local, 2 workers", ["--executor", "local", "--workers", "2"]),
    ("ray (local), 2 workers", ["--executor", "ray", "--workers", "2"]),
]


def _cpu_s() -> float:
    """CPU seconds of this process and of its reaped children (the pool's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _audit(args: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (driver + pool workers; Ray's workers are not children)."""
    t0, c0 = time.perf_counter(), _cpu_s()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["audit", *args, "--format", "json"])
    return time.perf_counter() - t0, _cpu_s() - c0, code


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--clusters", type=int, default=40)
    parser.add_argument("--out", type=Path, default=None,
                        help="where to build the runs root (default: a temp dir, removed)")
    parser.add_argument("--reports", action="store_true", help="also time the trend reports")
    parser.add_argument("--only", choices=[c[0].split(",")[0].split(" ")[0] for c in CONFIGS],
                        default=None, help="run only the local or the ray configurations")
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
        print(f"generated {n} runs in {args.clusters} clusters under {root} in {t_gen:.1f} s "
              f"({os.cpu_count()} CPUs)", file=sys.stderr)
        if args.generate_only:
            return
        print(f"\nruns                              {n}   (floor: first pass >= "
              f"{FLOOR_RUNS_PER_S:.0f} runs/s on 2 cores; load average now "
              f"{os.getloadavg()[0]:.1f})")
        last_history = None
        for label, extra in CONFIGS:
            if args.only and not label.startswith(args.only):
                continue
            if "ray" in extra:
                try:
                    import ray  # noqa: F401
                except ImportError:
                    print(f"{label:<33} skipped: pip install 'cmax-rating[ray]'")
                    continue
            history = args.out / f"history-{label.split(',')[0].split()[0]}-{extra[-1]}"
            shutil.rmtree(history, ignore_errors=True)
            t_first, cpu, code = _audit([str(root), "--history", str(history), *extra])
            mark = "ok" if n / t_first >= FLOOR_RUNS_PER_S else "below floor"
            line = (f"first pass, {label:<22} {t_first:8.1f} s  {n / t_first:8.1f} runs/s  "
                    f"exit {code}  {mark}")
            if "ray" not in extra:
                # on a shared machine wall time measures the neighbours too: CPU per run,
                # and what 2 idle cores would give with the work spread over 2 processes
                line += (f"   [{cpu / n * 1000:.0f} ms CPU/run; on 2 idle cores "
                         f"~{min(2, int(extra[-1])) * n / cpu:.1f} runs/s]")
            print(line)
            last_history = history
        if last_history is not None:
            t_second, _, code2 = _audit([str(root), "--history", str(last_history),
                                         "--workers", "1"])
            print(f"second pass (nothing new)         {t_second:8.2f} s  "
                  f"{n / t_second:8.1f} runs/s  exit {code2}")
            if args.reports:
                t0 = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):
                    main(["audit", str(root), "--history", str(last_history), "--format",
                          "json", "-o", str(args.out / "reports")])
                pages = len(list((args.out / "reports").glob("*.pdf")))
                print(f"trend reports (HTML + PDF)        {time.perf_counter() - t0:8.1f} s  "
                      f"{pages} PDFs")
            files = [p for p in last_history.rglob("*") if p.is_file()]
            size = sum(p.stat().st_size for p in files)
            print(f"history (Delta table)             {len(files)} files, "
                  f"{size / 1024:.1f} KiB")
        print(f"peak RSS                          {_peak_rss_mib():8.1f} MiB driver, "
              f"{_peak_rss_mib(resource.RUSAGE_CHILDREN):.1f} MiB largest worker process "
              "(Ray's own daemons not counted)")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main_bench()
