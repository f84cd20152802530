"""What llmb-run leaves behind, read as it is: the Exemplar archive, an install folder, or any
folder of llmb-run experiments.

Layout (NVIDIA/exemplar-performance@e249aa3): every launched job writes
``<workload>/experiments/<exp>/<exp>_<ts>/<exp>/llmb-config_<jobid>.yaml`` beside its logs
``log-<exp>_<jobid>_<retry>.out`` (cli/llmb-run/README.md, example_llmb_config.yaml).
``llmb-run archive`` packs ``<workload>/experiments/**`` of ``$LLMB_INSTALL/workloads`` under one
top folder ``llmb-archive-<ts>/`` into ``llmb-archive_<version>_<ts>.tar.zst`` and leaves the
job database ``.llmb/jobs.sqlite3`` out (cli/llmb-run/src/llmb_run/archive.py), so the
llmb-config files and logs are all the evidence an archive holds.

A job's log is chosen as llmb-run chooses it: files matching ``^log-.*_<jobid>_(\\d+)\\.out$``
in the config's folder, the highest retry number winning (cli/llmb-run/src/llmb_run/
job_logs.py ``find_job_logs``/``active_job_log``). Every job of one configuration is kept and
drafted as a run of its own: llmb-run reports the latest job of a configuration, but a
configuration is rated on all its runs (:mod:`cmax.judgement.exemplar` pools them), so a best
job renumbered last, or the one the provider chose, cannot stand for the others.

Each job's ``job_config`` is checked by :mod:`cmax.submission.intake.flags`; the ``job_info.user``
login
is never read into anything cmax keeps (personal data: it names the person who launched the
job, not the system).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cmax.errors import EvidenceError
from cmax.submission.intake.flags import FIX, blockers

CONFIG_GLOB = "llmb-config_*.yaml"
_CONFIG_NAME = re.compile(r"^llmb-config_(\d+)\.yaml$")
MAX_CONFIG_BYTES = 1 << 20  # a real llmb-config is about 1 KiB
MAX_JOBS = 5_000
INSTALL_DB = Path(".llmb") / "jobs.sqlite3"

# llmb-config workload_info.framework -> the framework label cmax's baselines use
FRAMEWORKS = {"megatron_bridge": "megatron-bridge", "nemo2": "nemo2", "nemo": "nemo2"}
# llmb-run model names whose size does not find a reference alias by itself
# (nemotron3/metadata.yaml@e249aa3 downloads Nemotron-3-Super-120B-A12B and -Nano-30B-A3B)
MODEL_NAMES = {("nemotron_3", "120b"): "nemotron3-super", ("nemotron_3", "30b"): "nemotron3-nano",
               ("nemotron3", "120b"): "nemotron3-super", ("nemotron3", "30b"): "nemotron3-nano"}


@dataclass(frozen=True)
class Value:
    """One value read from an llmb-config file, with where it was read."""

    value: Any
    file: str
    line: int | None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class LlmbJob:
    """One llmb-run job: its config's values (never ``job_info.user``) and its chosen log."""

    job_id: int
    config: str  # path relative to the package root
    values: dict[str, Value]
    log: str | None
    retries: tuple[int, ...]
    unit: str = ""  # the package (one scalable unit's archive) it came from, in a bundle of several

    def get(self, key: str) -> Any:
        found = self.values.get(key)
        return None if found is None else found.value

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (str(self.get("model_info.model_name")), str(self.get("model_info.model_size")),
                str(self.get("model_info.dtype")), str(self.get("model_info.scale")))


@dataclass
class Package:
    """The jobs of one llmb-run package and what was passed over."""

    root: Path
    kind: str  # "install folder", "folder of experiments"
    jobs: list[LlmbJob]
    notes: list[str] = field(default_factory=list)
    units: tuple[str, ...] = ()  # the packages of a bundle of several, each a scalable unit


def is_install(root: Path) -> bool:
    return (root / INSTALL_DB).is_file() and (root / "workloads").is_dir()


def find_configs(root: Path) -> list[Path]:
    """Every llmb-config file under ``root`` that sits in an llmb-run experiments folder."""
    base = root / "workloads" if is_install(root) else root
    found: list[Path] = []
    for path in sorted(base.rglob(CONFIG_GLOB)):
        if not _CONFIG_NAME.match(path.name) or not path.is_file() or path.is_symlink():
            continue
        found.append(path)
        if len(found) > MAX_JOBS:
            raise EvidenceError(f"more than {MAX_JOBS} llmb-config files", file=root,
                                expected=f"at most {MAX_JOBS} jobs in one package")
    return found


