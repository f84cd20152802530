"""run_audit over a runs root with a fake scorer: new runs only, idempotent, unusable runs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.errors import CmaxError
from cmax.history import HISTORY_DIRNAME, HistoryStore, run_audit
from cmax.scorecard import Scorecard
from tests.history.history_fakes import fake_assess, tree_bytes, write_run


def wl(ratio: float, lo: float, hi: float) -> list[list[Any]]:
    return [["llama3.1-70b", "fp8", 512, ratio, lo, hi]]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "runs"
    write_run(r, "alpha", "20260101-090000", workloads=wl(1.00, 0.99, 1.01), tier="Gold")
    write_run(r, "alpha", "20260201-090000", workloads=wl(0.94, 0.93, 0.95), tier="Silver",
              audit_fail=["acs_disabled"])
    write_run(r, "beta", "20260115-120000-000001", workloads=wl(1.01, 1.00, 1.02),
              sla=[99.9, 99.95, True, 0.0], period=["2025-12-01", "2025-12-31"])
    return r


def test_first_audit_scores_everything_and_finds_the_drift(root: Path) -> None:
    result = run_audit(root, assess=fake_assess)
    assert result.history_path == str(root / HISTORY_DIRNAME)
    assert [(r.cluster, r.run_dir) for r in result.scored] == [
        ("alpha", "20260101-090000"), ("alpha", "20260201-090000"),
        ("beta", "20260115-120000-000001")]
    assert result.as_of == dt.date(2026, 2, 1)
    assert [(i.cluster, i.kind) for i in result.items] == [
        ("alpha", "regression_vs_previous"), ("alpha", "tier_down"),
        ("alpha", "audit_fail")]  # the first audited run: present from the start, not new
    assert result.exit_code == 1
    data = result.to_json()
    assert data["runs"] == {"found": 3, "scored": 3, "already_recorded": 0, "unusable": 0,
                            "in_history": 3, "clusters_in_history": 2}
    first = data["items"][0]
    assert {k: first[k] for k in ("cluster", "kind", "workload", "before", "after",
                                  "change_pct")} == {
        "cluster": "alpha", "kind": "regression_vs_previous",
        "workload": "llama3.1-70b fp8 512 GPUs", "before": 1.0, "after": 0.94,
        "change_pct": -6.0}


def test_parallel_scoring_records_the_same_history(root: Path, tmp_path: Path) -> None:
    serial = run_audit(root, tmp_path / "serial", assess=fake_assess, workers=1)
    parallel = run_audit(root, tmp_path / "parallel", assess=fake_assess, workers=2)
    assert HistoryStore(tmp_path / "serial").read().equals(
        HistoryStore(tmp_path / "parallel").read())
    assert parallel.items == serial.items


def test_second_audit_changes_nothing(root: Path) -> None:
    first = run_audit(root, assess=fake_assess)
    before = tree_bytes(root / HISTORY_DIRNAME)

    def must_not_score(path: Path) -> Scorecard:
        raise AssertionError(f"re-scored {path}")

    second = run_audit(root, assess=must_not_score)
    assert tree_bytes(root / HISTORY_DIRNAME) == before
    assert second.scored == [] and second.already_recorded == 3
    assert second.items == first.items and second.exit_code == first.exit_code


def test_a_rerun_with_nothing_new_reports_the_same_standing(root: Path) -> None:
    """Drift found in a run older than the newest (February's regression, judged when it was
    recorded) is still the standing when nothing new has arrived: a rerun listed 6 drift
    items the first time and 2 the next, judging only each cluster's newest run."""
    write_run(root, "alpha", "20260301-090000", workloads=wl(0.95, 0.94, 0.96), tier="Silver",
              audit_fail=["acs_disabled"])
    first = run_audit(root, assess=fake_assess)
    assert ("alpha", "tier_down") in [(i.cluster, i.kind) for i in first.items]
    second = run_audit(root, assess=fake_assess)
    assert second.scored == []
    assert second.items == first.items and second.exit_code == first.exit_code == 1


def test_only_the_new_run_is_scored_and_it_moves_the_drift(root: Path) -> None:
    run_audit(root, assess=fake_assess)
    write_run(root, "alpha", "20260301-090000", workloads=wl(1.00, 0.99, 1.01), tier="Silver",
              audit_fail=["acs_disabled"])
    seen: list[Path] = []

    def counting(path: Path) -> Scorecard:
        seen.append(path)
        return fake_assess(path)

    result = run_audit(root, assess=counting)
    assert seen == [root / "alpha" / "20260301-090000"]
    assert result.as_of == dt.date(2026, 3, 1)
    # recovered to 1.00; the best run (Jan) had the same ratio; tier unchanged; FAIL not new
    assert result.items == [] and result.exit_code == 0


