"""Training-log ingest beside the I/O floor (``grep -c``) on generated gigabyte logs.

What it measures, per scenario and size, each in a fresh child process after one warm-up
read (page cache warm for every contender), best wall time of ``--repeat`` runs, the least
CPU time (user + system, every thread of the child) and the highest peak resident set (RSS)
seen. On a machine shared with other work the CPU time moves far less than the wall time, so
its ratio to ``grep -c``'s is printed too:

* ``grep -c -F KEY FILE``: the floor. It reads every byte and keeps nothing.
* ``cmax inspect FILE --format json``: the command a user runs (interpreter start-up,
  imports, format detection, the streaming parse, the summary).
* ``parse``: ``cmax.ingest.inspect_file`` alone, timed inside a child (no start-up or import),
  to show what start-up costs beside the parse.
* the floor of ``cmax inspect``, under each row: ``python -c "import polars"`` (the import no
  parse can start before) and, for ``chatter`` (its step lines selected by one grep child),
  ``grep -a -n -F KEY FILE`` as cmax runs it (line numbers, every step line written to a
  pipe: slower than ``grep -c``). On two cores cmax runs that grep beside its own
  imports and parse, so its time cannot fall below the longer of the two paths.
* ``llmb-run`` (optional, ``--llmb-run GITDIR``): NVIDIA's own log parser
  (``cli/llmb-run/src/llmb_run/pretrain_log_parser.py`` of NVIDIA/dgxc-benchmarking), copied
  from a local git mirror into the temporary directory and run there on the same file. It is
  never part of cmax; it reads only iterations 35-44 and keeps no step table, so it is a
  reference for speed and memory, not the same job.

cmax's bytecode is compiled first, as ``pip install`` leaves it (``benchmarks/_bytecode.py``:
with ``PYTHONDONTWRITEBYTECODE=1`` a checkout would otherwise recompile every module in every
child, ~50 ms no user pays).

The step count cmax reads is checked against the number of step lines written, and against
``grep -c``.

With ``--before PATH`` (a second checkout, e.g. ``git worktree add /tmp/old main``), ``cmax
inspect`` is also run from that checkout (``PYTHONPATH``, the same interpreter), alternating
with this one run by run, and the wall and CPU ratios of each pair (this / before) are printed:
pairs taken side by side share the load of the moment, so their ratio holds where the best
times of two separate runs do not.

Scenarios (NeMo 2 step lines as DGXC recipes print them, noise as multi-node jobs print it):

* ``chatter``: one step line in about 40 lines (NCCL INFO, PyTorch warnings, NeMo info), the
  shape of a real multi-node log: about 220k steps per GiB. cmax lets grep skip the noise and
  splits grep's output into fields (``cmax.ingest._fields.parse_grep``); ``cmax inspect``
  starts that grep before it imports Polars (``cmax.ingest._greplines.prestart``), which
  ``parse`` (no start-up) does not show. With ``--grow`` it also
  runs at a quarter, twice and the given size, to show whether peak memory follows the file
  size.
* ``dense``: one step line in three (a long quiet run): about 2.1 M steps per GiB. cmax splits
  the whole file into ``|`` fields with Polars' CSV reader (``cmax.ingest._fields.scan``); the
  step table itself grows with the file (48 bytes a step: the iteration and four values at 8
  bytes, the line and the global step at 4; ~95 MiB here), so memory must grow here.
* ``stamped``: ``dense`` with NeMo's logger stamp (``[NeMo I 2026-05-01 10:00:00
  nemo_logging:393]``) in front of every step line, so the step table gains a wall-clock
  column (``cmax.ingest.linespec``); its time beside ``dense`` is what reading the stamp costs.
* ``megatron``: Megatron-Bridge iteration lines plus ``Step Time ... MODEL_TFLOP/s/GPU`` lines
  paired by position, with the noise of ``chatter`` (about 63k steps per GiB).

Usage: ``python benchmarks/bench_ingest.py [--size-gb 1]
[--scenarios chatter,dense,stamped,megatron] [--grow] [--repeat 2] [--before PATH]
[--llmb-run GITDIR]`` (GITDIR: a git clone of NVIDIA/dgxc-benchmarking). Not a test:
it prints figures and exits 0. Figures depend on the machine and on what else runs on it; the
ratio to ``grep -c`` on the same file is the comparable number.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bytecode import compile_cmax, compile_dependencies

WRAPPER = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
dt = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stdout.write(f"{dt} {use.ru_maxrss} {p.returncode} {use.ru_utime + use.ru_stime}\\n")
sys.stdout.write(p.stdout.decode(errors="replace"))
sys.stderr.write(p.stderr.decode(errors="replace"))
"""

