"""The serving references (reference/inference.csv): offline rows and the InferenceX curve
snapshot kept apart, every row sourced, a malformed curve row refused at load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.errors import ReferenceDataError
from cmax.reference import load_reference
from cmax.reference.inference import load_inference
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
    lines = path.read_text().splitlines()
    last = lines[-1].split(",")
    header = lines[0].split(",")
    # the row's quoted 'parallel' field holds one comma: shift the index by one
    last[header.index("concurrency") + 1] = ""
    path.write_text("\n".join([*lines[:-1], ",".join(last)]) + "\n")
    with pytest.raises(ReferenceDataError, match="needs its concurrency and date") as caught:
        load_inference(path, set(load_reference().gpus))
    assert caught.value.line == len(lines)
