"""`cmax calc`: every output pinned to hand arithmetic; user errors are one line, exit 2."""

from __future__ import annotations

import json

import pytest

from cmax.cli import main
from cmax.errors import CmaxError, UsageError
from cmax.reference import Reference, load_reference
from cmax.reference.calc import parse_mfu, parse_quantity, what_if
from tests.paths import latest_release

# Llama 3.1 70B at seq 8192, cmax convention, worked by hand:
#   per layer linear (fwd) = 2*(8192*(8192 + 2*1024) + 8192*8192) + 2*3*8192*28672
#                          = 301,989,888 + 1,409,286,144 = 1,711,276,032      (x 80 layers)
#   logits = 2*8192*128256 = 2,101,346,304;  causal core = 4*8192*4096 per layer (x 80)
#   forward = 136,902,082,560 + 2,101,346,304 + 10,737,418,240 = 149,740,847,104
FLOPS_70B = 3 * 149_740_847_104  # 449,222,541,312 training FLOPs per token

KEYS = ["mfu", "model_tflops_per_gpu", "tokens_per_s_per_gpu", "usd_per_million_tokens",
        "joules_per_token", "total_usd", "total_days", "household_years"]


@pytest.fixture(scope="module")
def ref() -> Reference:
    return load_reference()


def test_flops_constant_matches_hand_arithmetic(ref: Reference) -> None:
    assert ref.model_flops_per_token("llama3.1-70b", 8192) == FLOPS_70B


def test_from_tokens_per_second(ref: Reference) -> None:
    r = what_if(ref, model="llama3.1-70b", gpu="h100", precision="bf16",
                tokens_per_s_per_gpu=1000.0, seq_len=8192, num_gpus=100,
                usd_per_gpu_hour=2.0, watts_per_gpu=1000.0, tokens=1e12)
    assert r["model_tflops_per_gpu"] == pytest.approx(449.222541312)
    assert r["mfu"] == pytest.approx(449.222541312 / 989)
    assert r["usd_per_million_tokens"] == pytest.approx(2.0 / 3.6e6 * 1e6)  # $0.5556
    assert r["joules_per_token"] == pytest.approx(1.0)
    assert r["gpu_hours"] == pytest.approx(1e12 / 1000 / 3600)  # 277,777.8 GPU-hours
    assert r["total_usd"] == pytest.approx(555_555.5556)
    assert r["total_days"] == pytest.approx(1e12 / (1000 * 100) / 86400)  # 115.74 days
    assert r["energy_kwh"] == pytest.approx(277_777.7778)
    assert r["household_years"] == pytest.approx(277_777.7778 / 10791)  # 25.74
    assert r["watts_source"] == "--watts-per-gpu"


def test_from_step_time(ref: Reference) -> None:
    r = what_if(ref, model="llama3.1-70b", gpu="h100-sxm", precision="bf16", step_time_s=14.66,
                gbs=128, seq_len=8192, num_gpus=64)
    tps = 128 * 8192 / 14.66 / 64  # 1117.60 tokens/s/GPU
    assert r["tokens_per_s_per_gpu"] == pytest.approx(tps)
    assert r["mfu"] == pytest.approx(tps * FLOPS_70B / 1e12 / 989)
    assert r["step_time_s"] == pytest.approx(14.66)
    assert r["usd_per_million_tokens"] is None and r["total_usd"] is None
    assert r["household_years"] is None


def test_from_mfu_round_trips(ref: Reference) -> None:
    r = what_if(ref, model="llama3.1-70b", gpu="h100", precision="BF16", mfu=0.5, seq_len=8192)
    assert r["tokens_per_s_per_gpu"] == pytest.approx(0.5 * 989e12 / FLOPS_70B)  # 1100.79
    assert r["model_tflops_per_gpu"] == pytest.approx(494.5)
    assert r["mfu"] == pytest.approx(0.5)
    assert r["total_days"] is None
    # no --watts-per-gpu: the sourced DGX H100 system power / 8 x PUE 1.56 = 1989 W
    assert r["watts_per_gpu"] == pytest.approx(1989.0)
    assert r["joules_per_token"] == pytest.approx(1989.0 / r["tokens_per_s_per_gpu"])
    assert "DGX H100" in r["watts_source"]


