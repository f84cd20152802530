"""One typed judgement per claim the rating rests on, decided once from the case, the findings
and the scored results.

Each claim (a training run, the Exemplar suite, a serving, MLPerf or storage result, the
fabric, reliability, the SLA, a run's measured energy, the power per GPU J/token is priced
at, the audit, each declaration, the quote) gets one :class:`cmax.scorecard.Judgement`: its
state (earned / declared / assumed / not verified / contradicted / not assessed), its standing
against its bar where it has one (met / not met / not evaluated), the witnesses it rests on
with who wrote each (``witnesses.py``), the findings that bear on it with the effect each
rule declares (``cmax/validate/registry.py``), and the gates that read it. The judgement's
``provenance`` is what every report labels the claim's figures with.

A claim's state:

- **not assessed**: nothing was put to its test (no step in the window, no reference, not
  comparable, no incident log, no [sla] terms);
- **contradicted**: the ledger holds a contradicted claim of it, or an error bears on it:
  the evidence says otherwise than the claim;
- **declared** / **assumed**: its pass rests on what only the manifest states (declared) or
  only the recipe supplies (assumed);
- **not verified**: its own files state it (its figure keeps their provenance), but a finding
  of effect ``unverified`` holds it until other evidence corroborates it;
- **earned**: measured, its identity corroborated, nothing found against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cmax.judgement.bar import bar_verdict
from cmax.judgement.bearings import Bearings, rules_of, same_file
from cmax.judgement.fabric import FabricScale, fabric_standing
from cmax.judgement.labels import identity_label
from cmax.judgement.witnesses import MANIFEST_CITED, MONITORING_AUTHOR, author_of, cited
from cmax.resolve.case import Case
from cmax.resolve.claims import Claim
from cmax.resolve.runs import ResolvedRun
from cmax.scorecard import (
    POWER_CLAIM,
    AuditSummary,
    Bearing,
    ClaimKind,
    ExemplarJudgement,
    InferenceResult,
    Judgement,
    MlperfResult,
    NetworkResult,
    ReliabilityResult,
    SlaResult,
    StorageResult,
    Witness,
    WorkloadResult,
)
from cmax.states import MEASURED_VERDICTS, State, bar_state

MANIFEST = "cmax.toml"

@dataclass(frozen=True)
class GateReads:
    """What one rubric gate reads, as the judgement layer needs it (the rubric lives above
    this layer): the kind of measured result, the declaration keys, the audit checks."""

    id: str
    measured: str | None
    keys: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()


MEASURED_KINDS: dict[str, ClaimKind] = {
    "exemplar": "exemplar_suite", "training": "training_run", "serving": "serving_result",
    "mlperf": "mlperf_result",
    "network": "fabric",
}
"""A gate's ``measured`` (rubric ``[[gates]]``) → the claim kind it reads."""


def _gates(kind: ClaimKind, claim_id: str, gates: Sequence[GateReads]) -> list[str]:
    return [g.id for g in gates
            if (g.measured is not None and MEASURED_KINDS.get(g.measured) == kind)
            or (kind == "declaration" and claim_id in g.keys)
            or (kind == "audit" and bool(g.checks))]


class _Files:
    """Each evidence file's author, from its detected format."""

    def __init__(self, case: Case) -> None:
        self.kinds = {f.path: f.kind for f in case.files}

    def witness(self, file: str, fact: str, line: int | None = None, *,
                context: bool = False) -> Witness:
        kind = next((k for p, k in self.kinds.items() if same_file(p, file)), "")
        return Witness(file=file, line=line, fact=fact, author=author_of(kind),
                       attests="context" if context else "figure")


def _contradicted(claims: Iterable[Claim]) -> list[Claim]:
    return [c for c in claims if c.status == "contradicted"]


