"""A training run's claims, resolved against what its log states (see :mod:`cmax.resolve.claims`).

For each run the case resolves, once: the GPU, the GPU count (and nodes), the model, the
precision, the sequence length, the global batch size, the parallel configuration and the
software release. The claimed value is cmax.toml's; when cmax.toml says nothing the log's own
statement is the value (corroborated by that statement), else the matched recipe's (assumed).
The evidence is the run's log's facts (:mod:`cmax.ingest.facts`), read by the parsers; only the GPU
may also be corroborated by another file of the bundle (nccl-tests device lines of the same
system).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cmax.ingest.facts import Fact, facts_of
from cmax.reference.gpus import gpu_family
from cmax.resolve.claims import (
    Citation,
    Claim,
    ClaimStatus,
    fact_int,
    named_workloads,
    norm_name,
    parallel_facts,
    precision_family,
    release_of,
    stated_precisions,
    status_of,
)
from cmax.resolve.runs import ResolvedRun, Stated

#: Citations kept per side of a claim: enough to show it is no one-off, short enough to read.
MAX_CITES = 3


@dataclass(frozen=True)
class RunInputs:
    """What resolving a run's claims reads besides the run itself."""

    facts: tuple[Fact, ...]
    system_gpu: str
    system_gpu_family: str | None
    gpus_per_node: int
    known_workloads: tuple[str, ...]
    #: (file, fact) GPU statements of the bundle's other files
    other_gpus: tuple[tuple[str, Fact], ...] = ()
    #: (layers, hidden size) of the declared model in the reference catalogue
    shape: tuple[int, int] | None = None


def _first(cites: Iterable[Citation]) -> tuple[Citation, ...]:
    return tuple(cites)[:MAX_CITES]


def _distinct(cites: Iterable[Citation]) -> tuple[Citation, ...]:
    """The first citation of each distinct text (a value printed on every line is cited once)."""
    seen: dict[str, Citation] = {}
    for c in cites:
        seen.setdefault(c.text, c)
    return _first(seen.values())


def _declared(run: ResolvedRun, name: str) -> tuple[object | None, str]:
    """The declared value of a run field and where it comes from."""
    if run.spec is not None and getattr(run.spec, name, None) is not None:
        return getattr(run.spec, name), f"cmax.toml runs[{run.spec_index}].{name}"
    value = run.row.get(name)
    if value is not None:
        return value, f"{run.file or 'the evidence'} (the run's record)"
    return None, ""


def _gpu(run: ResolvedRun, file: str, inp: RunInputs) -> Claim:
    row_gpu = run.row.get("gpu")  # a runs row built outside ingest may carry one
    value = str(row_gpu).strip().lower() if row_gpu else inp.system_gpu
    source = ("cmax.toml system.gpu" if value == inp.system_gpu
              else f"{file} (the run's record)")
    want = inp.system_gpu_family if value == inp.system_gpu else gpu_family(value)
    support: list[Citation] = []
    against: list[Citation] = []
    for fact in facts_of(inp.facts, "gpu"):
        got = gpu_family(fact.value)
        if got is not None and want is not None:
            (support if got == want else against).append(Citation.of(file, fact))
    if not support and not against:
        support = [Citation.of(path, fact) for path, fact in inp.other_gpus
                   if want is not None and gpu_family(fact.value) == want]
    return Claim(run.run_id, "gpu", value, status_of(support, against, True), source,
                 _distinct(support), _distinct(against))


def _gpu_count(run: ResolvedRun, file: str, inp: RunInputs) -> Claim:
    declared, source = _declared(run, "num_gpus")
    n = fact_int(Fact("n", str(declared))) if declared is not None else None
    support: list[Citation] = []
    against: list[Citation] = []
    said: set[str] = set()
    for fact in facts_of(inp.facts, "gpu_count"):
        count = fact_int(fact)
        if count is not None and n is not None:
            (support if count == n else against).append(
                Citation.of(file, fact, f"world size {count}"))
            if count != n:
                said.add(str(count))
    per_node = _per_node(inp)
    for fact in facts_of(inp.facts, "node_count"):
        nodes = fact_int(fact)
        if nodes is not None and n is not None:
            text = f"{nodes} node(s) x {per_node} GPUs = {nodes * per_node}"
            (support if nodes * per_node == n else against).append(
                Citation.of(file, fact, text))
            if nodes * per_node != n:
                said.add(str(nodes * per_node))
    note = ""
    if n is not None and inp.gpus_per_node and n % inp.gpus_per_node == 0:
        note = f"{n // inp.gpus_per_node} node(s) of {inp.gpus_per_node}"
    return Claim(run.run_id, "gpu_count", None if declared is None else str(declared),
                 status_of(support, against, declared is not None), source,
                 _distinct(support), _distinct(against), note, stated=_one(said))


