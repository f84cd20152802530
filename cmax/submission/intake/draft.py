"""A ``cmax.toml`` drafted from an llmb-run package: every value the evidence states, each with
the file and line it was read from, and a TODO comment for what only a person knows.

The same text is what ``cmax init`` writes and what ``cmax validate|score|price|report`` rate
when handed a package with no ``cmax.toml`` (so what is rated is what ``cmax init`` shows).
The commercial parts (price, term, SLA, reliability) come from a small manifest or from
``--quote``/``--term``; a part nobody gave is left out, with a note, never invented.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cmax.errors import CmaxError, EvidenceError
from cmax.submission.intake import toml_text
from cmax.submission.intake.facts import PackageFacts, PackageJob
from cmax.submission.intake.llmb import (
    FRAMEWORKS,
    MODEL_NAMES,
    LlmbJob,
    Package,
    launch_date,
    launch_time,
    nodes_for,
)

if TYPE_CHECKING:
    from cmax.reference import Reference

UNDECLARED_PROVIDER = "undeclared provider"
COMMERCIAL = ("pricing", "sla", "reliability")


@dataclass(frozen=True)
class Commercial:
    """What only the provider or buyer knows, given on the command line or in a small
    manifest (its parsed TOML: any top-level table of cmax.toml)."""

    quote: float | None = None
    term_months: int | None = None
    manifest: dict[str, Any] = field(default_factory=dict)


@dataclass
class Draft:
    text: str
    notes: list[str]
    facts: PackageFacts | None = None


def workload_id(job: LlmbJob, reference: Reference) -> str:
    """The reference model id of an llmb-run job's model_name and model_size."""
    name = str(job.get("model_info.model_name")).strip().lower()
    size = str(job.get("model_info.model_size") or "").strip().lower()
    candidates = [MODEL_NAMES.get((name, size)), f"{name}-{size}", f"{name}_{size}", name]
    for candidate in candidates:
        if candidate and size and reference.has_model(candidate):
            return reference.resolve_workload(candidate)[0]
    where = job.values["model_info.model_name"]
    raise EvidenceError(f"llmb-run model {name} {size} is not in the reference models",
                        file=where.file, line=where.line,
                        expected="a model of reference/models.toml (`cmax reference list "
                        "--what models`)",
                        fix="rate the other jobs by writing cmax.toml with `cmax init`")


def _gpu(jobs: list[LlmbJob], reference: Reference) -> tuple[str, LlmbJob]:
    types = {str(j.get("model_info.gpu_type")).strip().lower(): j for j in jobs}
    if len(types) > 1:
        raise EvidenceError(f"jobs of {len(types)} GPU types in one package: "
                            + ", ".join(sorted(types)), file=jobs[0].config,
                            expected="one GPU type per rated system",
                            fix="rate each GPU type's experiments separately")
    gpu_type, job = next(iter(types.items()))
    try:
        return reference.gpu(gpu_type).id, job
    except CmaxError:
        where = job.values["model_info.gpu_type"]
        raise EvidenceError(f"unknown GPU type {gpu_type!r}", file=where.file, line=where.line,
                            expected="a GPU of `cmax reference list --what gpus`") from None


def _per_node(jobs: list[LlmbJob], gpu_type: str) -> tuple[int, str]:
    from cmax.submission.intake.flags import GPUS_PER_NODE, MAX_GPUS_PER_NODE

    for job in jobs:
        found = job.values.get("cluster_info.gpus_per_node")
        try:
            if found is not None and int(found.value) > 0:
                return int(found.value), found.where
        except (TypeError, ValueError):
            continue
    return (GPUS_PER_NODE.get(gpu_type, MAX_GPUS_PER_NODE),
            f"llmb-run's GPU_TYPE_TO_NUM_GPUS for {gpu_type}")


def _container(job: LlmbJob) -> str | None:
    images = job.get("container_info.images")
    if isinstance(images, list) and images:
        return str(images[0]).replace("#", "/", 1)  # enroot's registry#image form
    return None


