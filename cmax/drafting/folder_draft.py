"""A ``cmax.toml`` drafted from any folder of evidence files, from what ``cmax inspect`` reads in
each file: its format, and the identity facts it states (GPU name, GPU and node counts, hosts,
model, precision, experiment name, global batch size, the audit's cluster, fabric and date),
each value with the file and line it came from.

The draft holds only what the evidence says. What only a person knows (the provider's name,
the price, the SLA, the reliability period, the declarations) is a TODO, and so is a value no
file states: a required value (the GPU, the cluster, the node count, the benchmark date) is
then written commented out, so the draft does not load until someone states it. A placeholder
that loads would be rated as if the evidence had said it (an unnamed GPU drafted as an H100
passed the "Modern GPU" gate). Every file left out is named with why.

Drafting is two tables: :data:`FIELDS` (each manifest value with the sources that may state it,
tried in order) and :data:`ENTRIES` (the manifest entry each evidence role drafts per file). A
new source of a value or a new kind of entry is a row there.

Where a file states no model or precision (a plain NeMo 2 log prints neither), the file's name
is read for them (``llama3.1-405b_bf16_512.log``) and the comment says so: a name is a label
someone chose, so a person should confirm it. A GPU count is never read from a name: a name's
numbers are dates and sequence numbers as often as scales (``run_20240406.log``).

The interconnect is drafted only from a statement of the fabric's class, NIC count and rate
(a ClusterMAX audit's ``networking.nicFabric``) that names a reference fabric id; nccl-tests
show the transport and NIC count (``NET/IB : Using [0]mlx5_0:1/IB ...``) but not the link rate,
so from them alone the line stays a TODO naming what they show and the ids that fit.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cmax.drafting import inference_draft
from cmax.errors import CmaxError
from cmax.submission.intake import toml_text

if TYPE_CHECKING:
    from cmax.reference import Reference

MAX_FILES = 2_000
_PRECISIONS = ("nvfp4", "mxfp8", "fp8", "bf16", "fp16")
NOT_EVIDENCE = {"cmax.toml": "the manifest itself", "SOURCES": "a list of sources",
                "SOURCES.md": "a list of sources", "README.md": "documentation"}
"""File names that are never evidence, with why."""
DOCUMENT_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".adoc", ".html", ".htm", ".pdf",
                               ".ipynb", ".docx"})
"""Documents: a quoted log line in one is an example, not a run (a sources.md quoting a NeMo
step line was drafted as a one-step NeMo log)."""
DATA_SUFFIXES = frozenset({".json", ".jsonl", ".csv", ".yaml", ".yml", ".toml"})
LINE_LOGS = frozenset({"nemo1", "nemo2", "megatron", "maxtext", "paxml", "torchtitan"})
"""Formats that are a program's printed lines: a structured-data file (an expected.json holding
copied step lines) recognised as one is a copy of lines, not the program's log."""
_STAMP = re.compile(r"\b(20\d\d-[01]\d-[0-3]\d)[T ][0-2]\d:[0-5]\d:[0-5]\d")
_MLLOG_TIME = re.compile(r'"time_ms":\s*(\d{12,14})')
_STAMP_LINES = 400


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
        if fact.get("line"):
            return f"{self.rel}:{fact['line']}"
        return f"{self.rel} {fact['where']}" if fact.get("where") else self.rel


@dataclass(frozen=True)
class Drafted:
    """A drafted value and where it was read (a file:line, or what it was derived from)."""

    value: Any
    where: str