def _per_node(inp: RunInputs) -> int:
    """GPUs per node: the log's own statement (trainer ``devices``), else cmax.toml's."""
    for fact in parallel_facts(inp.facts).get("devices", []):
        value = fact_int(fact)
        if value:
            return value
    return inp.gpus_per_node


def _model(run: ResolvedRun, file: str, inp: RunInputs) -> Claim:
    declared, source = _declared(run, "workload")
    want = norm_name(str(declared or ""))
    support: list[Citation] = []
    against: list[Citation] = []
    said: set[str] = set()
    for fact in [*facts_of(inp.facts, "experiment"), *facts_of(inp.facts, "model")]:
        named = named_workloads(fact.value, inp.known_workloads)
        if not named or not want:
            continue
        if any(want in norm_name(w) or norm_name(w) in want for w in named):
            support.append(Citation.of(file, fact))
        else:
            against.append(Citation.of(file, fact, f"{fact.value} ({', '.join(named)})"))
            said.update(named if len(named) == 1 else [", ".join(named)])
    shape_support, shape_against = shape_citations(inp.facts, inp.shape, file)
    support.extend(shape_support)
    against.extend(shape_against)
    status = status_of(support, against, declared is not None)
    return Claim(run.run_id, "model", None if declared is None else str(declared), status,
                 source, _distinct(support), _distinct(against),
                 stated=_one(said) if status == "contradicted" else None)


def shape_citations(facts: Sequence[Fact], shape: tuple[int, int] | None, file: str
                    ) -> tuple[list[Citation], list[Citation]]:
    """The log's statements of its network's shape (``layers=80``, ``hidden=8192``) for and
    against the declared model's (layers, hidden). The hidden size decides; a layer count
    alone is no contradiction (NVIDIA's proxy recipes cut the layers of the same network)."""
    if shape is None:
        return [], []
    layers, hidden = shape
    support: list[Citation] = []
    against: list[Citation] = []
    stated = {f.value.partition("=")[0]: f for f in facts_of(tuple(facts), "architecture")}
    said = stated.get("hidden")
    if said is not None and (value := fact_int(said)):
        if value == hidden:
            support.append(Citation.of(file, said, f"hidden size {value}"))
        else:
            against.append(Citation.of(file, said, f"hidden size {value}, not {hidden}"))
    said = stated.get("layers")
    if said is not None and support and fact_int(said) == layers:
        support.append(Citation.of(file, said, f"{layers} layers"))
    return support, against


def _precision(run: ResolvedRun, file: str, inp: RunInputs) -> Claim:
    declared, source = _declared(run, "precision")
    want = precision_family(str(declared or ""))
    support: list[Citation] = []
    against: list[Citation] = []
    families: set[str] = set()
    for family, fact in stated_precisions(inp.facts):
        if want is None:
            continue
        if family == want or (family == "not-fp8" and want in ("bf16", "fp16")):
            support.append(Citation.of(file, fact))
        elif family != "not-fp8" or want in ("fp8", "fp4"):
            said = "fp8 off" if family == "not-fp8" else family
            against.append(Citation.of(file, fact, f"{fact.value} ({said})"))
            families.add(family)
    status = status_of(support, against, declared is not None)
    # "fp8 off" says what the run was not, not which precision it was
    return Claim(run.run_id, "precision", None if declared is None else str(declared), status,
                 source, _distinct(support), _distinct(against),
                 stated=_one(families - {"not-fp8"}) if status == "contradicted" else None)


def _one(values: set[str]) -> str | None:
    """The value the statements against a claim agree on, None when they name several."""
    return next(iter(values)) if len(values) == 1 else None