# inspect_file alone, timed inside the child: the parse without start-up and imports
PARSE_CHILD = """
import json, sys, time
from pathlib import Path
from cmax.ingest import inspect_file
t = time.perf_counter()
summary = inspect_file(Path(sys.argv[1]))
print(json.dumps({"parse_s": time.perf_counter() - t, "steps": summary["steps"]}))
"""

# NVIDIA's llmb-run parser, imported from the copy in the temporary directory
LLMB_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from llmb_run.pretrain_log_parser import parse_pretrain_log
r = parse_pretrain_log(sys.argv[2], sys.argv[3])
print(r.status.value, r.max_iteration_seen)
"""
LLMB_FILES = ("cli/llmb-run/src/llmb_run/pretrain_log_parser.py",
              "cli/llmb-run/src/llmb_run/job_logs.py")

NOISE = [
    "node{n:03d}:{p}:{p} [{r}] NCCL INFO Channel {c:02d}/0 : {r}[{r}] -> {q}[{r}] [send] via "
    "NET/IB/{r}/GDRDMA\n",
    "[rank{r}]:[W501 10:00:00.000000000 ProcessGroupNCCL.cpp:4561] Warning: TORCH_NCCL_AVOID_"
    "RECORD_STREAMS is the default now, this environment variable is deprecated\n",
    "[NeMo I 2026-05-01 10:00:00 nemo_logging:393] data loader worker {r} prefetched {c} "
    "batches\n",
    "node{n:03d}:{p}:{p} [{r}] NCCL INFO comm 0x55d0c rank {r} nranks 512 cudaDev {r} busId "
    "{c}000 commId 0x9b0f - Init COMPLETE\n",
]


def _noise(rng: random.Random) -> str:
    tmpl = NOISE[rng.randrange(len(NOISE))]
    return tmpl.format(n=rng.randrange(64), p=rng.randrange(10_000, 99_999), r=rng.randrange(8),
                       q=rng.randrange(512), c=rng.randrange(32))


def _nemo2(i: int, rng: random.Random) -> str:
    return (f"Training epoch 0, iteration {i}/999999 | lr: 6.1e-06 | global_batch_size: 256 | "
            f"global_step: {i} | peak_memory_usage: 70833405952 | memory_allocated: 44271689728"
            f" | reduced_train_loss: {11.9 - i * 1e-6:.4f} | train_step_timing in s: "
            f"{10 + rng.random():.3f} | TFLOPS_per_GPU: {7.3 + rng.random() / 10:.3f}e+02 | "
            f"consumed_samples: {256 * (i + 1)}\n")


_EPOCH = 1_777_600_000  # 2026-05-01 UTC


def _nemo2_stamped(i: int, rng: random.Random) -> str:
    """A NeMo 2 step line as NeMo's logger prints it: a wall-clock stamp in front."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(_EPOCH + 10 * i))
    return f"[NeMo I {stamp} nemo_logging:393] " + _nemo2(i, rng)


def _megatron(i: int, rng: random.Random) -> str:
    ms = 10_000 + rng.random() * 300
    return (f" [2026-05-01 10:00:00] iteration {i:8d}/{999_999:8d} | consumed samples: "
            f"{2048 * i:12d} | elapsed time per iteration (ms): {ms:.1f} | learning rate: "
            f"3.000000E-05 | global batch size:  2048 | lm loss: 8.114214E+00 | loss scale: 1.0 "
            f"| grad norm: 0.412 | number of skipped iterations:   0 | number of nan "
            f"iterations:   0 |\nStep Time : {ms / 1000:.2f}s GPU utilization: "
            f"{720 + rng.random() * 20:.1f}MODEL_TFLOP/s/GPU\n")


SCENARIOS: dict[str, tuple[Callable[[int, random.Random], str], int, str, str]] = {
    # name: (step line writer, noise lines per step, grep keyword, llmb-run framework)
    "chatter": (_nemo2, 39, "train_step_timing in s:", "nemo2"),
    "dense": (_nemo2, 2, "train_step_timing in s:", "nemo2"),
    "stamped": (_nemo2_stamped, 2, "train_step_timing in s:", "nemo2"),
    "megatron": (_megatron, 40, "elapsed time per iteration", "megatron_bridge"),
}