@dataclass
class Survey:
    """What the folder holds: the files cmax reads, those it left out and why, and the values
    drafted so far (each field is drafted once, on first use)."""

    root: Path
    reference: Reference
    seen: list[Seen]
    skipped: list[tuple[str, str]]
    _drafted: dict[tuple[str, str], Drafted | None] = field(default_factory=dict)

    def of(self, *roles: str) -> list[Seen]:
        return [item for item in self.seen if item.role in roles]

    def get(self, section: str, key: str) -> Drafted | None:
        """The value of ``[section] key`` from its first source that states one."""
        if (section, key) not in self._drafted:
            row = next(r for r in FIELDS if (r.section, r.key) == (section, key))
            self._drafted[section, key] = next(
                (found for source in row.sources if (found := source(self)) is not None), None)
        return self._drafted[section, key]


    def gpu_counts(self) -> list[tuple[int, str]]:
        """The GPU counts the runs and serving results state, each with where."""
        runs = [g for item in self.of("run") if (g := _gpus(item)) is not None]
        served = [(int(f["value"]), item.where(f)) for item in self.of("inference")
                  for f in item.facts if f["kind"] == "gpu_count" and str(f["value"]).isdigit()]
        return runs + served


Source = Callable[[Survey], Drafted | None]


@dataclass(frozen=True)
class ValueRow:
    """One manifest value: the sources that may state it, tried in order, and the TODO when
    none does. A ``required`` value with no source is written commented out."""

    section: str
    key: str
    sources: tuple[Source, ...]
    todo: str
    required: bool = True
    default: Any = None
    """the value written beside the TODO of an optional field (None: left out)"""


def _skip_reason(path: Path, root: Path) -> str | None:
    if path.is_symlink():
        return "a symbolic link (a linked file is read under its own name)"
    if path.name in NOT_EVIDENCE:
        return NOT_EVIDENCE[path.name]
    if path.name.startswith("."):
        return "a hidden file"
    if path.suffix.lower() in DOCUMENT_SUFFIXES:
        return f"a document ({path.suffix}), not tool output"
    return None


def _scan(root: Path) -> tuple[list[Seen], list[tuple[str, str]]]:
    from cmax.ingest import inspect_file
    from cmax.ingest.formats import by_id

    seen: list[Seen] = []
    skipped: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        rel = path.relative_to(root).as_posix()
        why = _skip_reason(path, root)
        if why is None and len(seen) >= MAX_FILES:
            why = f"beyond the first {MAX_FILES:,} evidence files"
        if why is not None:
            skipped.append((rel, why))
            continue
        try:
            summary = inspect_file(path)
        except CmaxError as exc:
            skipped.append((rel, _first_clause(exc.message)))
            continue
        fmt = str(summary.get("format"))
        if path.suffix.lower() in DATA_SUFFIXES and fmt in LINE_LOGS:
            skipped.append((rel, f"{path.suffix} data holding {fmt} lines, not the "
                                 "program's log"))
            continue
        facts = summary.pop("facts", []) or []
        try:
            role: str = by_id(fmt).role
        except KeyError:
            role = ""
        seen.append(Seen(rel, fmt, role, summary, list(facts)))
    return seen, skipped


def _first_clause(message: str) -> str:
    """An ingest error's reason without its list of every format tried."""
    return message.split("; tried ", 1)[0]


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
            return (reference.resolve_workload(token)[0],
                    f"file name {Path(item.rel).name}: confirm it")
    return None


def _precision(item: Seen) -> tuple[str, str] | None:
    for fact in (f for f in item.facts if f["kind"] in ("precision", "experiment")):
        for token in _tokens(str(fact["value"]).replace("=", " ")):
            if token in _PRECISIONS:
                return ("fp8" if token == "mxfp8" else token), item.where(fact)
    for token in _tokens(Path(item.rel).stem):
        if token in _PRECISIONS:
            return (("fp8" if token == "mxfp8" else token),
                    f"file name {Path(item.rel).name}: confirm it")
    return None


def _gpus(item: Seen) -> tuple[int, str] | None:
    """The GPU count the file states; never a number of its name (see the module docstring)."""
    fact = item.fact("gpu_count")
    if fact is not None and str(fact["value"]).isdigit() and int(fact["value"]) > 0:
        return int(fact["value"]), item.where(fact)
    return None


def _tally(item: Seen, key: str) -> int | None:
    fact = next((f for f in item.facts if f["kind"] == "tally" and f.get("where") == key), None)
    return int(fact["value"]) if fact is not None and str(fact["value"]).isdigit() else None


# --- the sources of each value ---------------------------------------------------------------

