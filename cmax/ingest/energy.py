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

from cmax.ingest.power_copies import copied_series
from cmax.ingest.textlines import finite_mean

#: power x step time may differ from the printed energy by rounding of both to 0.1 and of the
#: step time to 0.1 ms; beyond 2 % the three numbers are not one measurement
AGREEMENT = 0.02
#: telemetry must cover this share of the run's GPUs for a J/token figure: the GPUs of one
#: job draw alike, but 16 of 512 are a sample the provider chose (the 10 % left out allows a
#: node whose exporter was down)
MIN_COVERAGE = 0.9
#: a GPU series whose readings in the window are all one value over this many samples is
#: flat-lined (a stuck exporter or a written series): it does not count as covered
FLAT_SAMPLES = 5
#: a GPU doing dense tensor-core work at MFU_LOADED or more draws far above idle: an H100 SXM
#: idles near 10 % of its 700 W TDP and an 8 x H100 node training Llama 2 13B drew up to
#: 8.4 kW (Latif et al., arXiv:2412.08602); below a quarter of TDP at that load is not a
#: measurement of this run
LOADED_MIN_TDP_SHARE = 0.25
MFU_LOADED = 20.0


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


def telemetry_energy(power: pl.DataFrame, start_s: float | None, end_s: float | None, *,
                     num_gpus: int, tokens_per_s_per_gpu: float | None
                     ) -> dict[str, object] | None:
    """Mean measured power per GPU over a run's window from power telemetry (``power`` table
    rows: host, GPU, UTC time, watts), J per token = that power ÷ tokens/s/GPU, and the
    telemetry checks: the window covered, gaps between samples, GPUs seen against the run's,
    readings missing. None when there is no telemetry at all."""
    if power.is_empty():
        return None
    if start_s is None or end_s is None:
        return {"telemetry_checks": ["the run's step lines carry no time stamps, so the power "
                                     "telemetry cannot be placed in its window"]}
    inside = power.filter(pl.col("time_s").is_between(start_s, end_s))
    if inside.is_empty():
        return {"telemetry_checks": [
            f"no telemetry sample inside the window ({_utc(start_s)} to {_utc(end_s)} UTC; the "
            f"telemetry spans {_utc(power['time_s'].min())} to {_utc(power['time_s'].max())})"]}
    read = inside.filter(pl.col("power_w").is_not_null() & pl.col("power_w").is_finite())
    checks: list[str] = []
    counted = read
    if copies := copied_series(power):
        one = copies[0]
        checks.append(f"{len(copies)} GPU series copy another GPU's (e.g. {one.copy.host} "
                      f"GPU {one.copy.gpu} is {one.original.host} GPU "
                      f"{one.original.gpu}'s{'' if one.identical else ', re-jittered'}): "
                      "not counted")
        counted = read.join(pl.DataFrame(
            [(c.copy.source, c.copy.host, c.copy.gpu) for c in copies],
            schema={"source_file": pl.String, "host": pl.String, "gpu": pl.Int64},
            orient="row"), on=["source_file", "host", "gpu"], how="anti", nulls_equal=True)
    per_gpu = counted.group_by("host", "gpu").agg(pl.col("power_w").mean(), pl.len().alias("n"),
                                               pl.col("power_w").n_unique().alias("values"))
    flat = per_gpu.filter((pl.col("n") >= FLAT_SAMPLES) & (pl.col("values") == 1))
    if flat.height:
        checks.append(f"{flat.height} GPU(s) read one value at every sample in the window "
                      f"(e.g. {flat['host'][0]} GPU {flat['gpu'][0]} at "
                      f"{flat['power_w'][0]:g} W): flat-lined, not counted")
        per_gpu = per_gpu.filter(~((pl.col("n") >= FLAT_SAMPLES) & (pl.col("values") == 1)))
    seen = inside.select(pl.struct("host", "gpu").n_unique()).item()
    if seen != num_gpus:
        checks.append(f"the telemetry covers {seen} GPU(s) of the run's {num_gpus}; the mean "
                      "is over those")
    covered = per_gpu.height / num_gpus if num_gpus > 0 else 0.0
    if missing := inside.height - read.height:
        checks.append(f"{missing} sample(s) in the window carry no reading")
    steps = (inside.sort("host", "gpu", "time_s")
             .with_columns(pl.col("time_s").diff().over("host", "gpu").alias("gap")))
    gaps = steps["gap"].drop_nulls()
    interval = float(gaps.median()) if gaps.len() else None  # type: ignore[arg-type]
    if interval:
        long = int((gaps > 3 * interval).sum())
        if long:
            checks.append(f"{long} gap(s) between samples longer than 3 x the "
                          f"{interval:g} s interval")
        first, last = float(inside["time_s"].min()), float(inside["time_s"].max())  # type: ignore[arg-type]
        if first - start_s > 1.5 * interval or end_s - last > 1.5 * interval:
            checks.append(f"the telemetry covers {_utc(first)} to {_utc(last)} of the window "
                          f"{_utc(start_s)} to {_utc(end_s)} UTC, not all of it")
    if per_gpu.is_empty():
        return {"telemetry_checks": [*checks, "no power reading in the window"]}
    power_w = float(per_gpu["power_w"].mean())  # type: ignore[arg-type]
    out: dict[str, object] = {"power_w_per_gpu": round(power_w, 3)}
    if covered < MIN_COVERAGE:
        checks.append(f"J/token withheld: {per_gpu.height} of the run's {num_gpus} GPUs "
                      f"({covered:.0%}) have a reading, below the {MIN_COVERAGE:.0%} a figure "
                      "for the whole run needs")
    elif tokens_per_s_per_gpu:
        out["joules_per_token"] = round(power_w / tokens_per_s_per_gpu, 6)
    out["telemetry_checks"] = checks or [
        f"power telemetry: {seen} GPU(s) sampled every {interval:g} s over the whole window, "
        "no gap, every sample read" if interval else "power telemetry read"]
    return out


def _utc(seconds: object) -> str:
    import datetime as dt

    if not isinstance(seconds, int | float):
        return "?"
    return dt.datetime.fromtimestamp(float(seconds), dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def implausible_power(power_w: float | None, tdp_w: float | None,
                      mfu_pct: float | None) -> str | None:
    """Why a run's measured power cannot be its own (below a quarter of the GPU's TDP while
    the run claims :data:`MFU_LOADED` % MFU or more), else None."""
    if power_w is None or not tdp_w or mfu_pct is None or mfu_pct < MFU_LOADED:
        return None
    if power_w >= LOADED_MIN_TDP_SHARE * tdp_w:
        return None
    return (f"{power_w:g} W per GPU is {power_w / tdp_w:.0%} of the GPU's {tdp_w:g} W TDP "
            f"while the run claims {mfu_pct:.0f} % MFU: a GPU at that load draws far more; "
            "J/token withheld")
