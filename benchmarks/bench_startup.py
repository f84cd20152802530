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

With ``--before PATH`` (a second checkout, e.g. ``git worktree add /tmp/old 40543b7``) every
row is timed twice, this checkout's cmax and then PATH's (the same interpreter and
dependencies, the command run from inside PATH so that its ``cmax`` is imported), each beside
the same floor; and one more group answers issue 37's budget ("``cmax validate`` + ``cmax
score`` on the samples no slower than today"): the six processes ``cmax validate`` and ``cmax
score --format json`` of each H100 sample, this checkout's over PATH's, in turn, with the
median and range of the paired ratios (budget 1.00), each checkout reading its own samples.

A gigabyte log's inspect (start-up and parse together, beside ``grep -c``) is
``benchmarks/bench_ingest.py``'s. The bytecode of cmax (both checkouts) and of the running
interpreter's dependencies is compiled first, as pip leaves it (``benchmarks/_bytecode.py``).
``--python PY`` runs every command and floor with another interpreter (a venv) instead, its
dependencies as they are: a venv made by ``uv pip install`` under ``PYTHONDONTWRITEBYTECODE=1``
has no bytecode for them, so every process compiles Polars (~0.2 s of ``import polars``),
NumPy, pydantic and click again. Run: ``python benchmarks/bench_startup.py [--repeat N]
[--groups help,rating,inspect,before] [--before PATH] [--python PY]``. Not a test: it prints
figures and the worst median ratio of each group against its budget, and exits 0.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bytecode import compile_cmax, compile_dependencies

from cmax.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
SAMPLE = "samples/aurora-compute"
DATA = "tests/data/ingest"
HELP_BUDGET = 1.5
RATING_BUDGET = 3.0
BEFORE_BUDGET = 1.0
#: small files detection decides in different ways (markers of two families, a JSON shape)
INSPECTED = {
    "nemo2 log (markers)": f"{DATA}/nemo2_llama3.1-8b_fp8.log",
    "nccl-tests text (markers)": f"{DATA}/nccl/all_reduce_1node.txt",
    "dgxc JSON (JSON shape)": f"{DATA}/dgxc_parse_nemo2.json",
}
#: issue 37's budget: validate + score of the three H100 samples
H100_SAMPLES = ("aurora-compute", "borealis-cloud", "cinder-gpu")


@dataclass(frozen=True)
class Command:
    """One process to time: ``argv`` run from ``cwd`` (a checkout: its cmax is imported)."""

    argv: list[str]
    cwd: Path = REPO


PYTHON = [sys.executable]
"""The interpreter every command and floor runs with (``--python``)."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(commands: list[Command]) -> tuple[float, float]:
    """Wall and CPU seconds of running ``commands`` one after the other (a non-zero exit is
    fine: score exits 1 on error findings)."""
    cpu, start = _cpu(), time.perf_counter()
    for c in commands:
        subprocess.run(c.argv, cwd=c.cwd, check=False, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, _cpu() - cpu


@dataclass(frozen=True)
class Paired:
    """Medians of a command's wall and CPU seconds and of its ratios to what it was paired
    with, and the ratios' ranges."""

    wall: float
    cpu: float
    wall_ratios: list[float]
    cpu_ratios: list[float]
    floor_wall: float
    floor_cpu: float

    @property
    def x_wall(self) -> float:
        return statistics.median(self.wall_ratios)

    @property
    def x_cpu(self) -> float:
        return statistics.median(self.cpu_ratios)


def paired(commands: list[Command], floor: list[Command], repeat: int) -> Paired:
    """``commands`` and ``floor`` run in turn ``repeat`` times after one warm-up of each."""
    run(floor), run(commands)
    walls, cpus, f_walls, f_cpus = [], [], [], []
    for _ in range(repeat):
        f_wall, f_cpu = run(floor)
        wall, cpu = run(commands)
        walls.append(wall)
        cpus.append(cpu)
        f_walls.append(f_wall)
        f_cpus.append(f_cpu)
    return Paired(statistics.median(walls), statistics.median(cpus),
                  [a / b for a, b in zip(walls, f_walls, strict=True)],
                  [a / b for a, b in zip(cpus, f_cpus, strict=True)],
                  statistics.median(f_walls), statistics.median(f_cpus))


def cmax(*args: str, cwd: Path = REPO) -> Command:
    return Command([*PYTHON, "-m", "cmax", *args], cwd)