def _logged(run: ResolvedRun, file: str, key: str, inp: RunInputs) -> list[Citation]:
    """What the log states for one configuration key: the GBS on the window's lines when
    known (a ramp-up prints other values first), else the key's ``parallel`` facts."""
    if key == "gbs" and run.logged_gbs:
        return [Citation(file, line, f"global batch size {gbs}") for line, gbs in run.logged_gbs]
    return [Citation.of(file, fact) for fact in parallel_facts(inp.facts).get(key, [])]


def _number(cite: Citation) -> int | None:
    text = cite.text.rpartition("=")[2].rpartition(" ")[2].strip()
    return int(text) if text.isdigit() else None


def _config(run: ResolvedRun, file: str, key: str, inp: RunInputs) -> Claim:
    """A single configuration value (gbs, seq_len): declared, logged, else the recipe's."""
    declared, source = _declared(run, key)
    logged = [(c, _number(c)) for c in _logged(run, file, key, inp)]
    logged = [(c, v) for c, v in logged if v is not None]
    if declared is not None:
        support = [c for c, v in logged if v == declared]
        against = [c for c, v in logged if v != declared]
        return Claim(run.run_id, key, str(declared), status_of(support, against, True), source,
                     _distinct(support), _distinct(against))
    if logged:
        values = [v for _, v in logged]
        cites = [c for c, _ in logged]
        if len(set(values)) == 1:
            return Claim(run.run_id, key, str(values[0]), "corroborated", "the log",
                         _distinct(cites))
        return Claim(run.run_id, key, str(values[0]), "contradicted", "the log",
                     _distinct([c for c, v in logged if v == values[0]]),
                     _distinct([c for c, v in logged if v != values[0]]),
                     "the log states more than one value")
    return _assumed(run, key)


def _assumed(run: ResolvedRun, key: str) -> Claim:
    base = run.baseline
    same_scale = base is not None and base.num_gpus in (None, run.get_int("num_gpus"))
    value = base.config(key) if base is not None and same_scale else None
    if value is not None and base is not None:
        return Claim(run.run_id, key, str(value), "assumed", f"recipe {base.baseline_id}")
    return Claim(run.run_id, key, None, "unstated", "-")


def _parallel(run: ResolvedRun, file: str, inp: RunInputs) -> Claim:
    parts = {key: _config(run, file, key, inp) for key in ("tp", "pp", "cp", "ep", "vp", "mbs")}
    shown = {k: c for k, c in parts.items() if c.value is not None}
    value = " ".join(f"{k}={c.value}" for k, c in shown.items()) or None
    statuses = {c.status for c in shown.values()}
    status: ClaimStatus
    if "contradicted" in statuses:
        status = "contradicted"
    elif not shown:
        status = "unstated"
    elif "declared" in statuses:
        status = "declared"
    elif "corroborated" in statuses:
        status = "corroborated"  # what the log does not state is the recipe's (noted)
    else:
        status = "assumed"
    by_status: dict[str, list[str]] = {}
    for k, c in shown.items():
        by_status.setdefault(c.status, []).append(k)
    note = "; ".join(f"{s}: {', '.join(keys)}" for s, keys in by_status.items()
                     if len(by_status) > 1)
    sources = sorted({c.source.rsplit(".", 1)[0] if c.source.startswith("cmax.toml")
                      else c.source for c in shown.values()})
    return Claim(run.run_id, "parallel", value, status, ", ".join(sources) or "-",
                 _first(c for p in shown.values() for c in p.support),
                 _first(c for p in shown.values() for c in p.against), note)


def _software(run: ResolvedRun, file: str, inp: RunInputs) -> Claim:
    declared, source = _declared(run, "container")
    if declared is None:
        declared, source = _declared(run, "framework")
    want = release_of(str(declared)) if declared is not None else None
    stated = [(Citation.of(file, f), release_of(f.value))
              for f in [*facts_of(inp.facts, "container"), *facts_of(inp.facts, "framework")]]
    stated = [(c, r) for c, r in stated if r is not None]
    base = run.baseline
    note = ""
    if base is not None and base.container:
        note = f"the matched baseline ran {base.container}"
    if want is not None:
        support = [c for c, r in stated if r == want]
        against = [c for c, r in stated if r != want]
        return Claim(run.run_id, "software", str(declared), status_of(support, against, True),
                     source, _distinct(support), _distinct(against), note)
    if stated:
        return Claim(run.run_id, "software", stated[0][0].text, "corroborated", "the log",
                     _distinct(c for c, _ in stated), (), note)
    if declared is not None:
        return Claim(run.run_id, "software", str(declared), "declared", source, (), (), note)
    if base is not None and base.container:
        return Claim(run.run_id, "software", base.container, "assumed",
                     f"recipe {base.baseline_id}")
    return Claim(run.run_id, "software", None, "unstated", "-")


