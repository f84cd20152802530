"""The throughput arithmetic, written once: tokens, FLOPs and MFU from a step.

A training step processes ``GBS x seq_len`` tokens across ``num_gpus`` GPUs; everything cmax
derives from a step time (tokens/s/GPU, model TFLOP/s/GPU, MFU, the step time a throughput
implies) is that identity, and every stage (ingest, validate, score, price, calc) calls these
functions instead of writing it again. They take plain numbers or Polars expressions alike
(``step_time`` may be a column), and the price of a million tokens is the same identity read
in dollars. Polars is named for the type checker only, so the reports' document worker, which
ranks finished scorecards without Polars, can use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import polars as pl

N = TypeVar("N", float, "pl.Expr")

SECONDS_PER_HOUR = 3600.0


def tokens_per_gpu_step(gbs: float, seq_len: float, num_gpus: float) -> float:
    """Tokens one GPU processes in one step: GBS x seq_len / GPUs."""
    return gbs * seq_len / num_gpus


def tokens_per_s_per_gpu(gbs: float, seq_len: float, step_time: N, num_gpus: float) -> N:
    """Training throughput per GPU: GBS x seq_len / step time / GPUs."""
    return tokens_per_gpu_step(gbs, seq_len, num_gpus) / step_time


def step_time_s(gbs: float, seq_len: float, tokens_per_s: float, num_gpus: float) -> float:
    """The step time a per-GPU throughput implies (the inverse of :func:`tokens_per_s_per_gpu`)."""
    return tokens_per_gpu_step(gbs, seq_len, num_gpus) / tokens_per_s


def model_tflops(flops_per_token: float, tokens_per_s: N) -> N:
    """Model TFLOP/s per GPU: FLOPs per token x tokens/s/GPU / 1e12."""
    return flops_per_token * tokens_per_s / 1e12


def mfu(model_tflops_per_gpu: float, peak_tflops: float) -> float:
    """Model FLOPs utilisation, a fraction of the GPU's dense peak at the run's precision."""
    return model_tflops_per_gpu / peak_tflops


def usd_per_million_tokens(usd_per_gpu_hour: float, tokens_per_s_per_gpu: float,
                           goodput_ratio: float = 1.0) -> float:
    """quote ÷ (tokens/s/GPU × 3,600) × 10⁶ ÷ goodput ratio: the price of a million useful
    training tokens (a goodput ratio below 1 means paid hours lost to interruptions)."""
    return usd_per_gpu_hour * 1e6 / (tokens_per_s_per_gpu * SECONDS_PER_HOUR) / goodput_ratio
