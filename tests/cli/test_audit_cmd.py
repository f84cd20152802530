"""`cmax audit` through the CLI entry point, with the scorer replaced by the fake one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.history import audit as audit_mod
from tests.history.history_fakes import drifting_runs, fake_assess, fp8_70b, write_run


@pytest.fixture(autouse=True)
def fake_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit_mod, "_default_assess", fake_assess)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return drifting_runs(tmp_path / "runs", sla_missed=True)


def test_json_lists_each_item_and_exits_1(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(root), "--format", "json"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["as_of"] == "2025-11-01" and data["exit_code"] == 1
    rows = [{k: i[k] for k in ("cluster", "kind", "workload", "before", "after", "change_pct")}
            for i in data["items"]]
    assert rows == [
        {"cluster": "east", "kind": "regression_vs_previous",
         "workload": "llama3.1-70b fp8 512 GPUs", "before": 1.0, "after": 0.9,
         "change_pct": -10.0},
        {"cluster": "east", "kind": "sla_breach", "workload": None, "before": 99.9,
         "after": 99.0, "change_pct": -0.9009},
        # the November run fails the bar: October's validation ends there, not in 2026-10
        {"cluster": "east", "kind": "exemplar_lapsed", "workload": None,
         "before": "2025-10-01", "after": "2025-11-01", "change_pct": None},
    ]
    assert data["exemplar"][0] == {
        "cluster": "east", "status": "lapsed", "passed_run": "20251001-000000",
        "passed_on": "2025-10-01", "expires_on": "2025-11-01", "days_left": 0,
        "ended_by": "20251101-000000"}
    assert data["history_version"] == 1 and data["time_travel"] is False
    assert "scoring 3 new runs" in captured.err


def test_as_of_near_expiry_and_text_output(root: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(root), "--as-of", "2026-09-15"]) == 1
    out = capsys.readouterr().out
    assert "3 runs under" in out and "3 newly scored" in out
    assert "exemplar_expiring" in out
    # east's validation lapsed with its failing November run; west's (Nov 2025) is expiring
    assert "east: lapsed, passed 2025-10-01, ended 2025-11-01 by failing run" in out
    assert "expires on 2026-11-01 (47 days)" in out
    assert main(["audit", str(root), "--as-of", "2026-09-15",
                 "--expiry-warning-days", "10", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert "exemplar_expiring" not in {i["kind"] for i in data["items"]}
    assert data["runs"]["scored"] == 0 and data["runs"]["already_recorded"] == 3


def test_clean_fleet_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(tmp_path, "west", "2025-10-01", workloads=fp8_70b(1.0))
    write_run(tmp_path, "west", "2025-11-01", workloads=fp8_70b(1.0))
    assert main(["audit", str(tmp_path), "--history", str(tmp_path / "h")]) == 0
    assert "no drift" in capsys.readouterr().out
    assert (tmp_path / "h" / "cluster=west").is_dir()


def test_reports_are_written(root: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "reports"
    assert main(["audit", str(root), "-o", str(out), "--no-pdf", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [Path(p).name for p in data["reports"]] == [
        "fleet.trend.html", "cluster-east.trend.html", "cluster-west.trend.html"]
    assert all(Path(p).is_file() for p in data["reports"])
    east = (out / "cluster-east.trend.html").read_text()
    assert "ended 2025-11-01 by failing run 20251101-000000" in east
    assert "valid until" not in east


def test_an_unusable_run_exits_2_after_recording_the_rest(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(root, "west", "20251201-000000", error="unknown GPU 'h900'")
    assert main(["audit", str(root), "--format", "json"]) == 2
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["runs"]["in_history"] == 3
    assert "unknown GPU 'h900'" in data["unusable"][0]["error"]
    assert main(["audit", str(root)]) == 2
    err = capsys.readouterr().err
    assert "unusable:" in err and "20251201-000000" in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "needle"), [
    (["audit", "{tmp}/missing"], "runs root not found"),
    (["audit", "{tmp}/empty"], "no runs found"),
    (["audit", "{tmp}/empty", "--as-of", "yesterday"], "Invalid value for '--as-of'"),
])
def test_user_errors_are_one_line_exit_2(args: list[str], needle: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    if "Invalid value" not in needle:
        assert err.count("\n") == 1


def test_history_that_is_a_file_is_exit_2(root: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "h").write_text("not a folder")
    assert main(["audit", str(root), "--history", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err
    assert "--history" in err and "is a file" in err and "Traceback" not in err


def test_history_version_reports_what_the_history_said_then(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(root), "--format", "json"]) == 1
    first = json.loads(capsys.readouterr().out)
    write_run(root, "west", "20251201-000000", workloads=fp8_70b(0.8))
    assert main(["audit", str(root), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["history_version"] == 2
    assert main(["audit", str(root), "--history-version", "1", "--format", "json"]) == 1
    then = json.loads(capsys.readouterr().out)
    assert then["time_travel"] is True and then["history_version"] == 1
    assert then["items"] == first["items"] and then["runs"]["in_history"] == 3
    assert main(["audit", str(root), "--history-as-of", "2100-01-01"]) == 1
    out = capsys.readouterr().out
    assert "at version 2 (read-only): 4 runs of 2 cluster(s)" in out
    assert main(["audit", str(root), "--history-version", "1",
                 "--history-as-of", "2100-01-01"]) == 2
    assert "not both" in capsys.readouterr().err


def test_stale_after_days_overrides_the_policy(root: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(root), "--as-of", "2025-12-01", "--format", "json"]) == 1
    assert "audits_stopped" not in {i["kind"] for i in json.loads(capsys.readouterr().out)
                                    ["items"]}
    assert main(["audit", str(root), "--as-of", "2025-12-01", "--stale-after-days", "20",
                 "--format", "json"]) == 1
    stale = [i["cluster"] for i in json.loads(capsys.readouterr().out)["items"]
             if i["kind"] == "audits_stopped"]
    assert stale == ["east", "west"]


def test_a_misfiled_run_exits_2_naming_both_clusters(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(root, "west", "20251201-000000", workloads=fp8_70b(0.7))
    (run / "spec.json").write_text((run / "spec.json").read_text().replace(
        '"cluster": "west"', '"cluster": "east"'))
    assert main(["audit", str(root)]) == 2
    captured = capsys.readouterr()
    assert ("unusable: " in captured.err and "filed under cluster 'west' but its manifest "
            "says provider.cluster = 'east'" in captured.err)
    assert "3 newly scored" in captured.out


def test_the_misfiled_hint_shows_control_characters_escaped(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The wrong-cluster hint quotes the manifest's cluster: a terminal escape or a
    right-to-left override in it is shown as \\uXXXX, in text and in JSON."""
    run = write_run(root, "west", "20251201-000000", workloads=fp8_70b(0.7))
    hostile = "\x1b[2J\x1b]0;pwned\x07evil\u202egnp.exe"
    spec = json.loads((run / "spec.json").read_text())
    (run / "spec.json").write_text(json.dumps({**spec, "cluster": hostile}))
    for fmt in ("text", "json"):
        assert main(["audit", str(root), "--format", fmt]) == 2
        captured = capsys.readouterr()
        both = captured.out + captured.err
        assert not [c for c in both if (ord(c) < 32 and c not in "\n\t") or c == "\u202e"]
        assert "evil" in both and "u202e" in both  # a refused run stays refused on a rerun