def test_default_seq_len_comes_from_the_workload(ref: Reference) -> None:
    r = what_if(ref, model="grok1-314b", gpu="h100", precision="fp8", tokens_per_s_per_gpu=1000)
    assert r["seq_len"] == 8192
    with pytest.raises(CmaxError, match="several sequence lengths"):
        what_if(ref, model="gpt-oss-120b", gpu="h100", precision="bf16", tokens_per_s_per_gpu=10)


def test_no_peak_no_mfu(ref: Reference) -> None:
    r = what_if(ref, model="llama3.1-8b", gpu="h100", precision="nvfp4",
                tokens_per_s_per_gpu=10_000, seq_len=8192)
    assert r["mfu"] is None and r["model_tflops_per_gpu"] > 0
    with pytest.raises(CmaxError, match="no dense nvfp4 peak"):
        what_if(ref, model="llama3.1-8b", gpu="h100", precision="nvfp4", mfu=0.3, seq_len=8192)


def test_parsers() -> None:
    assert parse_mfu("42%") == pytest.approx(0.42)
    assert parse_mfu("0.42") == pytest.approx(0.42)
    with pytest.raises(UsageError, match="ambiguous"):
        parse_mfu("42")
    assert parse_quantity("15T", name="--tokens") == 15e12
    assert parse_quantity("2.5e9", name="--tokens") == 2.5e9
    with pytest.raises(UsageError) as info:
        parse_quantity("lots", name="--tokens")
    assert info.value.field == "--tokens"


def test_an_unknown_id_on_the_command_line_is_a_usage_error(ref: Reference) -> None:
    """The reference refuses an unknown GPU as ReferenceDataError; given to calc it is the
    user's option that is wrong: UsageError naming the option, the reference's list kept."""
    with pytest.raises(UsageError) as info:
        what_if(ref, model="llama3.1-8b", gpu="a100", precision="bf16", mfu=0.4)
    assert info.value.field == "--gpu" and "h100-sxm" in str(info.value.expected)
    with pytest.raises(UsageError) as info:
        what_if(ref, model="no-such-model", gpu="h100", precision="bf16", mfu=0.4)
    assert info.value.field == "--model" and info.value.fix is not None


# --- through the CLI -------------------------------------------------------------------------


def test_cli_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calc", "--model", "llama3.1-70b", "--gpu", "H100", "--precision", "bf16",
                 "--tokens-per-s-per-gpu", "1000", "--seq-len", "8192", "--num-gpus", "100",
                 "--usd-per-gpu-hour", "2", "--watts-per-gpu", "1000", "--tokens", "1T",
                 "--format", "json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data)[:8] == KEYS
    assert data["total_usd"] == pytest.approx(555_555.5556)
    assert data["household_years"] == pytest.approx(25.7416, rel=1e-4)


def test_cli_json_nulls_where_not_computable(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calc", "--model", "llama3.1-70b", "--gpu", "gb300", "--precision", "fp8",
                 "--mfu", "40%", "--seq-len", "8192", "--format", "json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("usd_per_million_tokens", "joules_per_token", "total_usd", "total_days",
                "household_years"):
        assert data[key] is None
    assert data["mfu"] == pytest.approx(0.4)