def test_history_elsewhere_and_as_of(root: Path, tmp_path: Path) -> None:
    result = run_audit(root, tmp_path / "hist", assess=fake_assess, as_of=dt.date(2026, 1, 20))
    assert (tmp_path / "hist").is_dir() and not (root / HISTORY_DIRNAME).exists()
    assert result.as_of == dt.date(2026, 1, 20)
    assert result.items == []  # February's run is after as_of


def test_a_history_inside_the_root_is_not_taken_for_a_cluster(root: Path) -> None:
    first = run_audit(root, root / "history", assess=fake_assess)
    second = run_audit(root, root / "history", assess=fake_assess)
    assert len(first.scored) == 3 and second.unusable == [] and second.runs_found == 3


def test_unusable_runs_are_named_and_the_rest_recorded(root: Path) -> None:
    write_run(root, "beta", "20260215-000000", error="manifest invalid: system.gpu")
    raw = root / "gamma" / "20260301-000000" / "audit"
    raw.mkdir(parents=True)
    (raw / "audit.values.json").write_text("{}")
    result = run_audit(root, assess=fake_assess)
    assert len(result.scored) == 3 and result.exit_code == 2
    errors = {u.path.name: u.error for u in result.unusable}
    assert "manifest invalid: system.gpu" in errors["20260215-000000"]
    assert "cmax.toml" in errors["20260301-000000"]
    # fixed later: it is scored then, because it never entered the history
    write_run(root, "beta", "20260215-000000", workloads=wl(1.0, 0.99, 1.01))
    (root / "beta" / "20260215-000000" / "spec.json").write_text(
        '{"cluster": "beta", "workloads": [["llama3.1-70b", "fp8", 512, 1.0, 0.99, 1.01]]}')
    again = run_audit(root, assess=fake_assess)
    assert [r.run_dir for r in again.scored] == ["20260215-000000"]


def test_stray_files_are_noted_not_fatal(root: Path) -> None:
    (root / "README.md").write_text("monthly audits\n")
    (root / "alpha" / "notes.txt").write_text("x\n")
    result = run_audit(root, assess=fake_assess)
    assert result.exit_code == 1  # the drift, not the stray files
    assert sorted(i["path"].rsplit("/", 1)[-1] for i in result.to_json()["ignored"]) == [
        "README.md", "notes.txt"]
    assert result.to_json()["unusable"] == []


def test_a_crashing_scorer_does_not_stop_the_fleet(root: Path) -> None:
    def flaky(path: Path) -> Scorecard:
        if path.name == "20260101-090000":
            raise ZeroDivisionError("float division by zero")
        return fake_assess(path)

    result = run_audit(root, assess=flaky)
    assert len(result.scored) == 2 and result.exit_code == 2
    assert "internal error while scoring (ZeroDivisionError" in result.unusable[0].error


def test_interrupted_backlog_keeps_the_batches_already_written(root: Path) -> None:
    calls = 0

    def interrupted(path: Path) -> Scorecard:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        return fake_assess(path)

    with pytest.raises(KeyboardInterrupt):
        run_audit(root, assess=interrupted, batch_runs=1)
    frame = HistoryStore(root / HISTORY_DIRNAME).read()
    assert frame.filter(pl.col("row_kind") == "run").height == 2
    result = run_audit(root, assess=fake_assess)
    assert [r.run_dir for r in result.scored] == ["20260115-120000-000001"]


def test_edited_evidence_is_flagged_and_the_record_kept(root: Path) -> None:
    run_audit(root, assess=fake_assess)
    before = tree_bytes(root / HISTORY_DIRNAME)
    (root / "beta" / "20260115-120000-000001" / "extra.log").write_text("added later\n")
    result = run_audit(root, assess=fake_assess)
    assert tree_bytes(root / HISTORY_DIRNAME) == before
    changed = [i for i in result.items if i.kind == "evidence_changed"]
    assert [(i.cluster, i.run) for i in changed] == [("beta", "20260115-120000-000001")]
    assert result.exit_code == 1


def test_an_empty_root_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(CmaxError, match="no runs found"):
        run_audit(tmp_path / "empty", assess=fake_assess)


def test_a_run_filed_under_the_wrong_cluster_is_refused_and_the_rest_recorded(
        root: Path) -> None:
    # the manifest (spec) says cluster "beta", the folder says "alpha": recording it would
    # put beta's numbers on alpha's timeline
    misfiled = write_run(root, "alpha", "20260301-090000", workloads=wl(0.80, 0.79, 0.81))
    spec = (misfiled / "spec.json").read_text().replace('"cluster": "alpha"',
                                                         '"cluster": "beta"')
    (misfiled / "spec.json").write_text(spec)
    result = run_audit(root, assess=fake_assess)
    assert result.exit_code == 2
    assert len(result.scored) == 3
    [refused] = result.unusable
    assert refused.path == misfiled
    assert ("filed under cluster 'alpha' but its manifest says provider.cluster = 'beta'"
            in refused.error)
    assert "move it to <root>/beta/20260301-090000/" in refused.error
    runs = result.history.filter(pl.col("row_kind") == "run")
    assert "20260301-090000" not in runs["run_dir"].to_list()
    # nothing about alpha's March "run" reaches the drift: the regression is Feb's only
    assert all(i.run != "20260301-090000" for i in result.items)