def cluster_from_audit(survey: Survey) -> Drafted | None:
    for item in survey.of("audit"):
        fact = item.fact("cluster")
        if fact is not None and str(fact["value"]).strip():
            return Drafted(str(fact["value"]).strip(), item.where(fact))
    return None


def _short(host: str) -> str:
    return host.strip().lower().split(".", 1)[0]


def cluster_from_hosts(survey: Survey) -> Drafted | None:
    """The naming scheme every host of the evidence shares (``aurora-h100-east-000`` ...
    ``-063`` name ``aurora-h100-east``), cut at a separator; None when the hosts share none."""
    named: dict[str, str] = {}
    for item in survey.seen:
        for fact in (f for f in item.facts if f["kind"] == "host"):
            named.setdefault(_short(str(fact["value"])), item.where(fact))
    hosts = sorted(h for h in named if h)
    if not hosts:
        return None
    if len(hosts) == 1:
        common = re.sub(r"[0-9]+$", "", hosts[0])
    else:  # the characters all share, cut back to a separator
        common = hosts[0][:next((i for i, chars in enumerate(zip(*hosts, strict=False))
                                 if len(set(chars)) > 1), min(map(len, hosts)))]
        common = common[:max(common.rfind(c) for c in "-_.")] if len(common) > 0 else ""
    common = common.strip("-_.")
    if len(common) < 3 or not re.search(r"[a-z]", common):
        return None
    files = sorted({w.split(":")[0].split(" ")[0] for w in named.values()})
    return Drafted(common, f"the naming scheme of {len(hosts)} host name(s) in "
                           f"{', '.join(files[:3])}{' ...' if len(files) > 3 else ''}")


def gpu_from_facts(survey: Survey) -> Drafted | None:
    from cmax.reference.gpus import gpu_family

    votes: Counter[str] = Counter()
    where: dict[str, str] = {}
    for item in survey.seen:
        for fact in (f for f in item.facts if f["kind"] == "gpu"):
            try:
                gid = survey.reference.gpu(gpu_family(str(fact["value"]))
                                           or str(fact["value"])).id
            except CmaxError:
                continue
            votes[gid] += 1
            where.setdefault(gid, f"{item.where(fact)} {fact['value']}")
    if not votes:
        return None
    gpu = votes.most_common(1)[0][0]
    return Drafted(gpu, where[gpu])


def per_node_from_audit(survey: Survey) -> Drafted | None:
    for item in survey.of("audit"):
        per = _tally(item, "gpus.perNode")
        if per:
            return Drafted(per, f"{item.rel} gpus.perNode")
    return None


def per_node_from_nccl(survey: Survey) -> Drafted | None:
    for item in survey.of("nccl"):
        ranks, nodes = item.fact("gpu_count"), item.fact("node_count")
        if ranks and nodes and str(ranks["value"]).isdigit() and str(nodes["value"]).isdigit() \
                and int(nodes["value"]) > 0 and int(ranks["value"]) % int(nodes["value"]) == 0:
            return Drafted(int(ranks["value"]) // int(nodes["value"]),
                           f"{item.where(ranks)}: {ranks['value']} ranks on {nodes['value']} "
                           "nodes")
    return None


def per_node_from_system_json(survey: Survey) -> Drafted | None:
    """An MLPerf system description's accelerators per node (its GPUs over its nodes)."""
    for item in survey.of("mlperf-system"):
        gpus, nodes = item.fact("gpu_count"), item.fact("node_count")
        if gpus and nodes and str(gpus["value"]).isdigit() and str(nodes["value"]).isdigit() \
                and int(nodes["value"]) > 0 and int(gpus["value"]) % int(nodes["value"]) == 0:
            return Drafted(int(gpus["value"]) // int(nodes["value"]),
                           f"{item.where(gpus)} accelerators_per_node")
    return None


def per_node_from_gpu(survey: Survey) -> Drafted | None:
    from cmax.submission.intake.flags import GPUS_PER_NODE

    gpu = survey.get("system", "gpu")
    if gpu is not None and gpu.value in GPUS_PER_NODE:
        return Drafted(GPUS_PER_NODE[gpu.value],
                       f"{gpu.value}: llmb-run's GPUs per node for this GPU; check it")
    return None