def test_cli_text(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calc", "--model", "llama3.1-70b", "--gpu", "h100", "--precision", "bf16",
                 "--step-time-s", "14.66", "--gbs", "128", "--seq-len", "8192",
                 "--num-gpus", "64", "--usd-per-gpu-hour", "2.5", "--tokens", "15T"])
    assert code == 0
    out = capsys.readouterr().out
    assert "MFU                    50.76%" in out
    assert "tokens/s per GPU       1,117.6" in out
    assert "US household-years" in out and f"reference release {latest_release()}" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu", "h100", "--precision", "bf16", "--mfu", "0.4"], "needs --model"),
        (["--model", "llama3.1-70b", "--gpu", "h100", "--precision", "bf16"], "exactly one"),
        (["--model", "llama3.1-70b", "--gpu", "h100", "--precision", "bf16", "--mfu", "0.4",
          "--step-time-s", "3"], "exactly one"),
        (["--model", "gpt9", "--gpu", "h100", "--precision", "bf16", "--mfu", "0.4"],
         "unknown model"),
        (["--model", "llama3.1-70b", "--gpu", "a100", "--precision", "bf16", "--mfu", "0.4"],
         "unknown GPU"),
        (["--model", "llama3.1-70b", "--gpu", "h100", "--precision", "int4", "--mfu", "0.4"],
         "unknown precision"),
        (["--model", "llama3.1-70b", "--gpu", "h100", "--precision", "bf16",
          "--step-time-s", "3"], "needs --gbs, --seq-len, --num-gpus"),
        (["--model", "llama3.1-70b", "--gpu", "h100", "--precision", "bf16", "--mfu", "45",
          "--seq-len", "8192"], "ambiguous"),
    ],
)
def test_cli_user_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main(["calc", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert "Traceback" not in captured.err


def test_published_mfu_converts_with_the_publishers_flops_count(ref: Reference) -> None:
    # SemiAnalysis quotes Llama 3 405B BF16 at 54% MFU on H100 and $1.42/GPU-hour; under
    # NVIDIA's per-sample constant (2.17E+16 FLOPs/sample at seq 8192) that is
    # 0.54 * 989.4e12 / (2.17e16 / 8192) ~ 201.7 tokens/s per GPU ~ $1.95 per million tokens.
    out = what_if(ref, model="llama3.1-405b", gpu="h100-sxm", precision="bf16", mfu=0.54,
                  usd_per_gpu_hour=1.42, flops_convention="nvidia-llama")
    assert out["usd_per_million_tokens"] == pytest.approx(1.955, rel=0.005)
    assert out["mfu_under_convention"] == pytest.approx(0.54)
    assert out["mfu_convention"] == "nvidia-llama"
    # the same throughput under cmax's architecture-true (8 KV heads, causal) count
    assert out["mfu"] == pytest.approx(
        out["tokens_per_s_per_gpu"] * out["flops_per_token"] / 1e12 / out["peak_tflops"])
    assert out["mfu"] < 0.54
    # without the convention the 54% is read under cmax's count: more tokens, lower $/M
    plain = what_if(ref, model="llama3.1-405b", gpu="h100-sxm", precision="bf16", mfu=0.54,
                    usd_per_gpu_hour=1.42)
    assert plain["usd_per_million_tokens"] == pytest.approx(1.864, rel=0.005)
    assert plain["mfu_under_convention"] is None and plain["mfu_convention"] == "cmax"


def test_cli_flops_convention(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calc", "--model", "llama3.1-405b", "--gpu", "h100-sxm", "--precision", "bf16",
                 "--mfu", "54%", "--usd-per-gpu-hour", "1.42",
                 "--flops-convention", "nvidia-llama"])
    assert code == 0
    text = capsys.readouterr().out
    assert "MFU (nvidia-llama)     54.00%" in text and "the publisher's count" in text
    code = main(["calc", "--model", "llama3.1-405b", "--gpu", "h100-sxm", "--precision", "bf16",
                 "--mfu", "54%", "--flops-convention", "nvidia-bogus"])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown FLOPs convention 'nvidia-bogus'" in err and "nvidia-llama" in err


def test_measured_joules_per_token_beside_the_nominal_household_years(ref: Reference) -> None:
    """15 T tokens at a measured 0.7 J/token = 1.05e13 J = 2,916,667 kWh = 270.3 household-years
    (10,791 kWh each), beside the nominal 1989 W / 1,000 tokens/s = 1.989 J/token (768.0)."""
    r = what_if(ref, model="llama3.1-70b", gpu="h100", precision="bf16",
                tokens_per_s_per_gpu=1000, tokens=15e12, measured_joules_per_token=0.7)
    assert r["measured_energy_kwh"] == pytest.approx(15e12 * 0.7 / 3.6e6)
    assert r["measured_household_years"] == pytest.approx(15e12 * 0.7 / 3.6e6 / 10791)
    assert r["household_years"] == pytest.approx(15e12 / 1000 / 3600 * 1989 / 1000 / 10791)
    with pytest.raises(UsageError, match="--measured-joules-per-token"):
        what_if(ref, model="llama3.1-70b", gpu="h100", precision="bf16",
                tokens_per_s_per_gpu=1000, measured_joules_per_token=-1.0)