def test_ray_executor_without_ray_is_one_line(root: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    assert main(["audit", str(root), "--executor", "ray"]) == 2
    err = capsys.readouterr().err
    assert "--executor ray needs Ray" in err and "pip install 'cmax-rating[ray]'" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_an_old_parquet_history_is_migrated_with_a_message(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.history.history_fakes import history_entry, write_v1_part

    write_v1_part(root / ".cmax-history", "cluster=east", "east",
                  [history_entry("east", "2025-09-01")])
    assert main(["audit", str(root), "--format", "json"]) == 1
    captured = capsys.readouterr()
    assert "migrated 1 runs from the Parquet history of cmax 0.1" in captured.err
    data = json.loads(captured.out)
    assert data["runs"]["in_history"] == 4 and data["notes"][0].startswith("migrated 1 runs")
    assert main(["audit", str(root), "--format", "json"]) == 1
    assert "migrated" not in capsys.readouterr().err  # once


def test_a_missing_drift_policy_is_one_line(root: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(root), "--drift-policy", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err
    assert "drift policy not found; fix: check the --drift-policy path" in err
    assert err.count("\n") == 1


def test_trend_reports_on_letter_paper(root: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from pypdf import PdfReader

    out = tmp_path / "reports"
    assert main(["audit", str(root), "-o", str(out), "--paper", "letter"]) == 1
    box = PdfReader(out / "fleet.trend.pdf").pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (792, 612)  # Letter, landscape
    assert "@page { size: letter landscape; }" in (out / "cluster-east.trend.html").read_text()


def test_sla_breaches_have_columns_of_their_own(root: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A contracted and a measured uptime are not a 'before' and an 'after' (issue 30)."""
    out = tmp_path / "reports"
    assert main(["audit", str(root), "-o", str(out), "--no-pdf"]) == 1
    text = capsys.readouterr().out
    assert "SLA breach, period" in text and "credit owed" in text
    breach = next(line for line in text.splitlines() if line.startswith("east ")
                  and "2025-10-01–2025-10-31" in line)
    assert breach.split()[-3:] == ["99.9%", "99.0%", "25%"]
    assert not any("sla_breach" in line and "-0.9%" in line for line in text.splitlines())
    html = (out / "cluster-east.trend.html").read_text()
    sla = html[html.index("<h3>SLA breaches</h3>"):]
    assert "<th class=\"num\">contracted uptime</th>" in sla
    assert "<td>2025-10-01–2025-10-31</td><td class=\"num\">99.900%</td>" in sla
    assert "<td class=\"num\">25%</td>" in sla
    changes = html[:html.index("<h3>SLA breaches</h3>")]
    assert "sla breach" not in changes  # not in the before/after/change table
