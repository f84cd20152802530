"""`cmax audit` on real bundles: the shipped samples as two monthly runs, the second slower.

The runs sit where ClusterMAX's runner puts its output (``<root>/<cluster>/<timestamp>/audit/``
with a ``cmax.toml`` beside it), and everything below the CLI is the real pipeline.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.submission.samples import sample_bundles

STEP = re.compile(r"(train_step_timing in s: )([0-9.]+)")


def _slow_down(bundle: Path, factor: float) -> None:
    """Every training step takes ``factor`` times as long (and the date moves a month on)."""
    for log in (bundle / "training").glob("*.log"):
        text = STEP.sub(lambda m: f"{m.group(1)}{float(m.group(2)) * factor:.2f}",
                        log.read_text())
        log.write_text(text)
    toml = bundle / "cmax.toml"
    toml.write_text(toml.read_text().replace("date = 2026-09-14", "date = 2026-10-14"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("runs")
    aurora = next(b for b in sample_bundles() if b.name == "aurora-compute")
    shutil.copytree(aurora, r / "aurora-h100-east" / "20260914-090000-000000")
    shutil.copytree(aurora, r / "aurora-h100-east" / "20261014-090000-000000")
    _slow_down(r / "aurora-h100-east" / "20261014-090000-000000", 1.08)
    return r


def test_real_runs_regress_and_rerun_changes_nothing(root: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert (root / "aurora-h100-east" / "20260914-090000-000000" / "audit"
            / "audit.values.json").is_file()
    assert main(["audit", str(root), "--format", "json", "-o", str(tmp_path),
                 "--no-pdf"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["runs"]["scored"] == 2 and data["unusable"] == []
    regressions = {i["workload"]: i for i in data["items"]
                   if i["kind"] == "regression_vs_previous"}
    # 8% longer steps: throughput x 1/1.08, i.e. -7.4% on every training workload
    assert sorted(regressions) == ["grok1-314b fp8 512 GPUs", "llama3.1-405b bf16 512 GPUs",
                                   "llama3.1-405b fp8 512 GPUs"]
    for item in regressions.values():
        assert item["change_pct"] == pytest.approx((1 / 1.08 - 1) * 100, abs=0.3)
    assert data["exemplar"][0]["passed_run"] == "20260914-090000-000000"
    history = root / ".cmax-history"
    before = {p: p.read_bytes() for p in history.rglob("*") if p.is_file()}
    assert main(["audit", str(root), "--format", "json"]) == 1
    again = json.loads(capsys.readouterr().out)
    # the first pass judged both new runs; a pass with nothing new reports the same standing
    newest = "20261014-090000-000000"
    assert again["runs"]["scored"] == 0
    assert again["items"] == data["items"]
    assert {i["run"] for i in data["items"]} == {"20260914-090000-000000", newest}
    assert {p: p.read_bytes() for p in history.rglob("*") if p.is_file()} == before
    html = (tmp_path / "cluster-aurora-h100-east.trend.html").read_text()
    assert "Aurora Compute" in html and "regression vs previous" in html
