"""Drift rules on hand-made histories: every expected number is worked out in the test."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.history.discover import RunRef, parse_run_timestamp
from cmax.history.drift import (
    DriftItem,
    DriftPolicy,
    Point,
    RunPoint,
    add_months,
    best_sustained,
    detect_drift,
    run_to_run_sigma_pct,
)
from cmax.history.store import DATASET_SCHEMA, frame_from_rows, rows_for_run
from tests.history.history_fakes import make_card


def history(cluster_runs: dict[str, list[tuple[str, dict[str, Any]]]]) -> pl.DataFrame:
    """A history frame straight from Scorecards: {cluster: [(run_dir, card kwargs)]}."""
    frames = []
    for cluster, runs in cluster_runs.items():
        for run_dir, spec in runs:
            stamp = parse_run_timestamp(run_dir)
            assert stamp is not None
            ref = RunRef(cluster, run_dir, stamp, Path("/x"), digest=run_dir * 4)
            frames.append(frame_from_rows(rows_for_run(ref, make_card(cluster=cluster, **spec)),
                                          cluster))
    return pl.concat(frames).select(list(DATASET_SCHEMA))


def drift(cluster_runs: dict[str, list[tuple[str, dict[str, Any]]]], as_of: str,
          **policy: Any) -> list[DriftItem]:
    items, _ = detect_drift(history(cluster_runs), dt.date.fromisoformat(as_of),
                            DriftPolicy.load().with_(**policy))
    return items


def kinds(items: list[DriftItem]) -> list[tuple[str, str | None]]:
    return [(i.kind, i.workload) for i in items]


def wl(ratio: float, lo: float | None, hi: float | None, **extra: Any) -> dict[str, Any]:
    return {"workloads": [["llama3.1-70b", "fp8", 512, ratio, lo, hi]], **extra}


LABEL = "llama3.1-70b fp8 512 GPUs"


def test_regression_beyond_noise_against_the_previous_run() -> None:
    items = drift({"c1": [("2026-01-01", wl(1.00, 0.99, 1.01)),
                          ("2026-02-01", wl(0.95, 0.94, 0.96))]}, "2026-02-01")
    assert kinds(items) == [("regression_vs_previous", LABEL)]
    item = items[0]
    assert (item.before, item.after, item.change_pct) == (1.00, 0.95, -5.0)
    assert item.metric == "ratio" and item.compared_with == "2026-01-01"
    assert "0.940–0.960 lies below 0.990–1.010" in item.message
    # the run the newer figure comes from is named: over months, several runs are judged at once
    assert "ratio 0.950 in run 2026-02-01 vs 1.000 in previous run 2026-01-01" in item.message


def test_overlapping_intervals_are_noise() -> None:
    # -2%, but 0.96-1.00 overlaps 0.97-1.03
    items = drift({"c1": [("2026-01-01", wl(1.00, 0.97, 1.03)),
                          ("2026-02-01", wl(0.98, 0.96, 1.00))]}, "2026-02-01")
    assert items == []


def test_tiny_drop_with_tight_intervals_is_below_the_practical_floor() -> None:
    # disjoint intervals but only -0.5% (< min_change_pct = 1%)
    items = drift({"c1": [("2026-01-01", wl(1.000, 0.999, 1.001)),
                          ("2026-02-01", wl(0.995, 0.994, 0.996))]}, "2026-02-01")
    assert items == []


def test_regression_against_the_best_run_when_it_is_not_the_previous_one() -> None:
    runs = [("2026-01-01", wl(1.05, 1.04, 1.06)), ("2026-02-01", wl(1.00, 0.99, 1.01)),
            ("2026-03-01", wl(0.995, 0.985, 1.005))]
    items = drift({"c1": runs}, "2026-03-01")
    # vs previous: 0.985-1.005 overlaps 0.99-1.01 -> noise; vs best: (0.995-1.05)/1.05 = -5.238%
    assert kinds(items) == [("regression_vs_best", LABEL)]
    assert items[0].change_pct == -5.24 and items[0].compared_with == "2026-01-01"


def test_best_equal_to_previous_is_reported_once() -> None:
    items = drift({"c1": [("2026-01-01", wl(0.90, 0.89, 0.91)),
                          ("2026-02-01", wl(1.00, 0.99, 1.01)),
                          ("2026-03-01", wl(0.90, 0.89, 0.91))]}, "2026-03-01")
    assert kinds(items) == [("regression_vs_previous", LABEL)]


def test_vs_best_is_not_repeated_when_the_previous_run_matched_the_best() -> None:
    # Jan best 1.00, Feb 0.999 (noise), Mar 0.90: one item, against the previous run
    items = drift({"c1": [("2026-01-01", wl(1.00, 0.99, 1.01)),
                          ("2026-02-01", wl(0.999, 0.989, 1.009)),
                          ("2026-03-01", wl(0.90, 0.89, 0.91))]}, "2026-03-01")
    assert kinds(items) == [("regression_vs_previous", LABEL)]


def test_a_slide_reports_both_previous_and_best() -> None:
    # Jan 1.00, Feb 0.95 (already below best), Mar 0.90
    items = drift({"c1": [("2026-01-01", wl(1.00, 0.99, 1.01)),
                          ("2026-02-01", wl(0.95, 0.94, 0.96)),
                          ("2026-03-01", wl(0.90, 0.89, 0.91))]}, "2026-03-01")
    assert kinds(items) == [("regression_vs_previous", LABEL), ("regression_vs_best", LABEL)]
    assert [i.change_pct for i in items] == [-5.26, -10.0]


def test_a_regression_that_recovered_is_not_reported() -> None:
    items = drift({"c1": [("2026-01-01", wl(1.00, 0.99, 1.01)),
                          ("2026-02-01", wl(0.90, 0.89, 0.91)),
                          ("2026-03-01", wl(1.00, 0.99, 1.01))]}, "2026-03-01")
    assert items == []


def test_without_intervals_the_five_percent_tolerance_applies() -> None:
    def net(busbw: float) -> dict[str, Any]:
        return {"network": [("all_reduce_perf", 16, busbw, None)]}

    items = drift({"c1": [("2026-01-01", net(400.0)), ("2026-02-01", net(370.0))]},
                  "2026-02-01")
    assert kinds(items) == [("regression_vs_previous", "nccl all_reduce 16n")]
    assert items[0].metric == "busbw_gbps" and items[0].change_pct == -7.5
    assert drift({"c1": [("2026-01-01", net(400.0)), ("2026-02-01", net(385.0))]},
                 "2026-02-01") == []  # -3.75%


def test_a_new_baseline_is_compared_on_throughput_not_ratio() -> None:
    # the reference got 11.1% faster; the cluster did not change: 1000 tokens/s both times
    before = {"workloads": [["llama3.1-70b", "fp8", 512, 1.00, 0.99, 1.01, "old", 1000.0]]}
    after = {"workloads": [["llama3.1-70b", "fp8", 512, 0.90, 0.89, 0.91, "new", 1111.11]]}
    items = drift({"c1": [("2026-01-01", before), ("2026-02-01", after)]}, "2026-02-01")
    assert items == []
    slower = {"workloads": [["llama3.1-70b", "fp8", 512, 0.80, 0.79, 0.81, "new", 1111.11]]}
    items = drift({"c1": [("2026-01-01", before), ("2026-02-01", slower)]}, "2026-02-01")
    assert items[0].metric == "tokens_per_s_per_gpu"
    assert items[0].before == 1000.0 and items[0].after == pytest.approx(888.888)
    assert items[0].change_pct == -11.11


def test_tier_changes() -> None:
    items = drift({"c1": [("2026-01-01", {"tier": "Gold"}), ("2026-02-01", {"tier": "Bronze"})],
                   "c2": [("2026-01-01", {"tier": "Silver"}), ("2026-02-01", {"tier": "Gold"})]},
                  "2026-02-01")
    assert [(i.cluster, i.kind, i.before, i.after, i.severity) for i in items] == [
        ("c1", "tier_down", "Gold", "Bronze", "problem"),
        ("c2", "tier_up", "Silver", "Gold", "info")]


def test_new_audit_fails_only() -> None:
    items = drift({"c1": [("2026-01-01", {"audit_fail": ["acs"]}),
                          ("2026-02-01", {}),  # no audit in this run: skipped over
                          ("2026-03-01", {"audit_fail": ["acs", "vm_iommu", "bmc"]})]},
                  "2026-03-01")
    assert kinds(items) == [("new_audit_fail", "bmc"), ("new_audit_fail", "vm_iommu")]
    assert items[0].compared_with == "2026-01-01" and items[0].after == "FAIL"


def test_first_audited_run_reports_every_fail_but_not_as_new() -> None:
    items = drift({"c1": [("2026-01-01", {"audit_fail": ["acs"]})]}, "2026-01-01")
    assert kinds(items) == [("audit_fail", "acs")]
    assert "present since the first audited run" in items[0].message
    assert "new" not in items[0].message


def test_add_months_clamps_to_month_end() -> None:
    assert add_months(dt.date(2024, 2, 29), 12) == dt.date(2025, 2, 28)
    assert add_months(dt.date(2025, 10, 31), 4) == dt.date(2026, 2, 28)
    assert add_months(dt.date(2025, 11, 15), 12) == dt.date(2026, 11, 15)


@pytest.mark.parametrize(("as_of", "status", "days_left"), [
    ("2026-08-15", "valid", 61),
    ("2026-08-16", "expiring", 60),
    ("2026-10-14", "expiring", 1),
    ("2026-10-15", "expired", 0),
])
def test_exemplar_validity_is_twelve_months_from_the_newest_pass(
        as_of: str, status: str, days_left: int) -> None:
    runs = [("2025-09-01", {"exemplar_pass": True}), ("2025-10-15", {"exemplar_pass": True}),
            ("2026-01-01", {"exemplar_pass": False})]
    # months after the last run: leave "audits stopped arriving" out of this rule's test
    quiet = DriftPolicy.load().with_(stale_after_days=1000)
    items, statuses = detect_drift(history({"c1": runs}), dt.date.fromisoformat(as_of), quiet)
    st = statuses[0]
    assert (st.status, st.days_left, st.expires_on) == (status, days_left, dt.date(2026, 10, 15))
    assert st.passed_run == "2025-10-15"
    expected = {"valid": [], "expiring": ["exemplar_expiring"], "expired": ["exemplar_expired"]}
    assert [i.kind for i in items] == expected[status]


def test_never_passed_is_not_an_expiry() -> None:
    items, statuses = detect_drift(history({"c1": [("2026-01-01", {"exemplar_pass": False})]}),
                                   dt.date(2027, 1, 1), DriftPolicy.load())
    assert [i.kind for i in items] == ["audits_stopped"] and statuses[0].status == "never"


def test_sla_breach_of_the_newest_period() -> None:
    runs = [("2026-02-01", {"sla": (99.9, 99.0, False, 25.0),
                            "period": ("2026-01-01", "2026-01-31")}),
            ("2026-03-01", {"sla": (99.9, 99.5, False, 10.0),
                            "period": ("2026-02-01", "2026-02-28")})]
    items = drift({"c1": runs}, "2026-03-01")
    assert len(items) == 1
    item = items[0]
    assert (item.kind, item.before, item.after) == ("sla_breach", 99.9, 99.5)
    assert item.change_pct == round((99.5 - 99.9) / 99.9 * 100, 4) == -0.4004
    assert "2026-02-01–2026-02-28" in item.message and "10% credit" in item.message
    runs.append(("2026-04-01", {"sla": (99.9, 99.95, True, 0.0),
                                "period": ("2026-03-01", "2026-03-31")}))
    assert drift({"c1": runs}, "2026-04-01") == []


def test_one_sla_breach_per_period_however_many_runs_carry_it() -> None:
    """Fifteen runs judged together, all over the same quarter, were 15 breach rows."""
    runs = [(f"2026-10-{day:02d}", {"sla": (99.9, 99.0, False, 25.0),
                                    "period": ("2026-07-01", "2026-09-30")})
            for day in range(1, 16)]
    h = history({"c1": runs})
    items, _ = detect_drift(h, dt.date(2026, 10, 15), DriftPolicy.load(),
                            judge=set(h["run_key"].to_list()))
    breaches = [i for i in items if i.kind == "sla_breach"]
    assert len(breaches) == 1 and breaches[0].run == "2026-10-15"
    # a second period is a second breach
    runs.append(("2026-11-01", {"sla": (99.9, 99.5, False, 10.0),
                                "period": ("2026-10-01", "2026-10-31")}))
    h = history({"c1": runs})
    items, _ = detect_drift(h, dt.date(2026, 11, 1), DriftPolicy.load(),
                            judge=set(h["run_key"].to_list()))
    assert len([i for i in items if i.kind == "sla_breach"]) == 2


def test_sla_assessed_per_node_month() -> None:
    # the average is above 99.9% but 6 of 192 node-months were not; the worst was 99.503%
    runs = [("2026-10-01", {"sla": (99.9, 99.98898, False, 0.3125, 99.503435, 6, 192),
                            "period": ("2026-07-01", "2026-09-30")})]
    items = drift({"c1": runs}, "2026-10-01")
    item = items[0]
    assert (item.before, item.after, item.metric) == (99.9, 99.503435,
                                                      "worst_node_month_uptime_pct")
    assert item.change_pct == round((99.503435 - 99.9) / 99.9 * 100, 4) == -0.397
    assert item.message.startswith("6 of 192 node-months below the contracted 99.9% uptime")
    assert "worst 99.503%, average 99.989%" in item.message


def test_as_of_ignores_later_runs() -> None:
    runs = [("2026-01-01", wl(1.00, 0.99, 1.01)), ("2026-02-01", wl(0.90, 0.89, 0.91))]
    assert drift({"c1": runs}, "2026-01-31") == []
    assert len(drift({"c1": runs}, "2026-02-01")) == 1


def test_run_to_run_sigma_from_successive_changes() -> None:
    # changes +1%, -0.990%, +2%, -1.961%: sd 1.8096 -> sigma = 1.8096 / sqrt(2) = 1.2796
    assert run_to_run_sigma_pct([100, 101, 100, 102, 100]) == pytest.approx(1.2796, abs=1e-3)
    assert run_to_run_sigma_pct([100, 101]) is None


def test_a_past_incident_is_not_taken_for_noise() -> None:
    # +/-0.5% jitter, then one run 20% down that recovered: the two big jumps are dropped
    values = [100, 100.5, 100, 100.5, 80, 100.5, 100, 100.5, 100]
    sigma = run_to_run_sigma_pct(values)
    assert sigma is not None and sigma < 0.6
    assert run_to_run_sigma_pct([100, 100, 100, 100]) == 0.0


def test_a_noisy_cluster_needs_a_bigger_drop_than_a_quiet_one() -> None:
    quiet = [(f"2026-{m:02d}-01", wl(1.00, 0.995, 1.005)) for m in range(1, 6)]
    noisy = [(f"2026-{m:02d}-01", wl(r, r - 0.005, r + 0.005))
             for m, r in zip(range(1, 6), (1.00, 1.03, 0.99, 1.03, 1.00), strict=True)]
    drop = ("2026-06-01", wl(0.96, 0.955, 0.965))
    # quiet: sigma 0 -> -4% beyond the CIs counts; noisy: changes +3, -3.9, +4.0, -2.9% give
    # sigma = sd / sqrt(2) = 2.85%, so 3 sigma is 8.6% and -4% is within its own noise
    assert kinds(drift({"c1": [*quiet, drop]}, "2026-06-01")) == [
        ("regression_vs_previous", LABEL)]
    assert drift({"c1": [*noisy, drop]}, "2026-06-01") == []
    big = ("2026-06-01", wl(0.85, 0.845, 0.855))
    items = drift({"c1": [*noisy, big]}, "2026-06-01")
    assert kinds(items) == [("regression_vs_previous", LABEL)]
    assert items[0].noise_pct is not None and "run-to-run noise" in items[0].message


def test_best_is_the_best_sustained_level_not_a_lucky_spike() -> None:
    def rp(day: int, ratio: float) -> tuple[RunPoint, Point]:
        key = ("workload", "w", "fp8", 8, "")
        run = RunPoint("c1", f"2026-01-{day:02d}",
                       dt.datetime(2026, 1, day, tzinfo=dt.UTC), {})
        return run, Point(key, ratio, None, None, None, None, None)

    history = [rp(1, 1.00), rp(2, 1.10), rp(3, 1.00), rp(4, 1.01), rp(5, 1.00)]
    # medians of 3: (1.00 1.10 1.00) 1.00, (1.10 1.00 1.01) 1.01, (1.00 1.01 1.00) 1.00
    run, point = best_sustained(history)
    assert run.run_dir == "2026-01-04" and point.ratio == 1.01
    assert best_sustained(history[:2])[0].run_dir == "2026-01-02"


def test_policy_thresholds_are_tunable() -> None:
    runs = [("2026-01-01", wl(1.00, 0.99, 1.01)), ("2026-02-01", wl(0.97, 0.96, 0.98))]
    assert len(drift({"c1": runs}, "2026-02-01")) == 1
    assert drift({"c1": runs}, "2026-02-01", min_change_pct=5.0) == []


def test_a_newer_run_failing_the_bar_ends_exemplar_validity() -> None:
    passing = {"exemplar_pass": True, **wl(1.00, 0.99, 1.01)}
    failing = {"exemplar_pass": False, **wl(0.90, 0.89, 0.91)}
    runs = [("2026-06-14", passing), ("2026-08-01", failing)]
    items, statuses = detect_drift(history({"c1": runs}), dt.date(2026, 8, 1),
                                   DriftPolicy.load())
    st = statuses[0]
    # not "valid until 2027-06-14": the newest run is below the bar
    assert (st.status, st.passed_run, st.expires_on, st.ended_by) == (
        "lapsed", "2026-06-14", dt.date(2026, 8, 1), "2026-08-01")
    lapsed = [i for i in items if i.kind == "exemplar_lapsed"]
    assert [(i.run, i.compared_with, i.after) for i in lapsed] == [
        ("2026-08-01", "2026-06-14", "2026-08-01")]
    assert "does not meet the Exemplar suite" in lapsed[0].message
    # every report (the audit's text, the fleet and cluster trend pages) says it in these words
    assert st.until == "ended 2026-08-01 by failing run 2026-08-01"
    # a pass after the failure renews it
    runs.append(("2026-09-01", passing))
    _, statuses = detect_drift(history({"c1": runs}), dt.date(2026, 9, 1), DriftPolicy.load())
    assert (statuses[0].status, statuses[0].expires_on) == ("valid", dt.date(2027, 9, 1))


def test_the_drift_policy_has_one_home() -> None:
    shipped = DriftPolicy.load()
    assert (shipped.tolerance_pct, shipped.stale_after_days) == (5.0, 45)
    with pytest.raises(TypeError):  # no defaults in code to drift from the file
        DriftPolicy()  # type: ignore[call-arg]
    assert shipped.with_(stale_after_days=10).stale_after_days == 10


@pytest.mark.parametrize(("text", "needle"), [
    ("min_change_pct = 1.0\n", "drift policy key 'tolerance_pct' is missing"),
    ("", "drift policy key 'min_change_pct' is missing"),
])
def test_a_bad_policy_file_is_one_clear_error(tmp_path: Path, text: str, needle: str) -> None:
    from cmax.errors import CmaxError
    from cmax.resources import data_dir

    path = tmp_path / "drift.toml"
    path.write_text(text)
    with pytest.raises(CmaxError, match=needle):
        DriftPolicy.load(path)
    good = (data_dir("reference") / "drift.toml").read_text()
    path.write_text(good.replace("noise_min_runs = 3", "noise_min_runs = 2.5"))
    with pytest.raises(CmaxError, match=r"'noise_min_runs' is 2\.5"):
        DriftPolicy.load(path)
    path.write_text(good + "\nstale_days = 3\n")
    with pytest.raises(CmaxError, match="unknown key 'stale_days'"):
        DriftPolicy.load(path)


def test_an_expired_validation_is_not_valid_until_a_past_day() -> None:
    from cmax.history.drift import ExemplarStatus

    def status(kind: str) -> ExemplarStatus:
        return ExemplarStatus(cluster="c1", status=kind,
                              passed_on=dt.date(2025, 5, 1), expires_on=dt.date(2026, 5, 1))

    assert status("expired").until == "expired 2026-05-01"
    assert status("valid").until == "valid until 2026-05-01"
    assert status("expiring").until == "valid until 2026-05-01"
    assert ExemplarStatus(cluster="c1", status="never").until == "–"


@pytest.mark.parametrize("states", [{}, {"precision": "fp8"}])
def test_a_withheld_run_is_no_point_of_the_trend(states: dict[str, str]) -> None:
    """A run whose pass its judgement withholds (the fp8 log declared bf16 at 152.7 %, or a
    run of the declared identity an error bears on) is compared with nothing: the next run
    of the workload is judged against the last run whose ratio counts."""
    runs = [("2026-01-01", wl(1.00, 0.99, 1.01)),
            ("2026-02-01", {**wl(1.527, 1.52, 1.53), "withheld": {0: states}}),
            ("2026-03-01", wl(0.90, 0.89, 0.91))]
    items = drift({"c1": runs}, "2026-03-01")
    assert [(i.kind, i.workload, i.before, i.compared_with) for i in items] == [
        ("regression_vs_previous", LABEL, 1.00, "2026-01-01")]
    # the withheld run itself, newest: its ratio is compared with nothing, and drift says so
    items = drift({"c1": runs[:2]}, "2026-02-01")
    assert [(i.kind, i.severity, i.before, i.after, i.run, i.compared_with)
            for i in items] == [
        ("not_counted", "problem", 1.00,
         "withheld (identity.precision, sanity.too-good-to-be-true)", "2026-02-01",
         "2026-01-01")]


def test_a_run_with_only_withheld_workloads_neither_ends_nor_renews_validity() -> None:
    """The Exemplar suite is not met on a run whose only run is withheld, but that run's
    ratio does not count: it is no evidence the cluster is below the bar."""
    passing = {"exemplar_pass": True, **wl(1.00, 0.99, 1.01)}
    held = {"exemplar_pass": False, **wl(1.527, 1.52, 1.53), "withheld": {0: {}}}
    _, statuses = detect_drift(history({"c1": [("2026-06-14", passing),
                                                ("2026-08-01", held)]}),
                               dt.date(2026, 8, 1), DriftPolicy.load())
    assert (statuses[0].status, statuses[0].passed_run, statuses[0].expires_on) == (
        "valid", "2026-06-14", dt.date(2027, 6, 14))


HELD_AFTER = "withheld (identity.precision, sanity.too-good-to-be-true)"


def test_a_withheld_newest_run_is_a_drift_item_naming_why_and_the_last_counted_run() -> None:
    """A buyer watching drift sees the newest evidence stop earning its figure: the run is
    not compared, and the item says why and since when the workload's ratio last counted."""
    runs = [("2026-01-01", wl(1.00, 0.99, 1.01)), ("2026-02-01", wl(0.99, 0.98, 1.00)),
            ("2026-03-01", {**wl(0.97, 0.96, 0.98), "withheld": {0: {}}})]
    items = drift({"c1": runs}, "2026-03-01")
    assert len(items) == 1
    item = items[0]
    assert (item.kind, item.workload, item.before, item.after, item.compared_with) == (
        "not_counted", LABEL, 0.99, HELD_AFTER, "2026-02-01")
    assert item.message == (
        f"{LABEL}: run 2026-03-01 is {HELD_AFTER}: its ratio 0.970 does not count, so it was "
        "not compared; the last run whose ratio counts is 2026-02-01 (ratio 0.990)")


