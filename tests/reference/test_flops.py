"""Model FLOPs: NVIDIA's published constants, every baseline's own MFU / TFLOP/s, and cmax's
architecture-true count checked against hand arithmetic."""

from __future__ import annotations

import tomllib
from typing import Any

import polars as pl
import pytest

from cmax.errors import ReferenceDataError
from cmax.reference import Reference, load_reference
from cmax.reference.architecture import Architecture
from cmax.reference.flops import (
    _COUNTERS,
    CONVENTIONS,
    cmax_breakdown,
    cmax_flops_per_token,
    padded_vocab,
    source_flops_per_token,
)

CHECKABLE = {"nvidia-gpt", "nvidia-llama", "nvidia-llama-finetune", "nvidia-llama-finetune-lora",
             "nvidia-nemotron4", "nvidia-grok1", "nvidia-llama4", "nvidia-nemotronh",
             "nemo-deepseekv3", "megatron-bridge"}


@pytest.fixture(scope="module")
def ref() -> Reference:
    return load_reference()


def _constants(ref: Reference) -> list[dict[str, object]]:
    data = tomllib.loads((ref.directory / "conventions.toml").read_text(encoding="utf-8"))
    constants: list[dict[str, object]] = data["published_constants"]
    return constants


@pytest.mark.parametrize(
    ("model", "convention", "seq", "published"),
    [
        ("gpt3-175b", "nvidia-gpt", 2048, 2.20e15),
        ("llama3.1-8b", "nvidia-llama", 8192, 4.74e14),
        ("llama3.1-70b", "nvidia-llama", 8192, 3.94e15),
        ("llama3.1-405b", "nvidia-llama", 8192, 2.17e16),
        ("nemotron4-15b", "nvidia-nemotron4", 4096, 3.85e14),
        ("nemotron4-340b", "nvidia-nemotron4", 4096, 8.62124e15),
        ("grok1-314b", "nvidia-grok1", 8192, 4.27e15),
        ("llama4-maverick", "nvidia-llama4", 8192, 8.92e14),
        ("nemotronh-56b", "nvidia-nemotronh", 8192, 2.816e15),
    ],
)
def test_nvidia_published_per_sample_constants(
    ref: Reference, model: str, convention: str, seq: int, published: float,
) -> None:
    per_sample = ref.source_flops_per_token(model, seq, convention) * seq
    assert per_sample == pytest.approx(published, rel=0.005)


def test_every_constant_in_the_release_reproduces(ref: Reference) -> None:
    constants = _constants(ref)
    assert len(constants) >= 14
    for c in constants:
        seq = int(c["seq_len"])  # type: ignore[call-overload]
        got = ref.source_flops_per_token(str(c["model"]), seq, str(c["convention"])) * seq
        assert got == pytest.approx(float(c["flops_per_sample"]), rel=0.005), c  # type: ignore[arg-type]


def test_405b_erratum_kept_visible(ref: Reference) -> None:
    """NVIDIA's 2.17E+16 uses 16 query groups; the true architecture (8 KV heads) gives
    2.1507E+16. cmax reproduces the source under its parameters and keeps the truth."""
    arch = ref.architecture("llama3.1-405b")
    assert arch.kv_heads == 8
    true_nvidia_formula = source_flops_per_token(arch, "nvidia-llama", 8192) * 8192
    assert true_nvidia_formula == pytest.approx(2.1507e16, rel=1e-4)
    as_published = ref.source_flops_per_token("llama3.1-405b", 8192, "nvidia-llama") * 8192
    assert as_published / true_nvidia_formula - 1 == pytest.approx(0.0097, abs=5e-4)


def _implied_mfu(ref: Reference, row: dict[str, Any]) -> float:
    seq = int(row["seq_len"])
    fpt = ref.source_flops_per_token(
        str(row["model"]), seq, str(row["flops_convention"]),
        tp=int(row["tp"] or 1), layers=row["layers"],
    )
    if "(w/o MTP)" in str(row["notes"] or ""):
        pytest.skip("MTP-less recipe")
    peak = ref.peak_tflops(str(row["gpu"]), str(row["precision"]))
    assert peak is not None
    gbs, step, n = float(row["gbs"]), float(row["step_time_s"]), float(row["num_gpus"])
    return 100.0 * fpt * seq * gbs / step / n / (peak * 1e12)


