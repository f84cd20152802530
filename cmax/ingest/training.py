"""Which log file a training run means (the parser that reads it is its format's, in
cmax/ingest/formats/_training_log.py).

llmb-run names a job's logs ``log-<...>_<jobid>_<retry>.out`` and, when Slurm requeued the job,
reads only the highest retry (research dgxc.md §3.2, ``job_logs.py``); earlier retries stopped
part-way. A manifest ``log`` may name such a file or the folder holding it; either way the
highest retry of that job is read, and the run's notes say when that differs from the name
given.
"""

from __future__ import annotations

import re
from pathlib import Path

from cmax.errors import EvidenceError

_LLMB_LOG = re.compile(r"^log-.*_(\d+)_(\d+)\.out$")
# sbatch's default output name slurm-%j.out (slurm-%A_%a.out for an array task)
_SLURM_LOG = re.compile(r"^slurm-(\d+(?:_\d+)?)\.out$")


def job_of_log(name: str) -> str | None:
    """The Slurm job id a log's file name carries (llmb-run's, sbatch's default), else None."""
    match = _LLMB_LOG.match(name) or _SLURM_LOG.match(name)
    return match.group(1) if match else None


def pick_log(path: Path) -> tuple[Path, list[str]]:
    """The file to read for a run's ``log`` (a file or folder), plus notes on the choice."""
    if path.is_dir():
        found = [(m, p) for p in sorted(path.iterdir())
                 if p.is_file() and (m := _LLMB_LOG.match(p.name))]
        if not found:
            files = [p for p in sorted(path.iterdir())
                     if p.is_file() and not p.name.startswith(".")]
            if len(files) == 1:
                return files[0], []
            raise EvidenceError(
                f"folder holds {len(files)} files and no llmb-run log", file=path,
                expected="log-<name>_<jobid>_<retry>.out files of one job, or a single log",
                fix="point `log` at the log file itself")
        jobs = sorted({m.group(1) for m, _ in found})
        if len(jobs) > 1:
            raise EvidenceError(
                f"folder holds logs of {len(jobs)} jobs ({', '.join(jobs)})", file=path,
                fix="point `log` at one job's log file")
        match, best = max(found, key=lambda item: int(item[0].group(2)))
        notes = []
        if len(found) > 1:
            notes.append(f"{best.name} read: retry {match.group(2)} of job {match.group(1)} "
                         "(llmb-run keeps the highest retry)")
        return best, notes
    named = _LLMB_LOG.match(path.name)
    if not named:
        return path, []
    stem = path.name[: named.start(2)]
    retries = [(int(m.group(2)), p) for p in path.parent.iterdir()
               if p.is_file() and p.name.startswith(stem) and (m := _LLMB_LOG.match(p.name))
               and m.group(1) == named.group(1) and p.name[: m.start(2)] == stem]
    retry, best = max(retries, key=lambda item: item[0])
    if best != path:
        return best, [f"{path.name} superseded by {best.name}: retry {retry} of job "
                      f"{named.group(1)} (llmb-run keeps the highest retry)"]
    return path, []
