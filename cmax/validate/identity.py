"""Identity: what the manifest claims, checked against what each evidence file says of itself.

A provider writes the manifest; the tools wrote the evidence. When the two disagree about the
GPU, the precision, the model or the scale (the audit's cluster is
``audit.cluster-mismatch``), the rating must follow the evidence:
a bf16 claim on an fp8 log compares fp8 throughput with NVIDIA's bf16 number (a 1.4x "pass"),
an H200 claim on H100 device lines buys an H200 price for H100 capacity. Parsers record what
each file states (:mod:`cmax.ingest.facts`) and the case carries it, so these rules read no file.

Every contradiction is an error that quotes both sides: the manifest key and value, and the
evidence file, line and text.
"""

from __future__ import annotations

from collections.abc import Iterator

from cmax.findings import Finding
from cmax.ingest.evidence import EvidenceFile
from cmax.ingest.facts import Fact, facts_of
from cmax.ingest.formats import declarations
from cmax.reference.gpus import gpu_family
from cmax.resolve.claims import (
    fact_int,
    norm_name,
    precision_family,
    release_of,
    stated_precisions,
)
from cmax.resolve.run_claims import known_workloads, shape_citations
from cmax.validate.context import Context, RunView, run_finding
from cmax.validate.registry import Rule, finding, register

SOURCE = "cmax: the manifest is the submitter's claim, the tool output is the evidence."

register(Rule(
    "identity.gpu", "error", "The evidence names another GPU than the manifest",
    "nccl-tests device lines, nvidia-smi output, the ClusterMAX audit and MLPerf system "
    "descriptions print the GPU model. When it is another product than `system.gpu`, the run is "
    "compared with the wrong reference and priced as the wrong capacity.",
    "Declare the GPU the evidence was measured on, or submit evidence from the declared GPUs.",
    SOURCE,
))
register(Rule(
    "identity.gpu-count", "error", "The evidence ran on another number of GPUs",
    "A training log prints its world size and nccl-tests prints its ranks. A run declared at "
    "512 GPUs whose log ran on 64 is compared with the wrong reference scale (and small jobs "
    "are faster per GPU); evidence on more GPUs than the declared system has comes from "
    "another system.",
    "Declare the GPU count the job actually used (`runs[i].num_gpus`, `system.nodes` x "
    "`system.gpus_per_node`), or submit the log of the declared run.",
    SOURCE,
    effect="other_system",
))
register(Rule(
    "identity.node-count", "error", "The evidence spans more nodes than the system has",
    "nccl-tests device lines and the audit name the nodes they ran on; more distinct nodes than "
    "`system.nodes` means the evidence comes from another, larger system.",
    "Declare the system the evidence was measured on.",
    SOURCE,
    effect="other_system",
    subject="file",
))
register(Rule(
    "identity.precision", "error", "The log ran at another precision than declared",
    "Training logs print their precision settings (Megatron `fp8 ... hybrid`, NeMo `fp8: "
    "hybrid`, `--fp8-format`) and experiment names carry it (`..._fp8_512`). An fp8 run "
    "declared bf16 beats NVIDIA's bf16 reference by ~1.4x and would pass on a number that "
    "measures nothing about the cluster.",
    "Declare the precision the run used (`runs[i].precision`) or submit the declared run's log.",
    "NVIDIA/Megatron-LM arguments.py (--fp8-format); NeMo 2 MegatronMixedPrecision (fp8).",
))
register(Rule(
    "identity.model", "error", "The log trained another model than declared",
    "Experiment and job names printed by NeMo, Megatron, TorchTitan and the DGXC parse "
    "scripts name the model. A log of a smaller model declared as a larger one compares the "
    "wrong throughput with the reference.",
    "Declare the workload the log trained (`runs[i].workload`), or submit the right log.",
    SOURCE,
))
register(Rule(
    "identity.architecture", "error", "The log's network is not the declared model's",
    "Megatron's argument dump and NeMo's configuration print the network's shape "
    "(`num_layers`, `hidden_size`). A hidden size other than the declared model's (from the "
    "reference catalogue, reference/models.toml) is another network: an 8B run's log declared "
    "as the 70B run. The layer count alone is not compared: NVIDIA's proxy recipes cut the "
    "layers of the same network.",
    "Declare the workload the log trained (`runs[i].workload`), or submit the right log.",
    "NVIDIA/Megatron-LM megatron/training/arguments.py (the argument dump: num_layers, "
    "hidden_size); reference/models.toml (published shapes).",
))
register(Rule(
    "identity.software", "error", "The log ran another framework release than declared",
    "pyxis and NGC image lines name the container the job ran (`nvcr.io#nvidia/nemo:24.09`). "
    "The reference recipe was measured with one release and a newer one is often faster: a "
    "log of another release than cmax.toml's `container` is not the declared run.",
    "Declare the container the job ran (`runs[i].container`), or submit the declared run's log.",
    "pyxis (Slurm container plugin) `importing docker image`; NGC image references.",
))
register(Rule(
    "identity.baseline-software", "warning", "The run used another container release than "
    "its reference",
    "The matched baseline was measured with one NGC container release; the log (or cmax.toml) "
    "names another release of the same image. Releases differ in speed (kernels, "
    "communication overlap, FP8 recipes), so part of the ratio is the software's, not the "
    "cluster's: a newer release can make a cluster look faster than NVIDIA's reference on "
    "the same hardware.",
    "Run the release the reference recipe was measured with (the baseline's container), or "
    "read the ratio as cluster and software together.",
    "The baselines' container column (reference/baselines.csv, from each recipe's README).",
))
register(Rule(
    "identity.shared-evidence", "error", "One log is declared for runs with different claims",
    "The same file (same SHA-256) cannot be the evidence of two runs that claim a different "
    "workload, precision or GPU count: at most one of the claims is true, and the other row "
    "passes on borrowed numbers.",
    "Give each run its own log.",
    SOURCE,
))

