"""Hostile and inconsistent inputs, built from the shipped sample bundles: each must give one
clear error (exit 2) or a finding, never a traceback and never a silently wrong number."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from cmax.cli import main
from cmax.errors import CmaxError
from tests.fakes import manifest_text
from tests.paths import DATA, REFERENCE, SAMPLES

SAMPLES = SAMPLES
FP8_LOG = "training/llama3.1-405b_fp8_512.log"


def bundle(tmp_path: Path, name: str = "aurora-compute", sample: str | None = None) -> Path:
    dest = tmp_path / name
    shutil.copytree(SAMPLES / (sample or name), dest)
    return dest


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main([*args, "--format", "json"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, (json.loads(captured.out) if captured.out else None), captured.err


def one_line_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("cmax: error: ")
    return captured.err


def _fp8(card: dict[str, Any]) -> dict[str, Any]:
    return next(w for w in card["workloads"] if w["log"] == FP8_LOG)


@pytest.mark.parametrize("bad", ["0", "-12.9", "nan", "inf"])
def test_impossible_step_times_do_not_move_the_ratio(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str) -> None:
    """Validation treats a zero/negative/NaN/inf step as a missing window step; the scorer
    must not average it in (a 0 s step made the ratio 1.066 'pass'; NaN made it 'nan')."""
    clean = run_json(capsys, "score", str(SAMPLES / "aurora-compute"))[1]
    b = bundle(tmp_path)
    log = b / FP8_LOG
    text = log.read_text(encoding="utf-8")
    for it in (36, 37):
        line = next(ln for ln in text.splitlines() if f"iteration {it}/49 " in ln)
        value = line.split("train_step_timing in s: ")[1].split(" ")[0]
        text = text.replace(line, line.replace(f"train_step_timing in s: {value} ",
                                               f"train_step_timing in s: {bad} "))
    log.write_text(text, encoding="utf-8")
    code, card, _ = run_json(capsys, "score", str(b))
    assert code == 1  # the bad steps are findings
    ratio = _fp8(card)["ratio"]
    assert ratio is not None and 0.99 < ratio < 1.01
    assert _fp8(card)["steps_in_window"] == _fp8(clean)["steps_in_window"] - 2


@pytest.mark.parametrize("count", [1, 2])
def test_astronomical_step_time_is_no_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int) -> None:
    """1e308 s tracebacked in validate (OverflowError in the print-resolution probe and the
    CV), warned from numpy in score/price (overflow, log of 0) and crashed the step-time chart
    in report (matplotlib: axis limits cannot be inf). pytest turns warnings into errors."""
    b = bundle(tmp_path)
    edit(b / FP8_LOG, "train_step_timing in s: 12.9 ", "train_step_timing in s: 1e308 ", count)
    for command in ("validate", "score", "price"):
        code, data, err = run_json(capsys, command, str(b))
        assert code == 0 and data is not None and "Warning" not in err
    card = run_json(capsys, "score", str(b))[1]
    assert _fp8(card)["ratio"] == 0.0 and _fp8(card)["verdict"] != "pass"
    code, files, _ = run_json(capsys, "report", str(b), "-o", str(tmp_path / "out"))
    assert code == 0 and sorted(Path(f).name.split(".", 1)[1] for f in files["files"]) == [
        "brief.html", "brief.pdf", "findings.csv", "runs.csv", "scorecard.html",
        "scorecard.json", "scorecard.pdf"]


def _manifest_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str,
                    new: str) -> str:
    b = bundle(tmp_path)
    edit(b / "cmax.toml", old, new)
    err = one_line_error(capsys, "validate", str(b))
    assert str(b / "cmax.toml") in err
    return err


def test_period_end_before_start_is_rejected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It used to give -14,848 GPU-days, a perfect reliability score and exit 0."""
    err = _manifest_error(tmp_path, capsys, "period_end = 2026-09-30", "period_end = 2026-06-01")
    assert "reliability.period_end" in err and "2026-06-01" in err and "2026-07-01" in err


@pytest.mark.parametrize(("old", "new", "key"), [
    ("num_gpus = 512", "num_gpus = true", "runs[0].num_gpus"),
    ("usd_per_gpu_hour = 2.45", "usd_per_gpu_hour = true", "pricing.usd_per_gpu_hour"),
])
def test_booleans_are_not_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  old: str, new: str, key: str) -> None:
    """`usd_per_gpu_hour = true` was read as a $1.00 quote."""
    err = _manifest_error(tmp_path, capsys, old, new)
    assert key in err and "true" in err


