"""The Exemplar archive through the commands: validate, score, price and report read it as it
is, --quote/--term/--manifest give what it cannot hold, and the job's login is in no output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmax.cli import main
from tests.paths import SAMPLES
from tests.submission.intake.llmb_fakes import LOGIN, Job, archive


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("pkg")
    return archive(tmp / "llmb-archive_26.08.00_20261101T120000Z.tar.zst",
                   [Job(), Job(job_id=3913030, dtype="bf16")], staging=tmp / "stage")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_validate_and_price_the_archive(package: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "validate", str(package), "--format", "json")
    assert code in (0, 1), err
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert "exemplar.left-out" in rules and "exemplar.suite-incomplete" in rules
    code, out, err = _run(capsys, "price", str(package), "--quote", "2.4", "--term", "24",
                          "--format", "json")
    assert code == 0, err
    assert json.loads(out)["quoted_usd_per_gpu_hour"] == 2.4
    assert LOGIN not in out


def test_small_manifest_option(package: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    small = tmp_path / "commercial.toml"
    small.write_text('[provider]\nname = "Example GPU Cloud"\ncluster = "east-1"\n\n'
                     "[pricing]\nusd_per_gpu_hour = 2.2\n")
    code, out, err = _run(capsys, "score", str(package), "--manifest", str(small),
                          "--format", "json")
    assert code in (0, 1), err  # 1: the two jobs share one log (a finding), still rated
    card = json.loads(out)
    assert card["provider"] == "Example GPU Cloud" and LOGIN not in out


def test_options_refused_for_a_bundle_with_its_manifest(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    code, _, err = _run(capsys, "score", str(SAMPLES / "aurora-compute"), "--quote", "2.0")
    assert code == 2 and "--quote, --term and --manifest are for llmb-run packages" in err


def test_report_of_the_archive_holds_no_login(package: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    code, _, err = _run(capsys, "report", str(package), "-o", str(out_dir), "--no-pdf",
                        "--quote", "2.4")
    assert code == 0, err
    written = [p for p in out_dir.rglob("*") if p.is_file()]
    assert written
    assert all(LOGIN not in p.read_text(errors="replace") for p in written)