#: Formats whose facts describe the one run they hold: the per-step training logs ingest has a
#: parser for (summaries hold many experiments: their facts are per experiment and are not used
#: for a run's identity here).
_RUN_LOG_FORMATS = frozenset(d.id for d in declarations() if d.role == "run" and d.markers)

def _cite(file: EvidenceFile, fact: Fact) -> str:
    return f"{fact.cite(file.path)}: {fact.value!r}"


def _file_of(ctx: Context, path: str | None) -> EvidenceFile | None:
    if not path:
        return None
    return next((f for f in ctx.evidence.files if f.path == path), None)


def _gpu(ctx: Context) -> Iterator[Finding]:
    declared = ctx.manifest.system.gpu
    want = gpu_family(ctx.ref.gpu_id(declared) or declared) or gpu_family(declared)
    if want is None:
        return
    for file in ctx.evidence.files:
        for fact in facts_of(file.facts, "gpu"):
            got = gpu_family(fact.value)
            if got is None or got == want:
                continue
            yield finding("identity.gpu",
                          f"system.gpu = {declared!r} ({want}), but {_cite(file, fact)} "
                          f"is {got}", file=file.path, line=fact.line)
            break  # one finding per file: the first statement is enough to quote


def _counts(ctx: Context) -> Iterator[Finding]:
    system = ctx.manifest.system
    total = system.nodes * system.gpus_per_node
    run_files = {v.file for v in ctx.runs if v.file}
    for file in ctx.evidence.files:
        if file.path in run_files:
            continue  # a run's world size is judged against its own num_gpus below
        for fact in facts_of(file.facts, "gpu_count"):
            count = _int(fact.value)
            if count is not None and count > total:
                yield finding("identity.gpu-count",
                              f"{_cite(file, fact)} GPUs, more than the declared system's "
                              f"{total} (system.nodes {system.nodes} x gpus_per_node "
                              f"{system.gpus_per_node})", file=file.path, line=fact.line)
                break
        hosts = {f.value for f in facts_of(file.facts, "host")}
        counted = [(_int(f.value), f) for f in facts_of(file.facts, "node_count")]
        for count, fact in counted:
            if count is not None and count > system.nodes and file.kind != "clustermax-audit":
                yield finding("identity.node-count",
                              f"{_cite(file, fact)} nodes, more than system.nodes = "
                              f"{system.nodes}", file=file.path, line=fact.line)
                break
        if file.kind == "nccl-tests" and len(hosts) > system.nodes:
            yield finding("identity.node-count",
                          f"{file.path} names {len(hosts)} distinct hosts, more than "
                          f"system.nodes = {system.nodes}", file=file.path)


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and len(text) < 10 else None


def _run_precision(ctx: Context, view: RunView, file: EvidenceFile) -> Iterator[Finding]:
    declared = view.get_str("precision") or ""
    want = precision_family(declared)
    if want is None:
        return
    for family, fact in stated_precisions(file.facts):
        contradicts = (family != want and family != "not-fp8") or (
            family == "not-fp8" and want in ("fp8", "fp4"))
        if contradicts:
            said = "fp8 off" if family == "not-fp8" else family
            yield run_finding("identity.precision", view,
                              f"declared precision {declared!r}, but {_cite(file, fact)} "
                              f"({said})", line=fact.line)
            return


def _run_model(ctx: Context, view: RunView, file: EvidenceFile, known: list[str]) -> Iterator[
        Finding]:
    declared = view.get_str("workload") or ""
    if not declared or not known:
        return
    want = norm_name(declared)
    for fact in [*facts_of(file.facts, "experiment"), *facts_of(file.facts, "model")]:
        text = norm_name(fact.value)
        named = [w for w in known if norm_name(w) and norm_name(w) in text]
        if not named or any(want in norm_name(w) or norm_name(w) in want for w in named):
            continue
        yield run_finding("identity.model", view,
                          f"declared workload {declared!r}, but {_cite(file, fact)} names "
                          f"{', '.join(sorted(named))}", line=fact.line)
        return


