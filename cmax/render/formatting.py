"""How numbers read in reports: one place, so a ratio never shows as 0.98 on one page and
98 % on another, and a missing or non-finite value always shows the same dash.

These are registered as Jinja2 filters (see :mod:`cmax.render.templates`), so templates for
other reports (audit trends) format the same way.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from markupsafe import Markup, escape

from cmax.judgement.labels import RunIdentity, identity_label, stated
from cmax.states import VERDICT_STATES
from cmax.states import verdict_label as _verdict_label

T = TypeVar("T")

MISSING = "—"
MINUS = "−"  # a true minus sign: a hyphen is too short to read in a table of prices

# CSS classes come only from these tables, never from bundle text.
VERDICT_CLASSES: dict[str, str] = {v: state.tone for v, state in VERDICT_STATES.items()}


@dataclass(frozen=True)
class TierStyle:
    """How a tier is drawn everywhere: its CSS class, its colour (the badge and the decision's
    rule under white text, the leaderboard's bars) and its tint (the fleet trend grid's cells
    under dark text). ``templates/report.css`` and ``trend.css`` write their tier rules from
    this table, and the charts colour their bars from it."""

    css: str
    colour: str
    tint: str


TIERS: dict[str, TierStyle] = {
    "Platinum": TierStyle("tier-platinum", "#4a5a6a", "#dfe7f1"),
    "Gold": TierStyle("tier-gold", "#a87b0a", "#f6e7b4"),
    "Silver": TierStyle("tier-silver", "#7d8791", "#e4e4e4"),
    "Bronze": TierStyle("tier-bronze", "#9a4e29", "#efd2b8"),
    "Underperforming": TierStyle("tier-under", "#b00020", "#f3c6c6"),
}
TIER_CLASSES: dict[str, str] = {tier: style.css for tier, style in TIERS.items()}
TIER_COLOURS: dict[str, str] = {tier: style.colour for tier, style in TIERS.items()}
SEVERITY_CLASSES: dict[str, str] = {"error": "bad", "warning": "warn", "info": "neutral"}
AUDIT_CLASSES: dict[str, str] = {
    "PASS": "good", "WARNING": "warn", "FAIL": "bad", "SKIPPED": "neutral",
}


def _finite(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _signed(text: str) -> str:
    return MINUS + text[1:] if text.startswith("-") else text


def num(value: Any, digits: int = 1) -> str:
    """1234.5 -> '1,234.5'."""
    number = _finite(value)
    if number is None:
        return MISSING
    return _signed(f"{number:,.{digits}f}")


def num_trim(value: Any, digits: int = 2) -> str:
    """A number without trailing zeros: 15.0 -> '15', 0.25 -> '0.25'."""
    number = _finite(value)
    if number is None:
        return MISSING
    text = f"{number:,.{digits}f}".rstrip("0").rstrip(".") if digits else f"{number:,.0f}"
    return _signed(text)


def seconds(value: Any, digits: int = 2) -> str:
    """12.345 -> '12.35 s'; a missing value is the dash alone, never '— s'."""
    text = num(value, digits)
    return text if text == MISSING else f"{text} s"


def integer(value: Any) -> str:
    number = _finite(value)
    return MISSING if number is None else _signed(f"{round(number):,d}")


def pct(ratio: Any, digits: int = 1) -> str:
    """A ratio as a percentage: 0.9826 -> '98.3%'."""
    number = _finite(ratio)
    return MISSING if number is None else _signed(f"{number * 100:,.{digits}f}%")


def pct_value(value: Any, digits: int | None = 1) -> str:
    """A value already in percent: 99.86 -> '99.86%' (digits=2). With ``digits=None`` the
    value is shown as written, up to 3 decimals: a contracted 99.9% stays '99.9%'."""
    number = _finite(value)
    if number is None:
        return MISSING
    if digits is None:
        text = f"{number:,.3f}".rstrip("0").rstrip(".")
        return _signed(text + "%")
    return _signed(f"{number:,.{digits}f}%")


def pct_range(low: Any, high: Any, digits: int = 1) -> str:
    """A confidence interval of ratios: (0.942, 0.953) -> '94.2–95.3%'."""
    lo, hi = _finite(low), _finite(high)
    if lo is None or hi is None:
        return MISSING
    return _signed(f"{lo * 100:,.{digits}f}") + "–" + _signed(f"{hi * 100:,.{digits}f}%")


def signed_pct(value: Any, digits: int = 1) -> str:
    """A change in percent with its sign: -5.24 -> '−5.2%', 3 -> '+3.0%'."""
    number = _finite(value)
    if number is None:
        return MISSING
    text = f"{number:+,.{digits}f}%"
    return _signed(text)


def usd(value: Any, digits: int = 2) -> str:
    """$2.10; large sums with digits=0: $75,350,016."""
    number = _finite(value)
    if number is None:
        return MISSING
    text = f"${abs(number):,.{digits}f}"
    return MINUS + text if number < 0 else text


def binary_bytes(value: Any) -> str:
    """Message and file sizes the way nccl-tests users say them: 8 B, 1 KiB, 16 GiB."""
    number = _finite(value)
    if number is None:
        return MISSING
    size = abs(number)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            text = f"{size:.0f} {unit}" if size == int(size) else f"{size:.1f} {unit}"
            return MINUS + text if number < 0 else text
        size /= 1024
    raise AssertionError("unreachable")


_BREAK_AFTER = re.compile(r"(?<=[./_:=,\\])")


def breakable(value: Any) -> Markup:
    """Escape ``value`` and allow line breaks after . / _ : = , and backslash, so long
    identifiers and paths wrap at their joints instead of mid-word or off the page."""
    if value is None:
        return Markup(MISSING)
    parts = _BREAK_AFTER.split(str(value))
    return Markup("<wbr>").join(escape(p) for p in parts)


def date(value: Any) -> str:
    if isinstance(value, dt.date):
        return value.isoformat()
    return MISSING if value is None else str(value)


def verdict_label(value: Any) -> str:
    """A verdict in the one vocabulary of states (cmax/states.py)."""
    return _verdict_label(str(value))


def css_class(value: Any, table: dict[str, str]) -> str:
    return table.get(str(value), "neutral")


def verdict_state(value: Any) -> str:
    """The state a verdict is (its JSON value), for the chip's class."""
    state = VERDICT_STATES.get(str(value))
    return state.value if state is not None else "unknown"