@pytest.mark.parametrize(("old", "new", "key"), [
    ("term_months = 12", "term_months = 12\nwatts_per_gpu = inf", "pricing.watts_per_gpu"),
    ("gpus_in_service = 512", "gpus_in_service = 512\ncheckpoint_interval_min = inf",
     "reliability.checkpoint_interval_min"),
    ("nodes = 64", "nodes = 99999999999999999999", "system.nodes"),
    ("gpus_in_service = 512", "gpus_in_service = 5120000000", "reliability.gpus_in_service"),
])
def test_infinite_and_absurd_numbers_are_rejected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
        key: str) -> None:
    """inf watts printed `"joules_per_token": Infinity` (invalid JSON); 1e20 nodes priced a
    $1.7e25 contract; 5e9 GPUs in service diluted 14 interruptions to zero; all exit 0."""
    assert key in _manifest_error(tmp_path, capsys, old, new)


@pytest.mark.parametrize("credits", [
    "[[99.9, 10], [99.9, 25], [95.0, 100]]",   # the same threshold twice
    "[[99.9, 50], [99.0, 25], [95.0, 10]]",    # less credit for worse uptime
])
def test_contradictory_sla_credit_tiers_are_rejected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], credits: str) -> None:
    err = _manifest_error(tmp_path, capsys, "credits = [[99.9, 10], [99.0, 25], [95.0, 100]]",
                          f"credits = {credits}")
    assert "sla.credits" in err


def test_unsorted_sla_credit_tiers_are_fine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = bundle(tmp_path)
    edit(b / "cmax.toml", "credits = [[99.9, 10], [99.0, 25], [95.0, 100]]",
         "credits = [[95.0, 100], [99.9, 10], [99.0, 25]]")
    assert run_json(capsys, "validate", str(b))[0] == 0


def test_union_error_names_the_users_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A list as a declaration said `declarations.soc2_type2.bool: invalid value None`."""
    err = _manifest_error(tmp_path, capsys, "soc2_type2 = true", "soc2_type2 = [1, 2]")
    assert "declarations.soc2_type2: invalid value [1, 2]" in err
    assert ".bool" not in err and "None" not in err


RUBRIC = REFERENCE / "rubric.toml"


@pytest.mark.parametrize(("old", "new", "key"), [
    ('title = "Security"\nweight = [0-9.]+', 'title = "Security"\nweight = inf',
     "categories.security.weight"),
    ('kind = "audit"\nweight = [0-9.]+', 'kind = "audit"\nweight = inf',
     "categories.security.components[0].weight"),
    ('title = "Security"\nweight = [0-9.]+', 'title = "Security"\nweight = 1.7e308',
     "categories.security.weight"),
    (r"audit_points = \{ PASS = 1.0, WARNING = 0.5, FAIL = 0.0 \}",
     "audit_points = { PASS = 0.0, WARNING = 0.5, FAIL = 1.0 }", "scoring"),
])
def test_senseless_rubric_weights_are_rejected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
        key: str) -> None:
    """An inf category weight crashed the scorer (pydantic traceback); an inf component weight
    or FAIL worth more than PASS silently re-rated the sample."""
    rubric = tmp_path / "rubric.toml"
    text = RUBRIC.read_text(encoding="utf-8")
    assert re.search(old, text), old  # the shipped weights change; the shape does not
    rubric.write_text(re.sub(old, new, text, count=1), encoding="utf-8")
    err = one_line_error(capsys, "score", str(SAMPLES / "aurora-compute"),
                         "--rubric", str(rubric))
    assert str(rubric) in err and key in err


CALC = ["calc", "--model", "llama3.1-70b", "--gpu", "h100-sxm", "--precision", "bf16"]


@pytest.mark.parametrize(("extra", "flag"), [
    (["--tokens-per-s-per-gpu", "nan"], "--tokens-per-s-per-gpu"),
    (["--tokens-per-s-per-gpu", "5000"], "--tokens-per-s-per-gpu"),   # 227% MFU
    (["--tokens-per-s-per-gpu", "1e308"], "--tokens-per-s-per-gpu"),
    (["--step-time-s", "0.001", "--gbs", "128", "--num-gpus", "64", "--seq-len", "8192"],
     "--step-time-s"),
    (["--mfu", "0.4", "--tokens", "1e400"], "--tokens"),
    (["--mfu", "0.4", "--usd-per-gpu-hour", "inf"], "--usd-per-gpu-hour"),
    (["--mfu", "0.4", "--watts-per-gpu", "nan"], "--watts-per-gpu"),
])
def test_calc_refuses_nonsense_numbers(capsys: pytest.CaptureFixture[str], extra: list[str],
                                       flag: str) -> None:
    """These printed 'MFU nan%', 'inf%', 227% MFU, $inf or "joules_per_token": NaN (invalid
    JSON) with exit 0; --mfu above 100% was already refused."""
    err = one_line_error(capsys, *CALC, *extra, "--format", "json")
    assert f"{flag}:" in err


def test_calc_accepts_exactly_full_mfu(capsys: pytest.CaptureFixture[str]) -> None:
    code, result, _ = run_json(capsys, *CALC, "--mfu", "100%")
    assert code == 0 and result["mfu"] == pytest.approx(1.0)
    tps = result["tokens_per_s_per_gpu"]
    code, again, _ = run_json(capsys, *CALC, "--tokens-per-s-per-gpu", repr(tps))
    assert code == 0 and again["mfu"] == pytest.approx(1.0)


@pytest.mark.parametrize("what", ["gpus", "models", "network"])
def test_reference_list_catalogue_filters_are_not_ignored(
        capsys: pytest.CaptureFixture[str], what: str) -> None:
    """`reference list --what models --model nope` listed every model, exit 0."""
    err = one_line_error(capsys, "reference", "list", "--what", what, "--model", "nope")
    assert "--model" in err and what in err


def test_empty_incident_json_reads_like_a_header_only_csv(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`{"incidents": []}` was 'unrecognised evidence format' (exit 2) while a header-only
    CSV is a valid empty log; both now mean: no interruptions reported."""
    b = bundle(tmp_path)
    (b / "incidents.json").write_text('{"incidents": []}\n', encoding="utf-8")
    (b / "incidents.csv").write_text("start,end,node,gpu,category,planned\n", encoding="utf-8")
    results = []
    for name in ("incidents.csv", "incidents.json"):
        edit(b / "cmax.toml", 'incidents = "incidents.csv"', f'incidents = "{name}"')
        code, card, _ = run_json(capsys, "score", str(b))
        assert code == 0
        results.append(card["reliability"]["unexpected_interruptions"])
        edit(b / "cmax.toml", f'incidents = "{name}"', 'incidents = "incidents.csv"')
    assert results == [0, 0]