def draft_manifest(package: Package, reference: Reference, *, source: str,
                   commercial: Commercial | None = None) -> Draft:
    """The manifest text for a package (see the module docstring)."""
    given = commercial or Commercial()
    small = given.manifest
    jobs = sorted(package.jobs, key=lambda j: (j.config, j.job_id))
    if not jobs:
        raise EvidenceError("no rateable llmb-run job in the package", file=source,
                            expected="at least one pretraining job with its log",
                            fix="; ".join(package.notes) or None)
    notes = list(package.notes)
    gpu, gpu_job = _gpu(jobs, reference)
    gpu_type = str(gpu_job.get("model_info.gpu_type")).strip().lower()
    per_node, per_node_where = _per_node(jobs, gpu_type)
    biggest = max(jobs, key=lambda j: int(j.get("model_info.scale")))
    scale = int(biggest.get("model_info.scale"))
    # a bundle of several units: the system is every unit, each as large as its largest job
    unit_scales = [max(int(j.get("model_info.scale")) for j in jobs if j.unit == unit)
                   for unit in package.units if any(j.unit == unit for j in jobs)]
    dates = [d for d in (launch_date(j) for j in jobs) if d is not None]
    cluster = next((str(j.get("cluster_info.cluster_name")) for j in jobs
                    if j.get("cluster_info.cluster_name")), "llmb-run cluster")

    out = [f"# cmax.toml drafted from {source}: {len(jobs)} llmb-run job(s) ({package.kind}).",
           "# Each value was read from the file:line after it; check them, then fill in the",
           "# TODOs only you know. `cmax validate` on this folder rates it as written.", ""]
    provider = small.get("provider") or {}
    out += ["[provider]",
            toml_text.line("name", provider.get("name", UNDECLARED_PROVIDER),
                           None if "name" in provider else "TODO: the provider's name"),
            toml_text.line("cluster", provider.get("cluster", cluster),
                           None if "cluster" in provider else
                           f"{_where(jobs, 'cluster_info.cluster_name')} cluster_name")]
    if "region" in provider:
        out.append(toml_text.line("region", provider["region"]))
    system = small.get("system") or {}
    out += ["", "[system]",
            toml_text.line("gpu", system.get("gpu", gpu),
                           f"{gpu_job.values['model_info.gpu_type'].where} gpu_type "
                           f"{gpu_type}"),
            toml_text.line("nodes", system.get("nodes", nodes_for(scale, per_node)),
                           f"scale {scale} ({biggest.values['model_info.scale'].where}) / "
                           f"{per_node} GPUs per node") if not unit_scales else
            toml_text.line("nodes", system.get("nodes", sum(nodes_for(s, per_node)
                                                            for s in unit_scales)),
                           f"{len(unit_scales)} units, each its largest job's scale "
                           f"({', '.join(map(str, unit_scales))}) / {per_node} GPUs per node"),
            toml_text.line("gpus_per_node", system.get("gpus_per_node", per_node),
                           per_node_where)]
    for key in ("interconnect", "driver", "cuda", "nccl"):
        if key in system:
            out.append(toml_text.line(key, system[key]))
    if "interconnect" not in system:
        out.append("# interconnect = \"...\"                       # TODO: not in llmb-config")
    benchmark = small.get("benchmark") or {}
    last = max(dates) if dates else dt.date.today()
    out += ["", "[benchmark]",
            toml_text.line("date", benchmark.get("date", last),
                           "latest job_info.launch_time" if dates else
                           "TODO: no launch_time in the llmb-config files"),
            toml_text.line("reference", benchmark.get("reference", "latest"))]
    for job in jobs:
        out += ["", "[[runs]]", *_run_lines(job, reference)]
    for key in ("nccl", "mlperf"):
        for entry in small.get(key) or []:
            out += ["", *toml_text.table(f"[[{key}]]", entry)]
    if small.get("audit"):
        out += ["", *toml_text.table("[audit]", small["audit"])]
    out += _commercial_lines(given, notes)
    if small.get("declarations"):
        out += ["", *toml_text.table("[declarations]", small["declarations"])]
    facts = PackageFacts(kind=package.kind, gpu_type=gpu_type, notes=tuple(notes), jobs=tuple(
        _package_job(job, i) for i, job in enumerate(jobs)), units=package.units)
    return Draft(text="\n".join(out) + "\n", notes=notes, facts=facts)


