"""SQLite evidence (llmb-run's job history) is read as data, never run as a program: views,
virtual tables and computed columns are refused, every query has a work budget, values a
size bound, and nothing is ever written beside the database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.errors import CmaxError, EvidenceError
from cmax.ingest.formats import llmb_sqlite
from cmax.reading.limits import MAX_SQLITE_STEPS
from cmax.reading.sqlitefile import open_sqlite
from tests.submission.intake.llmb_fakes import make_llmb_db

COLUMNS = "job_id TEXT, perf_parse_status TEXT, train_step_time_seconds REAL"


def _db(path: Path, *statements: str) -> Path:
    con = sqlite3.connect(path)
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()
    return path


def _one_line(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    assert main(["inspect", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("cmax: error: ")
    assert "Traceback" not in err and path.name in err
    return err


@pytest.mark.parametrize(("schema", "says"), [
    # the review's view counting to 10^12: a SELECT of it never ends
    ("CREATE VIEW jobs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
     "LIMIT 1000000000000) SELECT x AS job_id, 'success' AS perf_parse_status, "
     "1.0 AS train_step_time_seconds FROM c", "is a view"),
    # a view of 10 MB strings a row
    ("CREATE VIEW jobs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
     "LIMIT 1000) SELECT hex(zeroblob(5000000)) AS job_id, 'success' AS perf_parse_status, "
     "1.0 AS train_step_time_seconds FROM c", "is a view"),
    ("CREATE VIRTUAL TABLE jobs USING fts5(job_id, perf_parse_status, "
     "train_step_time_seconds)", "is a virtual table"),
    (f"CREATE TABLE jobs ({COLUMNS}, pad TEXT AS (hex(zeroblob(job_id * 1000000))) VIRTUAL)",
     "generated column computed at each read"),
])
def test_a_jobs_table_that_is_a_program_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: str, says: str) -> None:
    db = _db(tmp_path / "jobs.sqlite3", schema)
    with pytest.raises(EvidenceError, match=says):
        llmb_sqlite.read_jobs(db)
    assert says in _one_line(capsys, db)


def test_a_default_repeated_in_every_old_row_is_bounded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A column added with a 1 MB default after 40 rows: 40 MB read from a 40 KB file."""
    db = _db(tmp_path / "jobs.sqlite3", f"CREATE TABLE jobs ({COLUMNS})",
             *[f"INSERT INTO jobs VALUES ('{i}', 'success', 1.0)" for i in range(40)],
             f"ALTER TABLE jobs ADD COLUMN pad TEXT DEFAULT '{'x' * 1_000_000}'")
    assert db.stat().st_size < 2_000_000
    assert "the values read from the database exceeds" in _one_line(capsys, db)


def test_every_query_has_a_work_budget(tmp_path: Path) -> None:
    db = make_llmb_db(tmp_path / "jobs.sqlite3")
    with pytest.raises(CmaxError, match=f"limit of {MAX_SQLITE_STEPS:,} SQLite instructions"), \
            open_sqlite(db) as con:
        con.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                    "LIMIT 1000000000000) SELECT count(*) FROM c").fetchall()


def test_a_value_beyond_the_length_bound_is_one_error(tmp_path: Path) -> None:
    db = make_llmb_db(tmp_path / "jobs.sqlite3")
    with pytest.raises(CmaxError, match="a value in the SQLite database exceeds"), \
            open_sqlite(db) as con:
        con.execute("SELECT zeroblob(100000000)").fetchall()


def test_a_wal_database_with_a_trigger_is_read_and_nothing_is_written_beside_it(
        tmp_path: Path) -> None:
    """``mode=ro`` alone created jobs.sqlite3-shm beside the evidence; no write ever happens,
    so a trigger cannot fire."""
    folder = tmp_path / "evidence ?#%"  # characters a URI would otherwise misread
    folder.mkdir()
    db = make_llmb_db(folder / "jobs.sqlite3")
    _db(db, "PRAGMA journal_mode = WAL",
        "CREATE TABLE log (x)",
        "CREATE TRIGGER t AFTER INSERT ON jobs BEGIN INSERT INTO log VALUES (1); END")
    assert sorted(p.name for p in folder.iterdir()) == ["jobs.sqlite3"]
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert len(llmb_sqlite.read_jobs(db)) == 4
    assert llmb_sqlite.has_jobs_table(db)
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_changes_left_in_a_wal_file_are_refused_not_half_read(tmp_path: Path) -> None:
    db = make_llmb_db(tmp_path / "jobs.sqlite3")
    (tmp_path / "jobs.sqlite3-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\0" * 28)
    with pytest.raises(EvidenceError, match="changes not yet written into it") as info:
        llmb_sqlite.read_jobs(db)
    assert "wal_checkpoint" in str(info.value)


def test_text_that_is_not_utf8_is_one_error(tmp_path: Path) -> None:
    db = make_llmb_db(tmp_path / "jobs.sqlite3")
    _db(db, "UPDATE jobs SET dtype = CAST(x'ff9c' AS TEXT) WHERE rowid = 1")
    with pytest.raises(EvidenceError, match=r"not UTF-8|decode to UTF-8"):
        llmb_sqlite.read_jobs(db)
