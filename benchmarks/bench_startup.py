"""Start-up of every command beside its floor, each with its budget.

What it measures: wall-clock time of a fresh interpreter running a command (output
discarded), best of ``--repeat`` runs (default 7; the best run is the one least disturbed by
other work on a shared machine), next to the floor that command cannot beat:

* ``cmax --help`` and ``cmax CMD --help`` beside ``python -c "import click"`` (the library the
  command line is built on): budget 1.5x;
* ``cmax validate`` and ``cmax score --format json`` of the Aurora sample beside
  ``python -c "import polars"`` (the library every rating reads its tables with): budget 3x.

cmax's bytecode is compiled first, as pip leaves it (``benchmarks/_bytecode.py``). Run:
``python benchmarks/bench_startup.py [--repeat N]``. Not a test: it prints figures and the
worst ratio against each budget, and exits 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bytecode import compile_cmax

from cmax.cli import COMMANDS

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "aurora-compute"
HELP_BUDGET = 1.5
RATING_BUDGET = 3.0


def best_of(argv: list[str], repeat: int) -> float:
    """Fastest wall-clock seconds of ``repeat`` runs of ``argv`` (a non-zero exit is fine:
    score exits 1 on error findings)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def _group(title: str, floor_argv: list[str], rows: list[tuple[str, list[str]]], budget: float,
           repeat: int) -> float:
    floor = best_of(floor_argv, repeat)
    print(f"\n{title}")
    print(f"{'command':<42} {'seconds':>8} {'x floor':>8}")
    print(f"{' '.join(floor_argv[1:]):<42} {floor:>8.3f} {1.0:>8.2f}")
    worst = 0.0
    for label, argv in rows:
        took = best_of(argv, repeat)
        worst = max(worst, took / floor)
        print(f"{label:<42} {took:>8.3f} {took / floor:>8.2f}")
    print(f"worst {worst:.2f}x (budget <= {budget:g}x)")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    compile_cmax()
    py = sys.executable
    helps = [(f"cmax {name} --help".replace("  ", " "),
              [py, "-m", "cmax", *([name] if name else []), "--help"]) for name in ["", *COMMANDS]]
    _group("--help of every command, beside import click", [py, "-c", "import click"], helps,
           HELP_BUDGET, args.repeat)
    ratings = [("cmax validate aurora-compute", [py, "-m", "cmax", "validate", str(SAMPLE)]),
               ("cmax score aurora-compute --format json",
                [py, "-m", "cmax", "score", str(SAMPLE), "--format", "json"])]
    _group("rating a sample bundle, beside import polars", [py, "-c", "import polars"], ratings,
           RATING_BUDGET, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