def nodes_from_evidence(survey: Survey) -> Drafted | None:
    """The most nodes any file states (the system holds every run): a node count, the distinct
    hosts one file names, or the largest run or served result over the GPUs per node."""
    stated: list[Drafted] = []
    for item in survey.seen:
        for fact in (f for f in item.facts if f["kind"] == "node_count"):
            if str(fact["value"]).isdigit() and int(fact["value"]) > 0:
                stated.append(Drafted(int(fact["value"]), item.where(fact)))
        hosts = {f["value"] for f in item.facts if f["kind"] == "host"}
        if len(hosts) > 1 and item.role in ("run", "nccl"):
            stated.append(Drafted(len(hosts), f"{item.rel}: {len(hosts)} distinct hosts"))
    per_node = survey.get("system", "gpus_per_node")
    largest = max((g for g, _ in survey.gpu_counts()), default=None)
    if largest and per_node is not None:
        stated.append(Drafted(-(-largest // per_node.value),
                              f"the largest run, {largest} GPUs / {per_node.value} per node"))
    return max(stated, key=lambda s: s.value) if stated else None


def interconnect_from_evidence(survey: Survey) -> Drafted | None:
    """The ``[system] interconnect`` id from the audit's fabric statement, or None (the TODO
    then says what the evidence shows: see :func:`fabric_todo`)."""
    from cmax.reference.network import interconnect_aliases

    known = interconnect_aliases(survey.reference.network)
    for item in survey.of("audit"):
        fabric = item.fact("fabric")
        count = _tally(item, "networking.nicFabric.computeFabricCount")
        rate = _tally(item, "networking.nicFabric.computeFabricGbps")
        if fabric is None:
            continue
        words = _tokens(str(fabric["value"]).replace("-", " "))
        generation = next((w for w in words if w in ("hdr", "ndr", "xdr")), None)
        candidate = f"infiniband-{generation}-{count}x{rate}"
        if "ib" in words and generation and count and rate and candidate in known:
            return Drafted(known[candidate], f"{item.rel} networking.nicFabric: {count} x "
                                             f"{fabric['value']}")
    return None


def fabric_todo(survey: Survey) -> str:
    from cmax.reference.network import interconnect_aliases

    known = interconnect_aliases(survey.reference.network)
    for item in survey.of("audit"):
        fabric = item.fact("fabric")
        if fabric is not None:
            count = _tally(item, "networking.nicFabric.computeFabricCount")
            return (f"TODO: {item.rel} networking.nicFabric: {count} x {fabric['value']} "
                    "names no reference fabric; pick an id of docs/manifest.md")
    for item in survey.of("nccl"):
        using = next((f for f in item.facts if f["kind"] == "fabric"
                      and str(f["value"]).startswith("NET/IB : Using")), None)
        if using is not None:
            nics = len(re.findall(r"\[\d+\]\S+/IB\b", str(using["value"]).split(";")[0]))
            fits = sorted({fab for fab in known.values() if fab.startswith("infiniband-")
                           and f"-{nics}x" in fab})
            return (f"TODO: {item.where(using)} shows {nics} InfiniBand NIC(s), not "
                    f"their rate: {' or '.join(fits) or 'see docs/manifest.md'}")
    return "TODO: no file states the fabric; see docs/manifest.md"


def _first_date(path: Path) -> tuple[dt.date, int] | None:
    """The first wall-clock date a log prints (a logger's stamp, or an MLPerf ``time_ms``),
    with its line, from the file's first lines."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, 1):
                if number > _STAMP_LINES:
                    break
                if (stamp := _STAMP.search(text)) is not None:
                    try:
                        return dt.date.fromisoformat(stamp.group(1)), number
                    except ValueError:
                        continue
                if (ms := _MLLOG_TIME.search(text)) is not None:
                    return (dt.datetime.fromtimestamp(int(ms.group(1)) / 1000, dt.UTC).date(),
                            number)
    except OSError:
        return None
    return None


def date_from_runs(survey: Survey) -> Drafted | None:
    """The day the benchmarks ran: the latest first date the run logs print, else the start of
    the latest serving result."""
    dated: list[Drafted] = []
    for item in survey.of("run", "mlperf"):
        found = _first_date(survey.root / item.rel)
        if found is not None:
            dated.append(Drafted(found[0], f"{item.rel}:{found[1]}"))
    for item in survey.of("inference"):
        started = inference_draft.started(survey.root / item.rel, item.rel)
        if started is not None:
            dated.append(Drafted(started, f"{item.rel}: the result's start"))
    if not dated:
        return None
    latest = max(dated, key=lambda d: d.value)
    days = sorted({d.value for d in dated})
    span = f"; the runs print {days[0]} to {days[-1]}" if len(days) > 1 else ""
    return Drafted(latest.value, latest.where + span)


def date_from_audit(survey: Survey) -> Drafted | None:
    for item in survey.of("audit"):
        stamp = str(item.summary.get("audited_at") or "")
        try:
            day = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).date()
        except ValueError:
            continue
        return Drafted(day, f"{item.rel} audited_at (no run prints a date): check it is when "
                            "the benchmarks ran")
    return None


FIELDS: list[ValueRow] = [
    ValueRow("provider", "name", (), "TODO: the provider's name", required=False,
          default="undeclared provider"),
    ValueRow("provider", "cluster", (cluster_from_audit, cluster_from_hosts),
          "TODO: the cluster's name (no audit names it and the hosts share no naming scheme)"),
    ValueRow("system", "gpu", (gpu_from_facts,), "TODO: no file names its GPU"),
    ValueRow("system", "gpus_per_node",
             (per_node_from_audit, per_node_from_system_json, per_node_from_nccl,
              per_node_from_gpu),
             "TODO: no file states it (8 on HGX, 4 on GB200/GB300)"),
    ValueRow("system", "nodes", (nodes_from_evidence,), "TODO: no file states the node count"),
    ValueRow("system", "interconnect", (interconnect_from_evidence,), "", required=False),
    ValueRow("benchmark", "date", (date_from_runs, date_from_audit),
          "TODO: the date the benchmarks ran (no file prints one)"),
]
"""Each drafted manifest value and its sources, in the order they are tried. A new source is a
function added to a row's tuple."""


# --- the entries each evidence role drafts ----------------------------------------------------

def run_entry(survey: Survey, item: Seen) -> list[str]:
    workload = _workload(item, survey.reference)
    precision = _precision(item)
    gpus = _gpus(item)
    lines = [toml_text.line("workload", workload[0], workload[1]) if workload else
             "workload = \"TODO\"",
             toml_text.line("precision", precision[0], precision[1]) if precision else
             "precision = \"TODO\"",
             toml_text.line("num_gpus", gpus[0], gpus[1]) if gpus else
             "num_gpus = 0                                 # TODO: the file states no GPU count",
             toml_text.line("log", item.rel, f"format {item.fmt}")]
    fact = next((f for f in item.facts if f["kind"] == "parallel"
                 and str(f["value"]).startswith("gbs=")), None)
    gbs = str(fact["value"]).removeprefix("gbs=") if fact else ""
    if fact and gbs.isdigit() and int(gbs) > 0:
        lines.append(toml_text.line("gbs", int(gbs), item.where(fact)))
    several = [e for key in ("experiments", "jobs") for e in (item.summary.get(key) or [])]
    chosen = item.fact("experiment")
    if len(several) > 1 and chosen is not None:  # a summary of several: name the one
        lines.append(toml_text.line("experiment", str(chosen["value"]),
                                    f"{item.where(chosen)}; {len(several)} in the file"))
    storage = checkpoint_entry(survey, item, workload, gpus)
    if workload and precision and gpus:
        return ["", "[[runs]]", *lines, *storage]
    return ["", "# TODO: workload, precision or GPU count not found for this run",
            "# [[runs]]", *(f"# {line}" for line in lines), *storage]


def checkpoint_entry(survey: Survey, item: Seen, workload: tuple[str, str] | None,
                     gpus: tuple[int, str] | None) -> list[str]:
    """A ``[[storage]]`` entry for a training log that prints checkpoint saves
    (cmax.ingest.checkpoints): the run's model sizes the checkpoint, its GPUs the bandwidth."""
    from cmax.ingest.checkpoints import events

    found = events(survey.root / item.rel, run_id="storage", source_file=item.rel,
                   tool=item.fmt)
    saves = [line for line, d in zip(found["line"].to_list(), found["direction"].to_list(),
                                     strict=True) if d == "save"] if found.height else []
    if not saves:
        return []
    return ["", "[[storage]]",
            toml_text.line("result", item.rel, f"{len(saves)} checkpoint save line(s), the "
                           f"first at line {saves[0]}"),
            toml_text.line("model", workload[0], workload[1]) if workload else
            "# model = \"TODO\"                          # TODO: the model checkpointed",
            toml_text.line("gpus", gpus[0], gpus[1]) if gpus else
            "# gpus = 0                                   # TODO: the run's GPUs"]


def nccl_entry(survey: Survey, item: Seen) -> list[str]:
    return ["", "[[nccl]]", toml_text.line("path", item.rel, f"format {item.fmt}")]


def audit_entry(survey: Survey, item: Seen) -> list[str]:
    if item is not survey.of("audit")[0]:
        return [f"# {item.rel}: a second ClusterMAX audit; the manifest takes one"]
    return ["", "[audit]", toml_text.line("path", item.rel, f"format {item.fmt}")]


def mlperf_entry(survey: Survey, item: Seen) -> list[str]:
    """One ``[[mlperf]]`` per benchmark folder (drafted at its first result file); a lone
    result file outside any folder of results is its own entry."""
    folder = Path(item.rel).parent
    firsts = {Path(i.rel).parent: i for i in reversed(survey.of("mlperf"))}
    if folder.as_posix() == "." or firsts.get(folder) is not item:
        return [] if folder.as_posix() != "." else [
            "", "[[mlperf]]", toml_text.line("path", item.rel, f"format {item.fmt}")]
    runs = sum(1 for i in survey.of("mlperf") if Path(i.rel).parent == folder)
    return ["", "[[mlperf]]", toml_text.line("path", folder.as_posix(),
                                             f"{runs} result file(s), format {item.fmt}")]


def mlperf_system_entry(survey: Survey, item: Seen) -> list[str]:
    return [f"# {item.rel}: MLPerf system description, read with the [[mlperf]] results it "
            "describes (not a path of its own)"]


def inference_entry(survey: Survey, item: Seen) -> list[str]:
    return inference_draft.entry(survey.root / item.rel, item.rel, item.fmt, survey.reference)


def storage_entry(survey: Survey, item: Seen) -> list[str]:
    """A storage benchmark's result; what its folder does not state is left to a person."""
    summary = item.summary
    lines = [toml_text.line("result", item.rel, f"format {item.fmt}")]
    if item.fmt == "mlperf-storage" and not summary.get("round"):
        lines.append("# round = \"v1.0\"                           # TODO: the MLPerf Storage "
                     "round; no v<round> folder names it")
    if summary.get("benchmark") == "training" and not summary.get("accelerator"):
        lines.append("# accelerator = \"h100\"                     # TODO: the emulated "
                     "accelerator; nothing beside the summary names it")
    if item.fmt == "fio":
        lines.append("# contracted_gib_s = 0.0                    # TODO: the bandwidth the "
                     "contract promises, to rate fio against it")
    return ["", "[[storage]]", *lines]


def incidents_entry(survey: Survey, item: Seen) -> list[str]:
    if item is not survey.of("incidents")[0]:
        return [f"# {item.rel}: a second incident log; the manifest takes one"]
    first, last = item.summary.get("first"), item.summary.get("last")
    seen = f" (its incidents run {str(first)[:10]} to {str(last)[:10]})" if first and last else ""
    return ["", "# [reliability]                             "
                "# TODO: the contract's period and fleet, then uncomment",
            "# " + toml_text.line("incidents", item.rel, f"format {item.fmt}"),
            f"# period_start = YYYY-MM-DD                  # TODO: the reliability period{seen}",
            "# period_end = YYYY-MM-DD",
            "# gpus_in_service = 0                        # TODO: the GPUs the period covers"]


ENTRIES: dict[str, Callable[[Survey, Seen], list[str]]] = {
    "run": run_entry, "nccl": nccl_entry, "audit": audit_entry, "inference": inference_entry,
    "storage": storage_entry, "incidents": incidents_entry,
    "mlperf": mlperf_entry, "mlperf-system": mlperf_system_entry,
}
"""The manifest entry each evidence role drafts, per file, in this order. A role without a row
is named at the end of the draft as evidence not drafted."""


def _declarations() -> list[str]:
    from cmax.score.rubric import load_rubric

    keys = [key for category in load_rubric().categories.values()
            for component in category.components if component.kind == "declarations"
            for key in component.keys]
    return ["", "# [declarations]                          "
                "# TODO: true only where the contract or the provider's documents say so",
            *(f"# {' | '.join(f'{k} = true' for k in key.split('|'))}" for key in keys)]


def survey(root: Path, reference: Reference) -> Survey:
    seen, skipped = _scan(root)
    return Survey(root, reference, seen, skipped)


@dataclass(frozen=True)
class FolderDraft:
    """The draft's text, the required values it leaves to a person and the files left out."""

    text: str
    missing: list[str]
    skipped: list[tuple[str, str]]


def draft_folder(root: Path, reference: Reference, *, source: str) -> FolderDraft:
    """The draft manifest for ``root`` (see the module docstring). A folder with no file cmax
    reads is an error naming every file and why it was left out."""
    found = survey(root, reference)
    if not found.seen:
        listed = "; ".join(f"{rel}: {why}" for rel, why in found.skipped) or "it is empty"
        raise CmaxError(f"no evidence file cmax reads in this folder ({listed})", file=source,
                        fix="add the tool outputs themselves (training logs, nccl-tests, "
                            "a ClusterMAX audit, serving results); `cmax docs formats` lists "
                            "what cmax reads")
    out = [f"# cmax.toml drafted by `cmax init` from {source}: {len(found.seen)} evidence "
           "file(s).",
           "# Each value was read from the file:line after it; check them, then fill in the",
           "# TODOs only you know. A commented-out required value is one no file states:",
           "# the draft does not load until you state it."]
    section = ""
    missing: list[str] = []
    for row in FIELDS:
        if row.section != section:
            section = row.section
            out += ["", f"[{section}]"]
        got = found.get(row.section, row.key)
        if got is not None:
            out.append(toml_text.line(row.key, got.value, got.where))
        elif row.key == "interconnect":
            out.append(f"# interconnect = \"...\"                       # {fabric_todo(found)}")
        elif row.default is not None:
            out.append(toml_text.line(row.key, row.default, row.todo))
        else:
            out.append(f"# {row.key} = ...{' ' * max(1, 38 - len(row.key))}# {row.todo}")
            missing.append(f"[{row.section}] {row.key}")
        if (row.section, row.key) == ("benchmark", "date"):
            out.append(toml_text.line("reference", "latest"))
    for role, entry in ENTRIES.items():
        for item in found.of(role):
            out += entry(found, item)
    for item in found.seen:
        if item.role not in ENTRIES:
            out.append(f"# {item.rel}: {item.fmt} evidence, not drafted; see "
                       "`cmax docs manifest`")
    out += ["", "# [pricing]", "# usd_per_gpu_hour = 0.0                     "
            "# TODO: the quoted price per GPU-hour", "# term_months = 12", "# [sla]",
            "# TODO: uptime_pct and credits"]
    out += _declarations()
    if found.skipped:
        out += ["", f"# Left out: {len(found.skipped)} file(s) cmax does not read as evidence"]
        out += [f"#   {rel}: {why}" for rel, why in found.skipped]
    return FolderDraft("\n".join(out) + "\n", missing, found.skipped)
