"""The rule catalogue: every check the validator can raise, with its severity and its remedy.

A finding is only useful in a negotiation if the person reading it can look the rule up: what
it checks, why it matters, where its threshold comes from and how to fix it. So every rule is
declared once, here in the registry, and both the findings and ``docs/rules.md`` are produced
from the same declaration (a test keeps the document in step).

Severities mean the same thing everywhere:

* **error**: the evidence is unusable or misleading as submitted; a rating built on it would be
  wrong. An error in the ``comparability`` family makes the run *not comparable*.
* **warning**: usable, but something a reviewer must look at before trusting the number.
* **info**: context for the reader; nothing to fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from cmax.findings import SEVERITY_ORDER, Effect, Finding, Severity, Subject

FAMILIES: dict[str, str] = {
    "schema": "Schema and types",
    "completeness": "Completeness",
    "comparability": "Comparability with the reference recipe",
    "sanity": "Numeric sanity",
    "consistency": "Internal consistency",
    "mlperf": "MLPerf Training compliance",
    "statistics": "Statistical red flags",
    "software": "Software floors",
    "audit": "ClusterMAX audit",
    "network": "Network fabric",
    "reliability": "Incident log and fleet",
    "identity": "Claims checked against the evidence",
    "exemplar": "NVIDIA Exemplar package",
    "inference": "Serving benchmarks",
    "crossfile": "The bundle cross-examined: witnesses across files",
    "fabrication": "Statistics that betray fabrication",
}


FAMILY_SUBJECTS: dict[str, Subject] = {
    "schema": "file", "completeness": "run", "comparability": "run", "sanity": "run",
    "consistency": "run", "mlperf": "result", "statistics": "run", "software": "audit",
    "audit": "audit", "network": "file", "reliability": "fleet", "identity": "run",
    "exemplar": "bundle", "inference": "result", "crossfile": "file", "fabrication": "run",
}
"""What a family's findings are about, unless a rule declares otherwise (``Rule.subject``)."""


@dataclass(frozen=True)
class Rule:
    """One check: its id (``family.name``), default severity, the text users read, what its
    findings are about (``subject``: a run, a file, a result, the audit, the fleet or the
    bundle; its family's when not given) and what a finding does to the claim it bears on
    (``effect``). The judgement layer reads both (``cmax/judgement/bearings.py``); the
    vocabularies are ``cmax.findings.Subject`` and ``cmax.findings.Effect``."""

    id: str
    severity: Severity
    title: str
    explanation: str
    fix: str
    source: str = ""
    effect: Effect = "none"
    subject: Subject | None = None

    def __post_init__(self) -> None:
        if self.subject is None and self.family in FAMILY_SUBJECTS:
            object.__setattr__(self, "subject", FAMILY_SUBJECTS[self.family])

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]


RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    """Add a rule to the catalogue; ids are unique and belong to a known family."""
    if rule.id in RULES:
        raise ValueError(f"duplicate rule id {rule.id}")
    if rule.family not in FAMILIES or rule.family not in FAMILY_SUBJECTS:
        raise ValueError(f"rule {rule.id} is not in a known family")
    RULES[rule.id] = rule
    return rule


def effect_of(rule_id: str) -> Effect:
    """The declared effect of a rule's findings (``none`` for an id the catalogue lacks, as a
    finding built by hand in a test may carry)."""
    rule = RULES.get(rule_id)
    return rule.effect if rule is not None else "none"


def subject_of(rule_id: str) -> Subject:
    """What a rule's findings are about (``file`` for an id the catalogue lacks: such a
    finding bears on the file it names, if any)."""
    rule = RULES.get(rule_id)
    return rule.subject if rule is not None and rule.subject is not None else "file"


def finding(
    rule_id: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    run_id: str | None = None,
    fix: str | None = None,
) -> Finding:
    """A finding for a registered rule, with the rule's severity and default fix."""
    rule = RULES[rule_id]
    return Finding(
        rule=rule.id, severity=rule.severity, file=file, line=line, message=message,
        fix=fix or rule.fix, run_id=run_id,
    )


def sorted_rules() -> list[Rule]:
    """Rules in documentation order: family (as listed in FAMILIES), then severity, then id."""
    order = {name: i for i, name in enumerate(FAMILIES)}
    return sorted(RULES.values(),
                  key=lambda r: (order[r.family], SEVERITY_ORDER[r.severity], r.id))


def rules_markdown() -> str:
    """The generated part of docs/rules.md: one section per family, one entry per rule."""
    out: list[str] = []
    for family, heading in FAMILIES.items():
        rules = [r for r in sorted_rules() if r.family == family]
        if not rules:
            continue
        out.append(f"### {heading} (`{family}.*`)\n")
        for r in rules:
            effect = f" · effect: {r.effect.replace('_', ' ')}" if r.effect != "none" else ""
            out.append(f"#### `{r.id}` — {r.severity} · about: {r.subject}{effect}\n")
            out.append(f"**{r.title}.** {r.explanation}\n")
            if r.source:
                out.append(f"*Threshold / source:* {r.source}\n")
            out.append(f"*Fix:* {r.fix}\n")
    return "\n".join(out)