def _state(*, measured: bool, bearings: Sequence[Bearing], contradicted: Sequence[str],
           held: Sequence[str], unearned: Sequence[Claim]) -> tuple[State, str]:
    """A measured result's claim state and why."""
    if not measured:
        return State.NOT_ASSESSED, "not put to its test against a reference"
    errors = rules_of(bearings, errors=True)
    if contradicted or errors:
        return State.CONTRADICTED, "the evidence says otherwise: " + ", ".join(
            [*contradicted, *errors])
    if unearned:
        kinds = ", ".join(f"{c.kind} {c.status}" for c in unearned)
        if all(c.status == "assumed" for c in unearned):
            return State.ASSUMED, f"its pass rests on values the recipe supplies ({kinds})"
        return State.DECLARED, f"its pass rests on values only the manifest states ({kinds})"
    if held:
        return State.NOT_VERIFIED, ("its files state it, but a finding holds it until other "
                                    "evidence corroborates it: " + ", ".join(held))
    return State.EARNED, "measured, its identity corroborated, nothing found against it"


def _run_witnesses(run: ResolvedRun, result: WorkloadResult, case: Case,
                   files: _Files) -> list[Witness]:
    out = []
    log = result.log
    window = run.window_steps
    if result.mean_step_time_s is not None and result.window is not None:
        line = window["line"].min() if window.height and "line" in window.columns else None
        # a step time the log does not print says what it was derived with, and from whose word
        derived = run.step_time_derived
        out.append(files.witness(
            log, f"mean step time {result.mean_step_time_s:.4g} s over iterations "
            f"{result.window[0]}-{result.window[1]} ({result.steps_in_window} steps)"
            + (f"; {derived.note()}" if derived is not None else ""),
            line if isinstance(line, int) else None))
    elif result.steps_total:
        out.append(files.witness(log, f"{result.steps_total} steps logged"))
    job = run.get("job_id")
    jobs = case.jobs
    if job and jobs.height:
        for row in jobs.filter(jobs["job_id"] == str(job)).iter_rows(named=True):
            elapsed = row.get("elapsed_s")
            held = f", held {elapsed:,.0f} s" if isinstance(elapsed, float) else ""
            # the scheduler's clock witnesses the job's span and hosts, not the speed the log
            # prints (a log may print faster steps than its job ran)
            out.append(files.witness(str(row["source_file"]),
                                     f"job {job} in the accounting{held}", row.get("line"),
                                     context=True))
    return out


def judge_runs(case: Case, findings: Bearings, results: Sequence[WorkloadResult],
               gates: Sequence[GateReads]) -> list[Judgement]:
    """One judgement per training run, in run order."""
    files = _Files(case)
    by_id = {r.run_id: r for r in case.resolved}
    out = []
    for result in results:
        run_id = result.run_id or ""
        run = by_id.get(run_id)
        bears = findings.on(run_id=run_id, files=[result.log])
        held = rules_of(bears, "unverified")
        state, why = _state(
            measured=result.verdict in MEASURED_VERDICTS,
            bearings=bears, contradicted=[f"{c.kind} contradicted" for c in
                                          _contradicted(case.claims.of(run_id))],
            held=held, unearned=case.claims.unearned(run_id))
        out.append(Judgement(
            kind="training_run", id=run_id,
            label=f"{identity_label(result)} ({result.log})",
            state=state, bar_state=bar_state(result.verdict),
            verdict=bar_verdict(result.verdict, result.ratio,
                                errors=bool(result.validation_errors)),
            witnesses=_run_witnesses(run, result, case, files) if run is not None else [],
            findings=bears, gates=_gates("training_run", run_id, gates), reason=why))
    return out


