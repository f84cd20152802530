"""Format detection and the non-training parsers: nccl-tests, MLPerf, DGXC summaries, llmb-run
SQLite, incident logs. Samples live in tests/data/ingest; hostile variants are built in tmp."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
from pathlib import Path

import polars as pl
import pytest

from cmax.errors import CmaxError, EvidenceError, EvidenceFormatError
from cmax.ingest import FORMATS, detect_format, formats, formats_doc, inspect_file
from cmax.ingest.evidence import TABLES
from cmax.ingest.formats import dgxc as dgxc_parse
from cmax.ingest.formats import incidents, llmb_sqlite, mlperf
from cmax.ingest.formats import nccl_tests as nccl
from tests.paths import DATA
from tests.submission.intake.llmb_fakes import make_llmb_db

DATA = DATA / "ingest"
MLPERF = DATA / "mlperf" / "results" / "example_h100_64x8"


@pytest.mark.parametrize(("name", "fmt"), [
    ("nemo1_gpt3-175b.log", "nemo1"),
    ("nemo2_llama3.1-8b_fp8.log", "nemo2"),
    ("nemo2_messy.log", "nemo2"),
    ("megatron_bridge_llama3.1-70b.log", "megatron"),
    ("megatron_lm_nan_grad.log", "megatron"),
    ("maxtext_llama2-70b.log", "maxtext"),
    ("paxml_gpt3-5b.log", "paxml"),
    ("torchtitan_deepseek-v3.log", "torchtitan"),
    ("dgxc_parse_nemo2.csv", "dgxc-csv"),
    ("dgxc_parse_mbridge.csv", "dgxc-csv"),
    ("dgxc_parse_nemo2.json", "dgxc-json"),
    ("nccl/all_reduce_1node.txt", "nccl-tests"),
    ("nccl/old_format.txt", "nccl-tests"),
    ("mlperf/results/example_h100_64x8/llama31_405b/result_0.txt", "mlperf"),
    ("mlperf/systems/example_h100_64x8.json", "mlperf-system-json"),
    ("example_audit.values.json", "clustermax-audit"),
    ("example_audit_weak.values.json", "clustermax-audit"),
    ("incidents.csv", "incidents-csv"),
    ("incidents.json", "incidents-json"),
])
def test_detect_by_content_not_name(name: str, fmt: str, tmp_path: Path) -> None:
    assert detect_format(DATA / name) == fmt
    renamed = tmp_path / "evidence.dat"  # the name proves nothing
    shutil.copy(DATA / name, renamed)
    assert detect_format(renamed) == fmt
    assert fmt in FORMATS


def test_detect_sqlite_and_unknown(tmp_path: Path) -> None:
    assert detect_format(make_llmb_db(tmp_path / "history.db")) == "llmb-sqlite"
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.close()
    with pytest.raises(CmaxError, match="without an llmb-run"):
        detect_format(other)
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\nworld\n")
    with pytest.raises(CmaxError) as info:
        detect_format(junk)
    assert "tried " in str(info.value)
    assert all(fmt in str(info.value) for fmt in FORMATS)
    assert "`cmax docs formats`" in str(info.value)
    assert "incidents-json" in str(info.value)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    with pytest.raises(CmaxError, match="empty"):
        detect_format(empty)


# ----------------------------------------------------------------------------- nccl-tests

def test_nccl_single_node_all_reduce() -> None:
    path = DATA / "nccl" / "all_reduce_1node.txt"
    tests = nccl.parse_nccl_tests(path)
    frame = nccl.nccl_frame(tests, run_id="nccl[0]", source_file="x", path=path)
    assert frame.height == 12  # 6 sizes x (out-of-place, in-place)
    big = frame.filter(frame["size_bytes"] == 8589934592)
    oop = big.filter(~big["in_place"]).row(0, named=True)
    inp = big.filter(big["in_place"]).row(0, named=True)
    assert (oop["time_us"], oop["algbw_gbps"], oop["busbw_gbps"]) == (31307.0, 274.38, 480.16)
    assert (inp["time_us"], inp["busbw_gbps"], inp["wrong"]) == (31328.0, 479.84, 0)
    assert oop["collective"] == "all_reduce" and oop["ranks"] == 8 and oop["nodes"] == 1
    assert oop["dtype"] == "float" and oop["line"] == 20
    summary = inspect_file(path)
    assert {"kind": "host", "value": "pool0-01806", "line": 4, "where": None} in summary.pop(
        "facts")
    assert summary == {
        "format": "nccl-tests", "collective": "all_reduce", "ranks": 8, "nodes": 1, "rows": 6,
        "avg_busbw_gbps": 280.118, "avg_busbw_source": "printed", "max_busbw_gbps": 480.16,
        "max_busbw_in_place_gbps": 479.99,
        "wrong": 0,
    }


def test_nccl_multi_node_header_crlf_and_noise() -> None:
    summary = inspect_file(DATA / "nccl" / "all_gather_2node.txt")
    assert summary["collective"] == "all_gather"  # from "# Collective test starting"
    assert summary["ranks"] == 16 and summary["nodes"] == 2 and summary["rows"] == 5
    # the in-place peak (77.51) is reported beside the out-of-place one, never mixed into it
    assert (summary["max_busbw_gbps"], summary["max_busbw_in_place_gbps"]) == (77.47, 77.51)


def test_nccl_old_format_and_command_line_name() -> None:
    path = DATA / "nccl" / "old_format.txt"
    tests = nccl.parse_nccl_tests(path)
    assert tests[0].collective == "all_reduce"  # from the echoed mpirun command line
    frame = nccl.nccl_frame(tests, run_id="n", source_file="x", path=path)
    assert frame["busbw_gbps"].to_list() == [87.19, 86.90, 173.23, 173.45]
    assert frame["wrong"].to_list() == [0, 0, 0, 0]  # "0e+00" error column
    assert frame["ranks"].unique().to_list() == [16]


def test_nccl_two_tests_and_cut_last_row() -> None:
    path = DATA / "nccl" / "two_tests_cut.txt"
    tests = nccl.parse_nccl_tests(path)
    assert [t.collective for t in tests] == ["alltoall", "sendrecv"]
    assert [t.sizes for t in tests] == [2, 2]  # the cut-off 2 GiB row is not used
    frame = nccl.nccl_frame(tests, run_id="n", source_file="x", path=path)
    alltoall_in_place = frame.filter((frame["collective"] == "alltoall") & frame["in_place"])
    assert alltoall_in_place["wrong"].null_count() == 2  # "N/A"
    summary = inspect_file(path)
    assert summary["collective"] == "alltoall,sendrecv"
    assert "cut-off" in summary["notes"][0]
    # two collectives are never averaged together: each test reports its own figures
    assert summary["avg_busbw_gbps"] is None and summary["max_busbw_gbps"] is None
    assert summary["avg_busbw_source"] == "per test (2 tests)"
    each = [(t["collective"], t["avg_busbw_gbps"], t["avg_busbw_source"], t["max_busbw_gbps"])
            for t in summary["tests"]]
    assert each == [("alltoall", 134.323, "printed", 268.57),
                    ("sendrecv", 187.095, "computed", 374.07)]


def test_nccl_unknown_collective_and_malformed_row(tmp_path: Path) -> None:
    text = (DATA / "nccl" / "all_reduce_1node.txt").read_text()
    path = tmp_path / "bw.txt"
    path.write_text(text)
    with pytest.raises(CmaxError, match="which collective"):
        nccl.nccl_frame(nccl.parse_nccl_tests(path), run_id="n", source_file="x", path=path)
    named = tmp_path / "run_all_reduce.txt"
    named.write_text(text)  # the file name is the last resort
    assert nccl.parse_nccl_tests(named)[0].collective == "all_reduce"
    bad = tmp_path / "all_reduce.txt"
    lines = text.splitlines()
    lines[19] = "  8589934592    2147483648     float     sum      -1    31307  274.38"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(CmaxError) as info:
        nccl.parse_nccl_tests(bad)
    assert info.value.line == 20 and "malformed" in info.value.message


# ----------------------------------------------------------------------------- MLPerf

def test_mlperf_result_file_parse() -> None:
    run = mlperf.parse_result_file(MLPERF / "llama31_405b" / "result_0.txt")
    assert (run.benchmark, run.submitter, run.platform, run.division) == (
        "llama31_405b", "ExampleCloud", "example_h100_64x8", "closed")
    assert run.status == "success" and run.minutes == pytest.approx(100.0)
    aborted = mlperf.parse_result_file(MLPERF / "llama31_405b" / "result_1.txt")
    assert aborted.status == "failed" and aborted.minutes is None  # rank prefix "1: " ignored


def test_mlperf_folder_score_failed_run_counts_as_slowest() -> None:
    summary = inspect_file(MLPERF / "llama31_405b")
    assert summary["format"] == "mlperf" and summary["benchmark"] == "llama31_405b"
    assert [r["status"] for r in summary["runs"]] == ["success", "failed", "success"]
    # 3 runs, one failed: the failed run takes the slowest slot, the fastest (100) is dropped
    assert summary["score_min"] == pytest.approx(110.0)
    resnet = inspect_file(MLPERF / "resnet")
    # 13, 10, 20, 11, 12 -> drop 10 and 20 -> mean(11, 12, 13)
    assert resnet["score_min"] == pytest.approx(12.0) and resnet["olympic"] is True


def test_olympic_score_rules() -> None:
    assert mlperf.olympic_score([10.0, 11.0, 12.0, 13.0, 20.0], "resnet").score_min == 12.0
    two_failed = mlperf.olympic_score([10.0, None, None, 12.0, 13.0], "resnet")
    assert two_failed.score_min is None and "NOT correct" in (two_failed.note or "")
    few = mlperf.olympic_score([10.0, 12.0], "gpt3")
    # the summarizer drops one fastest and one slowest: two runs leave nothing, no score
    assert few.olympic is False and few.score_min is None
    unet = mlperf.olympic_score([float(i) for i in range(1, 41)], "unet3d")
    assert unet.dropped_each_end == 4 and unet.score_min == pytest.approx(20.5)
    wrong_count = mlperf.olympic_score([1.0, 2.0, 3.0, 4.0], "llama31_8b")
    assert wrong_count.score_min == 2.5 and "requires exactly 10" in (wrong_count.note or "")


def test_mlperf_bad_json_line_fails_the_file(tmp_path: Path) -> None:
    src = (MLPERF / "resnet" / "result_0.txt").read_text().splitlines()
    src.insert(3, ':::MLLOG {"namespace": "", "time_ms": "soon", "key": "seed"}')
    path = tmp_path / "result_0.txt"
    path.write_text("\n".join(src) + "\n")
    run = mlperf.parse_result_file(path)
    assert run.status == "invalid" and "line 4" in (run.problem or "")


# ----------------------------------------------------------------------------- DGXC / llmb-run

def test_dgxc_csv_nemo2_and_mbridge() -> None:
    exps = dgxc_parse.parse_csv(DATA / "dgxc_parse_nemo2.csv")
    assert [e.status for e in exps] == ["success", "incomplete"]
    assert exps[0].time_mean_s == 10.1 and exps[0].tflops_mean == 730.0 and exps[0].line == 2
    assert exps[1].time_mean_s is None and exps[1].max_iteration == 30
    mb = dgxc_parse.parse_csv(DATA / "dgxc_parse_mbridge.csv")
    assert mb[0].time_mean_s == pytest.approx(10.2) and mb[0].framework == "megatron-bridge"
    js = dgxc_parse.parse_json(DATA / "dgxc_parse_nemo2.json")
    assert js[0].time_mean_s == 1.48 and js[1].status == "incomplete"


def test_dgxc_select_experiment() -> None:
    exps = dgxc_parse.parse_csv(DATA / "dgxc_parse_nemo2.csv")
    path = DATA / "dgxc_parse_nemo2.csv"
    with pytest.raises(CmaxError, match="holds 2 experiments") as info:
        dgxc_parse.select(exps, None, file=path, field="runs[0].log")
    assert info.value.field == "runs[0].log"
    assert dgxc_parse.select(exps, "llama3.1_70b", file=path, field="runs[0].log").status == (
        "incomplete")
    with pytest.raises(CmaxError, match="matches 2 of 2") as info:
        dgxc_parse.select(exps, "llama3.1", file=path, field="runs[0].log")
    assert info.value.field == "runs[0].experiment"


def test_llmb_sqlite_latest_job_wins(tmp_path: Path) -> None:
    db = make_llmb_db(tmp_path / "llmb.db")
    jobs = llmb_sqlite.read_jobs(db)
    job, notes = llmb_sqlite.select_job(jobs, workload="llama3.1-70b", precision="fp8",
                                        num_gpus=512, selector=None, file=db, field="runs[0].log")
    assert job.row["job_id"] == "1017" and job.status == "success"
    assert job.row["train_step_time_seconds"] == 10.21 and "superseded" in notes[0]
    nemoh, _ = llmb_sqlite.select_job(jobs, workload="nemotronh-56b", precision="fp8",
                                      num_gpus=512, selector="nemotronh", file=db, field="f")
    assert nemoh.status == "no_data"  # llmb-run "no_log"
    with pytest.raises(CmaxError, match="no job for"):
        llmb_sqlite.select_job(jobs, workload="llama3.1-70b", precision="fp8", num_gpus=1024,
                               selector=None, file=db, field="runs[0].log")
    summary = inspect_file(db)
    assert summary["format"] == "llmb-sqlite" and len(summary["jobs"]) == 4


# ----------------------------------------------------------------------------- incidents

def test_incidents_csv_times_lines_and_multiline() -> None:
    rows = incidents.parse_incidents_csv(DATA / "incidents.csv")
    assert [r["line"] for r in rows] == [2, 3, 4, 5]
    utc = dt.UTC
    assert rows[1]["start"] == dt.datetime(2026, 7, 10, 0, 0, tzinfo=utc)  # +02:00 -> UTC
    assert rows[2]["start"] == dt.datetime(2026, 8, 1, 9, 30, tzinfo=utc)  # naive -> UTC
    assert rows[1]["gpu"] is None and rows[1]["planned"] is True
    assert rows[2]["planned"] is False  # "no"
    assert rows[3]["end"] is None and "two leaf" in str(rows[3]["description"])
    frame = incidents.incidents_frame(rows, source_file="incidents.csv")
    assert frame.height == 4 and frame.schema["start"] == pl.Datetime("us", "UTC")
    summary = inspect_file(DATA / "incidents.csv")
    assert (summary["incidents"], summary["first"], summary["last"]) == (
        4, "2026-07-03T14:05:00+00:00", "2026-09-12T23:10:00+00:00")


def test_incidents_json_lines() -> None:
    rows = incidents.parse_incidents_json(DATA / "incidents.json")
    assert [r["line"] for r in rows] == [3, 12]
    assert rows[1]["start"] == dt.datetime(2026, 7, 20, 13, 0, tzinfo=dt.UTC)
    assert rows[1]["planned"] is False and rows[1]["gpu"] is None


@pytest.mark.parametrize(("row", "message", "field"), [
    ("2026-07-03 14:05,2026-07-03 13:00,n1,0,Faulty GPU,false", "before start", "end"),
    ("yesterday,2026-07-03T13:00Z,n1,0,Faulty GPU,false", "invalid time", "start"),
    ("2026-07-03T14:05Z,,n1,0,Faulty GPU,maybe", "invalid planned", "planned"),
    ("2026-07-03T14:05Z,,,0,Faulty GPU,false", "node is empty", "node"),
    ("2026-07-03T14:05Z,,n1,0,Faulty GPU", "fewer fields", None),
])
def test_incidents_malformed_row_names_file_and_line(
        tmp_path: Path, row: str, message: str, field: str | None) -> None:
    path = tmp_path / "incidents.csv"
    path.write_text("start,end,node,gpu,category,planned\n"
                    "2026-07-01T00:00Z,2026-07-01T01:00Z,n0,1,Faulty GPU,false\n" + row + "\n")
    with pytest.raises(CmaxError, match=message) as info:
        incidents.parse_incidents_csv(path)
    assert info.value.line == 3 and info.value.file == str(path)
    assert info.value.field == field


def test_incidents_unquoted_comma_in_trailing_description(tmp_path: Path) -> None:
    path = tmp_path / "incidents.csv"
    path.write_text("start,end,node,gpu,category,planned,description\n"
                    "2026-07-01T00:00Z,2026-07-01T01:00Z,n0,,Host Maintenance,true,"
                    "firmware update, announced 7 days ahead\n")
    rows = incidents.parse_incidents_csv(path)
    assert rows[0]["description"] == "firmware update, announced 7 days ahead"


def test_incidents_json_bad_item(tmp_path: Path) -> None:
    path = tmp_path / "incidents.json"
    path.write_text(json.dumps([{"start": "2026-07-01T00:00Z", "end": None, "node": "n",
                                 "category": "GPU", "planned": False},
                                {"start": "2026-07-02T00:00Z", "end": None, "node": "n",
                                 "category": "GPU", "planned": "perhaps"}], indent=1))
    with pytest.raises(CmaxError, match="planned") as info:
        incidents.parse_incidents_json(path)
    assert info.value.line == 9


# ----------------------------------------------------------------------------- the registry

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fmt", [f for f in formats.all_formats()
                                 if not f.sample.startswith("(")], ids=lambda f: f.id)
def test_every_format_detects_and_summarises_its_sample(fmt: formats.Format[object],
                                                        tmp_path: Path) -> None:
    sample = DATA.parent / fmt.sample
    renamed = tmp_path / "evidence.dat"
    shutil.copy(sample, renamed)
    assert formats.identify(renamed)[0] is fmt  # by content: the name proves nothing
    found, probe = formats.identify(sample)  # (nccl-tests may need the name's collective)
    assert found is fmt
    summary = fmt.summarise(fmt.parse(probe), probe)
    assert json.dumps(summary, allow_nan=False)


def test_registry_orders_structure_then_priority() -> None:
    order = formats.all_formats()
    marked = [bool(f.markers) for f in order]
    assert marked == sorted(marked)  # every structural format before every text format
    text = [f for f in order if f.markers]
    assert text[0].id == "mlperf"  # :::MLLOG beats the framework log it embeds
    assert [f.priority for f in text] == sorted((f.priority for f in text), reverse=True)
    assert tuple(f.id for f in order) == FORMATS


def test_mllog_beats_training_markers_in_one_chunk(tmp_path: Path) -> None:
    nemo = (DATA / "nemo2_llama3.1-8b_fp8.log").read_text()
    mixed = tmp_path / "result_0.txt"
    mixed.write_text(nemo + ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": '
                     '"POINT_IN_TIME", "key": "submission_org", "value": "x"}\n')
    assert detect_format(mixed) == "mlperf"


def test_json_is_parsed_once_for_detection_and_parsing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = json.loads

    def counting(text: str | bytes, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        return real(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "loads", counting)
    fmt, probe = formats.identify(DATA / "dgxc_parse_nemo2.json")
    fmt.parse(probe)
    assert fmt.id == "dgxc-json" and calls == 1


def test_a_format_whose_role_disagrees_with_its_class_is_refused() -> None:
    class Plain(formats.Format[str]):
        id = "plain-run"
        title = "a run format without read_run"
        role = "run"
        tool, sample = "tests", "(none)"

        def parse(self, probe: formats.Probe) -> str:
            return ""

        def summarise(self, parsed: str, probe: formats.Probe) -> dict[str, object]:
            return {}

    class Audit(Plain, formats.AuditFormat[str]):  # type: ignore[misc]
        id = "audit-said-run"

        def checks(self, parsed: str, *, source_file: str
                   ) -> tuple[list[dict[str, object]], str | None]:
            return [], None

    with pytest.raises(RuntimeError, match="not declared"):
        formats.register(Plain())
    here = Plain.__module__
    x = (formats.Marker(b"X", "X"),)
    formats.declare(formats.Declaration("plain-run", here, "run", 1, markers=x))
    formats.declare(formats.Declaration("audit-said-run", here, "run", 1, markers=x))
    try:
        with pytest.raises(RuntimeError, match="not a RunFormat"):
            formats.register(Plain())
        with pytest.raises(RuntimeError, match=r"declares role 'run' but is not a RunFormat"):
            formats.register(Audit())
        Plain.role = "audit"  # type: ignore[assignment]
        with pytest.raises(RuntimeError, match="role 'audit' but declared 'run'"):
            formats.register(Plain())
        registered = formats._protocol._REGISTRY
        assert "plain-run" not in registered and "audit-said-run" not in registered
    finally:
        formats.forget("plain-run")
        formats.forget("audit-said-run")
    with pytest.raises(ValueError, match="unknown role"):
        formats.Declaration("nonsense-role", here, "nonsense", 1, markers=x)  # type: ignore[arg-type]


def test_every_role_feeds_a_declared_table() -> None:
    """Each format role fills a table declared in cmax.ingest.evidence.TABLES (mlperf-system: the
    system facts of an MLPerf tree, recorded on its result set)."""
    fed = {role for table in TABLES for role in table.roles}
    assert {f.role for f in formats.all_formats()} - {"mlperf-system"} <= fed


def test_a_new_format_is_one_declaration_and_one_registration(tmp_path: Path) -> None:
    class Greeting(formats.Format[str]):
        id = "greeting"
        title = "a test format"
        role = "mlperf-system"
        tool = "tests"
        sample = "(none)"

        def parse(self, probe: formats.Probe) -> str:
            return probe.head_text.split()[1]

        def summarise(self, parsed: str, probe: formats.Probe) -> dict[str, object]:
            return {"format": self.id, "name": parsed}

    path = tmp_path / "x.log"
    path.write_text("HELLO world\ntrain_step_timing in s: 1.0\n")
    assert detect_format(path) == "nemo2"
    formats.declare(formats.Declaration(
        "greeting", Greeting.__module__, "mlperf-system", 1000,
        markers=(formats.Marker(b"HELLO", r"(?m)^HELLO \w+"),)))
    try:
        formats.register(Greeting())
        assert detect_format(path) == "greeting"
        assert inspect_file(path) == {"format": "greeting", "name": "world"}
        with pytest.raises(RuntimeError, match="twice"):
            formats.register(Greeting())
    finally:
        formats.forget("greeting")


def test_docs_formats_md_is_generated_from_the_registry() -> None:
    doc = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    assert doc == formats_doc.formats_markdown(), (
        "docs/formats.md is stale: run `python -m cmax.ingest.formats docs/formats.md`")
    for fmt in formats.all_formats():
        assert f"`{fmt.id}`" in doc


def test_unknown_format_error_points_to_existing_doc(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing\n")
    with pytest.raises(EvidenceFormatError) as info:
        detect_format(junk)
    assert info.value.fix is not None and "`cmax docs formats`" in info.value.fix
    assert (REPO / "docs" / "formats.md").is_file()


def test_probe_refuses_folder_missing_and_empty(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match="is a directory"):
        formats.Probe(tmp_path)
    with pytest.raises(EvidenceError, match="file not found"):
        formats.Probe(tmp_path / "nope")
    (tmp_path / "e").write_bytes(b"")
    with pytest.raises(EvidenceError, match="empty"):
        formats.Probe(tmp_path / "e")


def test_llmb_job_facts_expand_the_slurm_node_list(tmp_path: Path) -> None:
    jobs = llmb_sqlite.read_jobs(make_llmb_db(tmp_path / "h.db"))
    facts = llmb_sqlite.job_facts(jobs)
    first = next(f.where for f in facts if f.kind == "experiment")
    hosts = [f.value for f in facts if f.kind == "host" and f.where == f"{first}: node_list"]
    assert hosts == [f"n{i}" for i in range(1, 65)]  # "n[1-64]", one fact per host
    assert {f.value for f in facts if f.kind == "precision"} <= {"fp8", "bf16"}


@pytest.mark.parametrize(("expression", "hosts"), [
    ("node[001-003,007],login1", ["node001", "node002", "node003", "node007", "login1"]),
    ("rack[1-2]-n[08-09]", ["rack1-n08", "rack1-n09", "rack2-n08", "rack2-n09"]),
    ("gpu-01", ["gpu-01"]),
    ("x[a-b]", None),  # not a Slurm range
    ("a[1-99999999]", None),  # past MAX_HOSTS: no facts rather than a memory blow-up
    ("a[3-1]", None),
])
def test_expand_hostlist(expression: str, hosts: list[str] | None) -> None:
    assert llmb_sqlite.expand_hostlist(expression) == hosts


@pytest.mark.parametrize("sample", ["nccl/all_reduce_2node.json", "nccl/dcgm/node-a.json"])
def test_node_health_rows_come_from_the_format(sample: str) -> None:
    from cmax.ingest.evidence import NODE_HEALTH_SCHEMA, conform

    fmt, probe = formats.identify(DATA.parent / sample)
    assert isinstance(fmt, formats.NcclFormat | formats.NodeHealthFormat)
    rows = fmt.node_health(fmt.parse(probe), source_file="n/x.json")
    assert rows is not None and rows.height > 0
    assert set(conform(rows, NODE_HEALTH_SCHEMA)["source_file"].to_list()) == {"n/x.json"}
    nccl_format = formats.by_id("nccl-tests")
    assert isinstance(nccl_format, formats.NcclFormat)
    assert nccl_format.node_health([], source_file="-") is None


def test_llmb_sqlite_beyond_its_size_or_row_limit_is_one_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The jobs table is read whole: a hostile database is refused before (size) or while
    (rows) it is read, never held in memory."""
    from cmax.cli import main
    from cmax.reading import sqlitefile

    db = make_llmb_db(tmp_path / "llmb.db")
    monkeypatch.setattr(llmb_sqlite, "MAX_HISTORY_JOBS", 3)
    with pytest.raises(CmaxError, match="a jobs table of more than 3 rows exceeds cmax's limit"):
        llmb_sqlite.read_jobs(db)
    monkeypatch.setattr(llmb_sqlite, "MAX_HISTORY_JOBS", 4)
    assert len(llmb_sqlite.read_jobs(db)) == 4
    monkeypatch.setattr(sqlitefile, "MAX_SQLITE_BYTES", db.stat().st_size - 1)
    with pytest.raises(CmaxError, match=r"job-history database of .* bytes exceeds"):
        llmb_sqlite.read_jobs(db)
    assert main(["inspect", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "llmb.db" in err and "Traceback" not in err