def test_a_log_of_another_precision_is_held_against_the_declared_workload() -> None:
    """The fp8 log declared bf16 is a series of its own, with no counted past: the item
    names it and the last run whose ratio of the declared workload counts."""
    runs = [("2026-01-01", wl(1.00, 0.99, 1.01)),
            ("2026-02-01", {**wl(1.527, 1.52, 1.53), "withheld": {0: {"precision": "fp8"}}})]
    (item,) = drift({"c1": runs}, "2026-02-01")
    assert item.workload == f"{LABEL} (log states precision=fp8)"
    assert (item.kind, item.compared_with, item.before) == ("not_counted", "2026-01-01", 1.00)
    assert item.message.endswith(f"the last run whose ratio of {LABEL} counts is 2026-01-01 "
                                 "(ratio 1.000)")
    # beside an honest run of the declared workload in the same run: that one counted there
    both = {"workloads": [["llama3.1-70b", "fp8", 512, 1.527, 1.52, 1.53],
                          ["llama3.1-70b", "fp8", 512, 0.99, 0.98, 1.00]],
            "withheld": {0: {"precision": "bf16"}}}
    (item,) = drift({"c1": [runs[0], ("2026-02-01", both)]}, "2026-02-01")
    assert (item.kind, item.compared_with, item.before) == ("not_counted", "2026-02-01", 0.99)
    assert item.message.endswith(f"the same run's ratio of {LABEL} counts (0.990)")


