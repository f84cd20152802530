"""``cmax reference list|show``: browse the baselines, GPU catalogue and model architectures."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import click

from cmax.cli.common import SuggestingGroup, emit_json, format_option
from cmax.errors import CmaxError, UsageError

_LIST_COLUMNS = [
    ("baseline_id", "baseline", "{}"), ("gpu", "gpu", "{}"), ("precision", "prec", "{}"),
    ("num_gpus", "GPUs", "{}"), ("gbs", "GBS", "{}"), ("step_time_s", "step s", "{:g}"),
    ("tokens_per_s_per_gpu", "tok/s/GPU", "{:g}"), ("model_tflops_per_gpu", "TFLOP/s", "{:g}"),
    ("mfu_pct", "MFU%", "{:g}"),
]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _table(rows: list[dict[str, Any]]) -> str:
    cells = [[h for _, h, _ in _LIST_COLUMNS] + ["!"]]
    for row in rows:
        line = []
        for key, _, pattern in _LIST_COLUMNS:
            value = row.get(key)
            line.append("-" if value is None else pattern.format(value))
        line.append("E" if row.get("erratum") else ("P" if row.get("proxy") else ""))
        cells.append(line)
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in cells)


@click.group("reference", cls=SuggestingGroup)
def command() -> None:
    """Browse the reference data: baselines, GPUs, models, releases."""


@command.command("list")
@click.option("--what", type=click.Choice(["baselines", "gpus", "models", "network"]),
              default="baselines", show_default=True, help="Which table to list.")
@click.option("--model", "workload", default=None, help="Model or workload id.")
@click.option("--gpu", default=None, help="GPU id (aliases accepted).")
@click.option("--precision", default=None, help="bf16, fp8 or nvfp4.")
@click.option("--num-gpus", type=int, default=None, help="Exact GPU count.")
@click.option("--no-proxy", is_flag=True, help="Hide reduced-layer proxy configs.")
@click.option("--reference", "release", default="latest", show_default=True,
              envvar="CMAX_REFERENCE", show_envvar=True,
              help="Reference release id.")
@format_option
def list_cmd(what: str, workload: str | None, gpu: str | None, precision: str | None,
             num_gpus: int | None, no_proxy: bool, release: str, fmt: str) -> None:
    """List baselines (filtered) or the GPU, model or network catalogues."""
    from cmax.reference import load_reference

    filters = [name for name, value in (("--model", workload), ("--gpu", gpu),
                                        ("--precision", precision), ("--num-gpus", num_gpus),
                                        ("--no-proxy", no_proxy or None)) if value is not None]
    if what != "baselines" and filters:
        # the catalogues are listed whole: a filter there would be silently ignored
        raise UsageError(f"{', '.join(filters)} filter(s) the baselines, not the {what} list",
                         field="--what", fix=f"drop {', '.join(filters)}, or list baselines")
    ref = load_reference(release)
    if what == "gpus":
        gpus = [dataclasses.asdict(g) for g in ref.gpus.values()]
        if fmt == "json":
            emit_json(gpus)
            return
        for g in gpus:
            peaks = ", ".join(f"{k} {v:g}" for k, v in g["peak_tflops"].items())
            click.echo(f"{g['id']:<9} {g['name']:<48} {g['memory_gb']:g} GB  "
                       f"{g['hbm_tbps']:g} TB/s  {g['tdp_w']:g} W  dense TFLOP/s: {peaks}")
        return
    if what == "models":
        models = [{k: v for k, v in dataclasses.asdict(m).items() if v not in (0, None, (), {})}
                  for m in ref.models.values()]
        if fmt == "json":
            emit_json(_jsonable(models))
            return
        for m in ref.models.values():
            shape = (f"L{m.layers} h{m.hidden} heads {m.heads}/{m.kv}"
                     if m.published else "architecture not published")
            click.echo(f"{m.id:<22} {m.family:<13} {shape:<32} {m.name}")
        return
    if what == "network":
        if fmt == "json":
            emit_json(ref.network)
            return
        for n in ref.network:
            click.echo(f"{n['id']:<32} {n['scope']:<10} {n['collective']:<10} "
                       f"{n['busbw_gbps']:>6g} GB/s  {n['kind']:<9} {n['source']}")
        return
    df = ref.select(workload=workload, gpu=gpu, precision=precision, num_gpus=num_gpus,
                    include_proxy=not no_proxy)
    rows = df.to_dicts()
    if fmt == "json":
        emit_json(_jsonable(rows))
        return
    if not rows:
        click.echo("no baselines match these filters")
        return
    click.echo(_table(rows))
    click.echo(f"{len(rows)} baselines (E = source erratum, P = proxy config); "
               f"reference release {ref.release}")


@command.command("show")
@click.argument("item", required=False)
@click.option("--model", "workload", default=None, help="With --gpu/--precision/--num-gpus: "
              "show the latest matching baseline.")
@click.option("--gpu", default=None)
@click.option("--precision", default=None)
@click.option("--num-gpus", type=int, default=None)
@click.option("--gbs", type=int, default=None)
@click.option("--seq-len", type=int, default=None)
@click.option("--reference", "release", default="latest", show_default=True,
              envvar="CMAX_REFERENCE", show_envvar=True,
              help="Reference release id.")
@format_option
def show_cmd(item: str | None, workload: str | None, gpu: str | None, precision: str | None,
             num_gpus: int | None, gbs: int | None, seq_len: int | None, release: str,
             fmt: str) -> None:
    """Show one baseline, GPU or model (ITEM), the latest match, or the release."""
    from cmax.reference import known_releases, load_reference

    ref = load_reference(release)
    data: dict[str, Any]
    if item is None and workload is None and gpu is None:
        data = {
            "release": ref.release, "date": ref.release_date, "directory": str(ref.directory),
            "known_releases": sorted(known_releases()), "baselines": ref.baselines.height,
            "baselines_with_errata": int(ref.baselines["erratum"].is_not_null().sum()),
            "gpus": sorted(ref.gpus), "models": sorted(ref.models),
        }
    elif item is not None:
        data = _show_item(ref, item)
    else:
        missing = [n for n, v in (("--model", workload), ("--gpu", gpu),
                                  ("--precision", precision), ("--num-gpus", num_gpus))
                   if v is None]
        if missing:
            raise UsageError(f"to find the latest baseline also give {', '.join(missing)}",
                             fix="or pass a baseline id, GPU id or model id")
        assert workload and gpu and precision and num_gpus
        match = ref.match_baseline(workload, gpu, precision, num_gpus, gbs=gbs, seq_len=seq_len)
        if match is None:
            raise UsageError(
                f"no comparable baseline for {workload} on {gpu} {precision} x{num_gpus}"
                + (f" gbs {gbs}" if gbs else "") + (f" seq {seq_len}" if seq_len else ""),
                fix="see `cmax reference list --model ... --gpu ...` for the published scales",
            )
        data = match
    if fmt == "json":
        emit_json(_jsonable(data))
        return
    width = max(len(k) for k in data)
    for key, value in _jsonable(data).items():
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        click.echo(f"{key.ljust(width)}  {'-' if value is None else value}")


def _show_item(ref: Any, item: str) -> dict[str, Any]:
    ids = set(ref.baselines["baseline_id"].to_list())
    if item in ids:
        data: dict[str, Any] = ref.baseline(item)
        return data
    try:
        return dataclasses.asdict(ref.gpu(item))
    except CmaxError:
        pass
    if ref.has_model(item):
        arch = ref.architecture(item)
        out = {k: v for k, v in dataclasses.asdict(arch).items() if v not in (0, None, (), {})}
        if arch.published:
            for seq in (2048, 4096, 8192):
                out[f"cmax_flops_per_token_seq{seq}"] = ref.model_flops_per_token(item, seq)
        return out
    raise UsageError(f"{item!r} is not a baseline id, GPU id or model id",
                     fix="list them with `cmax reference list [--what gpus|models]`")