def looks_like_package(root: Path) -> bool:
    """A folder with no ``cmax.toml`` that llmb-run wrote: an install or experiments."""
    if is_install(root):
        return True
    return any(True for _ in _configs_in_experiments(root))


def _configs_in_experiments(root: Path) -> Any:
    for path in root.rglob(CONFIG_GLOB):
        if "experiments" in path.relative_to(root).parts[:-1]:
            yield path


# --- reading one llmb-config ----------------------------------------------------------------

_KEY_LINE = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:")
KEPT = ("job_info.job_id", "job_info.launch_time", "workload_info.framework",
        "workload_info.gsw_version", "workload_info.fw_version", "workload_info.workload_type",
        "model_info.model_name", "model_info.model_size", "model_info.dtype",
        "model_info.scale", "model_info.gpu_type", "cluster_info.cluster_name",
        "cluster_info.gpus_per_node", "container_info.images", "job_config.profile_enabled",
        "job_config.proxy", "job_config.env_overrides", "job_config.model_overrides",
        "job_config.mbridge_args")
NEEDED = ("model_info.model_name", "model_info.dtype", "model_info.scale",
          "model_info.gpu_type")


def _key_lines(text: str) -> dict[str, int]:
    """``section.key`` -> line number, for the two-level mapping llmb-run writes."""
    lines: dict[str, int] = {}
    section = ""
    for number, line in enumerate(text.splitlines(), start=1):
        match = _KEY_LINE.match(line)
        if match is None:
            continue
        if not match.group(1):
            section = match.group(2)
            lines.setdefault(section, number)
        elif section:
            lines.setdefault(f"{section}.{match.group(2)}", number)
    return lines


def read_config(path: Path, rel: str) -> dict[str, Value]:
    """The kept values of one llmb-config file (``job_info.user`` is dropped unread)."""
    import yaml

    from cmax.reading.yamlfile import load_yaml

    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise EvidenceError("llmb-config file is too large", file=rel,
                            expected=f"at most {MAX_CONFIG_BYTES:,} bytes (llmb-run writes ~1 KiB)")
    try:
        text = path.read_text(encoding="utf-8")
        data = load_yaml(text, file=rel)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise EvidenceError(f"llmb-config is not valid YAML: {type(exc).__name__}", file=rel,
                            line=None if line is None else line + 1,
                            expected="the YAML file llmb-run writes at job launch") from None
    if not isinstance(data, dict):
        raise EvidenceError("llmb-config is not a YAML mapping", file=rel,
                            expected="sections job_info, model_info, cluster_info, ...")
    lines = _key_lines(text)
    values: dict[str, Value] = {}
    for dotted in KEPT:
        section, key = dotted.split(".")
        block = data.get(section)
        if isinstance(block, dict) and key in block:
            values[dotted] = Value(block[key], rel, lines.get(dotted))
    missing = [k for k in NEEDED if values.get(k) is None or values[k].value in (None, "")]
    # a microbenchmark's or inference job's config need not name a model, dtype or scale
    # (llmb-run's microbenchmark_nccl: the workload name and no dtype); such a job is passed
    # over as not rated (read_package), never read for a run
    scale = values.get("model_info.scale")
    if scale is not None and scale.value not in (None, ""):
        text = str(scale.value).strip()
        if isinstance(scale.value, bool) or not (text.isdigit() and 0 < len(text) <= 9
                                                 and int(text) > 0):
            raise EvidenceError(f"model_info.scale {text[:40]!r} is not a GPU count", file=rel,
                                line=scale.line, expected="a whole number of GPUs, as llmb-run "
                                "writes it", fix="check that the file is the unmodified "
                                "llmb-config")
        values["model_info.scale"] = Value(int(text), scale.file, scale.line)
    kind = values.get("workload_info.workload_type")
    if missing and (kind is None or kind.value in (None, "", "pretrain")):
        raise EvidenceError(f"llmb-config lacks {', '.join(missing)}", file=rel,
                            expected="the model_info section llmb-run writes (model_name, "
                            "model_size, dtype, scale, gpu_type)")
    return values


def job_logs(folder: Path, job_id: int) -> list[tuple[int, Path]]:
    """llmb-run's retry logs of one job, lowest retry first."""
    pattern = re.compile(rf"^log-.*_{job_id}_(\d+)\.out$")
    logs = [(int(m.group(1)), p) for p in folder.iterdir()
            if p.is_file() and (m := pattern.match(p.name))]
    return sorted(logs)


