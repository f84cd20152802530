"""`cmax calc --offer A --offer B` compares two offers per token (issue 40), on the seed's
worked example (shared research seed-h100-vs-gb200.md, after SemiAnalysis' H100 vs GB200 NVL72
training article): GB200 NVL72 costs about 1.6x H100 per GPU, so it must train at least 1.6x
as fast per GPU to win; GPT-3 175B FP8 on H100 at 39.5% MFU and $1.42/GPU-hour cost 54.2 cents
per million tokens (Dec 2024 software)."""

from __future__ import annotations

import json

import pytest

from cmax.cli import main

H100 = "h100-sxm=1.42"
GB200 = "gb200=2.272"  # 1.6 x $1.42: the seed's TCO per GPU ratio


def test_the_seeds_break_even_speed_up(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "--offer", H100, "--offer", GB200, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["dearer"], result["cheaper"]) == ("gb200", "h100-sxm")
    assert result["breakeven_speedup"] == pytest.approx(1.6)
    assert result["speedup"] is None  # no speeds given: no verdict


def test_the_seeds_cost_per_million_tokens_from_its_mfu(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The H100 side worked out from the seed's MFU: $0.5358 per million tokens against the
    article's $0.542 (1.1% apart: cmax counts GPT-3 175B's FLOPs per token with its own
    convention, the article's MFU another)."""
    assert main(["calc", "--offer", H100, "--offer", GB200, "--model", "gpt3-175b",
                 "--precision", "fp8", "--mfu", "39.5%", "--format", "json"]) == 0
    h100, gb200 = json.loads(capsys.readouterr().out)["offers"]
    assert h100["usd_per_million_tokens"] == pytest.approx(0.542, rel=0.015)
    assert h100["speed_basis"] == "gpt3-175b fp8 at 39.5% MFU on h100-sxm"
    assert gb200["tokens_per_s_per_gpu"] > h100["tokens_per_s_per_gpu"]


@pytest.mark.parametrize(("speed", "cheaper"), [(1200.0, "gb200"), (1100.0, "h100-sxm")])
def test_measured_speeds_decide_which_is_cheaper_per_token(
        speed: float, cheaper: str, capsys: pytest.CaptureFixture[str]) -> None:
    """727.7 tokens/s per H100 is the speed at which $1.42 buys a million tokens for $0.542;
    a GB200 at 1,200 (1.65x) beats the 1.6x break-even, at 1,100 (1.51x) it does not."""
    assert main(["calc", "--offer", f"{H100}@727.7", "--offer", f"{GB200}@{speed}"]) == 0
    out = capsys.readouterr().out
    assert "h100-sxm         1.4200         727.7      0.5420" in out
    assert "gb200 must train 1.60x as fast per GPU as h100-sxm" in out
    assert f"cheaper per token: {cheaper}" in out


@pytest.mark.parametrize("argv", [["--offer", H100], ["--offer", "h100-sxm", "--offer", GB200],
                                  ["--offer", "h999=1", "--offer", GB200]])
def test_a_bad_offer_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", *argv]) == 2
    assert capsys.readouterr().err.count("\n") == 1
