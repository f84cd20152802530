"""``cmax calc``: what-if calculator for negotiations (MFU, tokens/s, $/M tokens, J/token)."""

from __future__ import annotations

from typing import Any

import click

from cmax.cli.common import emit_json, format_option
from cmax.errors import UsageError

JSON_KEYS = ("mfu", "model_tflops_per_gpu", "tokens_per_s_per_gpu", "usd_per_million_tokens",
             "joules_per_token", "total_usd", "total_days", "household_years")


def _fmt(value: float | None, pattern: str, unit: str = "") -> str:
    if value is None:
        return "n/a"
    return f"{pattern.format(value)}{unit}"


def _offer(text: str) -> tuple[str, float, float | None]:
    gpu, _, rest = text.partition("=")
    price, _, speed = rest.partition("@")
    try:
        return gpu.strip(), float(price), float(speed) if speed else None
    except ValueError:
        raise UsageError(f"--offer {text!r} is not GPU=USD[@TOKENS_PER_S]",
                         fix="e.g. --offer h100-sxm=1.42@727.7 --offer gb200=2.27") from None


def _compare(offers: tuple[str, ...], model: str | None, precision: str | None,
             mfu_text: str | None, release: str, fmt: str) -> None:
    """``cmax calc --offer A --offer B``: the two offers compared per token."""
    from cmax.price.tokens import PricedOffer, offer_comparison
    from cmax.reference import load_reference
    from cmax.reference.calc import parse_mfu, what_if

    if len(offers) != 2:
        raise UsageError(f"--offer was given {len(offers)} time(s); compare exactly two",
                         fix="e.g. --offer h100-sxm=1.42@727.7 --offer gb200=2.27@1500")
    ref = load_reference(release)
    priced = []
    for gpu, price, speed in map(_offer, offers):
        basis = "measured (--offer)" if speed else ""
        if speed is None and model and precision and mfu_text:
            speed = what_if(ref, model=model, gpu=gpu, precision=precision,
                            mfu=parse_mfu(mfu_text))["tokens_per_s_per_gpu"]
            basis = f"{model} {precision} at {mfu_text} MFU on {gpu}"
        ref.gpu(gpu)  # an unknown GPU is one error naming it
        priced.append(PricedOffer(gpu, price, speed, basis))
    result = offer_comparison(priced[0], priced[1])
    if fmt == "json":
        emit_json(result)
        return
    lines = [f"{'offer':<12} {'$/GPU-hour':>10} {'tokens/s/GPU':>13} {'$/M tokens':>11}"]
    for o in result["offers"]:
        lines.append(f"{o['gpu'][:12]:<12} {o['usd_per_gpu_hour']:>10.4f} "
                     f"{_fmt(o['tokens_per_s_per_gpu'], '{:,.1f}'):>13} "
                     f"{_fmt(o['usd_per_million_tokens'], '{:.4f}'):>11}")
    lines.append(f"{result['dearer']} must train {result['breakeven_speedup']:.2f}x as fast per "
                 f"GPU as {result['cheaper']} to cost the same per token")
    if result["speedup"] is not None:
        lines.append(f"it trains {result['speedup']:.2f}x: cheaper per token: "
                     f"{result['cheaper_per_token']}")
    click.echo("\n".join(lines))