def test_a_first_run_that_does_not_count_has_nothing_to_be_compared_with() -> None:
    (item,) = drift({"c1": [("2026-01-01", {**wl(0.97, 0.96, 0.98),
                                             "withheld": {0: {}}})]}, "2026-01-01")
    assert (item.kind, item.before, item.compared_with) == ("not_counted", None, None)
    assert item.message.endswith("so it was not compared; no earlier run of it counts")


def test_an_unverified_run_and_a_row_recorded_before_its_errors_were() -> None:
    """Unverified (a declared identity only cmax.toml vouches for) reads as its verdict; a
    withheld row recorded before the history kept errors says they were not recorded."""
    frame = history({"c1": [("2026-01-01", wl(1.00, 0.99, 1.01)),
                            ("2026-02-01", wl(0.99, 0.98, 1.00))]})
    newest = (pl.col("run_dir") == "2026-02-01") & (pl.col("row_kind") == "workload")

    def judged(**columns: Any) -> list[DriftItem]:
        changed = frame.with_columns(
            pl.when(newest).then(pl.lit(value, frame.schema[name])).otherwise(pl.col(name))
            .alias(name) for name, value in columns.items())
        return detect_drift(changed, dt.date(2026, 2, 1), DriftPolicy.load())[0]

    assert judged() == []  # the control: both runs count, no drop beyond noise
    (item,) = judged(verdict="unverified", counted=False)
    assert (item.kind, item.after) == ("not_counted", "not verified")
    (item,) = judged(verdict="withheld", counted=False, validation_errors=None)
    assert item.after == "withheld (its errors were not recorded)"
