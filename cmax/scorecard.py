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

from cmax.findings import Effect, Finding, Severity, Subject
from cmax.states import (
    BAR_STATES,
    CLAIM_STATES,
    INDEPENDENT_AUTHORS,
    AtBar,
    Author,
    GateVerdict,
    Provenance,
    State,
    Verdict,
    gate_state,
    verdict_state,
)

SCHEMA_VERSION = "1"

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
    """Frozen, strict models; each field's docstring is its description in the JSON Schema
    (``cmax schema --model scorecard``, which reads the docstrings: :mod:`cmax.cli.schemas`;
    pydantic reading them here would cost every command's start-up). Computed fields (a
    result's ``state``, a gate's ``binding_cap``) are written to JSON for readers and dropped
    when a scorecard is read back, so a written scorecard always validates."""

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
    """the reference row's id in the reference catalogue (cmax reference)"""
    release: str
    """the reference release the row belongs to"""
    step_time_s: float | None = None
    """the reference's mean step time, seconds"""
    tokens_per_s_per_gpu: float | None = None
    """the reference's training throughput, tokens/s per GPU"""
    model_tflops_per_gpu: float | None = None
    """the reference's model TFLOP/s per GPU"""
    mfu_pct: float | None = None
    """the reference's model FLOPs utilisation, %"""
    gbs: int | None = None
    """the reference recipe's global batch size"""
    seq_len: int | None = None
    """the reference recipe's sequence length, tokens"""
    container: str | None = None
    """the container image the reference was measured with"""
    source: str
    """where the reference number is published"""


class WorkloadResult(_Model):
    """One training run against its matched baseline."""

    workload: str
    """the workload as the run states it, e.g. llama3.1-405b"""
    precision: str
    """the training precision, e.g. bf16 or fp8"""
    num_gpus: int
    """GPUs the run trained on"""
    log: str
    """the training log, relative to the bundle"""
    run_id: str | None = Field(default=None, description="the run's id in the case (the "
                               "subject of its entries in the claims ledger)")
    log_states: dict[str, str | None] = Field(
        default_factory=dict, description="the identity fields (workload, num_gpus, "
        "precision) whose cmax.toml declaration the run's log contradicts, each with the value "
        "the log states instead (None: its statements name no single value); workload, "
        "num_gpus and precision above stay the declared values the reference was looked up "
        "by, and every report labels the run with the log's (cmax/render/formatting.py "
        "run_label)")
    framework: str | None = None
    """the framework the log came from (nemo2, megatron, torchtitan, …); None when unknown"""
    status: str
    """how the run ended as the log shows it: success, incomplete, invalid_grad_norm, no_window
    (steps were read, none inside the steady-state window) or no_data (no step read)"""
    steps_total: int
    """steps the log records"""
    window: tuple[int, int] | None = Field(
        default=None, description="first and last iteration of the steady-state window")
    steps_in_window: int = 0
    """steps inside the steady-state window, the ones the mean is taken over"""
    mean_step_time_s: float | None = None
    """mean step time over the window, seconds"""
    tokens_per_s_per_gpu: float | None = None
    """training throughput over the window, tokens/s per GPU (global batch × sequence length ÷
    step time ÷ GPUs)"""
    model_tflops_per_gpu: float | None = None
    """model TFLOP/s per GPU over the window, from the log or from the model's FLOPs per token"""
    mfu_pct: float | None = None
    """model FLOPs utilisation over the window, % of the GPU's dense peak"""
    measured_joules_per_token: float | None = Field(
        default=None, description="GPU energy per training token as the run measured it "
        "(Megatron --log-energy: the window's mean J/iter/GPU ÷ tokens per GPU per step; else "
        "[[power]] nvidia-smi or DCGM Exporter telemetry: mean W per GPU in the window ÷ "
        "tokens/s/GPU); GPU "
        "boards only, so below the all-in nominal J/token (system power x PUE)")
    measured_power_w_per_gpu: float | None = Field(
        default=None, description="the window's mean measured power per GPU")
    energy_checks: list[str] = Field(
        default_factory=list, description="telemetry quality of the measured energy: readings "
        "missing in the window, power x step time against the printed energy, gaps between "
        "samples, the window covered, GPUs seen against the run's")
    baseline: Baseline | None = None
    """the reference row the run was compared with (None: no matching reference)"""
    ratio: float | None = Field(default=None, description="provider ÷ reference throughput")
    ci_low: float | None = None
    """lower end of the ratio's bootstrap confidence interval over the window's steps"""
    ci_high: float | None = None
    """upper end of the ratio's bootstrap confidence interval"""
    verdict: Verdict
    """pass or fail (the whole interval on one side of the bar), inconclusive, not_comparable,
    no_reference or unverified"""
    validation_errors: list[str] = Field(
        default_factory=list,
        description="rule ids of validation errors on this run's evidence: such a run counts "
        "towards neither the price nor the tier (its ratio stays visible)")
    bar: float = Field(description="the pass bar this run was judged against (rubric "
                       "[performance] bar)")
    notes: list[str] = Field(default_factory=list)
    """how the result was reached, in sentences"""
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


class UnitRequirement(_Model):
    """One item of NVIDIA's Requirements for AI Clouds judged on one scalable unit."""

    requirement: str
    """the requirement's id (BM01, SLURM08) and the test judged (BM01-02)"""
    title: str
    """what the requirement asks, in a line"""
    status: Literal["passed", "failed", "not_evaluated"]
    """passed / failed on the unit's evidence, or not_evaluated when the unit holds none"""
    detail: str
    """why: the results that decided it, or what is missing"""
    evidence: list[str] = Field(default_factory=list)
    """the files (and runs) that decided it"""

    @property
    def state(self) -> State:
        """The status in the one vocabulary of states (cmax/states.py)."""
        return gate_state(self.status)


class UnitAcceptance(_Model):
    """A scalable unit handed over, judged on the requirements cmax can measure from evidence."""

    name: str
    """the unit: its llmb-run package folder, its [[units]] name, or the whole cluster"""
    source: Literal["llmb-run package", "manifest [[units]]", "whole bundle"]
    """where the unit comes from"""
    hosts: list[str] = Field(default_factory=list)
    """the hosts that make up the unit, as declared ([[units]]) or named by its evidence"""
    requirements: list[UnitRequirement] = Field(default_factory=list)
    """each requirement judged on the unit"""
    accepted: bool
    """every requirement passed (BM01 included): the unit can be accepted on this evidence"""


