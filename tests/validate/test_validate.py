"""The validator beyond single rules: thresholds at their edges, honest noise, the real reference,
determinism, the CLI contract, helpers and the generated rule documentation."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from cmax.cli import main
from cmax.findings import Finding
from cmax.reference import load_reference
from cmax.resolve.claims import Citation, Claim, Ledger
from cmax.validate import RULES, not_comparable_runs, runs_with_errors, validate
from cmax.validate.context import fmt_iters, print_resolution
from cmax.validate.docgen import render
from cmax.validate.software import parse_version
from cmax.validate.statistics import robust_sigma, theil_sen_slope
from tests.fakes import BASELINES, FakeReference
from tests.paths import DOCS
from tests.validate.validate_fakes import (
    HonestBundle,
    RunFx,
    honest_times,
    mlperf_result,
)

DOCS = DOCS / "rules.md"


def findings_for(bundle: HonestBundle, root: Path) -> list[Finding]:
    return validate(bundle.ingest(root), FakeReference())


def rules_of(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings}


# --- honest noise -------------------------------------------------------------------------


@pytest.mark.parametrize(("jitter", "stall_at", "seed"), [
    (0.005, 22, 1), (0.01, 38, 2), (0.02, 22, 3), (0.02, 40, 4), (0.015, None, 5),
    (0.01, 47, 6),
])
def test_honest_noise_raises_no_error_or_warning(jitter: float, stall_at: int | None, seed: int,
                                                 tmp_path: Path) -> None:
    """A few % jitter, slow first steps and one brief stall (in or out of the window) are
    what real runs look like: nothing above info."""
    bundle = HonestBundle()
    for i, run in enumerate(bundle.runs):
        run.times = honest_times(run.base_step, seed * 10 + i, jitter=jitter, stall_at=stall_at)
    findings = findings_for(bundle, tmp_path)
    assert {f.severity for f in findings} <= {"info"}, [f.message for f in findings
                                                        if f.severity != "info"]


# --- thresholds at their edges ---------------------------------------------------------------


def _scaled_window(factor: float) -> HonestBundle:
    bundle = HonestBundle()
    run = bundle.runs[1]
    run.times = honest_times(run.base_step, 12, stall_at=None)
    run.times = [round(t * factor, 2) if 35 <= i <= 44 else t for i, t in enumerate(run.times)]
    return bundle


def test_window_4pct_faster_is_not_cherry_picked(tmp_path: Path) -> None:
    assert "statistics.cherry-picked-window" not in rules_of(
        findings_for(_scaled_window(0.96), tmp_path))


def test_window_7pct_faster_is_cherry_picked(tmp_path: Path) -> None:
    hits = [f for f in findings_for(_scaled_window(0.93), tmp_path)
            if f.rule == "statistics.cherry-picked-window"]
    assert len(hits) == 1 and hits[0].run_id == "runs[1]"
    assert hits[0].file == "training/llama3.1-405b_fp8_512.log"


def _tflops_scaled(factor: float) -> HonestBundle:
    bundle = HonestBundle()
    run = bundle.runs[0]
    run.tflops = [None if v is None else round(v * factor, 1) for v in run.tflops_values()]
    return bundle


def test_tflops_8pct_off_is_within_tolerance(tmp_path: Path) -> None:
    assert "consistency.tflops-vs-step-time" not in rules_of(
        findings_for(_tflops_scaled(1.08), tmp_path))


def test_tflops_12pct_off_is_inconsistent(tmp_path: Path) -> None:
    hits = [f for f in findings_for(_tflops_scaled(1.12), tmp_path)
            if f.rule == "consistency.tflops-vs-step-time"]
    assert len(hits) == 1 and "12% above" in hits[0].message


def test_tflops_check_hand_computed(tmp_path: Path) -> None:
    """405B BF16, GBS 256, 512 GPUs, 2.17e16 FLOPs/sample at 20.0 s: 542.5 TFLOP/s/GPU."""
    bundle = HonestBundle()
    run = bundle.runs[0]
    run.times = [20.0] * 5 + [round(20.0 + 0.01 * (i % 7), 2) for i in range(45)]
    run.tflops = [700.0] * 50
    hit = next(f for f in findings_for(bundle, tmp_path)
               if f.rule == "consistency.tflops-vs-step-time")
    assert "reported 700.0 TFLOP/s/GPU" in hit.message
    implied = 2.17e16 * 256 / 512 / 20.03 / 1e12  # window median step 20.03 s
    assert f"the {implied:.1f} implied" in hit.message


def test_improvement_of_4pct_is_not_flagged(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.runs[0].times = honest_times(19.81 / 1.04, 11)
    assert "sanity.unexpected-improvement" not in rules_of(findings_for(bundle, tmp_path))


def test_one_window_outlier_is_not_too_many(tmp_path: Path) -> None:
    bundle = HonestBundle()
    run = bundle.runs[1]
    run.times = [round(t * 1.6, 2) if i == 40 else t
                 for i, t in enumerate(honest_times(run.base_step, 12, stall_at=None))]
    assert "statistics.window-outliers" not in rules_of(findings_for(bundle, tmp_path))


def test_drift_of_3pct_is_not_flagged(tmp_path: Path) -> None:
    bundle = HonestBundle()
    run = bundle.runs[1]
    run.times = [round(t * (1 + 0.03 * i / 49), 2) for i, t in enumerate(run.times)]
    assert "statistics.drift" not in rules_of(findings_for(bundle, tmp_path))


def test_few_incidents_on_a_small_fleet_is_plausible(tmp_path: Path) -> None:
    bundle = HonestBundle()  # 512 GPUs x 92 days: the floor expects 2.4 < 3
    bundle.incidents = [r for r in bundle.incident_rows() if r["planned"]]
    assert "statistics.too-few-incidents" not in rules_of(findings_for(bundle, tmp_path))


def test_init_of_29_minutes_is_within_budget(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.mlperf_files = {f"result_{i}.txt": mlperf_result(100 + i, init_minutes=29)
                           for i in range(3)}
    assert "mlperf.init-budget" not in rules_of(findings_for(bundle, tmp_path))


def test_driver_at_the_recipe_minimum_passes(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.system["driver"] = "535.129.03"
    fired = rules_of(findings_for(bundle, tmp_path))
    assert "software.below-recipe-floor" not in fired
    assert "software.driver-security-floor" in fired  # 535 branch minimum is 535.309.01


def test_coarse_print_resolution_does_not_look_too_clean(tmp_path: Path) -> None:
    """1.32 s steps printed to 0.01 s: constant window values are honest at that resolution."""
    bundle = HonestBundle()
    run = bundle.runs[1]
    run.times = [4.5, 1.5, *([1.32] * 48)]
    run.tflops = None
    bundle.runs = [run]
    fired = rules_of(findings_for(bundle, tmp_path))
    assert "statistics.low-variance" not in fired
    assert "statistics.constant-step-times" not in fired


def test_window_rule_follows_the_recipe_release(tmp_path: Path) -> None:
    """A v25.05 baseline averages iterations 11-44: missing 12 matters, missing 48 does not."""
    ref = FakeReference([{**row, "recipe_release": "v25.05.02"} for row in BASELINES])
    bundle = HonestBundle()
    ev = bundle.ingest(tmp_path)
    ev.steps = ev.steps.filter(~pl.col("iteration").is_in([12]) | (pl.col("run_id") != "runs[0]"))
    hits = [f for f in validate(ev, ref) if f.rule == "completeness.window-missing"]
    assert len(hits) == 1 and "11-44" in hits[0].message and "12" in hits[0].message


# --- the scorer's view ------------------------------------------------------------------------


def test_not_comparable_runs_names_only_comparability_errors(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.runs[0].gbs = 512                   # config mismatch: not comparable
    bundle.runs[1].times[40] = math.nan        # an error, but comparable
    findings = findings_for(bundle, tmp_path)
    assert not_comparable_runs(findings) == {"runs[0]"}
    assert runs_with_errors(findings) == {"runs[0]", "runs[1]"}


def test_validate_is_deterministic_and_sorted(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.runs[0].gbs = 512
    bundle.system["driver"] = "550.54.15"
    ev = bundle.ingest(tmp_path)
    first, second = validate(ev, FakeReference()), validate(ev, FakeReference())
    assert first == second
    order = {"error": 0, "warning": 1, "info": 2}
    assert [order[f.severity] for f in first] == sorted(order[f.severity] for f in first)


def test_unknown_gpu_and_empty_reference_are_findings_not_crashes(tmp_path: Path) -> None:
    ev = HonestBundle().ingest(tmp_path)
    findings = validate(ev, FakeReference(baselines=[]))
    assert {f.rule for f in findings if f.run_id} >= {"comparability.no-baseline"}


def test_summary_only_run_is_checked_against_the_peak(tmp_path: Path) -> None:
    ev = HonestBundle().ingest(tmp_path)
    ev.steps = ev.steps.filter(pl.col("run_id") != "runs[0]")
    ev.runs = ev.runs.with_columns(
        pl.when(pl.col("run_id") == "runs[0]").then(1200.0).otherwise(None)
        .alias("reported_tflops_per_gpu"),
        pl.when(pl.col("run_id") == "runs[0]").then(19.9).otherwise(None)
        .alias("reported_step_time_s"))
    fired = rules_of(validate(ev, FakeReference()))
    assert {"completeness.summary-only", "sanity.tflops-above-peak",
            "consistency.tflops-vs-step-time"} <= fired
    assert "completeness.no-steps" not in fired


# --- the real reference -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_reference() -> object:
    return load_reference("latest")


def test_honest_bundle_against_the_real_reference(real_reference: object, tmp_path: Path) -> None:
    findings = validate(HonestBundle().ingest(tmp_path), real_reference)  # type: ignore[arg-type]
    assert {f.severity for f in findings} <= {"info"}, [f.message for f in findings]
    assert not not_comparable_runs(findings)


def test_real_reference_flags_config_and_scale(real_reference: object, tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.runs[0].gbs = 512                      # the 512-GPU reference uses GBS 256
    bundle.runs[1].num_gpus = 384                 # no 405B FP8 H100 reference at 384 GPUs
    bundle.runs[1].gbs = 192
    findings = validate(bundle.ingest(tmp_path), real_reference)  # type: ignore[arg-type]
    by_rule = {f.rule: f for f in findings}
    assert "gbs 512 (reference 256)" in by_rule["comparability.config-mismatch"].message
    assert "384 GPUs" in by_rule["comparability.scale-mismatch"].message
    assert not_comparable_runs(findings) == {"runs[0]", "runs[1]"}


def test_real_reference_peak_and_flops(real_reference: object, tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.runs[0].times = honest_times(7.5, 11)  # 405B BF16 in 7.5 s: > 989 TFLOP/s/GPU
    fired = rules_of(validate(bundle.ingest(tmp_path), real_reference))  # type: ignore[arg-type]
    assert "sanity.throughput-above-peak" in fired


# --- CLI -------------------------------------------------------------------------------------


LEDGER = Ledger((Claim("a", "precision", "bf16", "contradicted", "cmax.toml runs[0].precision",
                       against=(Citation("training/a.log", 7, "fp8=hybrid (fp8)"),)),))


def _stub(monkeypatch: pytest.MonkeyPatch, findings: list[Finding]) -> None:
    import cmax.pipeline

    @contextmanager
    def load(path: str, *, commercial: object = None) -> Iterator[SimpleNamespace]:
        yield SimpleNamespace(findings=findings, case=SimpleNamespace(claims=LEDGER))

    monkeypatch.setattr(cmax.pipeline, "load", load)


ERR = Finding(rule="completeness.window-missing", severity="error", file="training/a.log",
              line=None, message="run a: iterations 40-44 ... missing", fix="Run it again.",
              run_id="a")
WARN = Finding(rule="statistics.drift", severity="warning", file="training/b.log", line=12,
               message="run b: step times rise 7.0%", fix="Check clocks.", run_id="b")
INFO = Finding(rule="statistics.stall", severity="info", file="training/b.log", line=24,
               message="run b: iteration 22 took 1.8x", fix="Nothing.", run_id="b")


def test_cli_text_groups_by_severity_and_exits_1_on_errors(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch, [ERR, WARN, INFO])
    assert main(["validate", "bundle-dir"]) == 1
    out = capsys.readouterr().out
    assert out.index("Errors (1)") < out.index("Warnings (1)") < out.index("Info (1)")
    assert "training/b.log:12" in out and "fix: Run it again." in out
    assert out.rstrip().endswith("1 error(s), 1 warning(s), 1 info — bundle-dir")
    # the claims ledger comes first, each claim with its status and the statement quoted
    assert out.index("Claims") < out.index("Errors (1)")
    assert "contradicted" in out and "training/a.log:7: 'fp8=hybrid (fp8)'" in out


def test_cli_json_shape_and_exit_0_without_errors(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch, [WARN, INFO])
    assert main(["validate", "bundle-dir", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"] == {"error": 0, "warning": 1, "info": 1}
    assert data["findings"][0] == {"rule": "statistics.drift", "severity": "warning",
                                   "file": "training/b.log", "line": 12,
                                   "message": "run b: step times rise 7.0%",
                                   "fix": "Check clocks."}
    assert data["claims"] == [{"subject": "a", "kind": "precision", "value": "bf16",
                               "status": "contradicted", "source": "cmax.toml runs[0].precision",
                               "support": [], "against": [{"file": "training/a.log", "line": 7,
                                                           "text": "fp8=hybrid (fp8)",
                                                           "where": None}], "note": ""}]


def test_cli_missing_bundle_is_exit_2_one_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope"), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err and "bundle not found" in captured.err


def test_cli_without_bundle_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 2
    assert "missing BUNDLE" in capsys.readouterr().err


def test_cli_rules_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--rules"]) == 0
    out = capsys.readouterr().out
    assert all(rule_id in out for rule_id in RULES)
    assert main(["validate", "--rules", "--format", "json"]) == 0
    rules = json.loads(capsys.readouterr().out)["rules"]
    assert {r["id"] for r in rules} == set(RULES)
    assert all(r["severity"] in ("error", "warning", "info") and r["fix"] for r in rules)
    by_id = {r["id"]: r for r in rules}
    assert by_id["fabrication.low-jitter"]["effect"] == "unverified"
    assert by_id["crossfile.copied-sweep"]["subject"] == "file"


# --- helpers and docs -------------------------------------------------------------------------


def test_docs_rules_md_is_in_step_with_the_registry() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert render(text) == text, "regenerate: python -m cmax.validate.docgen docs/rules.md"
    for rule_id, rule in RULES.items():
        assert f"#### `{rule_id}` — {rule.severity}" in text


def test_the_cross_file_catalogue_lists_every_cross_file_rule() -> None:
    """docs/rules.md's "Cross-file rules" table gives each crossfile.* and fabrication.* rule
    (and the other rules it lists) the attack it answers and its control: a new rule of those
    families needs its row, and a row naming no registered rule is stale."""
    text = DOCS.read_text(encoding="utf-8")
    head = "## Cross-file rules: the attack each answers and its control"
    table = text[text.index(head):].split("\n### ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z]+\.[a-z0-9-]+)`", table, flags=re.M))
    families = ("crossfile.", "fabrication.")
    assert not sorted(r for r in RULES if r.startswith(families) and r not in listed)
    assert not sorted(listed - set(RULES)), "a row names a rule that is not registered"


def test_every_rule_is_documented_well() -> None:
    for rule in RULES.values():
        assert rule.title and rule.explanation.endswith((".", ")")) and rule.fix
        assert len(rule.explanation) > 60, rule.id


def test_print_resolution_and_fmt_iters() -> None:
    assert print_resolution([12.34, 12.3, 13.0]) == 0.01
    assert print_resolution([10121.4 / 1000, 10.1]) == 0.0001
    assert fmt_iters([40, 41, 42, 44, 3]) == "3, 40-42, 44"


def test_robust_statistics() -> None:
    values = [10.0, 10.1, 9.9, 10.0, 30.0]
    assert robust_sigma(values, 10.0, 0.01) == pytest.approx(1.4826 * 0.1)
    assert theil_sen_slope([0, 1, 2, 3, 4], [1.0, 2.0, 3.0, 100.0, 5.0]) == pytest.approx(1.0)


def test_parse_version() -> None:
    assert parse_version("535.129.03") == (535, 129, 3)
    assert parse_version("v2.27.7+cuda12.9") == (2, 27, 7)
    assert parse_version("latest") is None


def test_run_fixture_log_is_nemo2_format() -> None:
    """The fixture writes the DGXC NeMo 2 line format, ready for real ingest."""
    text = RunFx("llama3.1-405b", "fp8", 13.05, 256, 8, 8, 2, 8).log_text()
    # its two header lines are the ones NeMo's exp_manager and Lightning print
    assert "Experiments will be logged at /results/pretrain_" in text.splitlines()[0]
    assert text.splitlines()[1] == "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/512"
    line = text.splitlines()[42]
    assert line.startswith("Training epoch 0, iteration 40/49 | lr: ")
    assert "| train_step_timing in s: " in line and "| TFLOPS_per_GPU: " in line


def test_runs_are_paired_with_their_manifest_entry(tmp_path: Path) -> None:
    """By log path, by a file inside a declared log folder, or by ingest's runs[i] id."""
    bundle = HonestBundle()
    bundle.runs[0].spec["log"] = "training/exp1"  # a folder holding the job's one log
    bundle.skip_files = ("training/exp1",)
    bundle.extra_files["training/exp1/log-exp1_42_1.out"] = bundle.runs[0].log_text()
    ev = bundle.ingest(tmp_path)
    assert ev.runs["source_file"][0] == "training/exp1/log-exp1_42_1.out"
    moved = pl.when(pl.col("run_id") == "runs[1]").then(pl.lit("elsewhere/renamed.log")
                                                        ).otherwise(pl.col("source_file"))
    ev.runs = ev.runs.with_columns(moved.alias("source_file"))
    findings = validate(ev, FakeReference())
    assert {f.severity for f in findings} <= {"info"}, [f.message for f in findings]
    assert "completeness.no-steps" not in rules_of(findings)
