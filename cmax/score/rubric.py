"""The rating rubric: every threshold, weight and gate the scorer applies, in one TOML file.

SemiAnalysis publishes no numeric weights or score formula for ClusterMAX, so any numbers are
a modelling choice. Keeping all of them in ``reference/rubric.toml`` (overridable with
``--rubric FILE``) means a scorecard can always say which rule gave which point, and a buyer
who disagrees with a weight can change it without touching code. The rubric's id and a digest
of its bytes go into every scorecard, so two scorecards scored under different rubrics never
look comparable by accident.

The shipped ``reference/rubric.toml`` is the one home of every value: the models below state
bounds, never defaults. A custom rubric that leaves out a key of the threshold sections
(``[performance]``, ``[network]``, ``[mlperf]``, ``[scoring]``, ``[coverage]``) gets the shipped
file's value for it (:data:`DEFAULTED_SECTIONS`); categories, tiers and gates it must state.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cmax.errors import RubricError
from cmax.reference.rubric_file import RubricFile, read_rubric_file
from cmax.scorecard import TIERS, ClaimKind, GateKind, Tier, TierThreshold

CATEGORY_NAMES: tuple[str, ...] = (
    "security", "lifecycle", "orchestration", "storage", "networking",
    "reliability", "monitoring", "pricing", "partnerships", "availability",
)
"""The ten ClusterMAX 2.0 categories (SemiAnalysis, 6 Nov 2025), in the published order."""

TIER_ORDER: tuple[Tier, ...] = TIERS  # the one tier order, declared in cmax.scorecard

TierName = Tier
GradedStatus = Literal["PASS", "WARNING", "FAIL", "SKIPPED"]
ComponentKind = Literal[
    "audit", "training", "nccl", "mlperf", "inference", "storage", "goodput", "mtbf", "sla",
    "price_value", "declarations",
]
MEASURED_KINDS: frozenset[str] = frozenset(
    {"audit", "training", "nccl", "mlperf", "inference", "storage", "goodput", "mtbf", "sla",
     "price_value"})


MAX_WEIGHT = 1_000_000.0


DEFAULTED_SECTIONS: tuple[str, ...] = ("performance", "network", "mlperf", "scoring", "coverage")
"""Rubric sections whose omitted keys are taken from the shipped reference/rubric.toml."""


def _default_fail() -> list[GradedStatus]:
    return ["FAIL"]


class _Strict(BaseModel):
    # an infinite weight or bar turns every score into inf/nan: no rubric value may be one
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class PerformanceRules(_Strict):
    bar: float = Field(gt=0, le=2)
    confidence: float = Field(gt=0.5, lt=1)
    bootstrap_resamples: int = Field(ge=100, le=100_000)
    bootstrap_seed: int = Field(ge=0)
    min_window_steps: int = Field(ge=1)


class NetworkRules(_Strict):
    bar: float = Field(gt=0, le=2)
    large_message_min_bytes: int = Field(gt=0)
    min_node_share: float = Field(gt=0, le=1)


class MlperfRules(_Strict):
    bar: float = Field(gt=0, le=2)


ResultKind = Literal["training", "serving", "mlperf"]
"""The kinds of result a gate may be keyed to ([[gates]] results)."""


class ScoringRules(_Strict):
    ratio_floor: float = Field(ge=0, lt=1)
    mtbf_ratio_floor: float = Field(gt=0, lt=1)
    audit_points: dict[Literal["PASS", "WARNING", "FAIL"], float]
    declaration_credit: float = Field(ge=0, le=1)
    # the tier a gate caps at when it could not be evaluated (never harsher than failing it)
    not_evaluated_cap: TierName
    # the result kind a bundle holding no training run and no serving result is judged as,
    # for the gates keyed by result kind ([[gates]] results)
    results_when_none: ResultKind

    @model_validator(mode="after")
    def _points(self) -> ScoringRules:
        missing = {"PASS", "WARNING", "FAIL"} - set(self.audit_points)
        if missing:
            raise ValueError(
                f"audit_points needs PASS, WARNING and FAIL (missing {sorted(missing)})")
        if any(not 0 <= v <= 1 for v in self.audit_points.values()):
            raise ValueError("audit_points values are fractions of a point, 0-1")
        points = self.audit_points
        if not points["PASS"] >= points["WARNING"] >= points["FAIL"]:
            raise ValueError("audit_points must satisfy PASS >= WARNING >= FAIL "
                             "(a FAIL may never earn more than a PASS)")
        return self


class _TierLadder(_Strict):
    """Four minimums, Platinum to Bronze, each in [0, ``_top``] and descending; below Bronze
    is Underperforming."""

    _what: ClassVar[str]  # what the error message calls the ladder
    _top: ClassVar[float]  # the largest allowed minimum
    Platinum: float = Field(ge=0)
    Gold: float = Field(ge=0)
    Silver: float = Field(ge=0)
    Bronze: float = Field(ge=0)

    @model_validator(mode="after")
    def _descending(self) -> Self:
        steps = self.steps()
        over = [f"{name} = {value:g}" for name, value in steps if value > self._top]
        if over:
            raise ValueError(f"{self._what} are at most {self._top:g} ({', '.join(over)})")
        minimums = [minimum for _, minimum in steps]
        if any(a < b for a, b in itertools.pairwise(minimums)):
            raise ValueError(f"{self._what} must satisfy "
                             + " >= ".join(name for name, _ in steps))
        return self

    def steps(self) -> tuple[tuple[TierName, float], ...]:
        """(tier, minimum) best first: every tier of :data:`TIERS` but the last, which is
        what falls below them all."""
        return tuple((name, float(getattr(self, name))) for name in TIERS[:-1])

    def _highest(self, value: float, slack: float = 0.0) -> TierName:
        """The highest tier whose minimum ``value`` reaches."""
        return next((name for name, minimum in self.steps() if value >= minimum - slack),
                    "Underperforming")


class TierThresholds(_TierLadder):
    """Minimum weighted score (0-100) for each tier; below Bronze is Underperforming."""

    _what: ClassVar[str] = "thresholds"
    _top: ClassVar[float] = 100.0

    def tier_for(self, score: float) -> TierName:
        return self._highest(score)

    def as_data(self) -> list[TierThreshold]:
        """The thresholds as the scorecard carries them, best first."""
        return [TierThreshold(tier=name, min_score=minimum) for name, minimum in self.steps()]


class CoverageRules(_TierLadder):
    """Share of the category weight that must have evidence (measured or declared) for a tier.

    A category with no evidence at all is left out of the weighted score rather than scored 0
    (unknown is not bad), so this is what stops a provider from reaching a high tier on a
    partial picture: ClusterMAX Platinum "excels on every criterion".
    """

    _what: ClassVar[str] = "coverage shares"
    _top: ClassVar[float] = 1.0

    def highest_tier(self, coverage: float) -> TierName:
        return self._highest(coverage, slack=1e-9)


class Component(_Strict):
    """One source of points inside a category, with its weight inside that category."""

    kind: ComponentKind
    # weights are relative; the cap keeps their sum finite (two 1e308 weights overflow to inf)
    weight: float = Field(default=1.0, gt=0, le=MAX_WEIGHT)
    audit_categories: list[str] = Field(default_factory=list)
    criteria: list[str] = Field(default_factory=list)
    keys: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _params(self) -> Component:
        if self.kind == "audit" and not (self.audit_categories or self.criteria):
            raise ValueError("an audit component needs audit_categories or criteria")
        if self.kind == "declarations" and not self.keys:
            raise ValueError("a declarations component needs keys")
        return self


class Category(_Strict):
    title: str = Field(min_length=1)
    weight: float = Field(ge=0, le=MAX_WEIGHT)
    components: list[Component] = Field(min_length=1)


ONE_CLAIM_GATES: dict[str, tuple[str, ClaimKind, str]] = {
    "exemplar": ("Exemplar suite", "exemplar_suite", "exemplar"),
    "network": ("fabric", "fabric", "fabric"),
}
"""The ``measured`` kinds whose gate reads one claim's bar state (met passes, not met fails,
not evaluated leaves the gate not evaluated), with the claim's name, kind and id: the
Exemplar suite, and the fabric at the claimed scale (``cmax/judgement/fabric.py``)."""


class GateRule(_Strict):
    """A hard gate. Audit evidence decides when it is conclusive; else declarations; else
    ``missing`` says whether the absence of any evidence fails the gate or leaves it not
    evaluated ("pass" is the older spelling of "not_evaluated": no evidence never passes).
    A ``measured`` gate is decided by the scored results against the rubric's bar
    (``training`` and ``serving``: [performance] bar; ``mlperf``: the provider's own MLPerf
    Training results, [mlperf] bar): ``require = "all"`` fails unless every
    comparable result meets it, ``"any"`` fails only when none does. An ``exemplar`` gate
    reads the Exemplar suite's one judgement (``cmax/judgement/exemplar.py``), a ``network``
    gate the fabric's (``cmax/judgement/fabric.py``: every sweep spanning the claimed system
    against the [network] bar): met passes, not met fails, not evaluated leaves the gate not
    evaluated; ``require`` does not apply to them. A gate with
    ``results`` judges only bundles holding that kind of result, or holding neither kind and
    judged as ``[scoring] results_when_none``."""

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    cap: TierName
    source: str = Field(min_length=1)
    checks: list[str] = Field(default_factory=list)
    fail_statuses: list[GradedStatus] = Field(default_factory=_default_fail)
    keys: list[str] = Field(default_factory=list)
    allowed_gpus: list[str] = Field(default_factory=list)
    measured: Literal["exemplar", "training", "serving", "mlperf", "network"] | None = None
    # the kind of result the gate judges: a bundle holding results of another kind and none of
    # this one is not judged by it (a serving-only provider by no training gate, and the reverse)
    results: ResultKind | None = None
    require: Literal["all", "any"] = "all"
    missing: Literal["fail", "not_evaluated", "pass"] = "not_evaluated"
    # overrides [scoring] not_evaluated_cap for this gate (e.g. a performance gate, so that
    # hiding the evidence never caps more gently than failing it)
    not_evaluated_cap: TierName | None = None

    @model_validator(mode="after")
    def _has_rule(self) -> GateRule:
        if not (self.checks or self.keys or self.allowed_gpus or self.measured):
            raise ValueError("a gate needs checks, keys, allowed_gpus or measured")
        if self.measured in ONE_CLAIM_GATES and self.require != "all":
            raise ValueError(f"a measured = {self.measured!r} gate reads one judgement (met, "
                             "not met or not evaluated): require does not apply")
        return self

    @property
    def kind(self) -> GateKind:
        """What decides this gate, in the order the scorer consults them."""
        if self.allowed_gpus:
            return "gpu"
        if self.measured is not None:
            return self.measured
        return "audit" if self.checks else "declarations"


class Rubric(_Strict):
    """The parsed rubric; ``source`` and ``digest`` are filled in by :func:`load_rubric`."""

    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    basis: str = Field(min_length=1)
    performance: PerformanceRules
    network: NetworkRules
    mlperf: MlperfRules
    scoring: ScoringRules
    tiers: TierThresholds
    coverage: CoverageRules
    categories: dict[str, Category]
    gates: list[GateRule] = Field(default_factory=list)
    source: str = ""
    digest: str = ""

    @model_validator(mode="after")
    def _ten_categories(self) -> Rubric:
        names = set(self.categories)
        missing = [c for c in CATEGORY_NAMES if c not in names]
        extra = sorted(names - set(CATEGORY_NAMES))
        if missing or extra:
            raise ValueError(
                "categories must be exactly the ten ClusterMAX 2.0 categories "
                f"({', '.join(CATEGORY_NAMES)}); missing {missing}, unknown {extra}")
        if sum(c.weight for c in self.categories.values()) <= 0:
            raise ValueError("category weights must not all be zero")
        ids = [g.id for g in self.gates]
        if len(ids) != len(set(ids)):
            raise ValueError("gate ids must be unique")
        return self

    @property
    def label(self) -> str:
        """What a scorecard records: the rubric id plus the first 12 hex digits of its digest."""
        return f"{self.id}@{self.digest[:12]}" if self.digest else self.id


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@functools.cache
def _shipped() -> RubricFile:
    """The shipped rubric file, read once: the rubric of a score without ``--rubric`` and
    the home of every default value of one with it."""
    return read_rubric_file(None)


@functools.cache
def _shipped_sections() -> dict[str, Any]:
    """The threshold sections of the shipped rubric (the home of every default value)."""
    data = _shipped().data
    return {name: dict(data.get(name) or {}) for name in DEFAULTED_SECTIONS}


def with_shipped_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each omitted key of :data:`DEFAULTED_SECTIONS` taken from the shipped
    rubric; keys the file states win."""
    merged = dict(data)
    for name, shipped in _shipped_sections().items():
        given = data.get(name)
        merged[name] = {**shipped, **given} if isinstance(given, dict) else (
            shipped if given is None else given)
    return merged


def parse_rubric(data: dict[str, Any], *, source: str | Path, digest: str = "") -> Rubric:
    """Validate parsed TOML (omitted threshold keys from the shipped rubric); an error names
    the file and the dotted key."""
    try:
        rubric = Rubric.model_validate(with_shipped_defaults(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        key = _dotted(loc) or "top level"
        if err["type"] == "missing":
            raise RubricError("required rubric key is missing", file=source, field=key,
                            fix="see the rubric format in `cmax docs scoring`") from None
        if err["type"] == "extra_forbidden":
            raise RubricError("unknown rubric key", file=source, field=key,
                            expected="a key of the rubric format in `cmax docs scoring`",
                            fix="check the spelling or remove it") from None
        raise RubricError(f"invalid rubric value: {err['msg'].removeprefix('Value error, ')}",
                          file=source, field=key) from None
    return rubric.model_copy(update={"source": str(source), "digest": digest})


def load_rubric(path: str | Path | None = None) -> Rubric:
    """The rubric of a file (read by :mod:`cmax.reference.rubric_file`); None means the one
    shipped in ``reference/rubric.toml``."""
    read = _shipped() if path is None else read_rubric_file(path)
    return parse_rubric(read.data, source=read.file, digest=read.digest)
