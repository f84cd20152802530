"""Slurm accounting read as it is written (sacct --json, sacct -P / -p) and llmb-run's job
database read as the same clock: rows of the ``jobs`` table."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.errors import EvidenceError
from cmax.ingest.formats import AccountingFormat, identify, llmb_sqlite
from cmax.ingest.formats._slurm import elapsed_seconds
from cmax.ingest.training import job_of_log
from tests.paths import DATA
from tests.submission.intake.llmb_fakes import make_llmb_db

SLURM = DATA / "ingest" / "slurm"


def _frame(path: Path):  # type: ignore[no-untyped-def]
    fmt, probe = identify(path)
    assert isinstance(fmt, AccountingFormat)
    return fmt.id, fmt.frame(fmt.parse(probe), source_file=path.name)


@pytest.mark.parametrize(("name", "kind"), [("sacct.json", "sacct-json"),
                                            ("sacct_parsable.txt", "sacct-parsable")])
def test_both_sacct_outputs_give_the_same_jobs(name: str, kind: str) -> None:
    fmt, jobs = _frame(SLURM / name)
    assert fmt == kind
    assert jobs["job_id"].to_list() == ["41001", "41002", "41003"]  # step rows left out
    assert jobs["elapsed_s"].to_list() == [1192.0, 835.0, 855.0]
    assert jobs["cluster"].unique().to_list() == ["aurora"]
    first = jobs.row(0, named=True)
    assert first["start_s"] == 1789372720.0 and first["end_s"] == 1789373912.0
    assert first["submit_s"] == 1789372705.0
    assert first["nodes"].split(",")[:2] == ["aurora-h100-east-000", "aurora-h100-east-001"]
    assert len(first["nodes"].split(",")) == 64


def test_parsable_with_a_trailing_delimiter(tmp_path: Path) -> None:
    """sacct -p ends every field, the header's too, with |."""
    text = (SLURM / "sacct_parsable.txt").read_text(encoding="utf-8")
    path = tmp_path / "sacct_p.txt"
    path.write_text("".join(line + "|\n" for line in text.splitlines()), encoding="utf-8")
    assert _frame(path)[1]["elapsed_s"].to_list() == [1192.0, 835.0, 855.0]


def test_a_row_that_does_not_fit_the_header_names_its_line(tmp_path: Path) -> None:
    text = (SLURM / "sacct_parsable.txt").read_text(encoding="utf-8").splitlines()
    text[5] = text[5] + "|extra"
    path = tmp_path / "sacct.txt"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    fmt, probe = identify(path)
    with pytest.raises(EvidenceError) as caught:
        fmt.parse(probe)
    assert caught.value.line == 6 and "11 fields under a header of 10" in str(caught.value)


def test_elapsed_as_sacct_prints_it() -> None:
    assert elapsed_seconds("00:13:55") == 835.0
    assert elapsed_seconds("2-01:00:05") == 2 * 86400 + 3605.0
    assert elapsed_seconds("INVALID") is None


def test_a_log_name_carries_its_job() -> None:
    assert job_of_log("log-pretrain_llama3.1_70b_fp8_512_4242_0.out") == "4242"
    assert job_of_log("slurm-4242.out") == "4242"
    assert job_of_log("slurm-4242_7.out") == "4242_7"
    assert job_of_log("llama.log") is None


def test_llmb_job_database_is_a_clock(tmp_path: Path) -> None:
    """llmb-run stores sacct's Elapsed and NodeList per job (slurm_utils.py @ e249aa3)."""
    db = make_llmb_db(tmp_path / "h.db")
    jobs = llmb_sqlite.jobs_frame(llmb_sqlite.read_jobs(db), "h.db")
    by_id = dict(zip(jobs["job_id"].to_list(), jobs["elapsed_s"].to_list(), strict=True))
    assert by_id == {"1001": 600.0, "1017": 1260.0, "1002": 1800.0, "1003": 1800.0}
    assert jobs["nodes"][0].split(",")[:2] == ["n1", "n2"]