def judge_energy(case: Case, findings: Bearings, results: Sequence[WorkloadResult]
                 ) -> list[Judgement]:
    """One judgement per run whose energy per token was measured or tried from telemetry."""
    files = _Files(case)
    power = case.tables["power"]
    sources = sorted({str(s) for s in power["source_file"].drop_nulls()}) if power.height else []
    out = []
    for r in results:
        if r.measured_joules_per_token is None and not r.energy_checks:
            continue
        used = sources or [r.log]
        wit = [files.witness(f, f"GPU power {r.measured_power_w_per_gpu:.0f} W per GPU over "
                             "the window" if r.measured_power_w_per_gpu is not None
                             else "GPU power telemetry") for f in used]
        bears = findings.on(files=used)
        if r.measured_joules_per_token is None:
            state, why = State.NOT_ASSESSED, "withheld: " + "; ".join(r.energy_checks)
        elif any(b.severity == "error" for b in bears):
            state, why = State.CONTRADICTED, "an error names its telemetry"
        else:
            state, why = State.EARNED, f"{r.measured_joules_per_token:.4g} J/token measured"
        out.append(Judgement(kind="energy", id=r.run_id or r.log,
                             label=f"energy per token of {r.log}", state=state,
                             witnesses=wit, findings=bears, reason=why))
    return out


def judge_power(case: Case) -> list[Judgement]:
    """The power per GPU every priced J/token divides by (the price's cost per workload, the
    leaderboard's energy rank): the manifest's [pricing] watts_per_gpu is the provider's
    statement (declared); without it the price takes the reference's default (all-in server
    power ÷ GPUs × PUE, ``reference/economics.toml`` [system_power], else the GPU's TDP), a
    figure nothing in the bundle measured (assumed). Telemetry measures a run's own energy
    (:func:`judge_energy`), never this figure. None without [pricing]: nothing is priced."""
    pricing = case.manifest.pricing
    if pricing is None:
        return []
    if pricing.watts_per_gpu:
        return [Judgement(
            kind="energy", id=POWER_CLAIM, label=f"power {pricing.watts_per_gpu:g} W per GPU "
            "for J/token", state=State.DECLARED,
            witnesses=[Witness(file=MANIFEST, fact=f"[pricing] watts_per_gpu = "
                               f"{pricing.watts_per_gpu:g}", author="manifest")],
            reason="the provider's stated power per GPU, not measured")]
    return [Judgement(
        kind="energy", id=POWER_CLAIM, label="power per GPU for J/token", state=State.ASSUMED,
        reason="the reference's default power per GPU (all-in server power ÷ GPUs × PUE, else "
        "the GPU's TDP): no power per GPU was stated and nothing measured it")]


def judge_exemplar_claim(exemplar: ExemplarJudgement, runs: Sequence[Judgement],
                         findings: Bearings, gates: Sequence[GateReads]) -> Judgement:
    """The Exemplar suite as a claim: its bar state is the suite's; it is earned when its
    runs decide it, declared when the runs that would decide it are not earned. Its findings:
    those about the bundle (the Exemplar package's rules) and those of effect on its runs."""
    ids = {r.run_id for w in exemplar.workloads for r in w.runs}
    mine = [j for j in runs if j.id in ids]
    if not exemplar.workloads:
        state = State.NOT_ASSESSED
    elif exemplar.state is State.NOT_EVALUATED:
        state = State.DECLARED
    else:
        state = State.EARNED
    return Judgement(
        kind="exemplar_suite", id="exemplar", label=f"the Exemplar suite (> {exemplar.bar:.0%} "
        "of reference on every run of every workload)", state=state, bar_state=exemplar.state,
        witnesses=[w for j in mine for w in j.witnesses],
        findings=[*findings.on(subjects=["bundle"]),
                  *(b for j in mine for b in j.findings if b.effect != "none")],
        gates=_gates("exemplar_suite", "exemplar", gates), reason=exemplar.reason)