def write_log(path: Path, scenario: str, size_bytes: int) -> int:
    """Write a log of about ``size_bytes``; returns the number of step lines."""
    step_line, noise_per_step, _, _ = SCENARIOS[scenario]
    rng = random.Random(7)
    noise_lines = [_noise(rng) for _ in range(4096)]
    steps = written = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        buf: list[str] = []
        while written < size_bytes:
            start = rng.randrange(len(noise_lines))
            noise = "".join(noise_lines[(start + k) % len(noise_lines)]
                            for k in range(noise_per_step))
            chunk = noise + step_line(steps, rng)
            buf.append(chunk)
            written += len(chunk)
            steps += 1
            if len(buf) >= 2048:
                fh.write("".join(buf))
                buf.clear()
        fh.write("".join(buf))
    return steps


def measure(cmd: list[str], checkout: Path | None = None) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS (KiB), stdout and CPU seconds (user + system) of ``cmd`` run in
    a fresh child process; with ``checkout``, its cmax is imported (``python -m`` puts the
    working directory first on the path, so the child runs there too)."""
    env = None if checkout is None else {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], capture_output=True, text=True,
                         check=True, env=env, cwd=checkout)
    head, _, rest = out.stdout.partition("\n")
    seconds, rss, code, cpu = head.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"{cmd[:3]} failed ({code}): {out.stderr.strip()[:400]}")
    return float(seconds), int(rss), rest, float(cpu)


def best(cmd: list[str], repeat: int) -> tuple[float, float, str, float]:
    """Best wall seconds, highest peak RSS (MiB), the last stdout and the least CPU seconds
    of ``repeat`` runs."""
    runs = [measure(cmd) for _ in range(repeat)]
    return (min(r[0] for r in runs), max(r[1] for r in runs) / 1024, runs[-1][2],
            min(r[3] for r in runs))


def paired(cmd: list[str], before: Path, repeat: int) -> str:
    """``cmd`` run from this checkout and from ``before``, alternating (the pairs take turns
    at going first): the median and range of this / before over the pairs, wall and CPU, and
    each side's peak RSS range."""
    wall: list[float] = []
    cpu: list[float] = []
    rss: dict[Path | None, list[float]] = {None: [], before: []}
    for i in range(repeat):
        sides: list[Path | None] = [None, before] if i % 2 == 0 else [before, None]
        runs = {side: measure(cmd, side) for side in sides}
        wall.append(runs[None][0] / runs[before][0])
        cpu.append(runs[None][3] / runs[before][3])
        for side, run in runs.items():
            rss[side].append(run[1] / 1024)

    def span(values: list[float]) -> str:
        values = sorted(values)
        return f"{values[len(values) // 2]:.2f} ({values[0]:.2f}-{values[-1]:.2f})"

    return (f"  this / before, {repeat} pairs: wall {span(wall)}, CPU {span(cpu)}; peak RSS "
            f"{min(rss[None]):.0f}-{max(rss[None]):.0f} MiB, before "
            f"{min(rss[before]):.0f}-{max(rss[before]):.0f} MiB")


def _floor(grep_c: float, polars: float, grep_n: float | None) -> str:
    """The floor line printed under a row: each time and its ratio to ``grep -c``."""
    out = f"  floor: python -c 'import polars' {polars:.2f} s ({polars / grep_c:.2f}x grep -c)"
    if grep_n is not None:
        out += f"; grep -anF {grep_n:.2f} s ({grep_n / grep_c:.2f}x grep -c)"
    return out


