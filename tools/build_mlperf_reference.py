"""Build reference/mlperf_nvidia.csv and reference/mlperf_rcp.json.

Usage:
  python tools/build_mlperf_reference.py --results 4.0=DIR --results 4.1=DIR ... [--out DIR]

``DIR`` is a checkout of ``github.com/mlcommons/training_results_v<round>`` (the script reads
``NVIDIA/results/*/*/`` and ``NVIDIA/systems/*.json`` there and cites ``repo:path@commit``, the
commit taken from ``git rev-parse HEAD`` in DIR, or from a bare git dir with ``--git``).

* ``mlperf_nvidia.csv``: one row per NVIDIA closed-division result (round, benchmark, system,
  accelerator, GPU count, official score), scored by :mod:`cmax.ingest.formats.mlperf`. With the
  ``mlperf-logging`` package installed (dev extra) every score is checked against
  ``mlperf_logging.result_summarizer`` on a temporary copy (the summarizer rewrites
  ``scaling.json`` in place when its RCP check disagrees with the shipped factor); any
  difference stops the build.
* ``mlperf_rcp.json``: MLCommons' reference convergence points for rounds 4.0.0-6.0.0, copied
  from the installed ``mlperf-logging`` package (``mlperf_logging/rcp_checker/training_<r>/
  rcps_<benchmark>.json``) with the statistics its RCP checker derives from them (olympic
  mean, population stdev, minimum acceptable mean and whether the point survives pruning),
  so cmax checks convergence without importing that package.

Then ``reference/SHA256SUMS`` is rewritten; bump ``reference/release.toml`` with the data.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cmax.ingest.formats.mlperf import SUPPORTED_ROUNDS, read_tree  # noqa: E402
from cmax.reference.checksum import write_checksums  # noqa: E402
from cmax.reference.mlperf import CSV_COLUMNS, RCP_FILE, TABLE_FILE  # noqa: E402

SUBMITTER = "NVIDIA"


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    where = ["--git-dir", str(folder)] if (folder / "HEAD").is_file() else ["-C", str(folder)]
    return subprocess.run(["git", *where, *args], check=True, capture_output=True)


def _commit(folder: Path) -> str:
    return _git(folder, "rev-parse", "HEAD").stdout.decode().strip()


def _work_tree(folder: Path, tmp: Path) -> Path:
    """``folder`` itself, or the NVIDIA folders of a bare git dir unpacked into ``tmp``."""
    if (folder / SUBMITTER).is_dir():
        return folder
    archive = _git(folder, "archive", "HEAD", f"{SUBMITTER}/results", f"{SUBMITTER}/systems")
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    return tmp


def nvidia_rows(round_: str, folder: Path, *, verify: bool) -> list[dict[str, str]]:
    commit = _commit(folder)
    with tempfile.TemporaryDirectory() as tmp:
        return _rows(round_, _work_tree(folder, Path(tmp)), commit, verify=verify)


def _rows(round_: str, folder: Path, commit: str, *, verify: bool) -> list[dict[str, str]]:
    org = folder / SUBMITTER
    sets = read_tree(org / "results", root=org)
    official = _official(org, round_) if verify else None
    rows = []
    for s in sets:
        if s.system is None or (s.division or "").lower() != "closed":
            continue
        if s.score.score_min is None:
            continue
        key = (s.folder.parent.name, s.benchmark)
        if official is not None:
            want = official.get(key)
            if want is None or abs(want - s.score.score_min) > 1e-9 * want:
                raise SystemExit(f"v{round_} {key}: cmax {s.score.score_min} != official {want}")
        rel = s.folder.relative_to(folder).as_posix()
        sys_rel = s.system.path.relative_to(folder).as_posix()
        repo = f"mlcommons/training_results_v{round_}"
        rows.append({
            "round": round_, "benchmark": s.benchmark, "submitter": SUBMITTER,
            "system_folder": s.folder.parent.name, "system_name": s.system_name or "",
            "accelerator": s.accelerator or "", "num_gpus": str(s.num_gpus or ""),
            "nodes": s.system.get("number_of_nodes") or "",
            "availability": s.system.get("status") or "",
            "framework": s.system.get("framework") or "",
            "runs": str(s.score.runs), "failed_runs": str(s.score.failed),
            "score_min": repr(s.score.score_min),
            "unscaled_score_min": repr(s.score.unscaled_min),
            "rcp_scaling_factor": repr(s.scaling_factor),
            "run_minutes": ";".join(f"{r.minutes!r}" if r.minutes is not None else "failed"
                                    for r in s.runs),
            "source": f"{repo}:{rel}/@{commit}",
            "system_source": f"{repo}:{sys_rel}@{commit}",
        })
    return rows


def _official(org: Path, round_: str) -> dict[tuple[str, str], float]:
    from mlperf_logging.result_summarizer.result_summarizer import summarize_results

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / org.name
        shutil.copytree(org / "results", copy / "results")
        shutil.copytree(org / "systems", copy / "systems")
        with redirect_stdout(io.StringIO()):
            _, _, detailed, _ = summarize_results(str(copy), "training", f"{round_}.0")
    out: dict[tuple[str, str], float] = {}
    for rec in detailed.to_dict(orient="records"):
        # details_url ends in systems/<system folder>.json: the row's folder, unambiguously
        name = str(rec["details_url"]).rsplit("/", 1)[-1].removesuffix(".json")
        for key, value in rec.items():
            if key.endswith(":time_to_train") and value == value and value is not None:
                out[(name, key.split(":")[0])] = float(value)
    return out


def rcp_data() -> dict[str, Any]:
    from importlib.metadata import version

    import mlperf_logging
    from mlperf_logging.rcp_checker import rcp_checker

    base = Path(mlperf_logging.__file__).parent / "rcp_checker"
    out: dict[str, Any] = {
        "source": f"mlperf-logging {version('mlperf-logging')} (PyPI): "
                  "mlperf_logging/rcp_checker/training_<ruleset>/rcps_<benchmark>.json; "
                  "statistics from its rcp_checker.RCP_Checker",
        "rulesets": {},
    }
    for ruleset in (f"{r}.0" for r in SUPPORTED_ROUNDS):
        folder = base / f"training_{ruleset}"
        per: dict[str, Any] = {}
        for path in sorted(folder.glob("rcps_*.json")):
            bench = path.stem.removeprefix("rcps_")
            checker = rcp_checker.RCP_Checker("training", ruleset, bench, False)
            records = []
            for name, rec in checker.rcp_data.items():
                records.append({
                    "name": name, "bs": rec["BS"],
                    "points": sorted(rec["Epochs to converge"]),
                    "mean": float(rec["RCP Mean"]), "stdev": float(rec["RCP Stdev"]),
                    "min_epochs": float(rec["Min Epochs"]),
                    "max_speedup": float(rec["Max Speedup"]),
                    "pruned_in": name in checker.pruned_rcp_data,
                })
            per[bench] = {"submission_runs": checker.submission_runs,
                          "file": f"mlperf_logging/rcp_checker/training_{ruleset}/{path.name}",
                          "records": records}
        out["rulesets"][ruleset] = per
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", action="append", default=[],
                        help="ROUND=DIR, a checkout of mlcommons/training_results_vROUND")
    parser.add_argument("--out", type=Path, default=ROOT / "reference")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the comparison with mlperf_logging's summarizer")
    args = parser.parse_args(argv)
    rows: list[dict[str, str]] = []
    for item in args.results:
        round_, _, folder = item.partition("=")
        rows += nvidia_rows(round_.removeprefix("v"), Path(folder), verify=not args.no_verify)
    rows.sort(key=lambda r: (r["round"], r["benchmark"], int(r["num_gpus"] or 0),
                             r["system_folder"]))
    with (args.out / TABLE_FILE).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    (args.out / RCP_FILE).write_text(json.dumps(rcp_data(), indent=1, sort_keys=True) + "\n",
                                     encoding="utf-8")
    write_checksums(args.out)
    print(f"{len(rows)} NVIDIA results -> {args.out / TABLE_FILE}; RCPs -> {args.out / RCP_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
