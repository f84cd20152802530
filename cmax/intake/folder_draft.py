"""A ``cmax.toml`` drafted from any folder of evidence files, from what ``cmax inspect`` reads in
each file: its format, and the identity facts it states (GPU name, GPU and node counts, hosts,
model, precision, experiment name, global batch size, the audit's compute fabric and date), each
value with the file and line it came from.

The interconnect is drafted only from a statement of the fabric's class, NIC count and rate
(a ClusterMAX audit's ``networking.nicFabric``) that names a reference fabric id; nccl-tests
show the transport and NIC count (``NET/IB : Using [0]mlx5_0:1/IB ...``) but not the link rate,
so from them alone the line stays a TODO naming what they show and the ids that fit.

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
from cmax.intake import inference_draft, toml_text

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
        if not path.is_file() or path.is_symlink() or path.name in _SKIP \
                or path.name.startswith("."):  # a linked file is read under its own name
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


def _tally(item: Seen, key: str) -> int | None:
    fact = next((f for f in item.facts if f["kind"] == "tally" and f.get("where") == key), None)
    return int(fact["value"]) if fact is not None and str(fact["value"]).isdigit() else None


def _interconnect(seen: list[Seen], reference: Reference) -> tuple[str | None, str]:
    """The ``[system] interconnect`` id and where it was read, or None and a TODO saying what
    the evidence shows (see the module docstring)."""
    from cmax.reference.network import interconnect_aliases

    known = interconnect_aliases(reference.network)
    for item in (i for i in seen if i.role == "audit"):
        fabric = item.fact("fabric")
        if fabric is None:
            continue
        count = _tally(item, "networking.nicFabric.computeFabricCount")
        rate = _tally(item, "networking.nicFabric.computeFabricGbps")
        words = _tokens(str(fabric["value"]).replace("-", " "))
        generation = next((w for w in words if w in ("hdr", "ndr", "xdr")), None)
        where = f"{item.rel} networking.nicFabric: {count} x {fabric['value']}"
        if "ib" in words and generation and count and rate:
            candidate = f"infiniband-{generation}-{count}x{rate}"
            if candidate in known:
                return known[candidate], where
            return None, f"TODO: {where} ({candidate} is not a reference fabric)"
        return None, f"TODO: {where}; pick an id of docs/manifest.md"
    for item in (i for i in seen if i.role == "nccl"):
        using = next((f for f in item.facts if f["kind"] == "fabric"
                      and str(f["value"]).startswith("NET/IB : Using")), None)
        if using is not None:
            nics = len(re.findall(r"\[\d+\]\S+/IB\b", str(using["value"]).split(";")[0]))
            fits = sorted({fab for fab in known.values() if fab.startswith("infiniband-")
                           and f"-{nics}x" in fab})
            return None, (f"TODO: {item.where(using)} shows {nics} InfiniBand NIC(s), not "
                          f"their rate: {' or '.join(fits) or 'see docs/manifest.md'}")
    return None, "TODO: no file states the fabric; see docs/manifest.md"


def _nodes(seen: list[Seen], largest: int | None, per_node: int) -> tuple[int, str]:
    """The most nodes any file states (the system holds every run): a node count, the distinct
    hosts one file names, or the largest run over the GPUs per node."""
    stated: list[tuple[int, str]] = []
    for item in seen:
        for fact in (f for f in item.facts if f["kind"] == "node_count"):
            if str(fact["value"]).isdigit():
                stated.append((int(fact["value"]), item.where(fact)
                               + (f" ({fact['where']})" if fact.get("where") else "")))
        hosts = {f["value"] for f in item.facts if f["kind"] == "host"}
        if len(hosts) > 1 and item.role in ("run", "nccl"):
            stated.append((len(hosts), f"{item.rel}: {len(hosts)} distinct hosts"))
    if largest:
        stated.append((-(-largest // per_node), f"the largest run, {largest} GPUs / {per_node}"))
    if not stated:
        return 1, "TODO: no file states the node count"
    return max(stated, key=lambda s: s[0])


def _per_node(seen: list[Seen], gpu: str | None) -> tuple[int, str]:
    from cmax.intake.flags import GPUS_PER_NODE

    for item in seen:
        per = _tally(item, "gpus.perNode")
        if per:
            return per, f"{item.rel} gpus.perNode"
    for item in (i for i in seen if i.role == "nccl"):
        ranks, nodes = item.fact("gpu_count"), item.fact("node_count")
        if ranks and nodes and str(ranks["value"]).isdigit() and str(nodes["value"]).isdigit() \
                and int(nodes["value"]) > 0 and int(ranks["value"]) % int(nodes["value"]) == 0:
            return (int(ranks["value"]) // int(nodes["value"]),
                    f"{item.where(ranks)}: {ranks['value']} ranks on {nodes['value']} nodes")
    if gpu in GPUS_PER_NODE:
        return GPUS_PER_NODE[gpu], f"{gpu}: llmb-run's GPUs per node for this GPU"
    return 8, "TODO: check (8 on HGX, 4 on GB200/GB300)"


def _date(seen: list[Seen]) -> tuple[dt.date, str]:
    for item in (i for i in seen if i.role == "audit"):
        stamp = str(item.summary.get("audited_at") or "")
        try:
            return (dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).date(),
                    f"{item.rel} audited_at: check it is when the benchmarks ran")
        except ValueError:
            continue
    return dt.date.today(), "TODO: the date the benchmarks ran"


def _gbs(item: Seen) -> tuple[int, str] | None:
    fact = next((f for f in item.facts if f["kind"] == "parallel"
                 and str(f["value"]).startswith("gbs=")), None)
    value = str(fact["value"]).removeprefix("gbs=") if fact else ""
    return (int(value), item.where(fact)) if fact and value.isdigit() and int(value) > 0 else None


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
    run_rows = [(item, _workload(item, reference), _precision(item), _gpus(item))
                for item in runs]
    # the system holds every training run and every serving benchmark that states its GPUs
    served = [int(f["value"]) for item in seen if item.role == "inference"
              for f in item.facts if f["kind"] == "gpu_count" and str(f["value"]).isdigit()]
    largest = max([*(g[0] for _, _, _, g in run_rows if g), *served], default=None)
    out += ["[provider]", toml_text.line("name", "undeclared provider",
                                          "TODO: the provider's name"),
            toml_text.line("cluster", root.name or "cluster", "TODO: the cluster's name"), ""]
    per_node, per_node_where = _per_node(seen, gpu)
    nodes, nodes_where = _nodes(seen, largest, per_node)
    fabric, fabric_where = _interconnect(seen, reference)
    out += ["[system]", toml_text.line("gpu", gpu or "h100-sxm",
                                       gpu_where.get(gpu or "", "TODO: no file names its GPU")),
            toml_text.line("nodes", nodes, nodes_where),
            toml_text.line("gpus_per_node", per_node, per_node_where),
            toml_text.line("interconnect", fabric, fabric_where) if fabric else
            f"# interconnect = \"...\"                       # {fabric_where}", ""]
    date, date_where = _date(seen)
    out += ["[benchmark]", toml_text.line("date", date, date_where),
            toml_text.line("reference", "latest")]
    for item, workload, precision, gpus in run_rows:
        out.append("")
        lines = [toml_text.line("workload", workload[0], workload[1]) if workload else
                 "workload = \"TODO\"",
                 toml_text.line("precision", precision[0], precision[1]) if precision else
                 "precision = \"TODO\"",
                 toml_text.line("num_gpus", gpus[0], gpus[1]) if gpus else "num_gpus = 0",
                 toml_text.line("log", item.rel, f"format {item.fmt}")]
        gbs = _gbs(item)
        if gbs is not None:
            lines.append(toml_text.line("gbs", gbs[0], gbs[1]))
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
    for item in (i for i in seen if i.role == "inference"):
        out += inference_draft.entry(root / item.rel, item.rel, item.fmt, reference)
    for item in seen:
        if item.role not in ("run", "nccl", "audit", "inference"):
            out.append(f"# {item.rel}: {item.fmt} evidence, not drafted; see `cmax docs manifest`")
    out += ["", "# [pricing]", "# usd_per_gpu_hour = 0.0                     "
            "# TODO: the quoted price per GPU-hour", "# [sla]", "# TODO: uptime_pct and credits",
            "# [reliability]", "# TODO: incidents file, period and GPUs in service"]
    return "\n".join(out) + "\n"