class SuiteRun(_Model):
    """One training run as it bears on the Exemplar suite."""

    workload: str
    """the workload the run trained, e.g. llama3.1-405b"""
    precision: str
    """the training precision, e.g. bf16 or fp8"""
    num_gpus: int
    """GPUs the run trained on"""
    log: str
    """the training log, relative to the bundle"""
    run_id: str | None = None
    """the run's id in the case (its judgement's id)"""
    ratio: float | None = None
    """provider ÷ reference throughput (None: not measured)"""
    verdict: Verdict | Literal["withheld"]
    """the run's verdict against the bar; withheld when its judgement's verdict is (an error
    contests a pass: ``cmax/judgement/bar.py`` ``bar_verdict``)"""
    withheld_by: list[str] = Field(default_factory=list)
    """rule ids of the errors that withhold the run's pass (a run measured against the bar and
    not below it that an error contests does not pass: its workload is not met)"""


class SuiteWorkload(_Model):
    """One workload of the Exemplar suite (a workload, precision and GPU count with a
    reference) and every run of it the bundle holds: met only when every run passes."""

    workload: str
    """the workload, e.g. llama3.1-405b"""
    precision: str
    """the training precision"""
    num_gpus: int
    """the GPU count the workload ran at"""
    state: State = Field(description="met, not_met or not_evaluated")
    runs: list[SuiteRun] = Field(default_factory=list)
    """every run of this workload compared with its reference, in run order"""


SUITE_STATES = (State.MET, State.NOT_MET, State.NOT_EVALUATED)
"""The states a bar judged over a suite can be in."""


class ExemplarJudgement(_Model):
    """The Exemplar suite, judged once (``cmax/judgement/exemplar.py``): every output (score,
    the gate, ``--fail-on exemplar``, price, reports, JSON, JUnit/CTRF, frames, demo) reads
    this and nothing else."""

    state: State = Field(description="met (every run of every suite workload passes), "
                         "not_met (a run fails or cannot be told from the bar) or "
                         "not_evaluated (no run was compared, or a run's pass is not earned)")
    bar: float
    """the fraction of reference throughput every run must exceed"""
    workloads: list[SuiteWorkload] = Field(default_factory=list)
    """the suite: each workload with the runs that decide it"""
    reason: str
    """why the suite is in its state, in one sentence"""

    @model_validator(mode="after")
    def _suite_state(self) -> ExemplarJudgement:
        if self.state not in SUITE_STATES:
            raise ValueError(f"an Exemplar suite is met, not_met or not_evaluated, "
                             f"not {self.state.value}")
        return self


ClaimKind = Literal["training_run", "exemplar_suite", "serving_result", "mlperf_result",
                   "storage_result", "fabric", "reliability", "sla", "energy", "audit",
                   "declaration", "quote"]
"""The claims a rating rests on, each judged once (``cmax/judgement/claims.py``)."""

POWER_CLAIM = "watts_per_gpu"
"""The id of the energy claim every priced J/token divides by (``("energy", POWER_CLAIM)``):
the power per GPU, the manifest's [pricing] watts_per_gpu (declared) or the reference's
default (assumed); a run's measured energy is ``("energy", run_id)``."""

class Witness(_Model):
    """One statement that bears on a claim: where it is, what it says and who wrote it."""

    file: str | None = None
    """the file, relative to the bundle (cmax.toml for the manifest; a monitoring source's
    address)"""
    line: int | None = None
    """the line in it"""
    fact: str
    """what it states, in words"""
    author: Author = Field(description="who wrote it: provider, manifest, buyer (monitoring), "
                           "third_party (audit), mlcommons (a published result) or scheduler "
                           "(accounting); cmax/judgement/witnesses.py")
    attests: Literal["figure", "context"] = Field(
        default="figure", description="figure: it states the claim's figure itself (a log's "
        "step times, a sweep's bandwidth, the monitoring's outages); context: it states when, "
        "where or that the work ran (the accounting's job span and hosts), not the figure")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def independent(self) -> bool:
        """written by someone other than the provider"""
        return self.author in INDEPENDENT_AUTHORS


class Bearing(_Model):
    """A finding as it bears on a claim: the rule, and the effect its registry declaration
    gives it."""

    rule: str
    """the rule id"""
    severity: Severity
    """error, warning or info"""
    effect: Effect = Field(description="what the finding does to the claim (the rule's "
                           "declared effect; cmax/findings.py Effect)")
    subject: Subject = Field(description="what the rule's findings are about: run, file, "
                             "result, audit, fleet or bundle (cmax/findings.py Subject)")
    file: str | None = None
    """the file it names"""
    line: int | None = None
    """the line in it"""
    message: str
    """what was found"""


