"""Progress off a terminal (cmax.cli.common.Progress) and an interrupted audit keeping what it
scored (cmax.history.audit.AuditInterrupted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.cli import exits, main
from cmax.cli.common import Progress, set_verbosity
from cmax.history import audit as audit_mod
from tests.history.history_fakes import fake_assess, fp8_70b, write_run


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_with_count_percent_and_elapsed_at_most_every_interval(
        capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    progress = Progress("scoring 400 new runs", 400, every_s=10, clock=clock, tty=False)
    for i in range(400):
        clock.now = i * 0.5  # one run every half second: 200 s in all
        progress.advance()
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "scoring 400 new runs: 1/400 (0%), 0m00s elapsed"
    assert lines[-1] == "scoring 400 new runs: 400/400 (100%), 3m19s elapsed"
    assert 19 <= len(lines) <= 22  # every 10 s of 200 s, plus first and last
    assert "scoring 400 new runs: 21/400 (5%), 0m10s elapsed" in lines


def test_quiet_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    set_verbosity(-1)
    try:
        progress = Progress("x", 3, tty=False)
        for _ in range(3):
            progress.advance()
    finally:
        set_verbosity(0)
    assert capsys.readouterr().err == ""


def _interrupt_on_third(path: Path) -> object:
    if Path(path).name == "20251201-000000":
        raise KeyboardInterrupt
    return fake_assess(path)


def test_interrupted_audit_records_what_it_scored(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "runs"
    for stamp in ("20251001-000000", "20251101-000000", "20251201-000000", "20260101-000000"):
        write_run(root, "east", stamp, workloads=fp8_70b(1.0))
    monkeypatch.setattr(audit_mod, "_default_assess", _interrupt_on_third)
    assert main(["audit", str(root), "--format", "json"]) == exits.INTERRUPTED
    err = capsys.readouterr().err
    assert "cmax: interrupted: 2 of 4 new runs were scored and recorded" in err
    import cmax.frames as cf

    kept = cf.history(root / ".cmax-history").filter(row_kind="run")["run_dir"].to_list()
    assert sorted(kept) == ["20251001-000000", "20251101-000000"]
    monkeypatch.setattr(audit_mod, "_default_assess", fake_assess)
    assert main(["audit", str(root), "--format", "json"]) == exits.OK
    assert "scoring 2 new runs" in capsys.readouterr().err


def test_trend_reports_report_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "runs"
    write_run(root, "east", "20251001-000000", workloads=fp8_70b(1.0))
    write_run(root, "west", "20251001-000000", workloads=fp8_70b(1.0))
    monkeypatch.setattr(audit_mod, "_default_assess", fake_assess)
    assert main(["audit", str(root), "-o", str(tmp_path / "out"), "--no-pdf"]) == exits.OK
    err = capsys.readouterr().err
    assert "writing 3 trend reports: 1/3 (33%)" in err
    assert "writing 3 trend reports: 3/3 (100%)" in err


def _terminated_on_third(path: Path) -> object:
    if Path(path).name == "20251201-000000":
        raise SystemExit(143)  # what cmax.submission.bundle.cleanup_on_signals raises on SIGTERM
    return fake_assess(path)


def test_a_stop_signal_keeps_its_exit_and_what_was_scored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "runs"
    for stamp in ("20251001-000000", "20251101-000000", "20251201-000000"):
        write_run(root, "east", stamp, workloads=fp8_70b(1.0))
    monkeypatch.setattr(audit_mod, "_default_assess", _terminated_on_third)
    with pytest.raises(SystemExit) as stopped:
        main(["audit", str(root)])
    assert stopped.value.code == 143
    assert "cmax: interrupted: 2 of 3 new runs were scored and recorded" in (
        capsys.readouterr().err)
    import cmax.frames as cf

    assert cf.history(root / ".cmax-history").filter(row_kind="run").height == 2


def test_multi_bundle_report_reports_each_document(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tests.paths import SAMPLES

    assert main(["report", str(SAMPLES / "aurora-compute"), str(SAMPLES / "cinder-gpu"),
                 "-o", str(tmp_path / "r"), "--no-pdf"]) == exits.OK
    err = capsys.readouterr().err
    assert "writing 5 reports: 1/5 (20%)" in err  # 2 briefs, 2 scorecards, the leaderboard
    assert "writing 5 reports: 5/5 (100%)" in err
