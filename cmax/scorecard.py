"""The Scorecard and PriceAdvice models: everything a report shows comes from these.

They are the public, JSON-serialisable results of cmax (``cmax score``/``cmax price``/
``cmax schema``). Every figure carries the evidence and the rule it came from, because a
rating that cannot explain itself is worthless in a negotiation. Field names are part of the
public contract: extend, don't rename.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal, get_args

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    model_validator,
)

from cmax.findings import Finding
from cmax.states import State, gate_state, verdict_state

SCHEMA_VERSION = "1"

Verdict = Literal["pass", "fail", "inconclusive", "not_comparable", "no_reference",
                  "unverified"]
Tier = Literal["Platinum", "Gold", "Silver", "Bronze", "Underperforming"]
AuditStatus = Literal["PASS", "WARNING", "FAIL", "SKIPPED"]

TIERS: tuple[Tier, ...] = get_args(Tier)
"""The tier order, best first: the one declaration every comparison of tiers reads."""


def tier_rank(tier: str) -> int:
    """0 for Platinum … 4 for Underperforming; an unknown name ranks after all of them."""
    return TIERS.index(tier) if tier in TIERS else len(TIERS)


def stricter(a: Tier, b: Tier) -> Tier:
    """The lower (more restrictive) of two tiers."""
    return a if tier_rank(a) >= tier_rank(b) else b


def gentler(a: Tier, b: Tier) -> Tier:
    """The higher (less restrictive) of two tiers."""
    return a if tier_rank(a) <= tier_rank(b) else b


class _Model(BaseModel):
    """Frozen, strict models. Computed fields (a result's ``state``, a gate's ``binding_cap``)
    are written to JSON for readers and dropped when a scorecard is read back, so a written
    scorecard always validates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        computed = cls.model_computed_fields
        if computed and isinstance(data, dict) and any(k in data for k in computed):
            return {k: v for k, v in data.items() if k not in computed}
        return data


class Baseline(_Model):
    """The reference row a run was compared with."""

    baseline_id: str
    release: str
    step_time_s: float | None = None
    tokens_per_s_per_gpu: float | None = None
    model_tflops_per_gpu: float | None = None
    mfu_pct: float | None = None
    gbs: int | None = None
    seq_len: int | None = None
    container: str | None = None
    source: str


class WorkloadResult(_Model):
    """One training run against its matched baseline."""

    workload: str
    precision: str
    num_gpus: int
    log: str
    run_id: str | None = Field(default=None, description="the run's id in the case (the "
                               "subject of its entries in the claims ledger)")
    framework: str | None = None
    status: str
    steps_total: int
    window: tuple[int, int] | None = Field(
        default=None, description="first and last iteration of the steady-state window")
    steps_in_window: int = 0
    mean_step_time_s: float | None = None
    tokens_per_s_per_gpu: float | None = None
    model_tflops_per_gpu: float | None = None
    mfu_pct: float | None = None
    baseline: Baseline | None = None
    ratio: float | None = Field(default=None, description="provider ÷ reference throughput")
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: Verdict
    validation_errors: list[str] = Field(
        default_factory=list,
        description="rule ids of validation errors on this run's evidence: such a run counts "
        "towards neither the price nor the tier (its ratio stays visible)")
    bar: float = Field(description="the pass bar this run was judged against (rubric "
                       "[performance] bar)")
    notes: list[str] = Field(default_factory=list)
    step_series: list[tuple[int, float]] = Field(
        default_factory=list,
        description="(iteration, step_time_s) for every step with a finite time; a run of more "
        "than 1,500 such steps keeps the fastest and slowest step of each of 750 equal runs of "
        "steps (every spike kept; steps_total counts them all; cmax/score/series.py)")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        """The verdict in the one vocabulary of states (cmax/states.py)."""
        return verdict_state(self.verdict)