class Judgement(_Model):
    """What one claim the rating rests on amounts to, decided once (``cmax/judgement/``):
    every stage and report reads this and decides nothing of it again."""

    kind: ClaimKind
    """what sort of claim: a training run, the Exemplar suite, a serving or MLPerf result, the
    fabric, reliability, the SLA, a run's energy or the power priced J/token divides by, the
    audit or a declaration"""
    id: str = Field(description="which claim of its kind: a run id (runs[0]), a manifest "
                    "entry (inference[0], mlperf[0]), a declaration key, or the kind's one "
                    "claim (exemplar, fabric, reliability, sla, audit; energy's watts_per_gpu: "
                    "the power per GPU priced J/token divides by)")
    label: str
    """the claim in words"""
    state: State = Field(description="earned, declared, assumed, contradicted or "
                         "not_assessed")
    bar_state: State | None = Field(
        default=None, description="against its bar: met, not_met or not_evaluated (None: the "
        "claim has no bar)")
    verdict: GateVerdict | None = Field(
        default=None, description="a result's verdict at its bar as the gates count it: pass, "
        "fail, inconclusive, unverified or not_rated (None: the claim is no single result "
        "against a bar); bar_state merges fail and inconclusive, which an 'any' gate tells "
        "apart")
    witnesses: list[Witness] = Field(default_factory=list)
    """the statements it rests on, each with its author"""
    findings: list[Bearing] = Field(default_factory=list)
    """the findings that bear on it"""
    gates: list[str] = Field(default_factory=list)
    """the ids of the gates that read it (rubric [[gates]] measured / keys / checks)"""
    reason: str = ""
    """why it is in its state, in one sentence"""

    @model_validator(mode="after")
    def _states(self) -> Judgement:
        if self.state not in CLAIM_STATES:
            raise ValueError(f"a claim is earned, declared, assumed, contradicted or "
                             f"not_assessed, not {self.state.value}")
        if self.bar_state is not None and self.bar_state not in BAR_STATES:
            raise ValueError(f"against a bar a claim is met, not_met or not_evaluated, not "
                             f"{self.bar_state.value}")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def effects(self) -> list[Effect]:
        """the distinct effects its findings have on it, in order (none left out)"""
        return list(dict.fromkeys(b.effect for b in self.findings if b.effect != "none"))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def provenance(self) -> Provenance:
        """independently witnessed (a witness of the figure the provider did not write),
        provider-attested (only the provider's own files state the figure), declared (only its
        statement, or the recipe's assumption) or not assessed: the label every report puts on
        the claim's figures. A witness of the context only (a job's span) labels nothing."""
        if self.state is State.NOT_ASSESSED:
            return "not assessed"
        if self.state in (State.DECLARED, State.ASSUMED):
            return "declared"
        authors = {w.author for w in self.witnesses if w.attests == "figure"}
        if authors & INDEPENDENT_AUTHORS:
            return "independently witnessed"
        if "provider" in authors:
            return "provider-attested"
        return "declared" if authors else "not assessed"


class NetworkResult(_Model):
    """nccl-tests bus bandwidth at large messages against the fabric's baseline."""

    file: str
    """the nccl-tests output, relative to the bundle"""
    collective: str
    """the collective measured, e.g. all_reduce"""
    ranks: int
    """ranks (GPUs) in the test"""
    nodes: int
    """nodes the test spans"""
    large_message_bytes: int
    """the message size the bandwidth is compared at: the baseline's size when the sweep
    includes it, else the sweep's largest"""
    busbw_gbps: float
    """out-of-place bus bandwidth at large_message_bytes, GB/s"""
    max_busbw_gbps: float
    """the highest out-of-place bus bandwidth at any size, GB/s"""
    reference_busbw_gbps: float | None = None
    """the fabric baseline's bus bandwidth, GB/s (None: no baseline)"""
    reference_source: str | None = None
    """where the fabric baseline is published"""
    ratio: float | None = None
    """busbw_gbps ÷ reference_busbw_gbps"""
    verdict: Verdict
    """pass, fail, inconclusive, not_comparable, no_reference or unverified"""
    series: list[tuple[int, float]] = Field(
        default_factory=list, description="(size_bytes, out-of-place busbw GB/s)")
    notes: list[str] = Field(default_factory=list)
    """how the result was reached, in sentences"""
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
    """the hosts the run spanned"""
    busbw_gbps: float
    """its bus bandwidth at size_bytes, GB/s"""
    size_bytes: int
    """the largest message size of the run, bytes"""
    file: str
    """the nccl-tests output, relative to the bundle"""
    line: int | None = None
    """the line of that result in the file"""


class MlperfResult(_Model):
    benchmark: str
    """the MLPerf Training benchmark, e.g. llama2_70b_lora"""
    submitter: str | None = None
    """the submitter the result names"""
    system: str | None = None
    """the system description the result names"""
    runs: int
    """converged runs in the result"""
    score_min: float | None = None
    """the provider's time to train, minutes (the MLPerf score)"""
    reference_min: float | None = None
    """the matched published result's time to train, minutes"""
    reference_source: str | None = None
    """where the matched published result is"""
    ratio: float | None = None
    """reference time ÷ provider time (scaled by GPUs when matched at another scale); above 1 is
    faster than the reference"""
    ci_low: float | None = Field(default=None, description="ratio CI from the run spread")
    ci_high: float | None = None
    """upper end of the ratio's confidence interval"""
    verdict: Verdict
    """pass, fail, inconclusive, not_comparable, no_reference or unverified"""
    num_gpus: int | None = None
    """accelerators the result ran on"""
    notes: list[str] = Field(default_factory=list)
    """how the result was reached, in sentences"""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        """The verdict in the one vocabulary of states (cmax/states.py)."""
        return verdict_state(self.verdict)


class ReliabilityResult(_Model):
    period_start: dt.date
    """first day of the observed period"""
    period_end: dt.date
    """last day of the observed period (inclusive)"""
    gpus_in_service: int
    """GPUs in the fleet the incident log covers"""
    gpu_days: float
    """GPU-days observed: covered days × GPUs in service"""
    unexpected_interruptions: int
    """unplanned interruptions counted"""
    planned_interruptions: int
    """announced maintenance, excluded from the rate"""
    per_1000_gpu_days: float
    """unexpected interruptions per 1,000 GPU-days"""
    mtbf_gpu_hours: float | None
    """mean GPU-hours between unexpected interruptions (None: none happened)"""
    reference_per_1000_gpu_days: float
    """the published reference rate per 1,000 GPU-days"""
    reference_source: str
    """where the reference rate is published"""
    ratio_vs_reference: float | None = Field(
        default=None, description="provider rate ÷ reference rate (lower is better)")
    job_gpus: int
    """GPUs of the job the goodput is modelled for"""
    checkpoint_interval_min: float
    """checkpoint interval assumed for the job, minutes"""
    restart_min: float
    """time to restart after an interruption assumed for the job, minutes"""
    ettr: float = Field(description="expected effective training time ratio for the job")
    reference_ettr: float
    """the same job's expected effective training time ratio at the reference rate"""
    goodput_ratio: float = Field(description="ettr ÷ reference_ettr")
    incident_series: list[tuple[dt.date, int]] = Field(default_factory=list)
    """(day, unexpected interruptions that day) over the period"""
    notes: list[str] = Field(default_factory=list)
    """how the result was reached, in sentences"""


