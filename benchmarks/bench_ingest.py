"""Ingest throughput on gigabyte training logs, beside ``grep -c`` on the same file.

``grep -c`` for the parser's keyword is the I/O floor: it reads every byte and does nothing
else. The benchmark writes logs of the requested size into a temporary directory (deleted at
the end), then times, in fresh processes, ``grep -c -F KEY`` and what ``cmax inspect FILE``
runs (interpreter start-up, imports, format detection, streaming parse, summary; the parse
alone is timed too) and reports MB/s and peak resident memory of each. Each figure is the best
of ``--repeat`` runs, after a warm-up read so both see the page cache alike.

Scenarios:

* ``chatter``: 5,000 NeMo 2 steps drowned in rank chatter, whatever the size: run at two sizes
  (``--grow``) it shows peak memory does not grow with the file.
* ``noisy``: a NeMo 2 run whose log is mostly rank chatter (NCCL INFO, warnings), with one
  step line per ~40 lines (about 25k steps per GB). This is what real multi-node logs look
  like; run at two sizes it shows peak memory does not grow with the file.
* ``dense``: one step line in every five (1.6 M steps per GB), the worst case for the regexes.
  The step table itself then grows with the file (about 60 bytes a step), as it must.
* ``megatron``: Megatron-Bridge iteration lines plus ``Step Time ... MODEL_TFLOP/s/GPU`` lines
  paired by position, with the same noise as ``noisy``.

Usage: ``python benchmarks/bench_ingest.py [--size-gb 1] [--scenarios chatter,noisy,dense,
megatron] [--grow] [--repeat 2]``. Not a test: it prints figures and exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

WRAPPER = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
dt = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stdout.write(f"{dt} {rss} {p.returncode}\\n")
sys.stdout.write(p.stdout.decode(errors="replace"))
sys.stderr.write(p.stderr.decode(errors="replace"))
"""

# what `cmax inspect FILE --format json` runs, with the import and parse timed apart
CHILD = """
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from cmax.ingest import inspect_file
t1 = time.perf_counter()
summary = inspect_file(Path(sys.argv[1]))
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "parse_s": t2 - t1, "steps": summary["steps"]}))
"""

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


def _megatron(i: int, rng: random.Random) -> str:
    ms = 10_000 + rng.random() * 300
    return (f" [2026-05-01 10:00:00] iteration {i:8d}/{999_999:8d} | consumed samples: "
            f"{2048 * i:12d} | elapsed time per iteration (ms): {ms:.1f} | learning rate: "
            f"3.000000E-05 | global batch size:  2048 | lm loss: 8.114214E+00 | loss scale: 1.0 "
            f"| grad norm: 0.412 | number of skipped iterations:   0 | number of nan "
            f"iterations:   0 |\nStep Time : {ms / 1000:.2f}s GPU utilization: "
            f"{720 + rng.random() * 20:.1f}MODEL_TFLOP/s/GPU\n")


CHATTER_STEPS = 5000

SCENARIOS: dict[str, tuple[Callable[[int, random.Random], str], int, str]] = {
    # name: (step line writer, noise lines per step (0: sized for CHATTER_STEPS), grep keyword)
    "chatter": (_nemo2, 0, "train_step_timing in s:"),
    "noisy": (_nemo2, 40, "train_step_timing in s:"),
    "dense": (_nemo2, 4, "train_step_timing in s:"),
    "megatron": (_megatron, 40, "elapsed time per iteration"),
}


