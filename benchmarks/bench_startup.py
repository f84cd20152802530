"""Start-up of every command beside its floor, each with its budget.

What it measures: a fresh interpreter running a command (output discarded) and, in turn, the
floor that command cannot beat, ``--repeat`` pairs (default 7): the wall-clock and CPU
seconds (user + system, the command's child processes included) of each run, and the ratio
command / floor within each pair. The median of the paired ratios is the figure to quote: on
a shared machine the floor and the command run side by side under the same load, so their
ratio holds where absolute times drift. The groups:

* ``cmax --help`` and ``cmax CMD --help`` beside ``python -c "import click"`` (the library the
  command line is built on): budget 1.5x;
* ``cmax validate`` and ``cmax score --format json`` of the Aurora sample beside
  ``python -c "import polars"`` (the library every rating reads its tables with): budget 3x;
* ``cmax inspect --format json`` of small files detection tells apart in different ways (a
  training log and a text nccl-tests output by their markers, a JSON document by its shape)
  beside ``python -c "import polars"``: budget 3x, the rating's, since inspect reads
  the same tables. Detection imports only the format module it picks
  (``cmax/ingest/formats/_declarations.py``), so each of these pays for its own format alone.

A gigabyte log's inspect (start-up and parse together, beside ``grep -c``) is
``benchmarks/bench_ingest.py``'s. cmax's bytecode is compiled first, as pip leaves it
(``benchmarks/_bytecode.py``). Run: ``python benchmarks/bench_startup.py [--repeat N]
[--groups help,rating,inspect]``. Not a test: it prints figures and the worst median ratio of
each group against its budget, and exits 0.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bytecode import compile_cmax

from cmax.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "aurora-compute"
DATA = REPO / "tests" / "data" / "ingest"
HELP_BUDGET = 1.5
RATING_BUDGET = 3.0
#: small files detection decides in different ways (markers of two families, a JSON shape)
INSPECTED = {
    "nemo2 log (markers)": DATA / "nemo2_llama3.1-8b_fp8.log",
    "nccl-tests text (markers)": DATA / "nccl" / "all_reduce_1node.txt",
    "dgxc JSON (JSON shape)": DATA / "dgxc_parse_nemo2.json",
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (a non-zero exit is fine: score exits 1
    on error findings)."""
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, _cpu() - cpu


def paired(argv: list[str], floor: list[str], repeat: int
           ) -> tuple[float, float, float, float]:
    """Median wall and CPU seconds of ``argv`` and the medians of its wall and CPU ratios to
    ``floor``, run in turn ``repeat`` times after one warm-up of each."""
    run(floor), run(argv)
    walls, cpus, wall_ratios, cpu_ratios = [], [], [], []
    for _ in range(repeat):
        f_wall, f_cpu = run(floor)
        wall, cpu = run(argv)
        walls.append(wall)
        cpus.append(cpu)
        wall_ratios.append(wall / f_wall)
        cpu_ratios.append(cpu / f_cpu)
    return (statistics.median(walls), statistics.median(cpus), statistics.median(wall_ratios),
            statistics.median(cpu_ratios))


def _group(title: str, floor: list[str], rows: list[tuple[str, list[str]]], budget: float,
           repeat: int) -> float:
    print(f"\n{title}")
    print(f"{'command':<48} {'wall s':>7} {'cpu s':>7} {'x wall':>7} {'x cpu':>7}")
    f_wall, f_cpu, _, _ = paired(floor, floor, 1)
    print(f"{' '.join(floor[1:]):<48} {f_wall:>7.3f} {f_cpu:>7.3f} {1.0:>7.2f} {1.0:>7.2f}")
    worst = 0.0
    for label, argv in rows:
        wall, cpu, x_wall, x_cpu = paired(argv, floor, repeat)
        worst = max(worst, x_wall)
        print(f"{label:<48} {wall:>7.3f} {cpu:>7.3f} {x_wall:>7.2f} {x_cpu:>7.2f}")
    print(f"worst median wall ratio {worst:.2f}x (budget <= {budget:g}x)")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--groups", default="help,rating,inspect")
    args = parser.parse_args()
    groups = set(args.groups.split(","))
    compile_cmax()
    py = sys.executable
    polars = [py, "-c", "import polars"]
    print(f"{args.repeat} runs of each command, each after a run of its floor; medians; "
          "x = the command's time over its floor's in the same pair")
    if "help" in groups:
        helps = [(f"cmax {name} --help".replace("  ", " "),
                  [py, "-m", "cmax", *([name] if name else []), "--help"])
                 for name in ["", *COMMANDS]]
        _group("--help of every command, beside import click", [py, "-c", "import click"],
               helps, HELP_BUDGET, args.repeat)
    if "rating" in groups:
        ratings = [("cmax validate aurora-compute", [py, "-m", "cmax", "validate", str(SAMPLE)]),
                   ("cmax score aurora-compute --format json",
                    [py, "-m", "cmax", "score", str(SAMPLE), "--format", "json"])]
        _group("rating a sample bundle, beside import polars", polars, ratings, RATING_BUDGET,
               args.repeat)
    if "inspect" in groups:
        rows = [(f"cmax inspect {label}",
                 [py, "-m", "cmax", "inspect", str(path), "--format", "json"])
                for label, path in INSPECTED.items()]
        _group("inspecting one small file, beside import polars", polars, rows,
               RATING_BUDGET, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