class SlaResult(_Model):
    contracted_uptime_pct: float
    """the uptime the SLA promises, %"""
    measured_uptime_pct: float
    """the fleet average uptime: 1 − unplanned downtime ÷ node-hours, over all nodes and the
    period, %. The contract is judged per node-month (``met``, ``worst_uptime_pct``), never on
    this average"""
    met: bool
    """every node-month reached the contracted uptime"""
    credit_pct: float
    """SLA credit owed, % of the period's bill (credit tiers per node-month, weighted by
    node-hours)"""
    downtime_node_hours: float
    """unplanned downtime summed over nodes, hours"""
    node_hours: float
    """nodes × hours in the period"""
    node_months: int = Field(default=0, description="node-months assessed (per node, per month)")
    node_months_below: int = Field(default=0, description="node-months under the contracted %")
    worst_uptime_pct: float | None = Field(default=None, description="worst node-month uptime")
    witness: Literal["incident log", "monitoring", "both"] = Field(
        default="incident log", description="what the downtime rests on: the provider's "
        "incident log, the buyer's monitoring ([monitoring]), or both joined (the union of "
        "their outages)")
    nodes_in_breach: list[str] = Field(
        default_factory=list, description="nodes with a node-month under the contracted %")
    downtime_node_hours_log: float | None = Field(
        default=None, description="unplanned downtime the incident log records, node-hours")
    downtime_node_hours_monitoring: float | None = Field(
        default=None, description="downtime the monitoring shows (planned maintenance "
        "removed), node-hours; None when there is no [monitoring] or it was not assessed")
    monitoring_resolution_s: float | None = Field(
        default=None, description="the step of the monitoring's accounting, seconds")
    unlogged_outages: int | None = Field(
        default=None, description="outages the monitoring shows that the incident log "
        "leaves out")
    notes: list[str] = Field(default_factory=list)
    """how the result was reached, in sentences"""


class AuditCheck(_Model):
    check_id: str
    """the check's key in the ClusterMAX audit JSON"""
    category: str
    """the ClusterMAX category the check belongs to"""
    criterion: str
    """the criterion the check tests"""
    status: AuditStatus
    """PASS, WARNING, FAIL or SKIPPED"""
    observed: str | None = None
    """what the audit observed"""
    minimum: str | None = None
    """what the criterion requires, when it states a minimum"""


class AuditSummary(_Model):
    file: str
    """the audit JSON, relative to the bundle"""
    cluster: str | None = None
    """the cluster the audit names"""
    counts: dict[str, int]
    """checks per status (PASS, WARNING, FAIL, SKIPPED)"""
    checks: list[AuditCheck] = Field(default_factory=list)
    """every check with a status"""


COMPONENT_LABELS: dict[str, str] = {
    "training": "training throughput", "nccl": "fabric bus bandwidth", "mlperf": "MLPerf",
    "inference": "serving throughput", "storage": "storage vs reference",
    "audit": "audit checks", "goodput": "goodput",
    "mtbf": "MTBF", "sla": "SLA uptime", "price_value": "value for money",
    "declarations": "declarations",
}
"""What each rubric component kind measures, in words (reports name a category's parts so)."""


class ComponentScore(_Model):
    """One part of a category's score: what it measured, its points and its weight inside
    the category. A category that mixes kinds (networking holds training throughput, bus
    bandwidth, MLPerf and serving results) shows each, so a weak score says which part is
    weak."""

    kind: str
    """the rubric component kind (training, nccl, mlperf, inference, audit, goodput, mtbf,
    sla, price_value, declarations)"""
    score: float = Field(ge=0, le=100)
    """its points, 0-100"""
    weight: float = Field(ge=0)
    """its weight inside the category"""
    measured: bool = Field(description="False for self-declarations")

    @computed_field(description="what the component measures, in words")  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        return COMPONENT_LABELS.get(self.kind, self.kind)


class CategoryScore(_Model):
    """One ClusterMAX 2.0 category: its score, weight and where every point came from."""

    name: str
    """the ClusterMAX 2.0 category"""
    score: float = Field(ge=0, le=100)
    """the category's score, 0-100"""
    weight: float = Field(ge=0)
    """its weight in the weighted score (0: no evidence, left out)"""
    verified: bool = Field(description="False when the score rests on declarations only")
    evidence: list[str] = Field(default_factory=list)
    """the evidence behind the score, one line per component"""
    rules: list[str] = Field(default_factory=list)
    """the rubric rules applied"""
    title: str = Field(default="", description="What the category holds, in words (the "
                       "rubric's title, e.g. 'Networking and delivered performance')")
    components: list[ComponentScore] = Field(
        default_factory=list, description="The parts that had evidence, each with its points "
        "and weight inside the category (the score is their weight-averaged mean)")

    @property
    def heading(self) -> str:
        """The category named for what it holds: the rubric's title, else its id."""
        return self.title or self.name

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        """not scored (no evidence: left out of the weighted score), declared (declarations
        only) or measured."""
        if self.weight == 0:
            return State.NOT_SCORED
        return State.MEASURED if self.verified else State.DECLARED


GateStatus = Literal["passed", "failed", "not_evaluated", "declared"]
GateKind = Literal["exemplar", "training", "serving", "mlperf", "network", "audit",
                   "declarations", "gpu", "coverage"]
"""What decides a gate: measured training, serving, MLPerf or network results against the
rubric's bar,
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
    """what the gate requires, in words"""
    id: str | None = Field(
        default=None, description="the gate's stable id: the rubric's [[gates]] id, or "
        "'coverage' for the evidence-coverage gate (None in scorecards written before ids)")
    passed: bool
    """status == 'passed' (kept for older readers)"""
    cap: Tier
    """the tier a failed gate caps the rating at"""
    reason: str
    """why the gate passed, failed or was not evaluated"""
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
        """The status in the one vocabulary of states (cmax/states.py)."""
        return gate_state(self.status)


class TierThreshold(_Model):
    """The minimum weighted score of one tier under the scorecard's rubric."""

    tier: Tier
    """the tier"""
    min_score: float = Field(ge=0, le=100)
    """the weighted score it needs, 0-100"""


class EvidenceFileRef(_Model):
    path: str
    """the file, relative to the bundle"""
    kind: str
    """the format cmax read it as (cmax docs formats)"""
    sha256: str
    """SHA-256 of its bytes, hex"""
    size_bytes: int
    """its size, bytes"""