def test_audit_root_holding_a_bundle_one_level_too_high(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """<root>/<timestamp>/cmax.toml (no cluster level) was reported as runs named 'nccl' and
    'training' that are 'not a timestamp', with no word about the real mistake."""
    root = tmp_path / "runs"
    root.mkdir()
    bundle(root, "aurora-compute").rename(root / "2026-09-14")
    code, result, _ = run_json(capsys, "audit", str(root), "--no-pdf")
    assert code == 2
    [unusable] = result["unusable"]
    assert unusable["path"] == str(root / "2026-09-14")
    assert "where a cluster folder belongs" in unusable["error"]
    assert "<cluster>/2026-09-14" in unusable["error"]


SUMMARY_MANIFEST = manifest_text("""
[[runs]]
workload = "llama3.1-8b"
precision = "fp8"
num_gpus = 8
log = "sum.csv"
gbs = 128
seq_len = 8192
""", name="X", cluster="x", nodes=1, interconnect=None)


def test_summary_row_findings_do_not_say_iteration_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A DGXC parse-script summary has no iteration: the finding said 'first at iteration
    None'."""
    data = DATA / "ingest" / "dgxc_parse_nemo2.csv"
    header, row = data.read_text(encoding="utf-8").splitlines()[:2]
    (tmp_path / "cmax.toml").write_text(SUMMARY_MANIFEST, encoding="utf-8")
    (tmp_path / "sum.csv").write_text(f"{header}\n{row.replace(',10.100,', ',-10.1,')}\n",
                                      encoding="utf-8")
    code, result, _ = run_json(capsys, "validate", str(tmp_path))
    assert code == 1
    [bad] = [f for f in result["findings"] if f["rule"] == "sanity.non-positive-time"]
    assert "None" not in bad["message"] and "the summary's mean" in bad["message"]


def strict_json(text: str) -> Any:
    """json.loads that refuses NaN and Infinity (Python writes them; JSON has no such thing)."""
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON output")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_scorecard_json_is_valid_json_with_non_finite_step_times(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str) -> None:
    """step_series carried the NaN/inf step times, so `score --format json` and the report's
    .scorecard.json held bare NaN / Infinity, which JSON parsers reject."""
    b = bundle(tmp_path)
    edit(b / FP8_LOG, "train_step_timing in s: 12.9 ", f"train_step_timing in s: {bad} ", 2)
    assert main(["score", str(b), "--format", "json"]) == 1
    card = strict_json(capsys.readouterr().out)
    assert _fp8(card)["steps_total"] == 50
    assert all(t == t for _, t in _fp8(card)["step_series"])
    assert main(["price", str(b), "--format", "json"]) == 0
    strict_json(capsys.readouterr().out)


def test_network_series_is_valid_json_with_nan_bandwidth(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A NaN busbw in nccl-tests output reached networks[].series as a bare NaN."""
    b = bundle(tmp_path)
    edit(b / "nccl" / "all_reduce_perf_64n.txt", "92706.4  185.31  369.91",
         "92706.4  185.31     nan")
    assert main(["score", str(b), "--format", "json"]) == 1
    card = strict_json(capsys.readouterr().out)
    [net] = card["network"]
    assert net["ratio"] == pytest.approx(370.58 / 368, abs=1e-3)


def test_inspect_nccl_summary_is_valid_json_with_infinite_bandwidth(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A busbw printed as 9e999 (inf) made `inspect --format json` write
    "max_busbw_gbps": Infinity."""
    nccl = tmp_path / "all_reduce_perf.txt"
    nccl.write_text((SAMPLES / "aurora-compute" / "nccl" / "all_reduce_perf_64n.txt")
                    .read_text(encoding="utf-8")
                    .replace("92706.4  185.31  369.91", "92706.4  185.31   9e999"),
                    encoding="utf-8")
    assert main(["inspect", str(nccl), "--format", "json"]) == 0
    assert strict_json(capsys.readouterr().out)["max_busbw_gbps"] == pytest.approx(370.58)


def _no_hang(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    def hung(signum: int, frame: object) -> None:
        raise AssertionError("cmax blocked on the named pipe")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        return one_line_error(capsys, *args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_named_pipe_in_a_bundle_is_refused_not_waited_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO as incidents.csv made cmax validate block forever in open()."""
    b = bundle(tmp_path)
    (b / "incidents.csv").unlink()
    os.mkfifo(b / "incidents.csv")
    err = _no_hang(capsys, "validate", str(b))
    assert "incidents.csv" in err and "not a regular file" in err


def test_named_pipe_as_rubric_is_refused_not_waited_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "rubric.toml")
    err = _no_hang(capsys, "score", str(SAMPLES / "aurora-compute"),
                   "--rubric", str(tmp_path / "rubric.toml"))
    assert "rubric.toml" in err and "not a regular file" in err


def test_inspect_training_mean_of_huge_values_is_finite_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two TFLOP/s values of 1e308 overflowed the mean: "mean_tflops_per_gpu": Infinity."""
    log = tmp_path / "run.log"
    log.write_text((SAMPLES / "aurora-compute" / FP8_LOG).read_text(encoding="utf-8")
                   .replace("TFLOPS_per_GPU: 8.391e+02", "TFLOPS_per_GPU: 1e308"),
                   encoding="utf-8")
    assert main(["inspect", str(log), "--format", "json"]) == 0
    summary = strict_json(capsys.readouterr().out)
    assert 1e305 < summary["mean_tflops_per_gpu"] < 1e308


def test_nccl_size_beyond_int64_is_a_malformed_row_not_a_polars_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = bundle(tmp_path)
    edit(b / "nccl" / "all_reduce_perf_64n.txt", "\n    16777216       4194304",
         "\n99999999999999999999999       4194304")
    err = one_line_error(capsys, "validate", str(b))
    assert "nccl/all_reduce_perf_64n.txt:543" in err and "malformed nccl-tests data row" in err


def _fake_render(fail_after: int | None) -> Any:
    """A render_reports stand-in that writes real files, then fails part-way if told to
    (the real renderer is REPORTS' and changes under us; what matters here is the staging)."""
    def render(cards: list[object], out_dir: Path, **options: object) -> list[Path]:
        written = []
        for i, name in enumerate(["p.scorecard.json", "p.scorecard.html", "p.brief.html"]):
            if fail_after is not None and i == fail_after:
                raise CmaxError("the brief cannot be drawn")
            (out_dir / name).write_text("new")
            written.append(out_dir / name)
        return written
    return render


@pytest.fixture
def no_assess(monkeypatch: pytest.MonkeyPatch) -> None:
    import cmax.cli.report_cmd
    from tests.score.scorecard_factory import make_minimal_scorecard

    monkeypatch.setattr(cmax.cli.report_cmd, "_assess",
                        lambda bundle, rubric, commercial=None: make_minimal_scorecard())


@pytest.mark.parametrize("existing", [False, True])
@pytest.mark.usefixtures("no_assess")
def test_report_set_is_written_all_or_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        existing: bool) -> None:
    """A render failure after the scorecard files were written left a partial report set
    (a fresh scorecard beside a stale brief) in the output folder."""
    import cmax.render

    out = tmp_path / "out"
    if existing:
        out.mkdir()
        (out / "p.brief.html").write_text("last month's brief")
    monkeypatch.setattr(cmax.render, "render_reports", _fake_render(fail_after=2))
    assert main(["report", str(SAMPLES / "aurora-compute"), "-o", str(out)]) == 2
    err = capsys.readouterr().err  # progress lines, then the one error line
    assert err.splitlines()[-1] == "cmax: error: the brief cannot be drawn"
    if existing:
        assert [p.name for p in out.iterdir()] == ["p.brief.html"]
        assert (out / "p.brief.html").read_text() == "last month's brief"
    else:
        assert not out.exists()


@pytest.mark.usefixtures("no_assess")
def test_report_moves_the_finished_set_into_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import cmax.render

    out = tmp_path / "out"
    out.mkdir()
    (out / "p.brief.html").write_text("last month's brief")
    monkeypatch.setattr(cmax.render, "render_reports", _fake_render(fail_after=None))
    code, files, _ = run_json(capsys, "report", str(SAMPLES / "aurora-compute"), "-o", str(out))
    assert code == 0
    assert files["files"] == [str(out / n) for n in
                              ("p.scorecard.json", "p.scorecard.html", "p.brief.html")]
    assert sorted(p.name for p in out.iterdir()) == sorted(Path(f).name for f in files["files"])
    assert (out / "p.brief.html").read_text() == "new"


def test_named_pipe_as_bundle_path_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO named bundle.tar.gz made `cmax validate` block forever; killed, it left its
    empty temporary directory behind."""
    os.mkfifo(tmp_path / "bundle.tar.gz")
    err = _no_hang(capsys, "validate", str(tmp_path / "bundle.tar.gz"))
    assert "not a regular file" in err


def test_gpus_in_service_below_the_system_is_one_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`gpus_in_service = 1` on the 512-GPU sample priced it at $0.00 with no finding."""
    err = _manifest_error(tmp_path, capsys, "gpus_in_service = 512", "gpus_in_service = 1")
    assert "reliability.gpus_in_service" in err


def test_json_output_never_holds_non_finite_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """Wherever a command's summary carries inf/NaN, `--format json` prints null: 29 fuzzed
    inputs printed a bare Infinity, which strict JSON parsers reject."""
    from cmax.cli.common import emit_json

    emit_json({"a": float("inf"), "b": [float("nan"), 1.5], "c": {"d": -float("inf")}})
    assert strict_json(capsys.readouterr().out) == {"a": None, "b": [None, 1.5],
                                                    "c": {"d": None}}
    from cmax.history.trend import _attachment  # the JSON attached to trend reports

    assert strict_json(_attachment({"change_pct": float("inf")}).decode()) == {
        "change_pct": None}


def test_named_pipes_in_an_audit_runs_root_do_not_hang(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO anywhere inside a run folder blocked the run's content digest forever; a FIFO
    named like a run archive blocked opening it."""
    cluster = tmp_path / "runs" / "aurora-h100-east"
    cluster.mkdir(parents=True)
    run = bundle(cluster, "2026-09-14", sample="aurora-compute")
    os.mkfifo(run / "nccl" / "stray.pipe")
    os.mkfifo(cluster / "2026-10-14.tar.gz")

    def hung(signum: int, frame: object) -> None:
        raise AssertionError("cmax audit blocked on a named pipe")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    try:
        code, result, _ = run_json(capsys, "audit", str(tmp_path / "runs"), "--no-pdf")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert code == 2
    # both are refused in one line each: the FIFO named like a run archive, and the run folder
    # holding a FIFO (a bundle folder holds regular files only, cmax/submission/bundle.py)
    unusable = sorted(result["unusable"], key=lambda u: u["path"])
    assert [Path(u["path"]).name for u in unusable] == ["2026-09-14", "2026-10-14.tar.gz"]
    assert "not a regular file" in unusable[1]["error"]
    assert "stray.pipe" in unusable[0]["error"]


INGEST = DATA / "ingest"
MLPERF_RESULT = INGEST / "mlperf" / "results" / "example_h100_64x8" / "resnet" / "result_0.txt"
NCCL_ROW = "43.12      0    41.98"
DEEP = "[" * 5000 + "]" * 5000


def _inspect(tmp_path: Path, capsys: pytest.CaptureFixture[str], source: Path, old: str | None,
             new: str, name: str | None = None) -> tuple[int, str]:
    """`cmax inspect --format json` on ``source`` with ``old`` replaced (or, with ``old``
    None, on ``new`` as the whole file): the exit code and stdout or the one error line."""
    text = source.read_text(encoding="utf-8")
    if old is not None:
        assert old in text, old
    path = tmp_path / (name or source.name)
    path.write_text(new if old is None else text.replace(old, new, 1), encoding="utf-8")
    code = main(["inspect", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("cmax: error: "), err
        return code, err
    assert code == 0, err
    strict_json(out)
    return code, out


@pytest.mark.parametrize(("source", "name"), [
    (INGEST / "incidents.json", None), (INGEST / "dgxc_parse_nemo2.json", None),
    (SAMPLES / "aurora-compute" / "audit" / "audit.values.json", None),
])
def test_deeply_nested_json_is_refused_naming_the_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], source: Path,
        name: str | None) -> None:
    """JSON nested 5,000 deep raised RecursionError in format detection. An object names
    the limit; a bare array (a text log may start with "[") is an unrecognised format."""
    for depth in (150, 5000):
        code, err = _inspect(tmp_path, capsys, source, None,
                             '{"a": ' * depth + "1" + "}" * depth, name)
        assert code == 2 and "JSON nesting exceeds cmax's limit of 100 levels" in err
    code, err = _inspect(tmp_path, capsys, source, None, DEEP, name)
    assert code == 2


@pytest.mark.parametrize("bad", ["inf", "nan", "1e999"])
def test_dgxc_max_iteration_not_finite(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       bad: str) -> None:
    """int() of inf/NaN (OverflowError/ValueError) for DGXC max_iteration."""
    code, err = _inspect(tmp_path, capsys, INGEST / "dgxc_parse_nemo2.csv", ",10.00,49",
                         f",10.00,{bad}")
    assert code == 2 and "max_iteration" in err and ":2:" in err
    code, err = _inspect(tmp_path, capsys, INGEST / "dgxc_parse_nemo2.json",
                         '"max_iteration": 20', f'"max_iteration": "{bad}"')
    assert code == 2 and "max_iteration" in err


@pytest.mark.parametrize(("source", "old"), [
    (INGEST / "incidents.csv", "XID 79 GPU fell off the bus"),
    (INGEST / "dgxc_parse_nemo2.csv", "Success"),
])
def test_csv_field_beyond_the_csv_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        source: Path, old: str) -> None:
    """csv.Error 'field larger than field limit (131072)' escaped as a traceback."""
    code, err = _inspect(tmp_path, capsys, source, old, '"' + "x" * 200_000 + '"')
    assert code == 2 and "CSV field exceeds cmax's limit of 131,072 characters" in err
    assert ":2:" in err


@pytest.mark.parametrize(("old", "new"), [
    (NCCL_ROW, "43.12    inf    41.98"),                  # int() of inf for #wrong
    (NCCL_ROW, "43.12    nan    41.98"),
    ("     1048576        262144", "-99999999999999999999        262144"),  # < INT64_MIN
    ("     1048576        262144", "1" + "0" * 5000 + "        262144"),  # > 4,300 digits
])
def test_nccl_rows_with_impossible_numbers_are_malformed_rows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> None:
    code, err = _inspect(tmp_path, capsys, INGEST / "nccl" / "all_reduce_1node.txt", old, new)
    assert code == 2 and "all_reduce_1node.txt:17: malformed nccl-tests data row" in err
    assert len(err) < 600


@pytest.mark.parametrize(("old", "new"), [
    ("# nThread 1 nGpus 1", "# nThread 1 nGpus 1" + "0" * 5000),
    ("#  Rank  3 Group", "#  Rank  3" + "0" * 5000 + " Group"),
])
def test_nccl_header_integers_beyond_the_digit_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> None:
    """int() of a 5,000-digit rank or nGpus raised ValueError (Python's 4,300-digit limit)."""
    _inspect(tmp_path, capsys, INGEST / "nccl" / "all_reduce_1node.txt", old, new)


@pytest.mark.parametrize("bad", ["Infinity", "NaN", "1e999", "[" * 3000 + "]" * 3000])
def test_mlperf_time_ms_not_finite_or_nested(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str) -> None:
    """int() of an infinite time_ms, RecursionError on a deeply nested MLLOG line."""
    _inspect(tmp_path, capsys, MLPERF_RESULT, '"time_ms": 1780000600001',
             f'"time_ms": {bad}')


def test_mlperf_platform_name_longer_than_a_file_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The system JSON is looked up as systems/<submission_platform>.json: a 300-character
    platform raised OSError 'File name too long' (found by tools/fuzz.py, seed 7)."""
    _inspect(tmp_path, capsys, MLPERF_RESULT, '"value": "example_h100_64x8"',
             '"value": "' + "h" * 300 + '"')


def test_audit_environment_that_is_not_a_string(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`"environment": 1.5` raised AttributeError in the PCIe passthrough grade (found by
    tools/fuzz.py, seed 7)."""
    code, _ = _inspect(tmp_path, capsys, SAMPLES / "aurora-compute" / "audit" /
                       "audit.values.json", '"environment": "slurm"', '"environment": 1.5')
    assert code == 0


def test_nccl_line_beyond_the_line_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 2 MB junk line was tokenised for seconds and silently ignored."""
    code, err = _inspect(tmp_path, capsys, INGEST / "nccl" / "all_reduce_1node.txt",
                         "#\n# Using devices", "#\n" + "1 " * (1 << 20) + "\n# Using devices")
    assert code == 2 and "all_reduce_1node.txt:3: a line of more than 1,048,576 characters " \
        "exceeds cmax's limit of 1,048,576 characters" in err


def test_audit_driver_version_of_5000_digits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """int() of a 5,000-digit version component raised ValueError in the software rules
    (found by tools/fuzz.py's pipeline family): such a version is unknown, not a crash."""
    b = bundle(tmp_path)
    edit(b / "audit" / "audit.values.json", '"580.159.03"', '"580.159.' + "9" * 5000 + '"', 7)
    code, _, _ = run_json(capsys, "validate", str(b))
    assert code in (0, 1)


# --- bounded memory: each reader refuses oversized input before holding it (cmax.reading.limits)
# ----

def test_a_gigabyte_line_in_a_training_log_is_refused_before_parsing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = bundle(tmp_path)
    log = b / FP8_LOG
    lines = log.read_bytes().split(b"\n")
    lines.insert(30, b"iteration " + b"9" * (2 << 20))  # a keyword line every reader matches
    log.write_bytes(b"\n".join(lines))
    err = one_line_error(capsys, "score", str(b))
    assert f"{FP8_LOG}:31: runs[1].log: a line of more than 1,048,576 characters" in err


def test_an_incident_log_beyond_the_size_limit_is_refused_unparsed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = bundle(tmp_path)
    path = b / "incidents.csv"
    header, *rows = path.read_bytes().splitlines(keepends=True)
    body = b"".join(rows)
    with path.open("wb") as fh:  # real rows, repeated past 64 MiB
        fh.write(header)
        for _ in range((64 << 20) // len(body) + 1):
            fh.write(body)
    size = path.stat().st_size
    err = one_line_error(capsys, "score", str(b))
    assert f"incidents.csv: reliability.incidents: a file of {size:,} bytes exceeds " \
        "cmax's limit of 67,108,864 bytes (64 MiB)" in err
    with path.open("r+b") as fh:  # 3 GiB of zeros (sparse): one "line", refused at 1 MiB
        fh.truncate(3 * 1024**3)
    assert "a line of more than" in one_line_error(capsys, "score", str(b))


def test_an_nccl_file_of_too_many_rows_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import cmax.ingest.formats.nccl_tests
    monkeypatch.setattr(cmax.ingest.formats.nccl_tests, "MAX_NCCL_ROWS", 10)
    b = bundle(tmp_path)
    err = one_line_error(capsys, "score", str(b))
    assert "more than 10 data rows exceeds cmax's limit of 10 rows in one nccl-tests file" in err
    monkeypatch.setattr(cmax.ingest.formats.nccl_tests, "MAX_NCCL_ROWS", 20_000)
    assert main(["score", str(b)]) == 0  # the sample's sweep is well inside the real limit


def _report_error(capsys: pytest.CaptureFixture[str], out: Path) -> str:
    """The error line of a failed `cmax report` (after its progress lines); nothing staged
    is left behind."""
    assert main(["report", str(SAMPLES / "aurora-compute"), "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert not list(out.glob(".cmax-report-*"))
    last = captured.err.splitlines()[-1]
    assert last.startswith("cmax: error: ")
    return last


@pytest.mark.usefixtures("no_assess")
def test_a_folder_where_a_report_goes_refuses_the_set_before_any_move(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a folder named like the last report, 2 of 3 files were moved in, then a
    traceback (exit 1)."""
    import cmax.render

    out = tmp_path / "out"
    (out / "p.brief.html").mkdir(parents=True)
    (out / "p.scorecard.json").write_text("last month")
    monkeypatch.setattr(cmax.render, "render_reports", _fake_render(fail_after=None))
    err = _report_error(capsys, out)
    assert "p.brief.html: -o: a report would replace a folder of the same name" in err
    assert sorted(p.name for p in out.iterdir()) == ["p.brief.html", "p.scorecard.json"]
    assert (out / "p.scorecard.json").read_text() == "last month"


@pytest.mark.usefixtures("no_assess")
def test_a_move_failing_part_way_puts_the_previous_reports_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import cmax.render
    import cmax.render.publish

    out = tmp_path / "out"
    out.mkdir()
    for name in ("p.scorecard.json", "p.brief.html"):
        (out / name).write_text("last month")
    monkeypatch.setattr(cmax.render, "render_reports", _fake_render(fail_after=None))
    real, calls = os.replace, []

    def flaky(source: Any, target: Any) -> None:
        calls.append(target)
        if Path(source).parent.name.startswith(".cmax-report-") and \
                Path(target).name == "p.brief.html":  # the new brief cannot be moved in
            raise OSError(28, "No space left on device", str(target))
        real(source, target)

    monkeypatch.setattr(os, "replace", flaky)
    err = _report_error(capsys, out)
    assert "cannot move the reports into place: No space left on device" in err
    assert sorted(p.name for p in out.iterdir()) == ["p.brief.html", "p.scorecard.json"]
    assert {p.read_text() for p in out.iterdir()} == {"last month"}
    assert len(calls) > 3  # it did get part-way before it failed


@pytest.mark.usefixtures("no_assess")
def test_staging_folders_of_killed_report_runs_are_removed_by_the_next(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    import cmax.render

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "out"
    for name in (f".cmax-report-{dead.pid}-x1", ".cmax-report-old9z",  # killed runs
                 f".cmax-report-{os.getppid()}-live"):  # a live process: another report
        (out / name).mkdir(parents=True)
        (out / name / "p.brief.html").write_text("half")
    monkeypatch.setattr(cmax.render, "render_reports", _fake_render(fail_after=None))
    assert main(["report", str(SAMPLES / "aurora-compute"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [
        f".cmax-report-{os.getppid()}-live"]


def test_a_manifest_with_a_byte_order_mark_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Notepad saves UTF-8 with a byte-order mark: it was 'invalid TOML'."""
    b = bundle(tmp_path)
    manifest = b / "cmax.toml"
    manifest.write_bytes(b"\xef\xbb\xbf" + manifest.read_bytes())
    code, card, _ = run_json(capsys, "score", str(b))
    assert code == 0 and card["provider"] == "Aurora Compute"


def test_runs_beyond_the_stated_limit_are_one_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cmax.reading.limits import MAX_RUNS

    b = bundle(tmp_path)
    manifest = b / "cmax.toml"
    text = manifest.read_text()
    first = text.index("[[runs]]")
    entry = text[first:text.index("[[runs]]", first + 1)]
    manifest.write_text(text[:first] + entry * (MAX_RUNS + 1) + text[first:])
    err = one_line_error(capsys, "validate", str(b))
    assert "runs" in err and f"at most {MAX_RUNS}" in err


# --- the review's hostile bundles, held to the stated memory and disk bounds -----------------

def _bench() -> Any:
    import importlib.util

    from tests.paths import REPO

    spec = importlib.util.spec_from_file_location(
        "bench_hostile", REPO / "benchmarks" / "bench_hostile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns)
            for p in folder.rglob("*")}


@pytest.mark.parametrize("name", list(BENCH.CASES))
def test_a_hostile_bundle_is_one_line_under_the_memory_ceiling_and_disk_budget(
        tmp_path: Path, name: str) -> None:
    """benchmarks/bench_hostile.py's cases, each in a fresh cmax process (``score``; a
    leaderboard ``report`` for the control-character names): exit 2 with an error line (or
    a result, for the cases whose input is valid), peak memory under MEMORY_CEILING (1 GiB),
    peak TMPDIR bytes within the archive budget (nothing for a folder bundle; at most 200
    MiB for issue 39's cases), killed past TIMEOUT_S (30 s), nothing left in TMPDIR and,
    for a folder, nothing written beside the evidence (no -wal, no -shm). The hard-link
    case puts a named pipe where its links lead outside: opening it would hang cmax until
    killed."""
    bundle = BENCH.CASES[name](tmp_path)
    before = _listing(bundle) if bundle.is_dir() else None
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    argv = BENCH.command(name, bundle, tmp_path / "out")
    code, _, rss, disk, err = BENCH.measure(bundle, tmp, argv, BENCH.TIMEOUT_S)
    assert code in BENCH.RESULTS.get(name, (2,)), f"{name}: exit {code}: {err}"
    if code == 2:
        assert err.startswith("cmax: error: "), err
    assert rss < BENCH.MEMORY_CEILING, f"{name}: peak RSS {rss >> 20} MiB"
    assert disk <= BENCH.disk_budget(bundle, name), f"{name}: peak disk {disk >> 20} MiB"
    if before is not None:
        assert _listing(bundle) == before
    assert list(tmp.iterdir()) == []


def test_one_unusable_bundle_does_not_stop_the_others_reports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39: one bad bundle stopped the leaderboard of every provider. It is now one
    error line; the others are rated, their reports and the leaderboard written, exit 2."""
    good = [bundle(tmp_path, "aurora-compute"), bundle(tmp_path, "borealis-cloud")]
    bad = bundle(tmp_path, "cinder-gpu")
    (bad / "cmax.toml").write_text((bad / "cmax.toml").read_text() + "garbage = [\n")
    out = tmp_path / "out"
    assert main(["report", str(good[0]), str(bad), str(good[1]), "-o", str(out),
                 "--no-pdf"]) == 2
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("cmax: error: ")]
    assert len(errors) == 1 and str(bad / "cmax.toml") in errors[0]
    assert "Traceback" not in captured.err
    written = sorted(p.name for p in out.iterdir())
    assert "leaderboard.html" in written and not any("cinder" in n for n in written)
    assert sum(n.endswith(".scorecard.json") for n in written) == 2
    assert main(["report", str(bad), str(bad), "-o", str(tmp_path / "none"), "--no-pdf"]) == 2
    assert "none of the 2 bundles could be rated" in capsys.readouterr().err