def write_log(path: Path, scenario: str, size_bytes: int) -> int:
    """Write a log of about ``size_bytes``; returns the number of step lines."""
    step_line, noise_per_step, _ = SCENARIOS[scenario]
    rng = random.Random(7)
    noise_block = "".join(_noise(rng) for _ in range(4096))
    noise_lines = noise_block.splitlines(keepends=True)
    if noise_per_step == 0:  # a fixed number of steps drowned in rank chatter
        noise_per_step = max(1, size_bytes * len(noise_lines) // (CHATTER_STEPS * len(noise_block)))
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


def measure(cmd: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB) and stdout of ``cmd`` run in a fresh child process."""
    out = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], capture_output=True, text=True,
                         check=True)
    head, _, rest = out.stdout.partition("\n")
    seconds, rss, code = head.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed ({code}): {out.stderr.strip()[:400]}")
    return float(seconds), int(rss), rest


def best(cmd: list[str], repeat: int) -> tuple[float, int, str]:
    runs = [measure(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def run_one(tmp: Path, scenario: str, size_gb: float, repeat: int) -> dict[str, object]:
    path = tmp / f"{scenario}_{size_gb:g}gb.log"
    t0 = time.perf_counter()
    steps = write_log(path, scenario, int(size_gb * 1024**3))
    gen_s = time.perf_counter() - t0
    size_mb = path.stat().st_size / 1024**2
    keyword = SCENARIOS[scenario][2]
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the cache
    g_s, g_rss, g_out = best(["grep", "-c", "-F", keyword, str(path)], repeat)
    c_s, c_rss, c_out = best([sys.executable, "-c", CHILD, str(path)], repeat)
    summary = json.loads(c_out)
    path.unlink()
    assert int(g_out.strip()) == steps, "grep count differs from the generated step count"
    assert summary["steps"] == steps, f"cmax read {summary['steps']} steps, wrote {steps}"
    return {"scenario": scenario, "size_mb": round(size_mb), "steps": steps,
            "generate_s": round(gen_s, 1), "grep_s": g_s, "grep_mb_s": size_mb / g_s,
            "grep_rss_mb": g_rss / 1024, "cmax_s": c_s, "cmax_mb_s": size_mb / c_s,
            "cmax_rss_mb": c_rss / 1024, "ratio": c_s / g_s, "import_s": summary["import_s"],
            "parse_s": summary["parse_s"], "parse_mb_s": size_mb / summary["parse_s"],
            "parse_ratio": summary["parse_s"] / g_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--scenarios", default="chatter,noisy,dense,megatron")
    parser.add_argument("--grow", action="store_true",
                        help="also run chatter and noisy at twice the size (memory growth)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=None, help="temp dir (default: system)")
    args = parser.parse_args()
    plan = [(s, args.size_gb) for s in args.scenarios.split(",") if s]
    if args.grow:
        plan += [("chatter", args.size_gb * 2), ("noisy", args.size_gb * 2)]
    header = (f"{'scenario':<9} {'size MB':>8} {'steps':>9} | {'grep s':>6} {'MB/s':>6} "
              f"{'RSS MB':>6} | {'cmax s':>6} {'MB/s':>6} {'RSS MB':>6} {'x grep':>6} | "
              f"{'parse s':>7} {'MB/s':>6} {'x grep':>6}")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="cmax-bench-", dir=args.dir) as tmp:
        for scenario, size in plan:
            r = run_one(Path(tmp), scenario, size, args.repeat)
            print(f"{r['scenario']:<9} {r['size_mb']:>8} {r['steps']:>9} | {r['grep_s']:>6.2f} "
                  f"{r['grep_mb_s']:>6.0f} {r['grep_rss_mb']:>6.1f} | {r['cmax_s']:>6.2f} "
                  f"{r['cmax_mb_s']:>6.0f} {r['cmax_rss_mb']:>6.1f} {r['ratio']:>6.2f} | "
                  f"{r['parse_s']:>7.2f} {r['parse_mb_s']:>6.0f} {r['parse_ratio']:>6.2f}",
                  flush=True)
    print(f"cmax = a fresh interpreter running cmax.ingest.inspect_file (what `cmax inspect` "
          f"does): start-up + import + detection + streaming parse + summary; parse = "
          f"inspect_file alone. RSS = peak resident set of the process. Best of {args.repeat}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
