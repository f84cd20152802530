"""cmax's results as test cases (:class:`Check`), each with a stable id.

Status follows the evidence, never the manifest's claims: a verdict the evidence could not
reach (inconclusive, no reference, not comparable; a gate not evaluated) is ``skipped``, not
``passed``. A warning or info finding is ``other``: not a failure, not a pass either.

Where a check corresponds to an item of NVIDIA's "Requirements for AI Clouds" v2.3.1
(``NVIDIA/ai-cloud-validation:docs/requirements/offtake-requirements.yaml`` @ 1207cb7,
2026-08-19, 128 requirement ids; v2.3 before it), the item's id is carried
(:data:`REQUIREMENTS`): BM01, "Benchmarking for Exemplar Cloud: achieve within 5% of an NVIDIA
provided target performance number", is what the Exemplar-style suite, its gates and each
training workload's ratio against the reference test. Per scalable unit, ``cmax accept``
(:func:`acceptance_checks`) also judges SLURM08-01, NCCL multi-node bus bandwidth
(cmax/score/acceptance.py). No other item is measured by cmax's evidence (its provisioning,
security, telemetry and API items need records cmax does not read).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from cmax.states import State

if TYPE_CHECKING:
    from cmax.findings import Finding
    from cmax.history.audit import AuditResult
    from cmax.scorecard import Judgement, Scorecard

Status = Literal["passed", "failed", "skipped", "other", "error"]

# the requirement each kind of check tests (see the module docstring for the source)
BM01 = "BM01"
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "exemplar-suite": (BM01,),
    "gate.exemplar_suite": (BM01,),
    "gate.performance_floor": (BM01,),
    "workload": (BM01,),
    "audit.exemplar": (BM01,),
}

_VERDICT_STATUS: dict[str, Status] = {"pass": "passed", "fail": "failed"}
# a result as its judgement counts it: a pass an error in its evidence withholds could not be
# judged (``error``); held unverified, inconclusive or not rated is ``skipped``
_JUDGED_STATUS: dict[str, Status] = {**_VERDICT_STATUS, "withheld": "error"}
_SUITE_STATUS: dict[State, Status] = {State.MET: "passed", State.NOT_MET: "failed",
                                      State.NOT_EVALUATED: "skipped"}
_GATE_STATUS: dict[str, Status] = {"passed": "passed", "failed": "failed"}
_SEVERITY_STATUS: dict[str, Status] = {"error": "failed"}
_EXEMPLAR_STATUS: dict[str, Status] = {"valid": "passed", "never": "skipped"}


@dataclass(frozen=True)
class Check:
    """One test case: ``id`` is stable across runs of the same input; ``suite`` groups cases
    (a JUnit ``testsuite``, a CTRF ``suite``)."""

    id: str
    suite: str
    name: str
    status: Status
    message: str = ""
    requirements: tuple[str, ...] = ()
    properties: tuple[tuple[str, str], ...] = ()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.:/-]+", "-", text).strip("-") or "-"


def _unique(checks: Iterable[Check]) -> list[Check]:
    """Suffix ``#2``, ``#3`` ... to repeated ids, in order, so every id is unique and stays
    the same for the same input."""
    seen: Counter[str] = Counter()
    out = []
    for c in checks:
        seen[c.id] += 1
        n = seen[c.id]
        out.append(c if n == 1 else replace(c, id=f"{c.id}#{n}"))
    return out


def _finding(f: Finding) -> Check:
    where = f.file or ""
    if f.line is not None:
        where += f":{f.line}"
    if f.run_id:
        where += f"[{f.run_id}]"
    return Check(
        id=f"cmax.finding.{f.rule}" + (f"@{_slug(where)}" if where else ""),
        suite="findings", name=f"{f.rule} {where}".strip(),
        status=_SEVERITY_STATUS.get(f.severity, "other"),
        message=f"{f.severity}: {f.message}; fix: {f.fix}",
        properties=(("severity", f.severity), ("rule", f.rule), ("file", f.file or ""),
                    ("line", "" if f.line is None else str(f.line))))


def finding_checks(findings: Sequence[Finding], *, rules_run: int | None = None) -> list[Check]:
    """One case per finding (an error fails, a warning or info is ``other``); with no finding
    at all, one passed case saying so."""
    if not findings:
        ran = f" from {rules_run} rules" if rules_run is not None else ""
        return [Check(id="cmax.validate.no-findings", suite="findings",
                      name="validation found nothing", status="passed",
                      message=f"no findings{ran}")]
    return _unique(_finding(f) for f in findings)


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _judged_status(judged: Judgement | None, verdict: str) -> Status:
    """A result's status from its judgement's verdict (the result's own verdict where the
    scorecard holds no judgement of it): a pass the judgement withholds never reads passed."""
    said = judged.verdict if judged is not None and judged.verdict is not None else verdict
    return _JUDGED_STATUS.get(said, "skipped")


def scorecard_checks(card: Scorecard) -> list[Check]:
    """The Exemplar-style suite, every gate, training workload, serving result, network row
    and MLPerf benchmark, then every finding. A result's status is its judgement's."""
    checks = []
    checks.append(Check(
        id="cmax.score.exemplar-suite", suite="suite",
        name=f"Exemplar-style suite (bar {card.exemplar_bar:.0%} of reference)",
        status=_SUITE_STATUS[card.exemplar_state],
        message=f"{card.exemplar_state.label}: {card.exemplar.reason}; tier {card.tier}",
        requirements=REQUIREMENTS["exemplar-suite"]))
    for g in card.gates:
        gid = g.id or _slug(g.name.lower())
        checks.append(Check(
            id=f"cmax.score.gate.{gid}", suite="gates", name=g.name,
            status=_GATE_STATUS.get(g.status, "skipped"),
            message=f"{g.status}: {g.reason}"
            + (f" (caps the tier at {g.binding_cap})" if g.binding_cap else ""),
            requirements=REQUIREMENTS.get(f"gate.{gid}", ())))
    from cmax.judgement.labels import stated
    from cmax.score.verdicts import serving_withheld_by, withheld_label

    for w in card.workloads:
        judged = card.judgement("training_run", w.run_id or "")
        withheld = judged is not None and judged.verdict == "withheld"
        said = withheld_label(w.validation_errors) if withheld else w.verdict
        checks.append(Check(
            id=f"cmax.score.workload.{_slug(w.workload)}.{_slug(w.precision)}.{w.num_gpus}",
            suite="workloads", name=f"{stated(w, 'workload')} {stated(w, 'precision')} on "
            f"{stated(w, 'num_gpus', grouped=False)} GPUs",
            status=_judged_status(judged, w.verdict),
            message=f"{said}: ratio {_ratio(w.ratio)} (95% CI {_ratio(w.ci_low)}-"
                    f"{_ratio(w.ci_high)}) against bar {w.bar:.2f}; log {w.log}",
            requirements=REQUIREMENTS["workload"],
            properties=(("ratio", _ratio(w.ratio)), ("log", w.log))))
    for r in card.inference:
        judged = card.judgement("serving_result", r.entry)
        held_by = serving_withheld_by(card, r)
        said = withheld_label(held_by) if held_by else r.verdict
        checks.append(Check(
            id=f"cmax.score.serving.{_slug(r.model)}.{_slug(r.precision)}."
               f"{r.input_len}-{r.output_len}.{r.gpus}",
            suite="serving", name=f"{r.model} {r.precision} {r.input_len}/{r.output_len} on "
            f"{r.gpus} x {r.gpu}",
            status=_judged_status(judged, r.verdict),
            message=f"{said}: ratio {_ratio(r.ratio)} (compared: {r.comparison}); file "
                    f"{r.source_file}",
            properties=(("ratio", _ratio(r.ratio)), ("file", r.source_file))))
    for n in card.network:
        checks.append(Check(
            id=f"cmax.score.network.{_slug(n.collective)}.{n.nodes}n", suite="network",
            name=f"{n.collective} on {n.nodes} node(s)",
            status=_VERDICT_STATUS.get(n.verdict, "skipped"),
            message=f"{n.verdict}: {n.busbw_gbps:.1f} GB/s bus bandwidth, ratio "
                    f"{_ratio(n.ratio)}; file {n.file}",
            properties=(("busbw_gbps", f"{n.busbw_gbps:.3f}"), ("file", n.file))))
    for i, m in enumerate(card.mlperf):
        checks.append(Check(
            id=f"cmax.score.mlperf.{_slug(m.benchmark)}", suite="mlperf", name=m.benchmark,
            status=_judged_status(card.judgement("mlperf_result", f"mlperf[{i}]"), m.verdict),
            message=f"{m.verdict}: ratio {_ratio(m.ratio)}"))
    return _unique([*checks, *finding_checks(card.findings)])


def acceptance_checks(card: Scorecard) -> list[Check]:
    """Per scalable unit a suite (``unit.<name>``): one case per requirement judged on it,
    carrying the requirement's id, then one case for the unit's acceptance."""
    checks = []
    for unit in card.acceptance:
        suite, slug = f"unit.{_slug(unit.name)}", _slug(unit.name)
        for r in unit.requirements:
            test = r.requirement.split(" ")[0]
            checks.append(Check(
                id=f"cmax.accept.{slug}.{_slug(test)}", suite=suite,
                name=f"{unit.name}: {r.title}", status=_GATE_STATUS.get(r.status, "skipped"),
                message=r.detail, requirements=(test,),
                properties=tuple(("evidence", e) for e in r.evidence)))
        checks.append(Check(
            id=f"cmax.accept.{slug}", suite=suite, name=f"{unit.name}: accepted",
            status="passed" if unit.accepted else "failed",
            message="every requirement passed" if unit.accepted else "not accepted: " + "; ".join(
                f"{r.requirement} {r.status.replace('_', ' ')}" for r in unit.requirements
                if r.status != "passed"),
            properties=(("source", unit.source),)))
    return _unique(checks)


def audit_checks(result: AuditResult) -> list[Check]:
    """Per cluster a drift case (failed with each problem, else passed) and its Exemplar
    validity; per unusable run an ``error`` case."""
    checks = []
    clusters = sorted({i.cluster for i in result.items}
                      | {s.cluster for s in result.exemplar}
                      | set(result.history.filter(
                          result.history["row_kind"] == "run")["cluster"].to_list()))
    for cluster in clusters:
        items = [i for i in result.items if i.cluster == cluster]
        problems = [i for i in items if i.severity == "problem"]
        if not problems:
            checks.append(Check(id=f"cmax.audit.{_slug(cluster)}.drift", suite="drift",
                                name=f"{cluster}: no drift", status="passed",
                                message="no regression, tier drop, new audit FAIL, SLA "
                                        "breach, expiring Exemplar validation or run whose "
                                        "ratio does not count"))
        for i in items:
            checks.append(Check(
                id=f"cmax.audit.{_slug(cluster)}.{i.kind}"
                   + (f".{_slug(i.workload)}" if i.workload else ""),
                suite="drift", name=f"{cluster}: {i.kind} {i.workload or ''}".strip(),
                status="failed" if i.severity == "problem" else "other", message=i.message))
    for s in result.exemplar:
        checks.append(Check(
            id=f"cmax.audit.{_slug(s.cluster)}.exemplar", suite="exemplar",
            name=f"{s.cluster}: Exemplar validation", status=_EXEMPLAR_STATUS.get(
                s.status, "failed"),
            message=f"{s.status}" + (f", passed {s.passed_on}" if s.passed_on else "")
            + (f", valid until {s.expires_on}" if s.expires_on else ""),
            requirements=REQUIREMENTS["audit.exemplar"]))
    for u in result.unusable:
        if u.fatal:
            checks.append(Check(id=f"cmax.audit.unusable.{_slug(str(u.path))}",
                                suite="unusable", name=str(u.path), status="error",
                                message=u.error))
    return _unique(checks)
