"""``cmax inspect``: JSON on stdout, text for people, exit 2 with one line for unknown input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmax.cli import main
from tests.paths import DATA

DATA = DATA / "ingest"


def _json(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, object]:
    assert main(["inspect", str(path), "--format", "json"]) == 0
    out = capsys.readouterr().out
    data: dict[str, object] = json.loads(out)
    return data


def test_training_log_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, DATA / "megatron_bridge_llama3.1-70b.log")
    for key in ("format", "steps", "first_iteration", "last_iteration", "mean_step_time_s",
                "window_mean_step_time_s", "mean_tflops_per_gpu"):
        assert key in data
    assert data["format"] == "megatron" and data["steps"] == 50
    assert data["window_mean_step_time_s"] == pytest.approx(10.2)


def test_nccl_mlperf_audit_incidents_json(capsys: pytest.CaptureFixture[str]) -> None:
    nccl = _json(capsys, DATA / "nccl" / "all_reduce_1node.txt")
    assert {k: nccl[k] for k in ("format", "collective", "ranks", "rows", "avg_busbw_gbps",
                                 "max_busbw_gbps")} == {
        "format": "nccl-tests", "collective": "all_reduce", "ranks": 8, "rows": 6,
        "avg_busbw_gbps": 280.118, "max_busbw_gbps": 480.16}
    folder = DATA / "mlperf" / "results" / "example_h100_64x8" / "llama31_405b"
    ml = _json(capsys, folder)
    assert ml["score_min"] == pytest.approx(110.0) and ml["benchmark"] == "llama31_405b"
    assert ml["runs"][1] == {"file": "result_1.txt", "status": "failed",  # type: ignore[index]
                             "time_to_train_min": None, "problem": "run_stop status 'aborted'"}
    single = _json(capsys, folder / "result_0.txt")
    # one file is not an MLPerf result (the summarizer scores a folder): its run time only
    assert single["score_min"] is None and single["time_to_train_min"] == pytest.approx(100.0)
    audit = _json(capsys, DATA / "example_audit.values.json")
    assert audit["cluster"] == "example-h100-a"
    assert audit["counts"] == {"PASS": 41, "WARNING": 8, "FAIL": 2, "SKIPPED": 8}
    inc = _json(capsys, DATA / "incidents.json")
    assert inc["incidents"] == 2 and inc["first"] == "2026-07-03T14:05:00+00:00"


def test_text_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(DATA / "nemo2_messy.log")]) == 0
    out = capsys.readouterr().out
    assert "format" in out and "nemo2" in out and "restarts" in out
    assert "  - last line 77 has no newline (cut off); its step was not used" in out


def test_unknown_file_exits_2_with_one_line(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing to see\n")
    assert main(["inspect", str(junk), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert "unrecognised evidence format; tried llmb-sqlite, " in lines[0]
    assert "`cmax docs formats`" in lines[0]
    assert main(["inspect", str(tmp_path / "missing.log")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_malformed_known_format_exits_2(capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    bad = tmp_path / "incidents.csv"
    bad.write_text("start,end,node,gpu,category,planned\n2026-07-01T00:00Z,,n,0,GPU,perhaps\n")
    assert main(["inspect", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "planned" in err and len(err.strip().splitlines()) == 1


def test_inspect_lists_the_facts_ingest_records(capsys: pytest.CaptureFixture[str]) -> None:
    audit = _json(capsys, DATA / "example_audit.values.json")
    assert {"kind": "cluster", "value": "example-h100-a", "line": None,
            "where": "audit_data.audit.clusterName"} in audit["facts"]  # type: ignore[operator]
    inc = _json(capsys, DATA / "incidents.csv")
    assert inc["facts"][0] == {"kind": "host", "value": "node-017", "line": 2,  # type: ignore[index]
                               "where": None}


def test_inspect_shows_the_window_every_scorecard_uses() -> None:
    """inspect has no baseline, so it shows each recipe rule's window; the scorecard's window
    (its baseline's release) is one of them with the same steps and the same mean."""
    from cmax.ingest import inspect_file
    from cmax.pipeline import assess
    from tests.paths import SAMPLES

    bundle = SAMPLES / "borealis-cloud"
    card = assess(bundle)
    for result in card.workloads:
        summary = inspect_file(bundle / str(result.log))
        windows = summary["windows"]
        assert isinstance(windows, list) and len(windows) == 3
        assert any(w["steps"] == result.steps_in_window
                   and w["mean_step_time_s"] == pytest.approx(result.mean_step_time_s, abs=1e-6)
                   for w in windows), (result.log, windows)