class NetworkResult(_Model):
    """nccl-tests bus bandwidth at large messages against the fabric's baseline."""

    file: str
    collective: str
    ranks: int
    nodes: int
    large_message_bytes: int
    busbw_gbps: float
    max_busbw_gbps: float
    reference_busbw_gbps: float | None = None
    reference_source: str | None = None
    ratio: float | None = None
    verdict: Verdict
    series: list[tuple[int, float]] = Field(
        default_factory=list, description="(size_bytes, out-of-place busbw GB/s)")
    notes: list[str] = Field(default_factory=list)
    nvlink_domains: int | None = Field(
        default=None, description="NVLink domains (NVL72 racks) the run spans, when known: 1 "
        "is an intra-rack result (multi-node NVLink), rated against its own bar and never the "
        "scale-out fabric's; 2+ is a job split across racks")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        """The verdict in the one vocabulary of states (cmax/states.py)."""
        return verdict_state(self.verdict)


class SuspectNode(_Model):
    """A node the evidence singles out as slow or faulty (cmax.score.nodes)."""

    node: str = Field(description="host name as the evidence prints it")
    sources: list[str] = Field(default_factory=list,
                               description="which runs/tests/files, with lines, point at it")
    shortfall_pct: float | None = Field(
        default=None, description="how far below the healthy median, in percent")
    impact: str = Field(description="what it costs, in plain words")
    gpus: int = Field(description="GPUs on that node")


class PairResult(_Model):
    """One pairwise or split nccl-tests run: its hosts and large-message bus bandwidth."""

    hosts: list[str]
    busbw_gbps: float
    size_bytes: int
    file: str
    line: int | None = None


class MlperfResult(_Model):
    benchmark: str
    submitter: str | None = None
    system: str | None = None
    runs: int
    score_min: float | None = None
    reference_min: float | None = None
    reference_source: str | None = None
    ratio: float | None = None
    ci_low: float | None = Field(default=None, description="ratio CI from the run spread")
    ci_high: float | None = None
    verdict: Verdict
    num_gpus: int | None = None
    notes: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        """The verdict in the one vocabulary of states (cmax/states.py)."""
        return verdict_state(self.verdict)


