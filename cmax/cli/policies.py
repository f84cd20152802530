"""``--fail-on``: which results make a command exit 1, so a CI pipeline can gate on them.

Policies are data (:data:`POLICIES`): name, which commands take it, and what it tests. A
command may take several (``--fail-on error --fail-on tier-below:gold``); it exits 1 when any
trips and says on stderr which tripped and why. ``none`` never trips (report only). The
defaults keep what the commands always did: ``error`` for validate and score, ``drift`` for
audit. ``CMAX_FAIL_ON`` (space-separated) sets them for every run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args

import click

from cmax.export.checks import BM01, Check
from cmax.states import State

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from cmax.findings import Finding
    from cmax.scorecard import Scorecard


@dataclass(frozen=True)
class Policy:
    name: str
    commands: frozenset[str]
    help: str


POLICIES: dict[str, Policy] = {p.name: p for p in (
    Policy("error", frozenset({"validate", "score"}), "any error finding"),
    Policy("warning", frozenset({"validate", "score"}), "any error or warning finding"),
    Policy("exemplar", frozenset({"score"}), "the Exemplar-style suite is not met or not "
           "evaluated "
           f"(NVIDIA Requirements for AI Clouds {BM01})"),
    Policy("gate", frozenset({"score"}), "any gate failed"),
    Policy("gate-unevaluated", frozenset({"score"}),
           "any gate failed or could not be evaluated"),
    Policy("tier-below:TIER", frozenset({"score"}),
           "the tier is below TIER (platinum, gold, silver, bronze)"),
    Policy("drift", frozenset({"audit"}), "any regression, tier drop, new audit FAIL, SLA "
           "breach, expiring Exemplar validation, stale cluster or newest workload run whose "
           "ratio does not count"),
    Policy("none", frozenset({"validate", "score", "audit"}), "never: report only"),
)}

DEFAULTS = {"validate": ("error",), "score": ("error",), "audit": ("drift",)}


def _tiers() -> tuple[str, ...]:
    from cmax.scorecard import Tier

    return get_args(Tier)  # best first


def _key(value: str) -> str:
    return "tier-below:TIER" if value.lower().startswith("tier-below:") else value.lower()


def fail_on_option(command: str) -> Callable[[Any], Any]:
    names = [n for n, p in POLICIES.items() if command in p.commands]
    listing = "; ".join(f"{n}: {POLICIES[n].help}" for n in names)

    def check(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> tuple[str,
                                                                                          ...]:
        out = []
        for value in values:
            for part in value.split(","):
                part = part.strip()
                if not part:
                    continue
                key = _key(part)
                if key not in names:
                    raise click.BadParameter(f"{part!r} is not one of {', '.join(names)}",
                                             ctx=ctx, param=param)
                if key == "tier-below:TIER":
                    tier = part.split(":", 1)[1].strip().capitalize()
                    if tier not in _tiers()[:-1]:
                        raise click.BadParameter(
                            f"{part!r}: TIER must be one of "
                            f"{', '.join(t.lower() for t in _tiers()[:-1])}",
                            ctx=ctx, param=param)
                    part = f"tier-below:{tier.lower()}"
                out.append(part.lower())
        return tuple(out) or DEFAULTS[command]

    def complete(ctx: click.Context, param: click.Parameter,
                 incomplete: str) -> list[CompletionItem]:
        """The policies (and, after ``tier-below:``, the tiers) for shell completion; after a
        comma, the next policy of the list."""
        from click.shell_completion import CompletionItem

        done, _, last = incomplete.rpartition(",")
        lead = f"{done}," if done else ""
        values = [n for n in names if n != "tier-below:TIER"]
        values += [f"tier-below:{t.lower()}" for t in _tiers()[:-1]]
        return [CompletionItem(lead + v, help=POLICIES[_key(v)].help)
                for v in values if v.startswith(last.lower())]

    return click.option(
        "--fail-on", "fail_on", multiple=True, metavar="POLICY", envvar="CMAX_FAIL_ON",
        callback=check, show_envvar=True, shell_complete=complete,
        help=f"Exit 1 when this policy trips (repeatable, or comma-separated). {listing}.  "
        f"[default: {', '.join(DEFAULTS[command])}]")


def _severities(policy: str) -> tuple[str, ...]:
    return {"error": ("error",), "warning": ("error", "warning")}.get(policy, ())


def _counted(n: int, severities: tuple[str, ...]) -> str | None:
    return f"{n} {' or '.join(severities)} finding(s)" if n else None


def finding_trips(findings: Sequence[Finding], policy: str) -> str | None:
    """Why ``policy`` trips on these findings, or None."""
    severities = _severities(policy)
    return _counted(sum(f.severity in severities for f in findings), severities)


def scorecard_trips(card: Scorecard, policy: str) -> str | None:
    """Why ``policy`` trips on this scorecard, or None."""
    if policy in ("error", "warning"):
        severities = _severities(policy)
        return _counted(sum(card.finding_counts.get(s, 0) for s in severities), severities)
    if policy == "exemplar":
        return None if card.exemplar_state is State.MET else (
            f"the Exemplar-style suite is {card.exemplar_state.label} "
            f"(bar {card.exemplar_bar:.0%})")
    if policy in ("gate", "gate-unevaluated"):
        bad = ("failed",) if policy == "gate" else ("failed", "not_evaluated")
        names = [f"{g.name} ({g.status})" for g in card.gates if g.status in bad]
        return f"gate(s) {'; '.join(names)}" if names else None
    if policy.startswith("tier-below:"):
        tiers = _tiers()
        bar = policy.split(":", 1)[1].capitalize()
        return (f"tier {card.tier} is below {bar}"
                if tiers.index(card.tier) > tiers.index(bar) else None)
    return None


def policy_checks(trips: dict[str, str | None]) -> list[Check]:
    """One check per policy, for the JUnit / CTRF report."""
    return [Check(id=f"cmax.fail-on.{name}", suite="fail-on", name=f"--fail-on {name}",
                  status="failed" if why else "passed", message=why or "did not trip",
                  requirements=(BM01,) if name == "exemplar" else ())
            for name, why in trips.items() if name != "none"]


def verdict(trips: dict[str, str | None]) -> int:
    """Exit code 1 when a policy tripped (each reason on stderr), else 0."""
    from cmax.cli import exits

    tripped = {name: why for name, why in trips.items() if why}
    for name, why in tripped.items():
        click.echo(f"cmax: --fail-on {name}: {why}", err=True)
    return exits.FINDINGS if tripped else exits.OK