def identity_claims(run: ResolvedRun, inp: RunInputs) -> list[Claim]:
    """The claims a reference is looked up by (GPU, GPU count, model, precision): resolved
    before the baseline is matched, which they decide."""
    file = run.file or "-"
    return [_gpu(run, file, inp), _gpu_count(run, file, inp), _model(run, file, inp),
            _precision(run, file, inp)]


def config_claims(run: ResolvedRun, inp: RunInputs) -> list[Claim]:
    """The claims that read the matched baseline (a recipe's value is assumed where nobody
    states one): sequence length, GBS, parallel configuration, software."""
    file = run.file or "-"
    return [_config(run, file, "seq_len", inp), _config(run, file, "gbs", inp),
            _parallel(run, file, inp), _software(run, file, inp)]


def run_claims(run: ResolvedRun, inp: RunInputs) -> list[Claim]:
    """Every claim of one run, in :data:`cmax.resolve.claims.CLAIM_KINDS` order."""
    return [*identity_claims(run, inp), *config_claims(run, inp)]


#: The ledger's claim kind behind each identity field (:data:`cmax.resolve.runs.IDENTITY`).
IDENTITY_KINDS: dict[str, str] = {"workload": "model", "gpu": "gpu", "num_gpus": "gpu_count",
                                  "precision": "precision"}


def run_identity(run: ResolvedRun, claims: Sequence[Claim]) -> dict[str, Stated]:
    """The run's identity (:data:`cmax.resolve.runs.IDENTITY`) from its claims: what a
    reference is looked up by is the ledger's value with its status; the framework is what the
    log states, else cmax.toml's; the container and the job id cmax.toml's, else (the job id)
    the log's. ``claims`` may lack the software claim (resolved after the baseline); the
    container is then unstated until it is added."""
    by_kind = {c.kind: c for c in claims if c.subject == run.run_id}
    out: dict[str, Stated] = {}
    for name, kind in IDENTITY_KINDS.items():
        claim = by_kind.get(kind)
        if claim is not None:
            value: str | int | None = claim.value
            if name == "num_gpus":
                value = fact_int(Fact("n", claim.value)) if claim.value is not None else None
            out[name] = Stated(value, claim.status, claim.source, claim.stated)
    spec = run.spec
    where = f"cmax.toml runs[{run.spec_index}]"
    software = by_kind.get("software")
    logged = run.row.get("framework")
    if logged is not None:
        out["framework"] = Stated(str(logged), "corroborated", run.file or "the log")
    elif spec is not None and spec.framework is not None:
        status = software.status if software is not None and spec.container is None else "declared"
        out["framework"] = Stated(spec.framework, status, f"{where}.framework")
    if spec is not None and spec.container is not None:
        out["container"] = Stated(spec.container, software.status if software is not None
                                  else "declared", f"{where}.container")
    out["job_id"] = _job_id(run, where)
    return out


def _job_id(run: ResolvedRun, where: str) -> Stated:
    """cmax.toml's job id, checked against the one the log states (its file name, the
    llmb-run job it was picked from), else the log's."""
    logged = run.row.get("job_id")
    declared = run.spec.job_id if run.spec is not None else None
    if declared is not None:
        status: ClaimStatus = ("declared" if logged is None else
                               "corroborated" if str(logged) == declared else "contradicted")
        return Stated(declared, status, f"{where}.job_id")
    if logged is not None:
        return Stated(str(logged), "corroborated", run.file or "the log")
    return Stated(None, "unstated", "-")


def known_workloads(baselines: object) -> tuple[str, ...]:
    """The workload names of the reference baselines (what a printed name may name)."""
    try:
        values: Sequence[object] = baselines["workload"].unique().to_list()  # type: ignore[index]
    except (KeyError, AttributeError, TypeError):
        return ()
    return tuple(sorted({str(v) for v in values if v}))