def test_every_published_mfu_follows_from_its_step_time(ref: Reference) -> None:
    rows = ref.baselines.filter(
        pl.col("step_time_s").is_not_null() & pl.col("mfu_pct").is_not_null()
        & pl.col("flops_convention").is_in(sorted(CHECKABLE))
    ).to_dicts()
    assert len(rows) >= 300
    checked = failures = 0
    for row in rows:
        mfu = _implied_mfu(ref, row)
        within = abs(row["mfu_pct"] / mfu - 1) <= 0.01
        if row["erratum"] and "MFU" in row["erratum"] and "does not follow" in row["erratum"]:
            assert not within, row["baseline_id"]
            failures += 1
        else:
            assert within, (row["baseline_id"], row["mfu_pct"], mfu)
            checked += 1
    assert checked >= 300 and failures == 1  # the Llama 4 GB200 BF16 misprint


def test_every_published_tflops_follows_from_its_step_time(ref: Reference) -> None:
    rows = ref.baselines.filter(
        pl.col("step_time_s").is_not_null() & pl.col("model_tflops_per_gpu").is_not_null()
    ).to_dicts()
    assert {r["model"] for r in rows} == {"deepseek-v3"}
    for row in rows:
        peak = ref.peak_tflops(row["gpu"], row["precision"])
        assert peak is not None
        assert row["mfu_pct"] == pytest.approx(100 * row["model_tflops_per_gpu"] / peak, rel=0.01)
        tflops = _implied_mfu(ref, row) * peak / 100
        assert row["model_tflops_per_gpu"] == pytest.approx(tflops, rel=0.01)


def test_megatron_bridge_rows_follow_their_convention(ref: Reference) -> None:
    """Perf-summary rows print tokens/s and TFLOP/s (no step time): their ratio is the
    source's FLOPs/token, which cmax reproduces for every catalogued architecture."""
    unverified = set(ref.conventions["megatron_bridge"]["unverified"])
    rows = ref.baselines.filter(
        (pl.col("flops_convention") == "megatron-bridge")
        & pl.col("model_tflops_per_gpu").is_not_null()
        & ~pl.col("model").is_in(sorted(unverified))
    ).to_dicts()
    agree = 0
    for row in rows:
        implied = row["model_tflops_per_gpu"] * 1e12 / row["tokens_per_s_per_gpu"]
        arch = ref.architecture(row["model"])
        if "(w/o MTP)" in (row["notes"] or ""):
            arch = arch.with_overrides({"mtp_layers": 0})
        fpt = source_flops_per_token(arch, "megatron-bridge", row["seq_len"], tp=row["tp"] or 1)
        if abs(implied / fpt - 1) <= 0.01:
            agree += 1
        else:
            assert row["erratum"] and "Megatron-Bridge's formula" in row["erratum"]
    assert agree >= 180


def test_conventions_are_documented() -> None:
    assert {"cmax", "megatron-bridge", "nvidia-llama", "source-implied"} <= set(CONVENTIONS)
    with pytest.raises(ReferenceDataError, match="cannot be computed"):
        source_flops_per_token(_toy(), "nemo-packed-finetune", 128)


def test_every_computable_convention_is_documented_and_the_rest_refused() -> None:
    """The formulas register themselves by convention id: each one is described in
    CONVENTIONS, and a documented convention without a formula is refused, not miscounted."""
    computable = set(_COUNTERS)
    assert computable <= set(CONVENTIONS)
    assert set(CONVENTIONS) - computable == {
        "nemo-packed-finetune", "megatron-bridge-packed-lora", "source-implied"}
    arch = _toy()
    lora = source_flops_per_token(arch, "nvidia-llama-finetune-lora", 128)
    assert lora == pytest.approx(source_flops_per_token(arch, "nvidia-llama-finetune", 128)
                                 * 2 / 3)


# --- cmax's architecture-true convention, checked by hand -------------------------------------


def _toy(**kw: object) -> Architecture:
    base: dict[str, object] = dict(
        id="toy", name="toy", family="dense-gqa", source="hand", source_date="2026-01-01",
        layers=2, hidden=8, ffn=16, heads=2, kv_heads=1, vocab=10, gated=True,
    )
    base.update(kw)
    return Architecture(**base)  # type: ignore[arg-type]


