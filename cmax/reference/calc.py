"""What-if arithmetic for negotiations: MFU <-> step time <-> tokens/s, $/M tokens, J/token.

Every figure follows from one throughput number and the model's FLOPs per token, so a buyer
can ask "what does 40% MFU on this cluster cost per trillion tokens?" and get numbers that
reconcile with each other exactly. FLOPs are cmax's architecture-true count (docs/reference.md);
the formulas:

    tokens/s/GPU     = GBS x seq_len / step_time / num_gpus            (from a step time)
                     = MFU x peak x 1e12 / FLOPs_per_token             (from an MFU)
    model TFLOP/s/GPU = tokens/s/GPU x FLOPs_per_token / 1e12;  MFU = that / dense peak
    $/M tokens       = usd_per_gpu_hour / (tokens/s/GPU x 3600) x 1e6
    J/token          = watts_per_gpu / tokens/s/GPU
    budget: GPU-hours = tokens / tokens/s/GPU / 3600; cost = GPU-hours x $/GPU-hour;
            days = tokens / (tokens/s/GPU x num_gpus) / 86400;
            household-years = GPU-hours x watts / 1000 / household kWh per year
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

from cmax.errors import ReferenceDataError, UsageError
from cmax.reference import Reference, canonical_precision
from cmax.reference.flops import CONVENTIONS
from cmax.throughput import mfu as mfu_of
from cmax.throughput import model_tflops as tflops_of
from cmax.throughput import step_time_s as step_time_of
from cmax.throughput import tokens_per_s_per_gpu as tps_of
from cmax.throughput import usd_per_million_tokens

_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}


def parse_quantity(text: str, *, name: str) -> float:
    """A positive number, optionally with a K/M/B/T suffix (``15T`` = 15e12 tokens)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBgGtTpP]?)\s*", text)
    if not match:
        raise UsageError(f"cannot read {text!r}", field=name,
                         expected="a number such as 1.5e13 or 15T")
    value = float(match.group(1)) * _SUFFIXES.get(match.group(2).lower(), 1.0)
    if not math.isfinite(value):
        raise UsageError(f"{text!r} is too large to compute with", field=name,
                         expected="a finite number such as 1.5e13 or 15T")
    if value <= 0:
        raise UsageError(f"{name} must be positive, got {text!r}", field=name)
    return value


def parse_mfu(text: str) -> float:
    """MFU as a fraction: '0.42' or '42%'. A bare number above 1 is refused as ambiguous."""
    raw = text.strip()
    percent = raw.endswith("%")
    value = parse_quantity(raw.rstrip("%"), name="--mfu")
    if percent:
        value /= 100.0
    elif value > 1.0:
        raise UsageError(
            f"MFU {raw} is ambiguous", field="--mfu",
            expected=f"a fraction (0.{raw.replace('.', '')[:2]}) or a percent ({raw}%)")
    if value > 1.0:
        raise UsageError(f"MFU {raw} is above 100%", field="--mfu")
    return value


@contextlib.contextmanager
def _as_usage(option: str) -> Iterator[None]:
    """A look-up of the user's ``option`` value that the reference refuses is a usage error.

    The reference raises :class:`ReferenceDataError` for an unknown id (a manifest naming an
    unknown GPU is the bundle's problem); here the id came from the command line, so it is the
    command line that needs fixing: same message, expected and fix, the option as the field.
    """
    try:
        yield
    except ReferenceDataError as exc:
        raise UsageError(exc.message, field=option, expected=exc.expected,
                         fix=exc.fix) from None


def _default_seq_len(ref: Reference, workload: str) -> int:
    """The sequence length the workload's published baselines use, if they agree on one."""
    df = ref.baselines
    rows = df.filter((df["workload"] == workload) & ~df["proxy"])
    lens = rows["seq_len"].drop_nulls().unique()
    if lens.len() == 1:
        return int(lens[0])
    raise UsageError(
        f"{workload}: the published baselines use several sequence lengths "
        f"({', '.join(str(int(v)) for v in sorted(lens.to_list()))})" if lens.len()
        else f"{workload}: no published sequence length", field="--seq-len",
        fix="pass --seq-len",
    )