def verdict_class(value: Any) -> str:
    return css_class(value, VERDICT_CLASSES)


def tier_class(value: Any) -> str:
    return css_class(value, TIER_CLASSES)


def severity_class(value: Any) -> str:
    return css_class(value, SEVERITY_CLASSES)


def audit_class(value: Any) -> str:
    return css_class(value, AUDIT_CLASSES)


def where(file: str | None, line: int | None) -> str:
    """file:line, file, or a dash."""
    if not file:
        return MISSING
    return f"{file}:{line}" if line is not None else file


def truncate(text: Any, limit: int = 60) -> str:
    """Cut long bundle text for page headers, where it cannot wrap."""
    value = str(text)
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


class RunRow(RunIdentity, Protocol):
    """A training run as a table row shows it (a WorkloadResult or a WorkloadEconomics)."""

    @property
    def log(self) -> str | None: ...


def run_label(run: RunRow) -> str:
    """A run's label in every table and chart: 'llama3.1-405b FP8 (declared BF16) · 512 GPUs'
    (:func:`stated` for each field), the declared values alone where the log agrees."""
    return identity_label(run, upper=True, grouped=True, sep=" · ")


def log_states_text(run: RunRow) -> str:
    """A run's contradicted identity in one cell ('precision=fp8'; '?' where the log names no
    single value), empty when its log agrees with the declaration: runs.csv and
    ``cmax.frames.workloads``."""
    return "; ".join(f"{k}={'?' if v is None else v}" for k, v in run.log_states.items())


def identity_columns(runs: Sequence[RunRow]) -> tuple[str, list[str]]:
    """The workload, precision and GPU columns of a text table of runs, each as wide as its
    widest cell (at least 22, 6 and 5): the header, then each run's cells (:func:`stated`)."""
    cells = [(stated(r, "workload"), stated(r, "precision"),
              stated(r, "num_gpus", grouped=False)) for r in runs]
    w, p, g = (max(least, *(len(c[i]) for c in cells))
               for i, least in enumerate((22, 6, 5)))
    return (f"{'workload':<{w}} {'prec':<{p}} {'GPUs':>{g}}",
            [f"{a:<{w}} {b:<{p}} {c:>{g}}" for a, b, c in cells])


def twin_logs(runs: Sequence[RunRow]) -> list[str | None]:
    """Each run's log where another run of the list has the same label (two runs of one
    workload would otherwise read the same), else None."""
    labels = [run_label(r) for r in runs]
    return [r.log if r.log and labels.count(label) > 1 else None
            for r, label in zip(runs, labels, strict=True)]


def columns(items: Sequence[T], n: int) -> list[list[T]]:
    """``items`` in order, in at most ``n`` columns of equal length (the last may be shorter):
    the split a template would otherwise work out with arithmetic."""
    size = max(1, -(-len(items) // n))
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


FILTERS: dict[str, Any] = {
    "columns": columns,
    "num": num,
    "num_trim": num_trim,
    "integer": integer,
    "pct": pct,
    "pct_value": pct_value,
    "pct_range": pct_range,
    "signed_pct": signed_pct,
    "usd": usd,
    "binary_bytes": binary_bytes,
    "date": date,
    "verdict_label": verdict_label,
    "verdict_class": verdict_class,
    "verdict_state": verdict_state,
    "seconds": seconds,
    "tier_class": tier_class,
    "severity_class": severity_class,
    "audit_class": audit_class,
    "truncate_text": truncate,
    "breakable": breakable,
}

GLOBALS: dict[str, Any] = {
    "pct_range": pct_range,
    "where": lambda file, line: breakable(where(file, line)),
    "run_label": run_label,
    "twin_logs": twin_logs,
    "MISSING": MISSING,
    "tiers": TIERS,
}