def _run_shape(ctx: Context, view: RunView, file: EvidenceFile) -> Iterator[Finding]:
    declared = view.get_str("workload")
    shape = ctx.ref.shape(declared)
    _, against = shape_citations(file.facts, shape, file.path)
    if not against or shape is None:
        return
    said = against[0]
    hidden = next((fact_int(f) for f in facts_of(file.facts, "architecture")
                   if f.value.startswith("hidden=")), None)
    named = ctx.ref.shaped(hidden) if hidden else []
    yield run_finding(
        "identity.architecture", view,
        f"declared workload {declared!r} (hidden size {shape[1]}, {shape[0]} layers), but "
        f"{said.cite()}" + (f": the shape of {', '.join(named)}" if named else ""),
        line=said.line)


def _run_world_size(ctx: Context, view: RunView) -> Iterator[Finding]:
    """The ledger's GPU-count claim, contradicted by the log's world size or by its node count
    (``num_nodes: 8``, ``SLURM_JOB_NUM_NODES``) times the GPUs per node."""
    claim = ctx.case.claims.get(view.run_id, "gpu_count")
    if claim is None or claim.status != "contradicted" or not claim.against:
        return
    said = claim.against[0]
    yield run_finding("identity.gpu-count", view,
                      f"declared num_gpus {claim.value} ({claim.source}), but "
                      f"{said.cite()} (the job's own statement of its scale)", line=said.line)


def _run_software(ctx: Context, view: RunView) -> Iterator[Finding]:
    claim = ctx.case.claims.get(view.run_id, "software")
    if claim is None or claim.status != "contradicted" or not claim.against:
        return
    said = claim.against[0]
    yield run_finding("identity.software", view,
                      f"declared {claim.value!r} ({claim.source}), but {said.cite()}",
                      line=said.line)


def _image(text: str) -> tuple[str, tuple[int, ...]] | None:
    """(repository name, YY.MM[.patch] release) of an NGC image reference, else None."""
    name, sep, tag = text.strip().rpartition(":")
    release = release_of(tag) if sep else None
    parts = tuple(int(p) for p in (release or "").split(".") if p.isdigit())
    if not name or len(parts) < 2 or not 20 <= parts[0] < 100:
        return None  # not a YY.MM container tag (a framework version, a digest)
    return name.replace("#", "/").rsplit("/", 1)[-1].lower(), parts


def _run_baseline_software(view: RunView, file: EvidenceFile) -> Iterator[Finding]:
    base = view.baseline
    wanted = _image(base.container) if base is not None and base.container else None
    if base is None or wanted is None:
        return
    stated = [(f, _image(f.value)) for f in facts_of(file.facts, "container")]
    said = next(((f.cite(file.path), image) for f, image in stated
                 if image is not None and image[0] == wanted[0]), None)
    if said is None and view.get_str("container"):
        image = _image(view.get_str("container") or "")
        said = (f"cmax.toml runs container {view.get_str('container')!r}", image) \
            if image is not None and image[0] == wanted[0] else None
    if said is None or said[1] is None or said[1][1][:2] == wanted[1][:2]:
        return
    where, (_, release) = said
    newer = "newer" if release > wanted[1] else "older"
    yield run_finding(
        "identity.baseline-software", view,
        f"{where} runs {wanted[0]} {'.'.join(map(str, release))}, {newer} than the "
        f"{base.container} its baseline {base.baseline_id} was measured with")


def _known_workloads(ctx: Context) -> list[str]:
    return list(known_workloads(getattr(ctx.ref.reference, "baselines", None)))


def _runs(ctx: Context) -> Iterator[Finding]:
    known = _known_workloads(ctx)
    claims: dict[str, tuple[RunView, tuple[object, ...]]] = {}
    for view in ctx.runs:
        file = _file_of(ctx, view.file)
        if file is None:
            continue
        claim = (view.get_str("workload"), view.get_str("precision"), view.get_int("num_gpus"))
        earlier = claims.get(file.sha256)
        if earlier is not None and earlier[1] != claim:
            first, first_claim = earlier
            yield run_finding("identity.shared-evidence", view,
                              f"{file.path} (sha256 {file.sha256[:12]}) is also the log of run "
                              f"{first.run_id}, declared {_claim_text(first_claim)}; this run "
                              f"is declared {_claim_text(claim)}")
        else:
            claims.setdefault(file.sha256, (view, claim))
        if file.kind not in _RUN_LOG_FORMATS:
            continue
        yield from _run_precision(ctx, view, file)
        yield from _run_model(ctx, view, file, known)
        yield from _run_shape(ctx, view, file)
        yield from _run_world_size(ctx, view)
        yield from _run_software(ctx, view)
        yield from _run_baseline_software(view, file)


def _claim_text(claim: tuple[object, ...]) -> str:
    workload, precision, gpus = claim
    return f"{workload} {precision} on {gpus} GPUs"


def check(ctx: Context) -> Iterator[Finding]:
    yield from _gpu(ctx)
    yield from _counts(ctx)
    yield from _runs(ctx)