def judge_serving(case: Case, findings: Bearings,
                  results: Sequence[InferenceResult], gates: Sequence[GateReads]
                  ) -> list[Judgement]:
    """One judgement per serving result."""
    files = _Files(case)
    out = []
    for r in results:
        # the serving rules name the entry as the finding's run (its rows' run_id)
        bears = findings.on(run_id=r.entry, files=[r.source_file])
        contradicted = bool(rules_of(bears, "not_comparable", errors=True))
        fact = (f"{r.output_tok_s_per_gpu:.4g} output tokens/s per GPU"
                if r.output_tok_s_per_gpu is not None else f"{r.results} result(s)")
        state, why = _state(
            # an invalid result with a ratio was measured against its bar, and one its file
            # puts on another model or GPU was put to the test of its identity: what bears on
            # it withholds its pass
            measured=r.verdict in MEASURED_VERDICTS or contradicted
            or (r.verdict == "invalid" and r.ratio is not None),
            bearings=bears,
            contradicted=["GPU count contradicted"] if r.gpus_basis == "contradicted" else [],
            held=rules_of(bears, "unverified"),
            unearned=[])
        if state is State.EARNED and r.verdict == "unverified":
            state, why = State.DECLARED, "its pass rests on what only the manifest states"
        out.append(Judgement(
            kind="serving_result", id=r.entry,
            label=f"{r.model} {r.precision} on {r.gpus} x {r.gpu} ({r.source_file})",
            state=state, bar_state=bar_state(r.verdict),
            verdict=bar_verdict(r.verdict, r.ratio,
                                errors=bool(rules_of(bears, errors=True)),
                                contradicted=contradicted),
            witnesses=[files.witness(r.source_file, fact)], findings=bears,
            gates=_gates("serving_result", r.entry, gates), reason=why))
    return out


def judge_mlperf(case: Case, findings: Bearings, results: Sequence[MlperfResult],
                 gates: Sequence[GateReads]) -> list[Judgement]:
    """One judgement per MLPerf result, ``mlperf[i]`` by its place in ``Scorecard.mlperf``."""
    files = _Files(case)
    sets = list(case.mlperf_sets)
    citing = {e.path for e in case.manifest.mlperf if e.cited}
    out = []
    for i, r in enumerate(results):
        run_files = sorted({run.file for run in sets[i].runs}) if i < len(sets) else []
        label = sets[i].label if i < len(sets) else r.benchmark
        wit = []
        for f in run_files or [label]:
            w = files.witness(f, f"{r.benchmark} run log of {r.submitter or 'the submitter'}")
            if any(same_file(f, c) or f.startswith(c.rstrip("/") + "/") for c in citing):
                w = w.model_copy(update={"author": MANIFEST_CITED})
            wit.append(w)
        bears = findings.on(files=[*run_files, label])
        state, why = _state(measured=r.verdict in MEASURED_VERDICTS, bearings=bears,
                            contradicted=[], held=[], unearned=[])
        out.append(Judgement(
            kind="mlperf_result", id=f"mlperf[{i}]",
            label=f"MLPerf {r.benchmark} ({label})", state=state,
            bar_state=bar_state(r.verdict),
            verdict=bar_verdict(r.verdict, r.ratio,
                                errors=bool(rules_of(bears, errors=True))),
            witnesses=wit, findings=bears,
            gates=[] if cited(wit) else _gates("mlperf_result", f"mlperf[{i}]", gates),
            reason=why))
    return out


def judge_fabric(case: Case, findings: Bearings, results: Sequence[NetworkResult],
                 scale: FabricScale, gates: Sequence[GateReads]) -> Judgement:
    """The fabric: its witnesses and findings are every sweep's; its standing against the
    network bar is decided by the sweeps spanning the claimed system (``fabric.py``), which
    the fabric gate reads. Contradicted when an error names a sweep."""
    files = _Files(case)
    measured = [r for r in results if r.verdict in MEASURED_VERDICTS]
    bears = findings.on(files=[r.file for r in results])
    standing = fabric_standing(scale, findings)
    errors = rules_of(bears, errors=True)
    if not measured:
        state, why = State.NOT_ASSESSED, "no sweep was counted"
    elif errors:
        state, why = State.CONTRADICTED, "an error names a sweep: " + ", ".join(errors)
    else:
        state, why = State.EARNED, f"{len(measured)} sweep(s) measured"
    return Judgement(
        kind="fabric", id="fabric", label="the fabric's large-message bus bandwidth",
        state=state, bar_state=standing.bar_state, verdict=standing.verdict,
        witnesses=[files.witness(r.file, f"{r.collective} {r.busbw_gbps:.4g} GB/s bus "
                                 f"bandwidth on {r.nodes} nodes") for r in results],
        findings=bears, gates=_gates("fabric", "fabric", gates),
        reason=standing.reason if state is State.EARNED else f"{why}; {standing.reason}")