def _package_job(job: LlmbJob, entry: int) -> PackageJob:
    parts = job.config.split("/")
    workload_key = parts[parts.index("experiments") - 1] if "experiments" in parts[1:] else (
        f"{job.get('workload_info.workload_type') or 'pretrain'}_"
        f"{job.get('model_info.model_name')}")
    images = job.get("container_info.images")
    release = job.get("workload_info.gsw_version")
    return PackageJob(
        job_id=job.job_id, entry=entry, config=job.config,
        suite_key=f"{workload_key}_{str(job.get('model_info.model_size')).lower()}",
        dtype=str(job.get("model_info.dtype")).lower(), scale=int(job.get("model_info.scale")),
        recipe_release=None if release is None else str(release),
        images=tuple(str(i) for i in images) if isinstance(images, list) else (),
        launched=launch_date(job), unit=job.unit, launched_at=launch_time(job))


def _where(jobs: list[LlmbJob], key: str) -> str:
    return next((j.values[key].where for j in jobs if key in j.values), "not stated")


def _run_lines(job: LlmbJob, reference: Reference) -> list[str]:
    v = job.values
    name, size = job.get("model_info.model_name"), job.get("model_info.model_size")
    lines = [
        toml_text.line("workload", workload_id(job, reference),
                       f"{v['model_info.model_name'].where} {name} {size}"),
        toml_text.line("precision", str(job.get("model_info.dtype")).lower(),
                       f"{v['model_info.dtype'].where} dtype"),
        toml_text.line("num_gpus", int(job.get("model_info.scale")),
                       f"{v['model_info.scale'].where} scale"),
        toml_text.line("log", job.log, f"job {job.job_id}, retry {job.retries[-1]} "
                       "(the highest retry wins)"),
    ]
    framework = FRAMEWORKS.get(str(job.get("workload_info.framework") or "").lower())
    if framework:
        lines.append(toml_text.line("framework", framework,
                                    f"{v['workload_info.framework'].where} framework"))
    container = _container(job)
    if container:
        lines.append(toml_text.line("container", container,
                                    f"{v['container_info.images'].where} images"))
    lines.append(f"# llmb-run job {job.job_id}: {job.config}")
    return lines


def _commercial_lines(given: Commercial, notes: list[str]) -> list[str]:
    small = given.manifest
    out: list[str] = []
    pricing = dict(small.get("pricing") or {})
    if given.quote is not None:
        pricing["usd_per_gpu_hour"] = given.quote
    if given.term_months is not None:
        pricing["term_months"] = given.term_months
    if "usd_per_gpu_hour" in pricing:
        out += ["", *toml_text.table("[pricing]", pricing)]
    else:
        notes.append("no price: the package states none; pass --quote USD_PER_GPU_HOUR (and "
                     "--term MONTHS) or a small manifest with [pricing] to price it")
        out += ["", "# [pricing]", "# usd_per_gpu_hour = 0.0                     "
                "# TODO: the quoted price per GPU-hour", "# term_months = 12"]
    for key in ("sla", "reliability"):
        if small.get(key):
            out += ["", *toml_text.table(f"[{key}]", small[key])]
        else:
            notes.append(f"no [{key}]: llmb-run evidence holds no "
                         f"{'SLA' if key == 'sla' else 'incident log'}; "
                         f"add [{key}] in a small manifest to rate it")
            out += ["", f"# [{key}]", "# TODO: " + ("uptime_pct and credits of the contract"
                                                    if key == "sla" else
                                                    "incidents file, period and GPUs in service")]
    return out