def read_job(path: Path, root: Path, unit: str = "") -> LlmbJob:
    rel = path.relative_to(root).as_posix()
    values = read_config(path, rel)
    name_id = _CONFIG_NAME.match(path.name)
    raw_id = values.get("job_info.job_id")
    try:
        job_id = int(str(raw_id.value if raw_id else name_id.group(1) if name_id else ""))
    except ValueError:
        raise EvidenceError(f"job id {raw_id.value if raw_id else None!r} is not a number",
                            file=rel, line=raw_id.line if raw_id else None,
                            expected="job_info.job_id, the Slurm job id") from None
    logs = job_logs(path.parent, job_id)
    log = logs[-1][1].relative_to(root).as_posix() if logs else None
    return LlmbJob(job_id=job_id, config=rel, values=values, log=log,
                   retries=tuple(r for r, _ in logs), unit=unit)


FLAGS = ("job_config.proxy", "job_config.profile_enabled", "job_config.env_overrides",
         "job_config.model_overrides", "job_config.mbridge_args")


def refuse_not_for_rating(job: LlmbJob) -> None:
    found = blockers(**{key.split(".")[1]: job.get(key) for key in FLAGS})
    if found:
        flag = next(job.values[k] for k in FLAGS
                    if k in job.values and blockers(**{k.split(".")[1]: job.values[k].value}))
        raise EvidenceError(f"llmb-run job {job.job_id} is not for rating: " + "; ".join(found),
                            file=job.config, line=flag.line, field="job_config", fix=FIX)


def read_package(root: Path, *, kind: str, units: list[Path] | None = None) -> Package:
    """Every job of the package, the not-for-rating ones refused, every run of a configuration
    kept. ``units``: the packages of a bundle of several (paths under ``root``), each
    read on its own and its jobs labelled with its folder's name."""
    if units:
        parts = [read_package_at(root, unit, kind=kind) for unit in units]
        return Package(root=root, kind=f"{len(units)} {kind}s, one per scalable unit",
                       jobs=[j for p in parts for j in p.jobs],
                       notes=[n for p in parts for n in p.notes],
                       units=tuple(u.name for u in units))
    return read_package_at(root, root, kind=kind)


def read_package_at(root: Path, under: Path, *, kind: str) -> Package:
    configs = find_configs(under)
    if not configs:
        raise EvidenceError("no llmb-config_<jobid>.yaml under this folder", file=under,
                            expected="an llmb-run install ($LLMB_INSTALL with workloads/), the "
                            "llmb-archive .tar.zst, or a folder of llmb-run experiments")
    unit = "" if under == root else under.name
    jobs = [read_job(path, root, unit) for path in configs]
    notes: list[str] = []
    kept: list[LlmbJob] = []
    for job in sorted(jobs, key=lambda j: j.job_id):
        if job.get("workload_info.workload_type") not in (None, "pretrain"):
            notes.append(f"job {job.job_id} ({job.config}) is a "
                         f"{job.get('workload_info.workload_type')} workload: not rated")
            continue
        refuse_not_for_rating(job)
        kept.append(job)
    configurations: dict[tuple[str, str, str, str], list[int]] = {}
    for job in kept:
        configurations.setdefault(job.key, []).append(job.job_id)
    for (name, size, dtype, scale), ids in configurations.items():
        if len(ids) > 1:
            notes.append(f"jobs {', '.join(map(str, ids))} ran one configuration ({name} {size} "
                         f"{dtype} at {scale} GPUs): each is a run of it, and it is rated on "
                         "all of them, not on the latest (llmb-run's report) alone")
    for job in kept:
        if job.log is None:
            notes.append(f"job {job.job_id} ({job.config}) has no log-*_{job.job_id}_<retry>.out "
                         "beside its llmb-config: not rated")
        elif len(job.retries) > 1:
            notes.append(f"job {job.job_id}: retry {job.retries[-1]} of "
                         f"{', '.join(map(str, job.retries))} rated (llmb-run's rule: the "
                         "highest retry wins)")
    rated = [j for j in kept if j.log is not None]
    if unit:
        notes = [f"{unit}: {note}" for note in notes]
    return Package(root=root, kind=kind, jobs=rated, notes=notes)


def launch_date(job: LlmbJob) -> dt.date | None:
    when = launch_time(job)
    return None if when is None else when.date()


def launch_time(job: LlmbJob) -> dt.datetime | None:
    """``job_info.launch_time`` (ISO; read as UTC when it names no zone), else None."""
    text = str(job.get("job_info.launch_time") or "")
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def nodes_for(scale: int, gpus_per_node: int) -> int:
    return math.ceil(scale / gpus_per_node)
