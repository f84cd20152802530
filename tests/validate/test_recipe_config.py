"""Undeclared config: the consistency rules run under the reference recipe's (issue 12).

A log whose printed TFLOP/s are inflated by 25% used to pass when neither cmax.toml nor the log
stated the parallel configuration, because `consistency.tflops-vs-step-time` was skipped.
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from cmax.findings import Finding
from tests.validate.test_validate import findings_for
from tests.validate.validate_fakes import HonestBundle, RunFx

CONFIG = ("gbs", "mbs", "tp", "pp", "cp", "vp", "ep")


class UnstatedConfig(RunFx):
    """A run whose manifest entry and log state no GBS or parallel layout."""

    def manifest_entry(self) -> dict[str, Any]:
        return {k: v for k, v in super().manifest_entry().items() if k not in CONFIG}

    def runs_row(self) -> dict[str, Any]:
        return {**super().runs_row(), **dict.fromkeys(CONFIG)}

    def log_text(self) -> str:
        return re.sub(r"global_batch_size: \d+ \| ", "", super().log_text())


def bundle(tflops_factor: float = 1.0) -> HonestBundle:
    out = HonestBundle()
    first = out.runs[0]
    run = UnstatedConfig(**{f.name: getattr(first, f.name) for f in fields(first)})
    if tflops_factor != 1.0:
        run.tflops = [None if v is None else round(v * tflops_factor, 1)
                      for v in first.tflops_values()]
    out.runs[0] = run
    return out


def by_rule(found: list[Finding], rule: str) -> list[Finding]:
    return [f for f in found if f.rule == rule]


def test_inflated_tflops_are_caught_under_the_recipes_config(tmp_path: Path) -> None:
    found = findings_for(bundle(1.25), tmp_path)
    [hit] = by_rule(found, "consistency.tflops-vs-step-time")
    assert hit.severity == "error" and "25% above" in hit.message and "GBS 256" in hit.message
    [note] = by_rule(found, "consistency.recipe-config-assumed")
    assert note.severity == "info" and "gbs 256" in note.message and "tp 8" in note.message
    assert note.file == "training/llama3.1-405b_bf16_512.log"


def test_honest_run_without_stated_config_raises_only_the_note(tmp_path: Path) -> None:
    found = findings_for(bundle(), tmp_path)
    run = [f for f in found if f.run_id == "runs[0]"]
    assert not by_rule(run, "consistency.tflops-vs-step-time")
    assert not by_rule(run, "consistency.tokens-vs-step-time")
    assert not by_rule(run, "consistency.parallel-layout")
    [note] = by_rule(run, "consistency.recipe-config-assumed")
    assert "dgxc-405b-bf16-512" in note.message
    # the existing warning that the configuration cannot be confirmed stays the only warning
    above_info = {f.rule for f in run if f.severity != "info"}
    assert above_info == {"comparability.config-unverified"}


def test_a_stated_config_assumes_nothing(tmp_path: Path) -> None:
    assert not by_rule(findings_for(HonestBundle(), tmp_path), "consistency.recipe-config-assumed")


def test_the_gbs_the_log_prints_counts_as_stated(tmp_path: Path) -> None:
    """The log's own `global_batch_size:` is used, not the recipe's, and is not 'assumed'."""
    honest = bundle()
    logged = honest.runs[0]

    class PrintsGbs(UnstatedConfig):
        def log_text(self) -> str:
            return RunFx.log_text(self)

    honest.runs[0] = PrintsGbs(**{f.name: getattr(logged, f.name) for f in fields(logged)})
    [note] = by_rule(findings_for(honest, tmp_path), "consistency.recipe-config-assumed")
    assert "gbs" not in note.message.split("assume")[0] and "tp 8" in note.message