class WorkloadEconomics(_Model):
    """One training run at the quoted price. Its $ per million tokens and J/token are priced
    only when the run's judgement counts its figure (``priced``: verdict pass, fail or
    inconclusive at its bar); a run whose pass an error withholds, whose identity rests on
    cmax.toml alone, or that was never compared keeps its row and its measured throughput, its
    priced figures null and its verdict beside them (docs/scoring.md, "$ per million training
    tokens")."""

    workload: str
    """the workload as declared (the reference was looked up by it)"""
    precision: str
    """its precision as declared"""
    num_gpus: int
    """GPUs the run trained on, as declared"""
    log: str | None = None
    """the run's training log, relative to the bundle: what tells two runs of one workload
    apart in the cost table"""
    run_id: str | None = Field(default=None, description="the run's id (its judgement's id)")
    log_states: dict[str, str | None] = Field(
        default_factory=dict, description="the run's WorkloadResult.log_states: identity "
        "fields whose declaration its log contradicts, with the value the log states")
    verdict: GateVerdict | None = Field(
        default=None, description="the run's verdict at its bar as its judgement holds it "
        "(cmax/judgement/bar.py); None on scorecards written before it was recorded")
    withheld_by: list[str] = Field(
        default_factory=list, description="rule ids of the errors that bear on the run (why "
        "a withheld run is not priced)")
    tokens_per_s_per_gpu: float | None
    """measured throughput, tokens/s per GPU (shown for every run, priced or not)"""
    usd_per_million_tokens: float | None
    """quoted $/GPU-hour over the measured throughput ÷ the goodput ratio, $ per million
    tokens with interruptions priced in (the same figure as the workload's token cost); None
    when the run is not priced"""
    reference_usd_per_million_tokens: float | None
    """the same at the reference's throughput; None when the log contradicts the identity the
    reference was looked up by (an fp8 run declared bf16 has no bf16 reference cost)"""
    joules_per_token: float | None
    """GPU power ÷ throughput, J/token (power from [pricing] watts_per_gpu or the reference
    default; None: no power figure, or the run is not priced)"""
    priced: bool = Field(
        default=True, description="whether the run's $ per million tokens and J/token count: "
        "its ratio counts at the bar as the price's throughput ratio and the token costs count "
        "it (cmax/score/verdicts.py rated: pass, fail or inconclusive with no error bearing on "
        "it); False: those figures are null")


class ScalePoint(_Model):
    """One reference row's throughput at one scale, for comparing offers measured at others."""

    num_gpus: int
    """the scale, GPUs"""
    tokens_per_s_per_gpu: float
    """the reference's throughput at that scale, tokens/s per GPU"""
    baseline_id: str
    """the reference row"""


class TokenCost(_Model):
    """$ per million training tokens on one workload, interruptions priced in.

    quote ÷ (tokens/s/GPU × 3,600) × 10⁶ ÷ goodput ratio (docs/scoring.md, "$ per million
    training tokens"). ``basis`` says whether the throughput was measured on this offer or
    estimated from its ratio on other workloads × the reference on its GPU.
    """

    workload: str
    """the workload"""
    precision: str
    """its precision"""
    gpu: str
    """the GPU type of the offer"""
    num_gpus: int
    """GPUs the throughput was measured (or estimated) at"""
    basis: Literal["measured", "estimate"]
    """measured on this offer, or an estimate from its ratio on other workloads × the reference"""
    basis_detail: str = Field(description="the run or the ratio and reference row behind it")
    tokens_per_s_per_gpu: float
    """the throughput priced, tokens/s per GPU"""
    goodput_ratio: float
    """the goodput ratio priced in (1: no reliability evidence)"""
    usd_per_million_tokens: float
    """$ per million training tokens, interruptions priced in"""
    joules_per_token: float | None = None
    """GPU power ÷ throughput, J/token (power from [pricing] watts_per_gpu or the reference
    default; None: no power figure)"""
    reference_scaling: list[ScalePoint] = Field(
        default_factory=list, description="the reference's throughput for this workload on "
        "this GPU type at each published scale: how an offer measured at another scale is "
        "compared")