def copy_llmb_run(gitdir: Path, into: Path) -> str | None:
    """Copy llmb-run's parser out of a git mirror into ``into``; its commit, or None."""
    pkg = into / "llmb_run"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")  # the real one imports the whole CLI
    try:
        commit = subprocess.run(["git", "--git-dir", str(gitdir), "rev-parse", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        for name in LLMB_FILES:
            src = subprocess.run(["git", "--git-dir", str(gitdir), "show", f"HEAD:{name}"],
                                 capture_output=True, check=True).stdout
            (pkg / Path(name).name).write_bytes(src)
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit


def run_one(tmp: Path, scenario: str, size_gb: float, repeat: int,
            llmb: Path | None, before: Path | None = None) -> dict[str, object]:
    path = tmp / f"{scenario}_{size_gb:g}gb.log"
    steps = write_log(path, scenario, int(size_gb * 1024**3))
    size_mb = path.stat().st_size / 1024**2
    _, _, keyword, framework = SCENARIOS[scenario]
    # the log was just written: flush its dirty pages first, or the kernel writes them back
    # (a GiB, seconds of I/O and CPU) while the contenders run
    os.sync()
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the cache
    g_s, g_rss, g_out, g_cpu = best(["grep", "-c", "-F", keyword, str(path)], repeat)
    inspect = [sys.executable, "-m", "cmax", "inspect", str(path), "--format", "json"]
    c_s, c_rss, c_out, c_cpu = best(inspect, repeat)
    _, _, p_out, _ = best([sys.executable, "-c", PARSE_CHILD, str(path)], repeat)
    polars_s, _, _, _ = best([sys.executable, "-c", "import polars"], repeat)
    grep_n_s = None
    if scenario == "chatter":
        grep_n_s, _, _, _ = best(["grep", "-a", "-n", "-F", "-e", keyword, "--", str(path)],
                                 repeat)
    row: dict[str, object] = {
        "scenario": scenario, "size_mb": round(size_mb), "steps": steps,
        "grep_s": g_s, "grep_rss": g_rss, "cmax_s": c_s, "cmax_rss": c_rss,
        "ratio": c_s / g_s, "cpu_ratio": c_cpu / g_cpu, "parse_s": json.loads(p_out)["parse_s"],
        "floor": _floor(g_s, polars_s, grep_n_s),
    }
    if before is not None:
        row["paired"] = paired(inspect, before, repeat)
    if llmb is not None:
        l_s, l_rss, l_out, _ = best([sys.executable, "-c", LLMB_CHILD, str(llmb), str(path),
                                  framework], repeat)
        row.update(llmb_s=l_s, llmb_rss=l_rss, llmb_status=l_out.split()[0])
    path.unlink()
    assert int(g_out.strip()) == steps, "grep count differs from the generated step count"
    cmax_steps = json.loads(c_out)["steps"]
    assert cmax_steps == steps, f"cmax read {cmax_steps} steps, wrote {steps}"
    assert json.loads(p_out)["steps"] == steps
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--scenarios", default="chatter,dense,stamped,megatron")
    parser.add_argument("--grow", action="store_true",
                        help="also run chatter at 1/4 and 2x the size (memory vs file size)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=None, help="temp dir (default: system)")
    parser.add_argument("--llmb-run", type=Path, default=None, metavar="GITDIR",
                        help="git dir of an NVIDIA/dgxc-benchmarking mirror: run its llmb-run "
                             "parser beside cmax")
    parser.add_argument("--before", type=Path, default=None, metavar="PATH",
                        help="a second checkout: cmax inspect run from it too, pair by pair")
    args = parser.parse_args()
    before = args.before.resolve() if args.before is not None else None
    compile_dependencies()
    compile_cmax()
    if before is not None:
        compile_cmax(before / "cmax")
    plan = [(s, args.size_gb) for s in args.scenarios.split(",") if s]
    if args.grow:
        plan = [("chatter", args.size_gb / 4), *plan, ("chatter", args.size_gb * 2)]
    header = (f"{'scenario':<9} {'MiB':>6} {'steps':>9} | {'grep s':>6} {'RSS':>5} | "
              f"{'cmax s':>6} {'RSS':>5} {'x grep':>6} {'x CPU':>5} {'parse s':>7} | "
              f"{'llmb s':>6} "
              f"{'RSS':>5} {'x cmax':>6}")
    with tempfile.TemporaryDirectory(prefix="cmax-bench-", dir=args.dir) as tmp:
        llmb = None
        if args.llmb_run is not None:
            commit = copy_llmb_run(args.llmb_run, Path(tmp))
            if commit is None:
                print(f"llmb-run: could not read {LLMB_FILES} from {args.llmb_run}; left out")
            else:
                llmb = Path(tmp)
                print(f"llmb-run: NVIDIA/dgxc-benchmarking@{commit[:12]} pretrain_log_parser.py")
        print(header)
        print("-" * len(header))
        for scenario, size in plan:
            r = run_one(Path(tmp), scenario, size, args.repeat, llmb, before)
            line = (f"{r['scenario']:<9} {r['size_mb']:>6} {r['steps']:>9} | "
                    f"{r['grep_s']:>6.2f} {r['grep_rss']:>5.0f} | {r['cmax_s']:>6.2f} "
                    f"{r['cmax_rss']:>5.0f} {r['ratio']:>6.2f} {r['cpu_ratio']:>5.2f} "
                    f"{r['parse_s']:>7.2f} |")
            if "llmb_s" in r:
                line += (f" {r['llmb_s']:>6.2f} {r['llmb_rss']:>5.0f} "
                         f"{float(r['llmb_s']) / float(r['cmax_s']):>6.2f}")  # type: ignore[arg-type]
            print(line, flush=True)
            print(r["floor"], flush=True)
            if "paired" in r:
                print(r["paired"], flush=True)
    print(f"cmax = `python -m cmax inspect FILE --format json` in a fresh process (start-up, "
          f"imports, detection, parse, summary); parse = inspect_file alone inside a child; "
          f"RSS = peak resident MiB of the process; best wall time of {args.repeat}; x CPU = "
          f"least CPU time (user + system) over grep -c's.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
