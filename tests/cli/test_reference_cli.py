"""`cmax reference list|show` through cmax.cli.main."""

from __future__ import annotations

import json

import pytest

from cmax.cli import main
from tests.paths import latest_release


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["reference", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_filters_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "--gpu", "H100", "--model", "grok1-314b",
                        "--precision", "FP8", "--num-gpus", "512")
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].split()[:4] == ["baseline", "gpu", "prec", "GPUs"]
    body = lines[1:-1]
    assert len(body) == 4 and all("h100-sxm" in line and " fp8 " in line for line in body)
    assert "dgxc-v25.05.02-grok1-314b-h100-sxm-fp8-512" in out
    assert lines[-1].startswith("4 baselines")


def test_list_json_and_proxy_filter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "--model", "llama3.1-405b", "--gpu", "h100",
                        "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert any(r["proxy"] for r in rows)
    assert all(r["gpu"] == "h100-sxm" for r in rows)
    assert isinstance(rows[0]["source_date"], str)
    code, out, _ = _run(capsys, "list", "--model", "llama3.1-405b", "--gpu", "h100",
                        "--no-proxy", "--format", "json")
    assert code == 0 and not any(r["proxy"] for r in json.loads(out))


def test_list_catalogues(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "--what", "gpus", "--format", "json")
    assert code == 0
    assert {g["id"] for g in json.loads(out)} == {"h100-sxm", "h200", "b200", "b300",
                                                   "gb200", "gb300"}
    code, out, _ = _run(capsys, "list", "--what", "models")
    assert code == 0 and "nemotronh-56b" in out and "architecture not published" in out
    code, out, _ = _run(capsys, "list", "--what", "network")
    assert code == 0 and "480" in out


def test_show_release_item_and_match(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "show", "--format", "json")
    assert code == 0
    info = json.loads(out)
    assert info["release"] == latest_release() and info["baselines"] == 643
    code, out, _ = _run(capsys, "show", "dgxc-v25.05-grok1-314b-gb200-bf16-512")
    assert code == 0 and "erratum" in out and "disagrees" in out
    code, out, _ = _run(capsys, "show", "h100-sxm5", "--format", "json")
    assert code == 0 and json.loads(out)["peak_tflops"]["fp8"] == 1979.0
    code, out, _ = _run(capsys, "show", "--model", "grok1-314b", "--gpu", "h100",
                        "--precision", "bf16", "--num-gpus", "512", "--format", "json")
    assert code == 0
    assert json.loads(out)["baseline_id"] == "dgxc-v25.05.02-grok1-314b-h100-sxm-bf16-512"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "--gpu", "a100"], "unknown GPU"),
        (["show", "nothing-here"], "not a baseline id"),
        (["show", "--model", "grok1-314b", "--gpu", "h100"], "also give --precision"),
        (["show", "--model", "grok1-314b", "--gpu", "h100", "--precision", "bf16",
          "--num-gpus", "3"], "no comparable baseline"),
        (["list", "--reference", "1999.1.0"], "unknown reference release"),
    ],
)
def test_user_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str,
) -> None:
    code, out, err = _run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