def _convention_flops(ref: Reference, workload: str, seq_len: int, convention: str) -> float:
    """FLOPs per token as the named publisher counts them; an unknown name is a user error."""
    if convention not in CONVENTIONS:
        raise UsageError(f"unknown FLOPs convention {convention!r}", field="--flops-convention",
                         expected=", ".join(sorted(CONVENTIONS)),
                         fix="see 'FLOPs conventions' in `cmax docs reference`")
    try:
        return ref.source_flops_per_token(workload, seq_len, convention)
    except ReferenceDataError as exc:
        raise UsageError(f"{workload}: {exc.message}", field="--flops-convention",
                         expected=exc.expected,
                         fix="pick a convention computable from the architecture") from None


def what_if(
    ref: Reference,
    *,
    model: str,
    gpu: str,
    precision: str,
    mfu: float | None = None,
    tokens_per_s_per_gpu: float | None = None,
    step_time_s: float | None = None,
    gbs: int | None = None,
    seq_len: int | None = None,
    num_gpus: int | None = None,
    usd_per_gpu_hour: float | None = None,
    watts_per_gpu: float | None = None,
    tokens: float | None = None,
    flops_convention: str | None = None,
    measured_joules_per_token: float | None = None,
) -> dict[str, Any]:
    """All calculator outputs as a dict (None where an input needed for it is missing).

    ``flops_convention`` names the FLOPs count a published MFU was measured in (an id from
    ``cmax.reference.flops.CONVENTIONS``, e.g. ``nvidia-llama`` for NVIDIA's per-sample
    constants). An MFU only means a throughput together with its FLOPs count: converting a
    publisher's 54% with cmax's own count gives another throughput than the publisher
    measured. The MFU input is read under that convention, and the result shows the MFU under
    both cmax's and the publisher's count.
    """
    given = [n for n, v in (("--mfu", mfu), ("--tokens-per-s-per-gpu", tokens_per_s_per_gpu),
                            ("--step-time-s", step_time_s)) if v is not None]
    if len(given) != 1:
        raise UsageError(
            "give exactly one of --mfu, --tokens-per-s-per-gpu, --step-time-s"
            + (f" (got {', '.join(given)})" if given else ""),
            fix="pick the one figure you know; the others are derived from it",
        )
    for name, value in (("--gbs", gbs), ("--seq-len", seq_len), ("--num-gpus", num_gpus)):
        if value is not None and value <= 0:
            raise UsageError(f"{name} must be positive, got {value}", field=name)
    for name, fvalue in (("--usd-per-gpu-hour", usd_per_gpu_hour),
                         ("--watts-per-gpu", watts_per_gpu),
                         ("--measured-joules-per-token", measured_joules_per_token),
                         ("--tokens-per-s-per-gpu", tokens_per_s_per_gpu),
                         ("--step-time-s", step_time_s)):
        # nan passes a `<= 0` test and inf yields inf% MFU: both must stop here
        if fvalue is not None and not (math.isfinite(fvalue) and fvalue > 0):
            raise UsageError(f"{name} must be a positive finite number, got {fvalue}",
                             field=name)
    with _as_usage("--model"):
        workload, _, _ = ref.resolve_workload(model)
    with _as_usage("--gpu"):
        spec = ref.gpu(gpu)
    with _as_usage("--precision"):
        prec = canonical_precision(precision)
    peak = spec.peak(prec)
    if step_time_s is not None:
        missing = [n for n, v in (("--gbs", gbs), ("--seq-len", seq_len),
                                  ("--num-gpus", num_gpus)) if v is None]
        if missing:
            raise UsageError(f"--step-time-s needs {', '.join(missing)}",
                             fix="tokens/s = GBS x seq_len / step time / GPUs")
        if step_time_s <= 0:
            raise UsageError("--step-time-s must be positive", field="--step-time-s")
    seq = seq_len if seq_len is not None else _default_seq_len(ref, workload)
    with _as_usage("--seq-len"):
        flops_per_token = ref.model_flops_per_token(workload, seq)
    source_fpt = (_convention_flops(ref, workload, seq, flops_convention)
                  if flops_convention is not None else None)
    mfu_fpt = source_fpt if source_fpt is not None else flops_per_token

    if step_time_s is not None:
        assert gbs is not None and num_gpus is not None
        tps = tps_of(gbs, seq, step_time_s, num_gpus)
    elif mfu is not None:
        if peak is None:
            raise UsageError(f"{spec.id} has no dense {prec} peak, so MFU cannot be converted",
                             field="--precision")
        if not 0 < mfu <= 1:
            raise UsageError(f"MFU must be in (0, 1], got {mfu}", field="--mfu")
        tps = mfu * peak * 1e12 / mfu_fpt
    else:
        assert tokens_per_s_per_gpu is not None
        if tokens_per_s_per_gpu <= 0:
            raise UsageError("--tokens-per-s-per-gpu must be positive",
                             field="--tokens-per-s-per-gpu")
        tps = tokens_per_s_per_gpu

    model_tflops = tflops_of(flops_per_token, tps)
    if mfu is None and peak and model_tflops > peak * (1 + 1e-9):
        source = "--step-time-s" if step_time_s is not None else "--tokens-per-s-per-gpu"
        implied = model_tflops / peak
        shown = f"{implied:.0%}" if math.isfinite(implied) else "far above 100%"
        raise UsageError(
            f"{tps:,.6g} tokens/s per GPU is {shown} MFU: more than the "
            f"{spec.id} dense {prec} peak ({peak:g} TFLOP/s) can deliver for {workload}",
            field=source, expected="a throughput at or below 100% MFU",
            fix="check the figure (per GPU, not per job) and the GBS, sequence length and "
                "GPU count")
    watts_source = "--watts-per-gpu" if watts_per_gpu is not None else None
    if watts_per_gpu is None:
        watts_per_gpu = ref.default_watts_per_gpu(spec.id)
        if watts_per_gpu is not None:
            watts_source = ref.economics["default_watts_source"][spec.id]
    household_kwh = float(ref.economics["household_kwh_per_year"])

    gpu_hours = tokens / tps / 3600.0 if tokens is not None else None
    energy_kwh = (gpu_hours * watts_per_gpu / 1000.0
                  if gpu_hours is not None and watts_per_gpu is not None else None)
    # a run's measured energy per token (cmax inspect / the scorecard) beside the nominal one
    measured_kwh = (tokens * measured_joules_per_token / 3.6e6
                    if tokens is not None and measured_joules_per_token is not None else None)
    return {
        "measured_joules_per_token": measured_joules_per_token,
        "measured_energy_kwh": measured_kwh,
        "measured_household_years": (measured_kwh / household_kwh
                                     if measured_kwh is not None else None),
        "mfu": mfu_of(model_tflops, peak) if peak else None,
        "model_tflops_per_gpu": model_tflops,
        "tokens_per_s_per_gpu": tps,
        "usd_per_million_tokens": (usd_per_million_tokens(usd_per_gpu_hour, tps)
                                   if usd_per_gpu_hour is not None else None),
        "joules_per_token": watts_per_gpu / tps if watts_per_gpu is not None else None,
        "total_usd": (gpu_hours * usd_per_gpu_hour
                      if gpu_hours is not None and usd_per_gpu_hour is not None else None),
        "total_days": (tokens / (tps * num_gpus) / 86400.0
                       if tokens is not None and num_gpus is not None else None),
        "household_years": energy_kwh / household_kwh if energy_kwh is not None else None,
        "workload": workload,
        "gpu": spec.id,
        "precision": prec,
        "seq_len": seq,
        "num_gpus": num_gpus,
        "step_time_s": (step_time_of(gbs, seq, tps, num_gpus)
                        if gbs is not None and num_gpus is not None else None),
        "peak_tflops": peak,
        "flops_per_token": flops_per_token,
        "flops_convention": "cmax",
        "mfu_convention": flops_convention or "cmax",
        "mfu_under_convention": (mfu_of(tflops_of(source_fpt, tps), peak)
                                 if source_fpt is not None and peak else None),
        "flops_per_token_convention": source_fpt,
        "usd_per_gpu_hour": usd_per_gpu_hour,
        "watts_per_gpu": watts_per_gpu,
        "watts_source": watts_source,
        "tokens": tokens,
        "gpu_hours": gpu_hours,
        "energy_kwh": energy_kwh,
        "household_kwh_per_year": household_kwh,
        "reference_release": ref.release,
    }