def test_the_misfiled_message_quotes_the_audits_own_cluster(root: Path) -> None:
    from cmax.history.audit import misfiled
    from cmax.history.discover import RunRef
    from cmax.scorecard import AuditSummary
    from tests.history.history_fakes import make_card

    card = make_card(cluster="b", audit_fail=[])
    card = card.model_copy(update={"audit": AuditSummary(file="audit/audit.values.json",
                                                         cluster="b-prod", counts={})})
    run = RunRef("a", "2026-01-01", dt.datetime(2026, 1, 1, tzinfo=dt.UTC), root, "0" * 64)
    refused = misfiled(run, card)
    assert refused is not None
    assert "its audit (clusterName) says 'b-prod'" in refused.error
    # the folder may hold the cluster's slug
    named = make_card(cluster="Alpha H100 East")
    slug = RunRef("alpha-h100-east", "2026-01-01", run.timestamp, root, "0" * 64)
    assert misfiled(slug, named) is None


def test_every_run_of_a_backlog_is_judged_not_only_the_newest(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    # a year's backlog arrives at once: March regressed and April recovered
    for day, ratio in (("2026-01-01", 1.00), ("2026-02-01", 1.00), ("2026-03-01", 0.90),
                       ("2026-04-01", 1.00)):
        write_run(root, "alpha", day, workloads=wl(ratio, ratio - 0.01, ratio + 0.01))
    first = run_audit(root, assess=fake_assess)
    assert [(i.kind, i.run, i.compared_with) for i in first.items] == [
        ("regression_vs_previous", "2026-03-01", "2026-02-01")]
    # a pass with nothing new reports the same standing (issue 40: it judged the newest
    # state only, and the regression vanished from a rerun)
    assert run_audit(root, assess=fake_assess).items == first.items


def test_audits_that_stopped_arriving_are_flagged(root: Path) -> None:
    result = run_audit(root, assess=fake_assess, as_of=dt.date(2026, 3, 20))
    stale = [(i.cluster, i.before, i.after) for i in result.items if i.kind == "audits_stopped"]
    # alpha's last run 2026-02-01 is 47 days back, beta's 2026-01-15 is 64: both over 45
    assert stale == [("alpha", "2026-02-01", "2026-03-20"),
                     ("beta", "2026-01-15", "2026-03-20")]
    assert "no run since 20260115-120000-000001 (64 days before 2026-03-20" in next(
        i.message for i in result.items if i.kind == "audits_stopped" and i.cluster == "beta")
    # 45 days is still on time (beta on 1 March), 46 is not (2 March); alpha is 29 days back
    on_time = run_audit(root, assess=fake_assess, as_of=dt.date(2026, 3, 1))
    assert [i.cluster for i in on_time.items if i.kind == "audits_stopped"] == []
    late = run_audit(root, assess=fake_assess, as_of=dt.date(2026, 3, 2))
    assert [i.cluster for i in late.items if i.kind == "audits_stopped"] == ["beta"]


def test_time_travel_reports_what_the_history_said_then(root: Path) -> None:
    first = run_audit(root, assess=fake_assess)
    assert first.history_version == 1  # 0 created the table, 1 recorded the three runs
    write_run(root, "alpha", "20260301-090000", workloads=wl(1.00, 0.99, 1.01), tier="Silver",
              audit_fail=["acs_disabled"])
    now = run_audit(root, assess=fake_assess)
    assert now.history_version == 2 and now.items == []

    def must_not_score(path: Path) -> Scorecard:
        raise AssertionError(f"time travel scored {path}")

    then = run_audit(root, assess=must_not_score, history_version=1)
    assert then.time_travel and then.history_version == 1
    assert then.history.filter(pl.col("row_kind") == "run").height == 3
    assert then.items == first.items and then.as_of == dt.date(2026, 2, 1)
    future = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    latest = run_audit(root, assess=must_not_score, history_as_of=future)
    assert latest.history_version == 2 and latest.items == []
    with pytest.raises(CmaxError, match="the history has no version 7"):
        run_audit(root, assess=must_not_score, history_version=7)
    with pytest.raises(CmaxError, match="the history did not exist yet at 2020-01-01"):
        run_audit(root, assess=must_not_score,
                  history_as_of=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