def test_dense_gqa_by_hand() -> None:
    # per layer, forward: q 8x8 + k 8x4 + v 8x4 + o 8x8 = 192 params -> 384 FLOPs;
    # SwiGLU 3 x 8 x 16 = 384 params -> 768 FLOPs; causal core 4 x q_dim(8) x s/2(8) = 256.
    # logits 8 x 10 -> 160. Forward/token = 2 x (384 + 768) + 160 linear, 2 x 256 core.
    b = cmax_breakdown(_toy(), 16)
    assert b.linear == 2 * (384 + 768) + 160
    assert b.core == 2 * 256
    assert cmax_flops_per_token(_toy(), 16) == 3 * (2464 + 512)
    # LoRA: frozen weights skip their weight gradients (2x instead of 3x); the core does not.
    assert cmax_flops_per_token(_toy(), 16, "lora") == 2 * 2464 + 3 * 512


def test_moe_and_mla_by_hand() -> None:
    moe = _toy(family="moe-gqa", experts=4, top_k=2, moe_ffn=4, shared_ffn=4, moe_layers=2)
    # MoE layer: 2 routed x (3 x 8 x 4) x 2 FLOPs = 384, shared 192, router 2 x 8 x 4 = 64
    dense = cmax_breakdown(_toy(), 16)
    assert cmax_breakdown(moe, 16).linear == dense.linear - 2 * 768 + 2 * (384 + 192 + 64)
    mla = _toy(family="moe-mla", heads=2, q_lora_rank=4, kv_lora_rank=4, qk_nope_dim=2,
               qk_rope_dim=1, v_head_dim=2, experts=4, top_k=1, moe_ffn=4, moe_layers=0)
    # q: 8x4 + 4x2x3 = 56; kv: 8x(4+1) + 4x2x(2+2) = 72; o: 2x2x8 = 32 -> 160 params
    # core: 2 x heads x (qk 3 + v 2) x s/2 = 2 x 2 x 5 x 8 = 160
    b = cmax_breakdown(mla, 16)
    assert b.linear == 2 * (2 * (160 + 384)) + 160
    assert b.core == 2 * 160


def test_sliding_window_and_causal() -> None:
    full = cmax_breakdown(_toy(), 64).core
    swa = cmax_breakdown(_toy(window=4, window_layers=1), 64).core
    # window 4 of 64: average context (4*5/2 + 60*4) / 64 = 3.90625 keys instead of 32
    assert swa == pytest.approx(full / 2 + 4 * 8 * 3.90625)
    # NVIDIA's Llama formula counts attention as non-causal: more than cmax
    arch = load_reference().architecture("llama3.1-70b")
    assert source_flops_per_token(arch, "nvidia-llama", 8192) > cmax_flops_per_token(arch, 8192)


def test_proxy_layers_scale_per_layer_terms(ref: Reference) -> None:
    full = ref.architecture("grok1-314b")
    cut = full.with_layers(16)
    assert (cut.layers, cut.moe_layers) == (16, 16)
    head = 2 * full.hidden * full.vocab * 3
    per_layer = (cmax_flops_per_token(full, 8192) - head) / 64
    assert cmax_flops_per_token(cut, 8192) == pytest.approx(head + 16 * per_layer)


def test_cmax_is_close_to_6n_for_dense_models(ref: Reference) -> None:
    for model, params in (("llama3.1-8b", 8.03e9), ("llama3.1-70b", 70.6e9),
                          ("llama3.1-405b", 405.9e9)):
        fpt = ref.model_flops_per_token(model, 2048)
        assert 0.95 < fpt / (6 * params) < 1.05  # 6N counts embeddings, cmax does not


def test_published_per_sample_api(ref: Reference) -> None:
    seq = 8192
    assert ref.model_flops_per_sample("llama3.1-70b", seq) == pytest.approx(
        ref.model_flops_per_token("llama3.1-70b", seq) * seq)
    assert ref.model_flops_per_token("LLAMA3_70B", seq) == ref.model_flops_per_token(
        "llama3.1-70b", seq)
    lora = ref.model_flops_per_token("llama3.1-70b-lora", seq)
    assert lora < ref.model_flops_per_token("llama3.1-70b", seq) * 0.75


def test_megatron_vocab_padding() -> None:
    assert padded_vocab(128256, 1) == 128256
    assert padded_vocab(128256, 4) == 128512
    assert padded_vocab(50257, 1) == 50304