def render_text(result: dict[str, Any]) -> str:
    r = result
    head = (f"{r['workload']} on {r['gpu']} ({r['precision']}, seq {r['seq_len']}"
            + (f", {r['num_gpus']} GPUs" if r["num_gpus"] else "") + ")")
    lines = [
        head,
        f"  MFU                    {_fmt(r['mfu'] and r['mfu'] * 100, '{:.2f}', '%')}"
        + (f"  (dense {r['precision']} peak {r['peak_tflops']:g} TFLOP/s)"
           if r["peak_tflops"] else ""),
    ]
    if r["flops_per_token_convention"] is not None:
        under = r["mfu_under_convention"]
        lines.append(
            f"  MFU ({r['mfu_convention']})".ljust(25)
            + _fmt(under and under * 100, "{:.2f}", "%")
            + f"  ({r['flops_per_token_convention']:.4g} FLOPs/token, the publisher's count)")
    lines += [
        f"  model TFLOP/s per GPU  {_fmt(r['model_tflops_per_gpu'], '{:.1f}')}"
        f"  ({r['flops_per_token']:.4g} FLOPs/token, cmax convention)",
        f"  tokens/s per GPU       {_fmt(r['tokens_per_s_per_gpu'], '{:,.1f}')}",
    ]
    if r["step_time_s"] is not None:
        lines.append(f"  step time              {_fmt(r['step_time_s'], '{:.3f}', ' s')}")
    lines.append(f"  $ per million tokens   {_fmt(r['usd_per_million_tokens'], '${:,.4f}')}"
                 + (f"  (at ${r['usd_per_gpu_hour']:g}/GPU-hour)"
                    if r["usd_per_gpu_hour"] is not None else "  (pass --usd-per-gpu-hour)"))
    lines.append(f"  J per token            {_fmt(r['joules_per_token'], '{:.4f}')}"
                 + (f"  ({r['watts_per_gpu']:.0f} W/GPU all-in: {r['watts_source']})"
                    if r["watts_per_gpu"] is not None else "  (pass --watts-per-gpu)"))
    if r["measured_joules_per_token"] is not None:
        lines.append(f"  J per token, measured {r['measured_joules_per_token']:.4f}"
                     "  (the run's own GPU energy readings)")
    if r["tokens"] is not None:
        lines.append(f"budget: {r['tokens']:.4g} tokens")
        lines.append(f"  GPU-hours              {_fmt(r['gpu_hours'], '{:,.0f}')}")
        lines.append(f"  cost                   {_fmt(r['total_usd'], '${:,.0f}')}")
        lines.append(f"  days                   {_fmt(r['total_days'], '{:,.1f}')}"
                     + ("" if r["num_gpus"] else "  (pass --num-gpus)"))
        lines.append(f"  energy                 {_fmt(r['energy_kwh'], '{:,.0f}', ' kWh')}"
                     f" = {_fmt(r['household_years'], '{:,.1f}')} US household-years "
                     f"({r['household_kwh_per_year']:,.0f} kWh each)")
        if r["measured_energy_kwh"] is not None:
            lines.append(f"  energy, measured       {r['measured_energy_kwh']:,.0f} kWh = "
                         f"{r['measured_household_years']:,.1f} US household-years")
    ckpt = r.get("checkpoint")
    if ckpt is not None:
        lines.append(f"checkpoint every {ckpt['interval_min']:g} min")
        lines.append(f"  size                   {ckpt['size_gib']:,.0f} GiB  "
                     f"({ckpt['size_source']})")
        lines.append(f"  save bandwidth         {ckpt['bandwidth_gib_s']:,.2f} GiB/s  "
                     f"({ckpt['bandwidth_source']})")
        lines.append(f"  save time              {ckpt['save_s']:,.1f} s")
        lines.append(f"  share of wall time     {ckpt['share'] * 100:.2f}%  (save ÷ (interval + "
                     "save), blocking)")
    lines.append(f"reference release {r['reference_release']}")
    return "\n".join(lines)


def _checkpoint(ref: Any, model: str, interval_min: float, bandwidth: str | None,
                size_gib: float | None) -> dict[str, Any]:
    from cmax.reference.storage import checkpoint_what_if, parse_bandwidth

    storage = getattr(ref, "storage", None)
    if interval_min <= 0 or (size_gib is not None and size_gib <= 0):
        raise UsageError("--checkpoint-every-min and --checkpoint-gib must be positive")
    if storage is None:
        raise UsageError(f"reference release {ref.release} has no storage references",
                         fix="use a release from 2026.11.7 on (--reference latest)")
    try:
        rate = parse_bandwidth(bandwidth) if bandwidth is not None else None
    except ValueError as exc:
        raise UsageError(f"--checkpoint-bandwidth: {exc}",
                         fix="give the unit: 40GB/s, 156GiB/s, 500MB/s") from None
    try:
        return checkpoint_what_if(storage, model, interval_min, bandwidth_gib_s=rate,
                                  size_gib=size_gib)
    except ValueError as exc:
        raise UsageError(f"--checkpoint-every-min: {exc}",
                         fix="pass --checkpoint-gib (and --checkpoint-bandwidth) for a model "
                             "reference/storage.toml does not list") from None


@click.command("calc")
@click.option("--model", default=None, help="Model or workload id (e.g. llama3.1-70b).")
@click.option("--gpu", default=None, help="GPU id (e.g. h100-sxm).")
@click.option("--precision", default=None, help="bf16, fp8 or nvfp4.")
@click.option("--mfu", "mfu_text", default=None, help="MFU as a fraction (0.42) or percent (42%).")
@click.option("--tokens-per-s-per-gpu", type=float, default=None, help="Throughput per GPU.")
@click.option("--step-time-s", type=float, default=None,
              help="Seconds per global step (needs --gbs, --seq-len, --num-gpus).")
@click.option("--gbs", type=int, default=None, help="Global batch size (sequences per step).")
@click.option("--seq-len", type=int, default=None,
              help="Sequence length (default: the one the model's baselines use).")
