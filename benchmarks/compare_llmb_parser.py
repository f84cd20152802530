"""cmax's reading of training logs against llmb-run's own parser, on the same logs.

llmb-run's ``pretrain_log_parser.py`` and ``job_logs.py`` are taken from a git checkout (or
bare mirror) of NVIDIA/exemplar-performance at a named commit, run unchanged from a temporary
folder (never copied into cmax), and each log's status, mean step time and mean TFLOP/s/GPU
over iterations 35-44 are compared with ``cmax inspect`` of the same file (its current-recipe
window). Prints one line per log and exits 1 on any difference beyond 1e-9 relative. Where
llmb-run reports no figures (any status but success) only the status is compared.

At e249aa3, on tests/data/ingest/{megatron_bridge_llama3.1-70b,nemo2_llama3.1-8b_fp8,
megatron_lm_nan_grad,nemo2_messy,megatron_bridge_tflops_by_position}.log and the
aurora-compute sample's three NeMo 2 logs, every status (success, invalid_grad_norm,
incomplete) and every mean is the same (the last log is built so that pairing TFLOP/s lines
by position, 738.5, differs from per-step, 739.5, and most-recent pairing, 736.8); so is
nemo2_identity_preamble.log's no_data (3 steps, none in the window) and the by-position log
with Megatron's inline ``throughput per GPU (TFLOP/s/GPU): 999.0`` added to every iteration
line (738.5: llmb-run reads only the MODEL_TFLOP/s/GPU lines).

Logs that are not llmb-run's own output still differ, by design: a Megatron-LM log
(megatron_lm_log_energy.log: llmb-run has no Megatron-LM parser and reports no TFLOP/s, cmax
reads the inline figure), a Megatron-Bridge log with only rank-0 ``Step Time`` lines
(megatron_bridge_step_time_only.log: no_data for llmb-run, whose parser needs ``iteration N/M``
lines; cmax numbers those lines as the steps) and a NeMo 2 log over two epochs
(nemo2_two_epochs.log: llmb-run reads the per-epoch counter, which restarts below 35, so
no_data; cmax reads the global step).

    python benchmarks/compare_llmb_parser.py --repo /path/to/exemplar-performance \\
        --commit e249aa3 LOG[:FRAMEWORK] ...

FRAMEWORK is llmb-config's ``workload_info.framework`` (``megatron_bridge`` by default,
``nemo2`` for NeMo 2 logs).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

FILES = ("cli/llmb-run/src/llmb_run/pretrain_log_parser.py",
         "cli/llmb-run/src/llmb_run/job_logs.py")


def load_llmb(repo: Path, commit: str, into: Path) -> object:
    package = into / "llmb_run"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for path in FILES:
        text = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"],
                              check=True, capture_output=True, text=True).stdout
        (package / Path(path).name).write_text(text)
    sys.path.insert(0, str(into))
    return importlib.import_module("llmb_run.pretrain_log_parser")


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--repo", type=Path, required=True)
    args.add_argument("--commit", default="e249aa3")
    args.add_argument("logs", nargs="+")
    opts = args.parse_args()
    from cmax.ingest import inspect_file

    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        parser = load_llmb(opts.repo, opts.commit, Path(tmp))
        for item in opts.logs:
            log, _, framework = item.partition(":")
            parse = getattr(parser, "parse_pretrain_log")  # noqa: B009 (loaded at run time)
            theirs = parse(Path(log), framework or "megatron_bridge")
            ours = inspect_file(Path(log))
            metrics = theirs.metrics
            pairs = {
                "status": (theirs.status.value, ours.get("status")),
                "time_mean_s": (metrics.time_mean_seconds if metrics else None,
                                ours.get("window_mean_step_time_s")),
                "tflops_mean": (metrics.tflops_per_gpu_mean if metrics else None,
                                ours.get("window_mean_tflops_per_gpu")),
            }
            if metrics is None:  # llmb-run keeps no figures for a failed parse: compare status
                pairs = {"status": pairs["status"]}
            same = all(a == b if k == "status" else close(a, b) for k, (a, b) in pairs.items())
            failed += not same
            shown = "  ".join(f"{k} llmb-run={a} cmax={b}" for k, (a, b) in pairs.items())
            print(f"{'same' if same else 'DIFFERENT'}  {log}  {shown}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
