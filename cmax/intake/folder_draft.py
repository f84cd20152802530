"""A ``cmax.toml`` drafted from any folder of evidence files, from what ``cmax inspect`` reads in
each file: its format, and the identity facts it states (GPU name, GPU and node counts, model,
precision, experiment name), each value with the file and line it came from.

Where a file states no model, precision or GPU count (a plain NeMo 2 log prints none of them),
the file's name is read for them (``llama3.1-405b_bf16_512.log``) and the comment says so: a
name is a label someone chose, so a person should confirm it. A run whose workload, precision
or GPU count is found nowhere is written commented out with a TODO, so the draft still loads.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cmax.errors import CmaxError
from cmax.intake import toml_text

if TYPE_CHECKING:
    from cmax.reference import Reference

MAX_FILES = 2_000
_PRECISIONS = ("nvfp4", "mxfp8", "fp8", "bf16", "fp16")
_SKIP = {"cmax.toml", "SOURCES", "SOURCES.md", "README.md"}


@dataclass
class Seen:
    rel: str
    fmt: str
    role: str
    summary: dict[str, Any]
    facts: list[dict[str, Any]]

    def fact(self, kind: str) -> dict[str, Any] | None:
        return next((f for f in self.facts if f["kind"] == kind), None)

    def where(self, fact: dict[str, Any]) -> str:
        return f"{self.rel}:{fact['line']}" if fact.get("line") else self.rel


def _scan(root: Path) -> list[Seen]:
    from cmax.ingest import inspect_file
    from cmax.ingest.formats import by_id

    seen: list[Seen] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name in _SKIP or path.name.startswith("."):
            continue
        if len(seen) >= MAX_FILES:
            break
        try:
            summary = inspect_file(path)
        except CmaxError:
            continue  # not evidence cmax reads: left out of the draft
        facts = summary.pop("facts", []) or []
        fmt = str(summary.get("format"))
        try:
            role: str = by_id(fmt).role
        except KeyError:
            role = ""
        seen.append(Seen(path.relative_to(root).as_posix(), fmt, role, summary, list(facts)))
    return seen


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[_/\s]+", text.lower()) if t]


def _workload(item: Seen, reference: Reference) -> tuple[str, str] | None:
    for kind in ("model", "experiment"):
        for fact in (f for f in item.facts if f["kind"] == kind):
            for token in [fact["value"], *_tokens(str(fact["value"]))]:
                if reference.has_model(token):
                    return reference.resolve_workload(token)[0], item.where(fact)
    stem = Path(item.rel).stem
    for token in _tokens(stem):
        if reference.has_model(token):
            return reference.resolve_workload(token)[0], f"file name {Path(item.rel).name}"
    return None


def _precision(item: Seen) -> tuple[str, str] | None:
    for fact in (f for f in item.facts if f["kind"] in ("precision", "experiment")):
        for token in _tokens(str(fact["value"]).replace("=", " ")):
            if token in _PRECISIONS:
                return ("fp8" if token == "mxfp8" else token), item.where(fact)
    for token in _tokens(Path(item.rel).stem):
        if token in _PRECISIONS:
            return ("fp8" if token == "mxfp8" else token), f"file name {Path(item.rel).name}"
    return None


def _gpus(item: Seen) -> tuple[int, str] | None:
    fact = item.fact("gpu_count")
    if fact is not None and str(fact["value"]).isdigit():
        return int(fact["value"]), item.where(fact)
    tokens = _tokens(Path(item.rel).stem)
    numbers = [t for t in tokens if t.isdigit() and int(t) >= 8]
    if numbers:
        return int(numbers[-1]), f"file name {Path(item.rel).name}"
    return None


def draft_folder(root: Path, reference: Reference, *, source: str) -> str:
    """The draft manifest text for ``root`` (see the module docstring)."""
    from cmax.claims import gpu_family

    seen = _scan(root)
    out = [f"# cmax.toml drafted by `cmax init` from {source}: {len(seen)} evidence file(s).",
           "# Each value was read from the file:line after it; check them, then fill in the",
           "# TODOs only you know.", ""]
    gpu_votes: Counter[str] = Counter()
    gpu_where: dict[str, str] = {}
    for item in seen:
        for fact in (f for f in item.facts if f["kind"] == "gpu"):
            try:
                gid = reference.gpu(gpu_family(str(fact["value"])) or str(fact["value"])).id
            except CmaxError:
                continue
            gpu_votes[gid] += 1
            gpu_where.setdefault(gid, f"{item.where(fact)} {fact['value']}")
    gpu = gpu_votes.most_common(1)[0][0] if gpu_votes else None
    runs = [item for item in seen if item.role == "run"]
    nccl = [item for item in seen if item.role == "nccl"]
    audit = next((item for item in seen if item.role == "audit"), None)
    nodes_fact = next(((i, i.fact("node_count")) for i in nccl if i.fact("node_count")), None)
    run_rows = [(item, _workload(item, reference), _precision(item), _gpus(item))
                for item in runs]
    largest = max((g[0] for _, _, _, g in run_rows if g), default=None)
    out += ["[provider]", toml_text.line("name", "undeclared provider",
                                          "TODO: the provider's name"),
            toml_text.line("cluster", root.name or "cluster", "TODO: the cluster's name"), ""]
    out += ["[system]", toml_text.line("gpu", gpu or "h100-sxm",
                                       gpu_where.get(gpu or "", "TODO: no file names its GPU"))]
    if nodes_fact is not None and nodes_fact[1] is not None:
        holder, counted = nodes_fact[0], nodes_fact[1]
        out.append(toml_text.line("nodes", int(counted["value"]), holder.where(counted)))
    else:
        nodes = max(1, -(-(largest or 8) // 8))
        out.append(toml_text.line("nodes", nodes, "TODO: from the largest run / 8 GPUs per node"))
    out += [toml_text.line("gpus_per_node", 8, "TODO: check (8 on HGX, 4 on GB200/GB300)"),
            "# interconnect = \"...\"                       # TODO: `cmax reference list`", ""]
    out += ["[benchmark]", toml_text.line("date", dt.date.today(),
                                          "TODO: the date the benchmarks ran"),
            toml_text.line("reference", "latest")]
    for item, workload, precision, gpus in run_rows:
        out.append("")
        lines = [toml_text.line("workload", workload[0], workload[1]) if workload else
                 "workload = \"TODO\"",
                 toml_text.line("precision", precision[0], precision[1]) if precision else
                 "precision = \"TODO\"",
                 toml_text.line("num_gpus", gpus[0], gpus[1]) if gpus else "num_gpus = 0",
                 toml_text.line("log", item.rel, f"format {item.fmt}")]
        several = [e for key in ("experiments", "jobs")
                   for e in (item.summary.get(key) or [])]
        chosen = item.fact("experiment")
        if len(several) > 1 and chosen is not None:  # a summary of several: name the one
            lines.append(toml_text.line("experiment", str(chosen["value"]),
                                        f"{item.where(chosen)}; {len(several)} in the file"))
        if workload and precision and gpus:
            out += ["[[runs]]", *lines]
        else:
            out += ["# TODO: workload, precision or GPU count not found for this run",
                    "# [[runs]]", *(f"# {line}" for line in lines)]
    for item in nccl:
        out += ["", "[[nccl]]", toml_text.line("path", item.rel, f"format {item.fmt}")]
    if audit is not None:
        out += ["", "[audit]", toml_text.line("path", audit.rel, f"format {audit.fmt}")]
    for item in seen:
        if item.role not in ("run", "nccl", "audit"):
            out.append(f"# {item.rel}: {item.fmt} evidence, not drafted; see docs/manifest.md")
    out += ["", "# [pricing]", "# usd_per_gpu_hour = 0.0                     "
            "# TODO: the quoted price per GPU-hour", "# [sla]", "# TODO: uptime_pct and credits",
            "# [reliability]", "# TODO: incidents file, period and GPUs in service"]
    return "\n".join(out) + "\n"