class ReliabilityResult(_Model):
    period_start: dt.date
    period_end: dt.date
    gpus_in_service: int
    gpu_days: float
    unexpected_interruptions: int
    planned_interruptions: int
    per_1000_gpu_days: float
    mtbf_gpu_hours: float | None
    reference_per_1000_gpu_days: float
    reference_source: str
    ratio_vs_reference: float | None = Field(
        default=None, description="provider rate ÷ reference rate (lower is better)")
    job_gpus: int
    checkpoint_interval_min: float
    restart_min: float
    ettr: float = Field(description="expected effective training time ratio for the job")
    reference_ettr: float
    goodput_ratio: float = Field(description="ettr ÷ reference_ettr")
    incident_series: list[tuple[dt.date, int]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class SlaResult(_Model):
    contracted_uptime_pct: float
    measured_uptime_pct: float
    met: bool
    credit_pct: float
    downtime_node_hours: float
    node_hours: float
    node_months: int = Field(default=0, description="node-months assessed (per node, per month)")
    node_months_below: int = Field(default=0, description="node-months under the contracted %")
    worst_uptime_pct: float | None = Field(default=None, description="worst node-month uptime")
    notes: list[str] = Field(default_factory=list)


class AuditCheck(_Model):
    check_id: str
    category: str
    criterion: str
    status: AuditStatus
    observed: str | None = None
    minimum: str | None = None


class AuditSummary(_Model):
    file: str
    cluster: str | None = None
    counts: dict[str, int]
    checks: list[AuditCheck] = Field(default_factory=list)


class CategoryScore(_Model):
    """One ClusterMAX 2.0 category: its score, weight and where every point came from."""

    name: str
    score: float = Field(ge=0, le=100)
    weight: float = Field(ge=0)
    verified: bool = Field(description="False when the score rests on declarations only")
    evidence: list[str] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        """not scored (no evidence: left out of the weighted score), declared (declarations
        only) or measured."""
        if self.weight == 0:
            return State.NOT_SCORED
        return State.MEASURED if self.verified else State.DECLARED


GateStatus = Literal["passed", "failed", "not_evaluated", "declared"]
GateKind = Literal["training", "network", "audit", "declarations", "gpu", "coverage"]
"""What decides a gate: measured training or network results against the rubric's bar,
ClusterMAX audit checks (declarations when no check is conclusive), declarations only, the
GPU model, or the share of category weight with evidence."""


class Gate(_Model):
    """A hard gate: failing one caps the tier whatever the weighted score says.

    ``status`` is the verdict; a gate without conclusive evidence is ``not_evaluated``, never
    ``passed``, and caps the tier at ``not_evaluated_cap`` (docs/scoring.md). ``passed`` is
    kept for older readers and always equals ``status == "passed"``; a scorecard written
    before ``status`` existed reads as passed/failed from ``passed``. ``cap`` is the tier a
    *failed* gate caps at; ``binding_cap`` is the cap the gate imposes now (written to the
    JSON): every sentence about what a gate caps reads that one.
    """

    name: str
    id: str | None = Field(
        default=None, description="the gate's stable id: the rubric's [[gates]] id, or "
        "'coverage' for the evidence-coverage gate (None in scorecards written before ids)")
    passed: bool
    cap: Tier
    reason: str
    status: GateStatus = Field(description="passed, failed, not_evaluated (no conclusive "
                               "evidence: never reads as passed) or declared")
    not_evaluated_cap: Tier | None = Field(
        default=None, description="the tier a not-evaluated gate caps at (None otherwise)")
    kind: GateKind | None = Field(
        default=None, description="what decides the gate (None on scorecards written before "
        "kinds were recorded)")

    @model_validator(mode="before")
    @classmethod
    def _status_and_passed(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        status, passed = data.get("status"), data.get("passed")
        if status is None and isinstance(passed, bool):
            return {**data, "status": "passed" if passed else "failed"}
        if passed is None and isinstance(status, str):
            return {**data, "passed": status == "passed"}
        if isinstance(passed, bool) and isinstance(status, str) and passed != (
                status == "passed"):
            raise ValueError(f"gate passed={passed} contradicts status={status!r}")
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def binding_cap(self) -> Tier | None:
        """The cap this gate imposes: its cap when failed, the not-evaluated cap when it could
        not be evaluated, none when passed or decided by declaration."""
        if self.status == "failed":
            return self.cap
        if self.status == "not_evaluated":
            return self.not_evaluated_cap
        return None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        return gate_state(self.status)


class TierThreshold(_Model):
    """The minimum weighted score of one tier under the scorecard's rubric."""

    tier: Tier
    min_score: float = Field(ge=0, le=100)


class EvidenceFileRef(_Model):
    path: str
    kind: str
    sha256: str
    size_bytes: int


class WorkloadEconomics(_Model):
    workload: str
    precision: str
    num_gpus: int
    tokens_per_s_per_gpu: float | None
    usd_per_million_tokens: float | None
    reference_usd_per_million_tokens: float | None
    joules_per_token: float | None


class ScalePoint(_Model):
    """One reference row's throughput at one scale, for comparing offers measured at others."""

    num_gpus: int
    tokens_per_s_per_gpu: float
    baseline_id: str


class TokenCost(_Model):
    """$ per million training tokens on one workload, interruptions priced in.

    quote ÷ (tokens/s/GPU × 3,600) × 10⁶ ÷ goodput ratio (docs/scoring.md, "$ per million
    training tokens"). ``basis`` says whether the throughput was measured on this offer or
    estimated from its ratio on other workloads × the reference on its GPU.
    """

    workload: str
    precision: str
    gpu: str
    num_gpus: int
    basis: Literal["measured", "estimate"]
    basis_detail: str = Field(description="the run or the ratio and reference row behind it")
    tokens_per_s_per_gpu: float
    goodput_ratio: float
    usd_per_million_tokens: float
    joules_per_token: float | None = None
    reference_scaling: list[ScalePoint] = Field(
        default_factory=list, description="the reference's throughput for this workload on "
        "this GPU type at each published scale: how an offer measured at another scale is "
        "compared")


class PriceDriver(_Model):
    """One reason the ask differs from the quote (or money owed back), in $/GPU-hour."""

    name: str
    usd_per_gpu_hour: float = Field(description="how much less a GPU-hour is worth than the "
                                    "quote; negative: worth more (in the provider's favour)")
    detail: str = Field(description="the evidence, in plain words")
    kind: Literal["price", "credit"] = Field(
        default="price", description="price: moves the ask; credit: owed back on the bill")


class PriceAdvice(_Model):
    """What the capacity is worth, and what to ask for, with the arithmetic written out.

    Three prices, one name each everywhere: *quoted* (the provider's), *parity* (what the
    delivered work is worth at the quote) and *ask* (what to ask for: min(quote, parity)).
    """

    currency: str = "USD"
    quoted_usd_per_gpu_hour: float
    throughput_ratio: float | None
    goodput_ratio: float
    parity_usd_per_gpu_hour: float | None
    ask_usd_per_gpu_hour: float | None = Field(
        validation_alias=AliasChoices("ask_usd_per_gpu_hour", "recommended_usd_per_gpu_hour"),
        description="the price to ask for: min(quoted, parity), rounded to the cent")
    adjustment_pct: float | None = Field(description="ask vs quoted, in percent")
    usd_per_reference_gpu_hour: float | None = Field(
        default=None, description="value: quoted ÷ (throughput ratio × goodput ratio), the "
        "price of one reference-grade GPU-hour of work on this cluster")
    term_months: int
    contract_gpus: int
    term_cost_usd: float
    ask_term_cost_usd: float | None = Field(
        default=None, description="the term at the ask: ask × contract GPUs × term hours")
    goodput_loss_usd: float
    sla_period_bill_usd: float = Field(
        default=0.0, description="the bill for the SLA's measured period at the quote")
    sla_credit_usd: float = Field(
        description="SLA credit owed for the measured period: its bill × the credit percentage")
    sla_credit_term_projection_usd: float | None = Field(
        default=None, description="projection only: the same credit rate over the whole term; "
        "never owed, never subtracted")
    effective_term_cost_usd: float = Field(
        description="term cost + goodput loss; credits are not subtracted")
    drivers: list[PriceDriver] = Field(default_factory=list)
    workloads: list[WorkloadEconomics] = Field(default_factory=list)
    token_costs: list[TokenCost] = Field(
        default_factory=list, description="$ per million training tokens per workload, "
        "goodput priced in: the figure to compare offers of different GPU types on")
    usd_per_million_tokens: float | None = Field(
        default=None, description="the token-weighted $ per million training tokens over "
        "the buyer's basket (token_basket)")
    token_basket: dict[str, float] = Field(
        default_factory=dict, description="the basket behind usd_per_million_tokens: "
        "'workload:precision' -> share of the tokens")
    reasoning: list[str] = Field(default_factory=list)

    @property
    def recommended_usd_per_gpu_hour(self) -> float | None:
        """Deprecated name of ``ask_usd_per_gpu_hour`` (read-only, for older callers)."""
        return self.ask_usd_per_gpu_hour


class ClaimCitation(_Model):
    """One statement an evidence file makes, quoted for or against a claim."""

    file: str
    line: int | None = None
    text: str
    where: str | None = None


class ClaimEntry(_Model):
    """One entry of the claims ledger (cmax/claims.py): a claim and what the evidence says."""

    subject: str = Field(description="what the claim is about: a run id (runs[0]), or "
                         "another part of the bundle")
    kind: str = Field(description="gpu, gpu_count, model, precision, seq_len, gbs, parallel, "
                      "software, or another stage's kind")
    value: str | None = None
    status: Literal["corroborated", "declared", "assumed", "contradicted", "unstated"]
    source: str = Field(description="who claims the value: a cmax.toml key, the log, or the "
                        "reference recipe it was assumed from")
    support: list[ClaimCitation] = Field(default_factory=list)
    against: list[ClaimCitation] = Field(default_factory=list)
    note: str = ""


class ServingPoint(_Model):
    """One result of a serving sweep (one concurrency or request rate), and the reference
    interpolated at its interactivity when the reference is a curve."""

    concurrency: float | None = Field(default=None, description="max concurrency (None: no "
                                      "cap)")
    request_rate: float | None = Field(default=None, description="requests/s offered (None: as "
                                       "fast as possible)")
    interactivity: float | None = Field(default=None, description="output tokens/s per user, "
                                        "1000 / mean TPOT in ms")
    output_tok_s_per_gpu: float
    reference_tok_s_per_gpu: float | None = Field(
        default=None, description="the reference curve at this interactivity (None: outside "
        "its measured range, or no curve)")
    ratio: float | None = None
    slo_met: bool | None = Field(default=None, description="every latency SLO the manifest "
                                 "states is met (None: none stated or not measured)")


class ReferenceCurvePoint(_Model):
    """A point of the public throughput-vs-interactivity reference curve."""

    interactivity: float = Field(description="output tokens/s per user")
    output_tok_s_per_gpu: float


class InferenceResult(_Model):
    """One ``[[inference]]`` entry: its per-GPU output throughput against the public reference
    at the same model, GPU, precision and input/output length (cmax/score/inference.py)."""

    entry: str = Field(description="manifest entry, e.g. inference[0]")
    tool: str = Field(description="format id of the result file")
    source_file: str
    model: str
    precision: str
    gpu: str
    gpus: int = Field(description="GPUs serving, the manifest's")
    gpus_basis: Literal["corroborated", "declared", "contradicted"] = Field(
        description="whether the result file itself states the GPU count")
    input_len: int
    output_len: int
    results: int = Field(description="result objects in the file (a sweep has several)")
    offline: bool = Field(description="the rated result ran with no rate or concurrency cap, "
                          "as the reference's offline maximum-throughput runs did")
    output_tok_s: float | None = Field(default=None, description="system output tokens/s")
    output_tok_s_per_gpu: float | None = None
    reference_tok_s_per_gpu: float | None = None
    reference_source: str | None = None
    reference_setup: str | None = Field(default=None, description="parallel layout, software "
                                        "and scenario of the reference row")
    ratio: float | None = Field(default=None, description="provider per GPU / reference "
                                "(on a curve: geometric mean over the compared points)")
    ci_low: float | None = Field(default=None, description="lower bound of the ratio's "
                                 "confidence interval over the compared points")
    ci_high: float | None = None
    comparison: Literal["offline", "curve", "none"] = Field(
        default="none", description="offline: best uncapped result against the offline maximum "
        "throughput; curve: each sweep point against the reference curve at its interactivity")
    interactivity: float | None = Field(default=None, description="output tokens/s per user of "
                                        "the rated result (1000 / mean TPOT)")
    points: list[ServingPoint] = Field(default_factory=list, description="every result read")
    reference_curve: list[ReferenceCurvePoint] = Field(default_factory=list)
    verdict: Literal["pass", "fail", "inconclusive", "unverified", "not_comparable",
                     "no_reference", "invalid"] = "no_reference"
    usd_per_million_output_tokens: float | None = Field(
        default=None, description="quoted $/GPU-hour over the measured per-GPU output rate")
    usd_per_million_output_tokens_at_reference: float | None = None
    usd_per_million_input_tokens: float | None = Field(
        default=None, description="quoted $/GPU-hour over the measured per-GPU input (prompt) "
        "rate; the whole GPU-hour is charged to each token kind, so the two are not additive")
    usd_per_million_input_tokens_at_reference: float | None = Field(
        default=None, description="at the reference's output rate × input_len / output_len (a "
        "fixed-length run processes that many prompt tokens per output token)")
    joules_per_output_token: float | None = Field(
        default=None, description="measured GPU power × GPUs ÷ output tokens/s (None: no power "
        "telemetry)")
    slo: list[str] = Field(default_factory=list, description="latency SLO checks, as sentences")
    notes: list[str] = Field(default_factory=list)


class ScaleEvidence(_Model):
    """The widest result of one kind of evidence: the scale it ran at."""

    kind: Literal["network", "training", "mlperf"]
    what: str = Field(description="the result, as the scorecard names it")
    nodes: int
    gpus: int


class ProvenScale(_Model):
    """The largest scale the evidence proves, against the scale the manifest claims.

    Only results that count are read: rated training runs (their scale corroborated and their
    evidence clean), compared nccl-tests sweeps, and the provider's own MLPerf results that
    were rated. The fabric gate reads ``fabric_nodes`` against ``fabric_needed_nodes``
    (docs/network.md, Scale)."""

    claimed_nodes: int
    claimed_gpus: int
    nodes: int | None = Field(default=None, description="the most nodes any counted result ran on")
    gpus: int | None = Field(default=None, description="the most GPUs any counted result ran on")
    share: float | None = Field(default=None, description="gpus ÷ claimed_gpus")
    fabric_nodes: int | None = Field(
        default=None, description="nodes of the widest inter-node nccl-tests sweep compared")
    fabric_ranks: int | None = None
    fabric_needed_nodes: int = Field(
        description="the nodes a sweep must span to decide the fabric gate "
        "([network] min_node_share of the claimed nodes, at least 2)")
    evidence: list[ScaleEvidence] = Field(
        default_factory=list, description="the widest counted result of each kind")
    summary: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fabric_proven(self) -> bool:
        """Whether an inter-node sweep spans enough of the claimed system to decide the gate."""
        return self.fabric_nodes is not None and self.fabric_nodes >= self.fabric_needed_nodes


class Scorecard(_Model):
    """The rating of one bundle."""

    schema_version: str = SCHEMA_VERSION
    cmax_version: str
    reference_release: str
    rubric: str
    provider: str
    cluster: str
    region: str | None = None
    gpu: str
    nodes: int
    gpus_per_node: int
    interconnect: str | None = None
    benchmark_date: dt.date
    tier: Tier
    score: float = Field(ge=0, le=100, description="weighted category score before gates")
    score_tier: Tier | None = Field(
        default=None, description="the tier the weighted score alone reaches, before gates")
    tier_without_declarations: Tier | None = Field(
        default=None, description="the tier with every self-declaration left out (declared "
        "gates not evaluated, declaration components not scored); None when nothing is "
        "declared")
    tier_thresholds: list[TierThreshold] = Field(
        default_factory=list, description="the rubric's minimum score per tier, best first "
        "(below the last is Underperforming)")
    exemplar_pass: bool
    exemplar_bar: float
    workloads: list[WorkloadResult] = Field(default_factory=list)
    network: list[NetworkResult] = Field(default_factory=list)
    network_pairs: list[PairResult] = Field(
        default_factory=list, description="pairwise/split runs behind suspect_nodes")
    suspect_nodes: list[SuspectNode] = Field(default_factory=list)
    mlperf: list[MlperfResult] = Field(default_factory=list)
    inference: list[InferenceResult] = Field(default_factory=list)
    reliability: ReliabilityResult | None = None
    sla: SlaResult | None = None
    audit: AuditSummary | None = None
    categories: list[CategoryScore] = Field(default_factory=list)
    gates: list[Gate] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    finding_counts: dict[str, int] = Field(default_factory=dict)
    evidence_files: list[EvidenceFileRef] = Field(default_factory=list)
    scale: ProvenScale | None = Field(
        default=None, description="the largest scale the evidence proves (nodes and GPUs "
        "measured) against the nodes and GPUs claimed")
    claims: list[ClaimEntry] = Field(
        default_factory=list, description="the claims ledger: every claim the ratings rest on, "
        "corroborated, declared only, assumed from the recipe or contradicted")
    price: PriceAdvice | None = None
    notes: list[str] = Field(default_factory=list, description="how the verdicts were reached")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def score_state(self) -> State:
        """not scored when no category has any evidence (a 0 would be a claim), else
        measured or declared by whether any category rests on measured evidence."""
        counted = [c for c in self.categories if c.weight > 0]
        if not counted:
            return State.NOT_SCORED
        return State.MEASURED if any(c.verified for c in counted) else State.DECLARED

    @computed_field  # type: ignore[prop-decorator]
    @property
    def exemplar_state(self) -> State:
        """passed, failed on a compared suite, or not evaluated when no run was compared."""
        if self.exemplar_pass:
            return State.PASSED
        if any(w.verdict in ("pass", "fail", "inconclusive") for w in self.workloads):
            return State.FAILED
        return State.NOT_EVALUATED