def _group(title: str, floor: list[str], rows: list[tuple[str, list[str]]], budget: float,
           repeat: int, before: Path | None) -> float:
    """Each row beside ``floor``; with ``before``, the row run from that checkout too, on the
    line under it."""
    print(f"\n{title}")
    print(f"{'command':<52} {'wall s':>7} {'cpu s':>7} {'x wall':>7} {'x cpu':>7}")
    floor_cmd = [Command(floor)]
    worst = 0.0
    for i, (label, args) in enumerate(rows):
        sides = [("", REPO)] + ([("  (before)", before)] if before is not None else [])
        for suffix, cwd in sides:
            p = paired([cmax(*args, cwd=cwd)], floor_cmd, repeat)
            if i == 0 and cwd == REPO:
                print(f"{' '.join(floor[1:]):<52} {p.floor_wall:>7.3f} {p.floor_cpu:>7.3f} "
                      f"{1.0:>7.2f} {1.0:>7.2f}")
            if cwd == REPO:
                worst = max(worst, p.x_wall)
            print(f"{label + suffix:<52} {p.wall:>7.3f} {p.cpu:>7.3f} {p.x_wall:>7.2f} "
                  f"{p.x_cpu:>7.2f}")
    print(f"worst median wall ratio {worst:.2f}x (budget <= {budget:g}x)")
    return worst


def _span(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"


def before_group(before: Path, repeat: int) -> None:
    """Issue 37's budget: the six processes of validate + score on the H100 samples, this
    checkout's over ``before``'s, pair by pair, beside the floors."""
    def six(cwd: Path) -> list[Command]:
        return [c for name in H100_SAMPLES
                for c in (cmax("validate", f"samples/{name}", cwd=cwd),
                          cmax("score", f"samples/{name}", "--format", "json", cwd=cwd))]

    print(f"\nvalidate + score --format json of {', '.join(H100_SAMPLES)} (six processes), "
          f"this checkout over {before}, pair by pair")
    p = paired(six(REPO), six(before), repeat)
    floors = paired([Command([*PYTHON, "-c", "import polars"])] * 6,
                    [Command([*PYTHON, "-c", "import click"])] * 6, 3)
    print(f"{'(medians)':<28} {'wall s':>7} {'cpu s':>7}")
    print(f"{'this checkout':<28} {p.wall:>7.3f} {p.cpu:>7.3f}")
    print(f"{'before':<28} {p.floor_wall:>7.3f} {p.floor_cpu:>7.3f}")
    print(f"{'6 x import polars':<28} {floors.wall:>7.3f} {floors.cpu:>7.3f}")
    print(f"{'6 x import click':<28} {floors.floor_wall:>7.3f} {floors.floor_cpu:>7.3f}")
    print(f"ratio this / before, median (range) of {repeat} pairs: wall {_span(p.wall_ratios)}, "
          f"cpu {_span(p.cpu_ratios)} (budget <= {BEFORE_BUDGET:.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--groups", default="help,rating,inspect,before")
    parser.add_argument("--before", type=Path, default=None,
                        help="a second checkout to time beside this one")
    parser.add_argument("--python", type=Path, default=None,
                        help="run the commands with this interpreter, its dependencies as "
                             "they are")
    args = parser.parse_args()
    groups = set(args.groups.split(","))
    before = args.before.resolve() if args.before is not None else None
    if args.python is not None:
        PYTHON[0] = str(args.python)
    else:
        compile_dependencies()
    compile_cmax()
    if before is not None:
        compile_cmax(before / "cmax")
    py = PYTHON[0]
    polars = [py, "-c", "import polars"]
    print(f"{args.repeat} runs of each command, each after a run of its floor; medians; "
          f"x = the command's time over its floor's in the same pair; interpreter {py}"
          + (" (dependencies as they are)" if args.python else " (dependencies compiled)"))
    if "help" in groups:
        helps = [(f"cmax {name} --help".replace("  ", " "), [*([name] if name else []), "--help"])
                 for name in ["", *COMMANDS]]
        _group("--help of every command, beside import click", [py, "-c", "import click"],
               helps, HELP_BUDGET, args.repeat, before)
    if "rating" in groups:
        ratings = [("cmax validate aurora-compute", ["validate", SAMPLE]),
                   ("cmax score aurora-compute --format json",
                    ["score", SAMPLE, "--format", "json"])]
        _group("rating a sample bundle, beside import polars", polars, ratings, RATING_BUDGET,
               args.repeat, before)
    if "inspect" in groups:
        rows = [(f"cmax inspect {label}", ["inspect", path, "--format", "json"])
                for label, path in INSPECTED.items()]
        _group("inspecting one small file, beside import polars", polars, rows,
               RATING_BUDGET, args.repeat, before)
    if "before" in groups and before is not None:
        before_group(before, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
