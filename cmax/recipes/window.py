"""The steady-state measurement window, as the reference recipes define it.

NVIDIA's parsers average a fixed band of printed iteration numbers to skip warm-up (input
prefetch, allocation, JIT): iterations 35-44 from DGXC v25.08 on (``parse_train_timing*.sh``,
``llmb-run``), 11-44 in v25.05-v25.07, and the last step before that. The band is on the
*printed* iteration number, which is zero-indexed in NeMo 2 logs and one-indexed in
Megatron-Bridge logs; we follow the parsers and match printed numbers.

The rule lives here; it is applied once per run, with the matched baseline's recipe release,
when a bundle is resolved into its case (:func:`cmax.resolve.case.window_for`), and validation and
scoring both read that window. A reader without a baseline (``cmax inspect``, ingest's run
status) can only apply the current recipes' band: on a log rated against a v25.05 baseline it
shows 35-44 where the scorecard, rightly, averages 11-44.
"""

from __future__ import annotations

from dataclasses import dataclass

CURRENT_WINDOW = (35, 44)
V25_05_WINDOW = (11, 44)


@dataclass(frozen=True)
class Window:
    """Printed iterations ``first``..``last`` (inclusive) and the recipe rule that set them."""

    first: int
    last: int
    rule: str

    def contains(self, iteration: int) -> bool:
        return self.first <= iteration <= self.last


def _release_tuple(release: str) -> tuple[int, int] | None:
    text = release.strip().lower().lstrip("v")
    parts = text.replace("-", ".").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None


def steady_state_window(recipe_release: str | None, last_iteration: int | None) -> Window:
    """The window the reference recipe averages over, for a run ending at ``last_iteration``.

    ``recipe_release`` is a DGXC tag such as ``v25.05.02``; None or an unknown value means the
    current recipes (35-44), which is also what Megatron-Bridge perf-summary baselines use.
    """
    parsed = _release_tuple(recipe_release) if recipe_release else None
    if parsed is not None and parsed < (25, 5):
        last = last_iteration if last_iteration is not None else CURRENT_WINDOW[1]
        return Window(last, last, "last training step (DGXC <= v25.04 READMEs)")
    if parsed is not None and parsed < (25, 8):
        return Window(*V25_05_WINDOW, "mean of iterations 11-44 (DGXC v25.05-v25.07)")
    return Window(*CURRENT_WINDOW, "mean of iterations 35-44 (DGXC v25.08+, llmb-run)")


#: One recipe release of each window rule, newest first: ``cmax inspect`` (which has no
#: baseline) shows the window of every rule so that it always shows the one a scorecard uses.
RULE_RELEASES: tuple[str, ...] = ("v25.08", "v25.05", "v25.04")


def every_window(last_iteration: int | None) -> list[Window]:
    """The steady-state window under each recipe-release rule, newest first."""
    return [steady_state_window(release, last_iteration) for release in RULE_RELEASES]