class PriceDriver(_Model):
    """One reason the ask differs from the quote (or money owed back), in $/GPU-hour."""

    name: str
    """the driver, e.g. Training throughput"""
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
    """the currency of every price (USD)"""
    quoted_usd_per_gpu_hour: float
    """the provider's quote, $/GPU-hour (converted at the stated rate when quoted in another
    currency)"""
    quote_currency: str = Field(default="USD", description="the currency the quote was given in")
    quote_in_currency: float | None = Field(
        default=None, description="the quote per GPU-hour in quote_currency (None: in USD)")
    usd_per_currency_unit: float | None = Field(
        default=None, description="the exchange rate the manifest states: US dollars per 1 "
        "quote_currency")
    throughput_ratio: float | None
    """provider ÷ reference throughput: the geometric mean over the comparable runs (None: no
    run could be compared)"""
    goodput_ratio: float
    """E[ETTR] ÷ the reference's (1.0 assumed without reliability evidence)"""
    parity_usd_per_gpu_hour: float | None
    """what the delivered work is worth at the quote: quoted × throughput ratio × goodput ratio,
    $/GPU-hour"""
    ask_usd_per_gpu_hour: float | None = Field(
        validation_alias=AliasChoices("ask_usd_per_gpu_hour", "recommended_usd_per_gpu_hour"),
        description="the price to ask for: min(quoted, parity), rounded to the cent")
    adjustment_pct: float | None = Field(description="ask vs quoted, in percent")
    usd_per_reference_gpu_hour: float | None = Field(
        default=None, description="value: quoted ÷ (throughput ratio × goodput ratio), the "
        "price of one reference-grade GPU-hour of work on this cluster")
    term_months: int
    """contract term, months"""
    contract_gpus: int
    """GPUs under contract"""
    term_cost_usd: float
    """the term at the quote: quoted × contract GPUs × term hours, $"""
    ask_term_cost_usd: float | None = Field(
        default=None, description="the term at the ask: ask × contract GPUs × term hours")
    goodput_loss_usd: float | None
    """term cost × (1 − E[ETTR]): paid time lost to interruptions, $ (None: not assessed, no
    reliability evidence; never 0 for unknown)"""
    sla_period_bill_usd: float | None = Field(
        default=None, description="the bill for the SLA's measured period at the quote (None: "
        "no SLA assessed)")
    sla_credit_usd: float | None = Field(
        description="SLA credit owed for the measured period: its bill × the credit percentage "
        "(None: not assessed, no [sla] terms or no incident log; never 0 for unknown)")
    sla_credit_pct: float | None = Field(
        default=None, description="the same credit as a percentage of the measured period's "
        "bill (sla_period_bill_usd)")
    sla_credit_term_projection_usd: float | None = Field(
        default=None, description="projection only: the same credit rate over the whole term; "
        "never owed, never subtracted")
    effective_term_cost_usd: float | None = Field(
        description="term cost + goodput loss; credits are not subtracted (None: the goodput "
        "loss is not assessed)")
    drivers: list[PriceDriver] = Field(default_factory=list)
    """why the ask differs from the quote, largest first"""
    workloads: list[WorkloadEconomics] = Field(default_factory=list)
    """$ per million tokens per rated workload at the quote"""
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
    """the arithmetic, in sentences"""

    @property
    def recommended_usd_per_gpu_hour(self) -> float | None:
        """Deprecated name of ``ask_usd_per_gpu_hour`` (read-only, for older callers)."""
        return self.ask_usd_per_gpu_hour

    def _summary(self) -> list[tuple[str, str]]:
        def money(value: float | None, digits: int = 2) -> str:
            return "not assessed" if value is None else f"${value:,.{digits}f}"

        return [("quoted", f"{money(self.quoted_usd_per_gpu_hour)}/GPU-hour"),
                ("parity", f"{money(self.parity_usd_per_gpu_hour, 4)}/GPU-hour"),
                ("ask", f"{money(self.ask_usd_per_gpu_hour)}/GPU-hour"
                        + ("" if self.adjustment_pct is None
                           else f" ({self.adjustment_pct:+.2f}%)")),
                ("SLA credit", money(self.sla_credit_usd)),
                ("goodput loss", money(self.goodput_loss_usd, 0))]

    def __repr__(self) -> str:
        """One line (the full model is ``model_dump()``; a notebook shows a table)."""
        return "PriceAdvice(" + ", ".join(f"{k}={v}" for k, v in self._summary()) + ")"

    def _repr_html_(self) -> str:
        return _html_table("Price advice", self._summary())


class ClaimCitation(_Model):
    """One statement an evidence file makes, quoted for or against a claim."""

    file: str
    """the evidence file, relative to the bundle"""
    line: int | None = None
    """the line in it"""
    text: str
    """what it says, quoted"""
    where: str | None = None
    """where inside the file, when a line alone does not say (a key path or host)"""


class ClaimEntry(_Model):
    """One entry of the claims ledger (cmax/resolve/claims.py): a claim and what the evidence
    says."""

    subject: str = Field(description="what the claim is about: a run id (runs[0]), or "
                         "another part of the bundle")
    kind: str = Field(description="gpu, gpu_count, model, precision, seq_len, gbs, parallel, "
                      "software, or another stage's kind")
    value: str | None = None
    """the claimed value (None: none stated)"""
    status: Literal["corroborated", "declared", "assumed", "contradicted", "unstated"]
    """corroborated (the evidence agrees), declared (only claimed), assumed (from the reference
    recipe), contradicted or unstated"""
    source: str = Field(description="who claims the value: a cmax.toml key, the log, or the "
                        "reference recipe it was assumed from")
    support: list[ClaimCitation] = Field(default_factory=list)
    """evidence that agrees with the value"""
    against: list[ClaimCitation] = Field(default_factory=list)
    """evidence that contradicts it"""
    note: str = ""
    """anything else to know about the claim"""


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
    """its output tokens/s per GPU"""
    reference_tok_s_per_gpu: float | None = Field(
        default=None, description="the reference curve at this interactivity (None: outside "
        "its measured range, or no curve)")
    ratio: float | None = None
    """output_tok_s_per_gpu ÷ reference_tok_s_per_gpu"""
    slo_met: bool | None = Field(default=None, description="every latency SLO the manifest "
                                 "states is met (None: none stated or not measured)")


class ReferenceCurvePoint(_Model):
    """A point of the public throughput-vs-interactivity reference curve."""

    interactivity: float = Field(description="output tokens/s per user")
    output_tok_s_per_gpu: float
    """the reference's output tokens/s per GPU at that interactivity"""


class StorageResult(_Model):
    """One storage measurement against its public reference (or the contract), or shown and not
    rated with the reason (cmax/score/storage.py)."""

    source_file: str
    """the evidence file, bundle-relative"""
    line: int | None = None
    """the line of the first event (checkpoint lines); 1 for a JSON result"""
    tool: str
    """the format that read it: mlperf-storage, fio, or the training log's (nemo2, ...)"""
    tool_version: str | None = None
    """MLPerf Storage round, fio version"""
    benchmark: str
    """training | checkpointing | fio | checkpoint-log"""
    workload: str | None = None
    """MLPerf Storage workload or model, fio group and jobs, the log's framework"""
    direction: str
    """read | write | save | load"""
    measured: float | None = None
    """the figure compared, in ``unit``"""
    unit: str
    """MiB/s, GiB/s, GiB/s per GPU, or s (a save time shown without its bandwidth)"""
    reference: float | None = None
    """the reference figure in the same unit (None: none to compare with)"""
    reference_source: str | None = None
    """where the reference figure comes from"""
    ratio: float | None = None
    """measured ÷ reference (None: not rated)"""
    verdict: Literal["rated", "not rated", "shown"]
    """rated: compared like with like; not rated: comparable in kind but disqualified (the
    reason says why); shown: no reference exists for it"""
    reason: str | None = None
    """why it is not rated or only shown"""
    declared: list[str] = Field(default_factory=list)
    """what only cmax.toml's [[storage]] entry stated (round, emulated accelerator, GPUs,
    checkpoint size)"""
    detail: list[str] = Field(default_factory=list)
    """the checks behind the verdict (utilisation, dataset ÷ memory, caching, events)"""