def _incident_witnesses(case: Case, files: _Files) -> list[Witness]:
    table = case.incidents
    logs = sorted({str(s) for s in table["source_file"].drop_nulls()}) if table.height else []
    if not logs and case.manifest.reliability is not None:
        logs = [case.manifest.reliability.incidents]
    out = [files.witness(f, f"{table.height} incident row(s)") for f in logs]
    out += [Witness(file=w.source, fact=f"{w.kind} monitoring of {len(w.nodes)} node(s)",
                    author=MONITORING_AUTHOR) for w in case.monitoring]
    return out


def judge_fleet(case: Case, findings: Bearings, reliability: ReliabilityResult | None,
                sla: SlaResult | None) -> list[Judgement]:
    """Reliability (interruptions, goodput) and the SLA over the incident log and the buyer's
    monitoring."""
    files = _Files(case)
    wit = _incident_witnesses(case, files)
    bears = findings.on(files=[w.file for w in wit if w.file], subjects=["fleet"])
    errors = rules_of(bears, errors=True)
    out = []
    for kind, result, label in (("reliability", reliability, "interruptions and goodput"),
                                ("sla", sla, "the SLA over the reliability period")):
        if result is None:
            state, why = State.NOT_ASSESSED, ("no incident log" if kind == "reliability"
                                              else "no [sla] terms or no incident evidence")
        elif errors:
            state, why = State.CONTRADICTED, "the evidence says otherwise: " + ", ".join(errors)
        else:
            state, why = State.EARNED, "assessed from the incident evidence"
        bar = None
        if kind == "sla":
            bar = (State.NOT_EVALUATED if sla is None
                   else State.MET if sla.met else State.NOT_MET)
        out.append(Judgement(kind=kind, id=kind, label=label,
                             state=state, bar_state=bar,
                             witnesses=wit if result is not None else [],
                             findings=bears, reason=why))
    return out


def judge_audit(case: Case, findings: Bearings, audit: AuditSummary | None,
                gates: Sequence[GateReads]) -> Judgement:
    """The ClusterMAX audit as a claim: earned when present and nothing doubts it."""
    if audit is None:
        return Judgement(kind="audit", id="audit", label="the ClusterMAX audit",
                         state=State.NOT_ASSESSED, reason="no audit was submitted",
                         gates=_gates("audit", "audit", gates))
    files = _Files(case)
    bears = findings.on(files=[audit.file], subjects=["audit"])
    doubts = rules_of(bears, "doubt")
    state, why = ((State.CONTRADICTED, "the audit decides no gate: " + ", ".join(doubts))
                  if doubts else (State.EARNED, f"{len(audit.checks)} check(s) read"))
    return Judgement(kind="audit", id="audit", label="the ClusterMAX audit", state=state,
                     witnesses=[files.witness(audit.file, f"{len(audit.checks)} audit checks "
                                              f"of cluster {audit.cluster or '(unnamed)'}")],
                     findings=bears, gates=_gates("audit", "audit", gates), reason=why)


