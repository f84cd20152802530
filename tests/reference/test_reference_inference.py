"""The serving references (reference/inference.csv): offline rows and the InferenceX curve
snapshot kept apart, every row sourced, a malformed curve row refused at load."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from cmax.errors import ReferenceDataError
from cmax.reference import load_reference
from cmax.reference.inference import load_inference, mlperf_scenario
from cmax.reference.view import RefView
from cmax.resources import data_dir


def test_the_inferencex_snapshot_is_a_curve_with_its_runs() -> None:
    curve = RefView(load_reference()).inference_curve("DeepSeek-V4-Pro", "b200", "fp4", 8192, 1024)
    assert [r["concurrency"] for r in curve] == [64, 128, 256, 512, 1024]
    # as published: interactivity falls as throughput per GPU rises along the sweep
    xs = [r["interactivity_tok_s_user"] for r in curve]
    ys = [r["output_tok_s_per_gpu"] for r in curve]
    assert xs == sorted(xs, reverse=True) and ys == sorted(ys)
    assert curve[0]["output_tok_s_per_gpu"] == pytest.approx(160.82267313299127)
    assert curve[0]["j_per_output_token"] == pytest.approx(4.016292)
    assert all("actions/runs/33554397154" in r["source"] and "@6760c53" in r["source"]
               for r in curve)
    # concurrency x interactivity bounds each point's total over its 8 GPUs
    assert all(r["concurrency"] * r["interactivity_tok_s_user"] >= 8 * r["output_tok_s_per_gpu"]
               for r in curve)


def test_a_curve_point_is_no_offline_maximum() -> None:
    ref = load_reference()
    assert ref.match_inference("dsv4", "b200", "nvfp4", 8192, 1024) is None
    offline = ref.match_inference("llama3.3-70b", "h200", "fp8", 1024, 1024)
    assert offline is not None and offline["interactivity_tok_s_user"] is None
    assert offline["output_tok_s_per_gpu"] == 2582


def test_a_curve_point_without_its_concurrency_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "inference.csv"
    shutil.copy(data_dir("reference") / "inference.csv", path)
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    at = next(i for i, r in enumerate(rows) if i and r[header.index("concurrency")])
    rows[at][header.index("concurrency")] = ""
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    with pytest.raises(ReferenceDataError, match="needs its concurrency and date") as caught:
        load_inference(path, set(load_reference().gpus))
    assert caught.value.line == at + 1


def _rows() -> list[dict[str, object]]:
    return load_reference().inference.to_dicts()


def test_the_release_holds_official_curves_over_four_gpu_types_and_mlperf_rows() -> None:
    curve = [r for r in _rows() if r["interactivity_tok_s_user"] is not None]
    scenario = [r for r in _rows() if mlperf_scenario(r) is not None]
    assert len(curve) >= 20 and len({r["gpu"] for r in curve}) >= 4
    assert {"h200", "b200", "gb200", "b300"} <= {str(r["gpu"]) for r in curve}
    assert len(scenario) >= 10
    assert all("@" in str(r["source"]) for r in curve + scenario)


#: the InferenceX app's synthetic overview fixture (round numbers, no run): never a reference
ILLUSTRATIVE = "overview-rows.json"
_RUN = re.compile(r"https://github\.com/SemiAnalysisAI/InferenceX/actions/runs/\d+/attempts/\d+")


def test_no_curve_row_comes_from_illustrative_data() -> None:
    for row in (r for r in _rows() if r["interactivity_tok_s_user"] is not None):
        source = str(row["source"])
        assert ILLUSTRATIVE not in source, source
        # every official row names the workflow run that measured it
        assert _RUN.search(source), source
        # a measured rate is never a round figure (the overview fixture's are)
        assert not float(str(row["output_tok_s_per_gpu"])).is_integer(), source


def test_each_official_curve_is_its_pareto_front() -> None:
    """Of the official rows of one setup only those no other row beats on both axes are kept
    (the best configuration at each interactivity, as InferenceX charts it)."""
    curves: dict[tuple[object, ...], list[tuple[float, float]]] = {}
    for r in _rows():
        if r["interactivity_tok_s_user"] is not None and r["model"] == "deepseek-r1":
            key = (r["gpu"], r["precision"], r["input_len"], r["output_len"])
            curves.setdefault(key, []).append((float(str(r["interactivity_tok_s_user"])),
                                               float(str(r["output_tok_s_per_gpu"]))))
    assert len(curves) >= 10
    for points in curves.values():
        points.sort()
        assert [y for _, y in points] == sorted((y for _, y in points), reverse=True)


def test_expert_parallel_rows_count_per_gpu_as_inferencex_divides_them() -> None:
    """A single-node TP8/EP8 row says 64 GPUs in num_decode_gpu; its per-GPU figure was divided
    by 8 (concurrency x per-user speed bounds the row's total over 8 GPUs, not 64)."""
    row = next(r for r in _rows() if r["gpu"] == "h200" and r["concurrency"] == 8
               and str(r["source"]).endswith("runs/25980019087/attempts/2)"))
    assert row["parallel"] == "TP8, 8 GPUs"
    ep = [r for r in _rows() if str(r["parallel"]).startswith("TP8 EP8")
          and r["interactivity_tok_s_user"] is not None]
    assert ep and all(float(str(r["concurrency"])) * float(str(r["interactivity_tok_s_user"]))
                      >= 8 * float(str(r["output_tok_s_per_gpu"])) * 0.9 for r in ep)


def test_an_mlperf_row_divides_by_every_gpu_of_every_node() -> None:
    """GB200 NVL72 states 4 accelerators per node over 18 nodes: 167,578 tok/s Server / 72."""
    row = next(r for r in _rows() if r["gpu"] == "gb200" and r["model"] == "deepseek-r1"
               and mlperf_scenario(r) == "server")
    assert row["output_tok_s_per_gpu"] == pytest.approx(167578 / 72, rel=1e-4)
    assert "5.1-0071" in str(row["source"]) and row["input_len"] is None
    assert all(r["interactivity_tok_s_user"] is None for r in _rows() if mlperf_scenario(r))


def test_an_mlperf_row_is_found_by_scenario_only() -> None:
    view = RefView(load_reference())
    server = view.match_mlperf_inference("llama2-70b-99", "h200", "Server")
    assert server is not None and server["output_tok_s_per_gpu"] == pytest.approx(34193.8 / 8)
    assert view.match_mlperf_inference("llama2-70b", "h200", "SingleStream") is None
    # a scenario row is neither an offline maximum nor a curve point
    assert view.match_inference("llama2-70b", "h200", "fp8", 1024, 1024) is None
