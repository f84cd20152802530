"""Measured GPU energy of a training run, from the step lines that print it.

Megatron-LM ``--log-energy`` (and Megatron-Bridge with its energy monitor) append
``energy per GPU (J/iter/GPU): X | power per GPU (W/GPU): Y |`` to each logged iteration: the
NVML total-energy counter's lap over the log interval, divided by the iterations in it and by
the world size; power is that energy over the step time (NVIDIA/Megatron-LM
``megatron/training/training.py`` ``training_log``). J per token follows as J/iter/GPU ÷
tokens per iteration per GPU (GBS x sequence length ÷ GPUs), or equally W/GPU ÷ tokens/s/GPU.

Telemetry quality is reported with the figure, never hidden in it: how many of the window's
steps carry a reading (the counter is read per log interval, so an uncovered step is a gap),
and whether power x step time agrees with the energy printed (they are one measurement, so a
disagreement means the line was altered or mis-read).
"""

from __future__ import annotations

import polars as pl

from cmax.ingest.textlines import finite_mean

#: power x step time may differ from the printed energy by rounding of both to 0.1 and of the
#: step time to 0.1 ms; beyond 2 % the three numbers are not one measurement
AGREEMENT = 0.02


def measured_energy(steps: pl.DataFrame, *, tokens_per_gpu_step: float | None = None
                    ) -> dict[str, object] | None:
    """Mean energy and power per GPU over ``steps`` (a run's window), its coverage, and J per
    token when the tokens each GPU processes per step are known; None without readings."""
    if "energy_j_per_gpu" not in steps.columns or steps.height == 0:
        return None
    read = steps.filter(pl.col("energy_j_per_gpu").is_finite()
                        & (pl.col("energy_j_per_gpu") > 0))
    if read.is_empty():
        return None
    energy = finite_mean(read["energy_j_per_gpu"])
    power = finite_mean(read["power_w_per_gpu"])
    out: dict[str, object] = {
        "energy_j_per_gpu_step": round(energy, 3) if energy is not None else None,
        "power_w_per_gpu": round(power, 3) if power is not None else None,
        "steps_with_energy": read.height,
        "steps": steps.height,
    }
    checks: list[str] = []
    if read.height < steps.height:
        checks.append(f"{steps.height - read.height} of {steps.height} steps carry no energy "
                      "reading (gaps in the telemetry)")
    both = read.filter(pl.col("power_w_per_gpu").is_finite()
                       & pl.col("step_time_s").is_finite() & (pl.col("step_time_s") > 0))
    if both.height:
        ratio = (both["power_w_per_gpu"] * both["step_time_s"] / both["energy_j_per_gpu"])
        off = int(((ratio - 1).abs() > AGREEMENT).sum())
        if off:
            checks.append(f"{off} step(s) where power x step time is not the printed energy "
                          f"(beyond {AGREEMENT:.0%})")
    if tokens_per_gpu_step and energy is not None:
        out["joules_per_token"] = round(energy / tokens_per_gpu_step, 6)
    out["telemetry_checks"] = checks or ["every step carries a reading; power x step time "
                                         "matches the printed energy"]
    return out


def tokens_per_gpu_step(config: dict[str, int]) -> float | None:
    """GBS x sequence length ÷ GPUs, from what the log printed (Megatron's argument dump:
    ``global_batch_size``, ``seq_length``, ``world_size``); None when any is missing."""
    gbs, seq, gpus = config.get("gbs"), config.get("seq_len"), config.get("world_size")
    if not gbs or not seq or not gpus:
        return None
    return gbs * seq / gpus