@click.option("--num-gpus", type=int, default=None, help="GPUs in the job.")
@click.option("--usd-per-gpu-hour", type=float, default=None, help="Price per GPU-hour.")
@click.option("--watts-per-gpu", type=float, default=None,
              help="All-in power per GPU in W (default: sourced system power x PUE).")
@click.option("--measured-joules-per-token", type=float, default=None,
              help="J/token a run measured (cmax inspect's or the scorecard's measured J/token, "
                   "GPU boards), shown beside the nominal all-in figure.")
@click.option("--tokens", "tokens_text", default=None,
              help="Training budget in tokens (e.g. 15T or 1.5e13).")
@click.option("--flops-convention", "flops_convention", default=None, metavar="NAME",
              help="The FLOPs count the --mfu figure was measured in (e.g. nvidia-llama for "
                   "NVIDIA's per-sample constants; see `cmax docs reference`). Default: cmax's "
                   "architecture-true count.")
@click.option("--checkpoint-every-min", "checkpoint_min", type=float, default=None,
              help="Checkpoint interval in minutes: adds the share of wall time a blocking "
                   "save of the model's checkpoint takes.")
@click.option("--checkpoint-bandwidth", "checkpoint_bw", default=None, metavar="RATE",
              help="Save bandwidth with its unit (40GB/s, 156GiB/s); default: the MLPerf "
                   "Storage full-run median for the model.")
@click.option("--checkpoint-gib", type=float, default=None,
              help="Checkpoint size in GiB (default: the model's, reference/storage.toml).")
@click.option("--reference", "release", default="latest", show_default=True,
              envvar="CMAX_REFERENCE", show_envvar=True,
              help="Reference release id.")
@click.option("--offer", "offers", multiple=True, metavar="GPU=USD[@TOKENS_PER_S]",
              help="Compare two offers (give --offer twice): a GPU type at its $/GPU-hour, "
                   "with its measured tokens/s per GPU after @ (else worked out from --model, "
                   "--precision and --mfu). Prints each one's $ per million tokens and how "
                   "many times faster per GPU the dearer must train to cost the same per token.")
@format_option
@click.pass_context
def command(ctx: click.Context, offers: tuple[str, ...], model: str | None, gpu: str | None,
            precision: str | None,
            mfu_text: str | None,
            tokens_per_s_per_gpu: float | None, step_time_s: float | None, gbs: int | None,
            seq_len: int | None, num_gpus: int | None, usd_per_gpu_hour: float | None,
            watts_per_gpu: float | None, measured_joules_per_token: float | None,
            tokens_text: str | None, checkpoint_min: float | None, checkpoint_bw: str | None,
            checkpoint_gib: float | None,
            flops_convention: str | None, release: str, fmt: str) -> None:
    """What-if: MFU <-> step time <-> tokens/s, $ per million tokens, J/token, budget cost."""
    from cmax.reference import load_reference
    from cmax.reference.calc import parse_mfu, parse_quantity, what_if

    if offers:
        _compare(offers, model, precision, mfu_text, release, fmt)
        ctx.exit(0)
    missing = [n for n, v in (("--model", model), ("--gpu", gpu), ("--precision", precision))
               if v is None]
    if missing:
        raise UsageError(f"cmax calc needs {', '.join(missing)}",
                         fix="e.g. cmax calc --model llama3.1-70b --gpu h100-sxm --precision bf16 "
                             "--mfu 40%")
    assert model is not None and gpu is not None and precision is not None
    mfu = parse_mfu(mfu_text) if mfu_text is not None else None
    tokens = parse_quantity(tokens_text, name="--tokens") if tokens_text is not None else None
    ref = load_reference(release)
    result = what_if(
        ref, model=model, gpu=gpu, precision=precision, mfu=mfu,
        tokens_per_s_per_gpu=tokens_per_s_per_gpu, step_time_s=step_time_s, gbs=gbs,
        seq_len=seq_len, num_gpus=num_gpus, usd_per_gpu_hour=usd_per_gpu_hour,
        watts_per_gpu=watts_per_gpu, tokens=tokens, flops_convention=flops_convention,
        measured_joules_per_token=measured_joules_per_token,
    )
    if checkpoint_min is not None:
        result["checkpoint"] = _checkpoint(ref, model, checkpoint_min, checkpoint_bw,
                                           checkpoint_gib)
    if fmt == "json":
        ordered = {k: result[k] for k in JSON_KEYS}
        ordered.update({k: v for k, v in result.items() if k not in ordered})
        emit_json(ordered)
    else:
        click.echo(render_text(result))
    ctx.exit(0)
