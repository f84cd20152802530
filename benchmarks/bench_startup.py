"""Start-up time of ``cmax --help`` and every ``cmax CMD --help`` beside ``import click``.

What it measures: wall-clock time of a fresh interpreter running ``python -m cmax [CMD]
--help`` (output discarded), best of ``--repeat`` runs (default 7; the best run is the one
least disturbed by other work on a shared machine), next to the floor ``python -c "import
click"``: cmax cannot start faster than the library its command line is built on. The ratio
column is cmax's time over that floor; issue 17 asks for at most 4x (it was 11x when
``import cmax`` loaded Polars and numpy). cmax's bytecode is compiled first, as pip leaves it
(``benchmarks/_bytecode.py``). Run: ``python benchmarks/bench_startup.py``.
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

TARGET = 4.0


def best_of(argv: list[str], repeat: int) -> float:
    """Fastest wall-clock seconds of ``repeat`` runs of ``argv``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    compile_cmax()
    floor = best_of([sys.executable, "-c", "import click"], args.repeat)
    print(f"{'command':<24} {'seconds':>8} {'x click':>8}")
    print(f"{'python -c import click':<24} {floor:>8.3f} {1.0:>8.2f}")
    worst = 0.0
    for name in ["", *COMMANDS]:
        argv = [sys.executable, "-m", "cmax", *([name] if name else []), "--help"]
        took = best_of(argv, args.repeat)
        worst = max(worst, took / floor)
        label = f"cmax {name} --help".replace("  ", " ")
        print(f"{label:<24} {took:>8.3f} {took / floor:>8.2f}")
    print(f"worst ratio {worst:.2f}x (target <= {TARGET:g}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