class CheckpointCost(_Model):
    """Checkpoint time as a share of wall time at the contract's checkpoint interval, against
    the same at the reference bandwidth: a goodput term of the price advice."""

    model: str
    """the model checkpointed (reference/storage.toml id)"""
    size_gib: float
    """its checkpoint, GiB"""
    save_s: float
    """blocking save time per checkpoint on this cluster, s"""
    basis: str
    """where ``save_s`` comes from (measured save events, or size ÷ measured bandwidth)"""
    interval_min: float
    """training minutes between checkpoints"""
    interval_basis: str
    """where the interval comes from ([reliability] checkpoint_interval_min, or assumed)"""
    share: float = Field(ge=0, lt=1, description="save_s ÷ (interval + save_s): the share of "
                         "wall time spent saving")
    reference_save_s: float
    """the same checkpoint's save time at the reference bandwidth, s"""
    reference_share: float = Field(ge=0, lt=1, description="the share at the reference "
                                   "bandwidth")
    reference_source: str
    """the reference bandwidth and its source"""
    ratio: float = Field(gt=0, description="(1 − share) ÷ (1 − reference share): multiplies "
                         "the goodput ratio")


class InferenceResult(_Model):
    """One ``[[inference]]`` entry: its per-GPU output throughput against the public reference
    at the same model, GPU, precision and input/output length (cmax/score/inference.py)."""

    entry: str = Field(description="manifest entry, e.g. inference[0]")
    tool: str = Field(description="format id of the result file")
    source_file: str
    """the result file, relative to the bundle"""
    model: str
    """the served model"""
    precision: str
    """its precision"""
    gpu: str
    """the GPU type"""
    gpus: int = Field(description="GPUs serving, the manifest's")
    gpus_basis: Literal["corroborated", "declared", "contradicted"] = Field(
        description="whether the result file itself states the GPU count")
    input_len: int
    """input length, tokens"""
    output_len: int
    """output length, tokens"""
    results: int = Field(description="result objects in the file (a sweep has several)")
    offline: bool = Field(description="the rated result ran with no rate or concurrency cap, "
                          "as the reference's offline maximum-throughput runs did")
    output_tok_s: float | None = Field(default=None, description="system output tokens/s")
    output_tok_s_per_gpu: float | None = None
    """output tokens/s per GPU"""
    reference_tok_s_per_gpu: float | None = None
    """the reference's output tokens/s per GPU at the same model, GPU, precision and lengths"""
    reference_source: str | None = None
    """where the reference is published"""
    reference_setup: str | None = Field(default=None, description="parallel layout, software "
                                        "and scenario of the reference row")
    ratio: float | None = Field(default=None, description="provider per GPU / reference "
                                "(on a curve: geometric mean over the compared points)")
    ci_low: float | None = Field(default=None, description="lower bound of the ratio's "
                                 "confidence interval over the compared points")
    ci_high: float | None = None
    """upper bound of the ratio's confidence interval"""
    comparison: Literal["offline", "curve", "scenario", "none"] = Field(
        default="none", description="offline: best uncapped result against the offline maximum "
        "throughput; curve: each sweep point against the reference curve at its interactivity; "
        "scenario: an MLPerf Inference result against the published result of its scenario")
    interactivity: float | None = Field(default=None, description="output tokens/s per user of "
                                        "the rated result (1000 / mean TPOT)")
    points: list[ServingPoint] = Field(default_factory=list, description="every result read")
    reference_curve: list[ReferenceCurvePoint] = Field(default_factory=list)
    """the reference's curve (interactivity, per-GPU throughput) the points were compared with"""
    verdict: Literal[AtBar, "unverified", "not_comparable", "no_reference", "invalid"] = (
        "no_reference")
    """pass, fail, inconclusive, unverified, not_comparable, no_reference or invalid"""
    priced: bool = Field(
        default=False, description="its figures are earned, so it is priced at the quote: "
        "compared like with like on a GPU count its own file states, no error withholding it "
        "(cmax/score/verdicts.py serving_rated); an unpriced result's own $ figures are null "
        "(docs/scoring.md §8)")
    usd_per_million_output_tokens: float | None = Field(
        default=None, description="quoted $/GPU-hour over the measured per-GPU output rate "
        "(None: no quote, or the result is not priced)")
    usd_per_million_output_tokens_at_reference: float | None = None
    """the quote over the reference's per-GPU output rate"""
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
    """how the result was reached, in sentences"""


class ScaleEvidence(_Model):
    """The widest result of one kind of evidence: the scale it ran at."""

    kind: Literal["network", "training", "mlperf"]
    """which kind of evidence: network (nccl-tests), training or mlperf"""
    what: str = Field(description="the result, as the scorecard names it")
    nodes: int
    """nodes it ran on"""
    gpus: int
    """GPUs it ran on"""


class ProvenScale(_Model):
    """The largest scale the evidence proves, against the scale the manifest claims.

    Only results that count are read: rated training runs (their scale corroborated and their
    evidence clean), compared nccl-tests sweeps, and the provider's own MLPerf results that
    were rated. The fabric gate reads ``fabric_nodes`` against ``fabric_needed_nodes``
    (docs/network.md, Scale)."""

    claimed_nodes: int
    """nodes the manifest claims ([system] nodes)"""
    claimed_gpus: int
    """GPUs the manifest claims (nodes × gpus_per_node)"""
    nodes: int | None = Field(default=None, description="the most nodes any counted result ran on")
    gpus: int | None = Field(default=None, description="the most GPUs any counted result ran on")
    share: float | None = Field(default=None, description="gpus ÷ claimed_gpus")
    fabric_nodes: int | None = Field(
        default=None, description="nodes of the widest inter-node nccl-tests sweep compared")
    fabric_ranks: int | None = None
    """ranks (GPUs) of that sweep"""
    fabric_needed_nodes: int = Field(
        description="the nodes a sweep must span to decide the fabric gate "
        "([network] min_node_share of the claimed nodes, at least 2)")
    evidence: list[ScaleEvidence] = Field(
        default_factory=list, description="the widest counted result of each kind")
    summary: str = ""
    """the proven scale against the claim, and how wide the fabric was measured, in words"""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fabric_proven(self) -> bool:
        """Whether an inter-node sweep spans enough of the claimed system to decide the gate."""
        return self.fabric_nodes is not None and self.fabric_nodes >= self.fabric_needed_nodes