def judge_storage(case: Case, findings: Bearings, results: Sequence[StorageResult]
                  ) -> list[Judgement]:
    """One judgement per storage result, ``storage[i]`` by its place in ``Scorecard.storage``:
    earned when rated on what its file states, declared when the rating rests on values only
    its entry declares, not assessed when shown or not rated."""
    files = _Files(case)
    out = []
    for i, r in enumerate(results):
        bears = findings.on(files=[r.source_file])
        fact = (f"{r.benchmark} {r.direction} {r.measured:.4g} {r.unit}"
                if r.measured is not None else f"{r.benchmark} {r.direction}")
        errors = rules_of(bears, errors=True)
        if r.verdict != "rated":
            state, why = State.NOT_ASSESSED, r.reason or f"{r.verdict}"
        elif errors:
            state, why = State.CONTRADICTED, "the evidence says otherwise: " + ", ".join(errors)
        elif r.declared:
            state, why = State.DECLARED, ("rated on values only its entry declares: "
                                          + ", ".join(r.declared))
        else:
            state, why = State.EARNED, "rated on what its file states"
        out.append(Judgement(
            kind="storage_result", id=f"storage[{i}]", label=f"{r.benchmark} ({r.source_file})",
            state=state, witnesses=[files.witness(r.source_file, fact, r.line)],
            findings=bears, reason=why))
    return out


def judge_quote(case: Case) -> list[Judgement]:
    """The quoted price: the provider's statement (its unit checked against the GPU's market
    band in the ledger, ``price_unit``), never a measured figure."""
    pricing = case.manifest.pricing
    if pricing is None:
        return []
    unit = next((c for c in case.claims if c.kind == "price_unit"), None)
    note = f" (price unit {unit.status}: {unit.note or unit.source})" if unit else ""
    return [Judgement(
        kind="quote", id="pricing", label=f"the quote ${pricing.usd_per_gpu_hour:g} per "
        "GPU-hour", state=State.DECLARED,
        witnesses=[Witness(file=MANIFEST, fact=f"[pricing] usd_per_gpu_hour = "
                           f"{pricing.usd_per_gpu_hour:g}", author="manifest")],
        reason="the provider's quote, a statement" + note)]


def judge_declarations(case: Case, gates: Sequence[GateReads]) -> list[Judgement]:
    """Each ``[declarations]`` key: the provider's statement, witnessed by its manifest only."""
    return [Judgement(kind="declaration", id=key, label=f"declared {key} = {value!r}",
                      state=State.DECLARED,
                      witnesses=[Witness(file=MANIFEST, fact=f"[declarations] {key} = "
                                         f"{value!r}", author="manifest")],
                      gates=_gates("declaration", key, gates),
                      reason="the provider's own statement, not checked against evidence")
            for key, value in sorted(case.manifest.declarations.items())]


def judge_claims(
    case: Case, findings: Bearings, *, workloads: Sequence[WorkloadResult],
    exemplar: ExemplarJudgement, inference: Sequence[InferenceResult],
    mlperf: Sequence[MlperfResult], network: Sequence[NetworkResult],
    reliability: ReliabilityResult | None, sla: SlaResult | None,
    audit: AuditSummary | None, storage: Sequence[StorageResult] = (),
    fabric: FabricScale, gates: Sequence[GateReads] = (),
) -> list[Judgement]:
    """Every claim of the bundle judged once, in a fixed order: runs, the suite, serving,
    MLPerf, storage, the fabric, reliability, the SLA, energy and power, the audit,
    declarations, the quote."""
    runs = judge_runs(case, findings, workloads, gates)
    return [
        *runs, judge_exemplar_claim(exemplar, runs, findings, gates),
        *judge_serving(case, findings, inference, gates),
        *judge_mlperf(case, findings, mlperf, gates),
        *judge_storage(case, findings, storage),
        judge_fabric(case, findings, network, fabric, gates),
        *judge_fleet(case, findings, reliability, sla),
        *judge_energy(case, findings, workloads),
        *judge_power(case),
        judge_audit(case, findings, audit, gates),
        *judge_declarations(case, gates),
        *judge_quote(case),
    ]
