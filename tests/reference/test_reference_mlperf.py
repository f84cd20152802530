"""NVIDIA's MLPerf submissions table, the RCP data and the RCP check (reference/mlperf_*)."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from cmax.errors import ReferenceDataError
from cmax.ingest.formats import mlperf
from cmax.ingest.formats.mlperf import convergence_point
from cmax.reference.checksum import GUARDED_FILES
from cmax.reference.mlperf import (
    RCP_FILE,
    TABLE_FILE,
    load_mlperf_reference,
    min_acceptable_mean,
    rcp_check,
    t_two_sided_p,
)
from tests.paths import DATA, REFERENCE

TABLE = load_mlperf_reference(REFERENCE)
NVIDIA_405B = DATA / "mlperf" / "v5.0" / "NVIDIA" / "results" / "eos-dfw_n64_ngc25.01_nemo"


def test_table_rows_are_sourced_and_guarded() -> None:
    assert TABLE_FILE in GUARDED_FILES and RCP_FILE in GUARDED_FILES
    assert len(TABLE.results) == 141
    assert {r.round for r in TABLE.results} == {"4.0", "4.1", "5.0", "5.1"}
    for row in TABLE.results:
        assert re.fullmatch(r"mlcommons/training_results_v\d\.\d:NVIDIA/results/[^:]+/"
                            r"@[0-9a-f]{40}", row.source), row.source
        assert row.family is not None and row.scaling_factor >= 1.0 and row.num_gpus > 0
    eos = [r for r in TABLE.results if r.system_folder.startswith(("eos_", "eos-dfw"))]
    assert eos and {r.family for r in eos} == {"h100"}
    assert "mlperf-logging 4.1.68" in TABLE.rcp_source


def test_match_order_and_missing() -> None:
    same = TABLE.match("llama2_70b_lora", "NVIDIA H100-SXM5-80GB", 8, "4.0")
    assert same.basis == "same" and same.row is not None and same.row.system_folder == \
        "eos_ngc24.04_nemo"
    other_round = TABLE.match("llama2_70b_lora", "NVIDIA H100-SXM5-80GB", 8, "5.1")
    assert other_round.basis == "round" and other_round.missing == "round"
    unknown_round = TABLE.match("llama31_405b", "NVIDIA H100-SXM5-80GB", 512, None)
    assert unknown_round.row is not None and unknown_round.row.round == "5.0"
    none = TABLE.match("llama31_405b", None, 512, "5.0")
    assert none.row is None and none.missing == "accelerator"
    no_scale = TABLE.match("llama31_405b", "NVIDIA H100-SXM5-80GB", None, "5.0")
    assert no_scale.row is None and no_scale.missing == "scale"
    assert TABLE.match("unet3d", "NVIDIA GB300", 8, "5.1").missing == "accelerator"
    assert TABLE.match("no_such_benchmark", "h100", 8, "5.0").missing == "benchmark"


def test_t_distribution_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 8, 9, 18, 38):
        for t in (0.05, 1.0, 2.2, -4.0):
            assert t_two_sided_p(t, df) == pytest.approx(2 * stats.t.sf(abs(t), df), abs=1e-12)


def test_rcp_statistics_match_the_package() -> None:
    rcp_checker = pytest.importorskip("mlperf_logging.rcp_checker.rcp_checker")
    checker = rcp_checker.RCP_Checker("training", "5.0.0", "llama2_70b_lora", False)
    ours = TABLE.rcp("5.0.0", "llama2_70b_lora")
    assert ours is not None
    for record in ours.records:
        theirs = checker.rcp_data[record.name]
        assert record.min_epochs == theirs["Min Epochs"] and record.mean == theirs["RCP Mean"]
        assert min_acceptable_mean(record.mean, record.stdev, len(theirs["Epochs to converge"])
                                   - 2, ours.submission_runs) == pytest.approx(
            record.min_epochs, abs=1e-3)


def test_rcp_check_reproduces_nvidia_scaling_json() -> None:
    """NVIDIA's 405B converges faster than the RCP mean: MLCommons scaled it by 7/6."""
    [s] = mlperf.read_tree(NVIDIA_405B / "llama31_405b", root=NVIDIA_405B.parents[1])
    rcps = TABLE.rcp("5.0.0", "llama31_405b")
    assert rcps is not None
    outcome = rcp_check(rcps, 1152, [convergence_point(r, s.benchmark) for r in s.runs])
    assert outcome.passed is True and outcome.message == "RCP found"
    assert outcome.norm_factor == pytest.approx(s.scaling_factor, rel=1e-12)


def test_malformed_table_names_the_line(tmp_path: Path) -> None:
    for name in (TABLE_FILE, RCP_FILE):
        shutil.copy(REFERENCE / name, tmp_path / name)
    with (tmp_path / TABLE_FILE).open(newline="") as fh:
        rows = list(csv.reader(fh))
    rows[3][rows[0].index("num_gpus")] = "eight"
    with (tmp_path / TABLE_FILE).open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    with pytest.raises(ReferenceDataError) as info:
        load_mlperf_reference(tmp_path)
    assert info.value.line == 4 and info.value.fix