class Scorecard(_Model):
    """The rating of one bundle."""

    schema_version: str = SCHEMA_VERSION
    """version of this JSON layout"""
    cmax_version: str
    """the cmax that wrote it"""
    reference_release: str
    """the reference release the evidence was compared with"""
    rubric: str
    """the rubric applied: its id @ the first 12 hex digits of its digest"""
    provider: str
    """the provider rated"""
    cluster: str
    """the cluster rated"""
    region: str | None = None
    """its region"""
    gpu: str
    """the GPU type"""
    nodes: int
    """nodes in the cluster"""
    gpus_per_node: int
    """GPUs per node"""
    interconnect: str | None = None
    """the scale-out fabric, e.g. infiniband-ndr-8x400"""
    benchmark_date: dt.date
    """when the evidence was collected"""
    tier: Tier
    """the rating: the score's tier capped by every gate"""
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
    exemplar: ExemplarJudgement
    """the Exemplar suite, judged once: its state, bar, workloads and the runs deciding it"""
    workloads: list[WorkloadResult] = Field(default_factory=list)
    """each training run against its reference"""
    network: list[NetworkResult] = Field(default_factory=list)
    """each nccl-tests collective against the fabric's baseline"""
    network_pairs: list[PairResult] = Field(
        default_factory=list, description="pairwise/split runs behind suspect_nodes")
    suspect_nodes: list[SuspectNode] = Field(default_factory=list)
    """nodes the evidence singles out as slow or faulty"""
    mlperf: list[MlperfResult] = Field(default_factory=list)
    """each MLPerf Training result against published results"""
    inference: list[InferenceResult] = Field(default_factory=list)
    """each serving benchmark against its reference"""
    storage: list[StorageResult] = Field(default_factory=list)
    """each storage measurement against its reference, or why it is not rated"""
    checkpoint: CheckpointCost | None = None
    """checkpoint time as a share of wall time (None: no rated checkpoint evidence)"""
    reliability: ReliabilityResult | None = None
    """interruption rate and goodput (None: no incident log)"""
    sla: SlaResult | None = None
    """the SLA measured over the incident log (None: no [sla])"""
    audit: AuditSummary | None = None
    """the ClusterMAX audit's checks (None: no audit)"""
    categories: list[CategoryScore] = Field(default_factory=list)
    """the ClusterMAX 2.0 categories behind the weighted score"""
    gates: list[Gate] = Field(default_factory=list)
    """the hard gates: a failed or not-evaluated gate caps the tier"""
    findings: list[Finding] = Field(default_factory=list)
    """what validation found, errors first"""
    finding_counts: dict[str, int] = Field(default_factory=dict)
    """findings per severity"""
    evidence_files: list[EvidenceFileRef] = Field(default_factory=list)
    """every evidence file read, with its hash"""
    scale: ProvenScale | None = Field(
        default=None, description="the largest scale the evidence proves (nodes and GPUs "
        "measured) against the nodes and GPUs claimed")
    claims: list[ClaimEntry] = Field(
        default_factory=list, description="the claims ledger: every claim the ratings rest on, "
        "corroborated, declared only, assumed from the recipe or contradicted")
    price: PriceAdvice | None = None
    """the price advice (None: no [pricing])"""
    acceptance: list[UnitAcceptance] = Field(
        default_factory=list, description="per scalable unit, NVIDIA's Requirements for AI "
        "Clouds that the evidence can decide (BM01 on every unit, NCCL multi-node bandwidth)")
    notes: list[str] = Field(default_factory=list, description="how the verdicts were reached")
    judgements: list[Judgement] = Field(
        default_factory=list, description="every claim the rating rests on, judged once: its "
        "state, bar, witnesses (with who wrote them), the findings bearing on it and the gates "
        "reading it (cmax/judgement/claims.py)")

    def judgement(self, kind: ClaimKind, id: str) -> Judgement | None:
        """The judgement of one claim (a run's: ``("training_run", result.run_id)``; a serving
        result's: ``("serving_result", result.entry)``; the fabric's: ``("fabric", "fabric")``),
        or None when the scorecard holds none."""
        return next((j for j in self.judgements if j.kind == kind and j.id == id), None)

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
        """met, not met or not evaluated: the Exemplar judgement's state."""
        return self.exemplar.state

    @computed_field  # type: ignore[prop-decorator]
    @property
    def exemplar_pass(self) -> bool | None:
        """the Exemplar judgement as a flag: true when met, false when not met, null when
        not evaluated (nothing decided it)."""
        if self.exemplar.state is State.NOT_EVALUATED:
            return None
        return self.exemplar.state is State.MET

    @computed_field  # type: ignore[prop-decorator]
    @property
    def exemplar_bar(self) -> float:
        """the Exemplar bar: the fraction of reference throughput to exceed"""
        return self.exemplar.bar

    def _summary(self) -> list[tuple[str, str]]:
        gpus = self.nodes * self.gpus_per_node
        rows = [("provider", f"{self.provider} / {self.cluster}"),
                ("GPUs", f"{gpus:,} × {self.gpu}"),
                ("tier", f"{self.tier} (score {self.score:.1f}/100)"),
                ("Exemplar", self.exemplar_state.label),
                ("workloads", f"{len(self.workloads)} training, {len(self.inference)} serving")]
        if self.price is not None:
            rows += [(f"price: {k}", v) for k, v in self.price._summary()[:3]]
        return rows

    def __repr__(self) -> str:
        """One line (a scorecard's JSON runs to tens of thousands of characters: that is
        ``model_dump_json()``); a notebook shows a table (``_repr_html_``)."""
        return (f"Scorecard({self.provider!r}, {self.cluster!r}, tier={self.tier!r}, "
                f"score={self.score:.1f}, exemplar={self.exemplar_state.label!r}"
                + ("" if self.price is None else
                   f", ask={self.price.ask_usd_per_gpu_hour!r}") + ")")

    def _repr_html_(self) -> str:
        return _html_table("Scorecard", self._summary())


def _html_table(title: str, rows: list[tuple[str, str]]) -> str:
    """A notebook's view of a result: a small table, every value escaped."""
    from html import escape

    body = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(v)}</td></tr>"
                   for k, v in rows)
    return f"<table><caption>{escape(title)}</caption>{body}</table>"
