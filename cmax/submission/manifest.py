"""The bundle manifest ``cmax.toml``: the contract between a submitter and cmax.

Keys are those of docs/manifest.md (extend, never rename). Unknown keys are rejected: a
typo such as ``usd_per_gpu_hr`` would otherwise silently drop the quoted price out of a
negotiation. Every validation error is reported with the dotted key, the value found and
what was expected.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import urllib.parse
import zoneinfo
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from cmax.errors import ManifestError
from cmax.reading.limits import MAX_PATH_CHARS, MAX_RUNS
from cmax.reading.tomlfile import read_toml

MANIFEST_NAME = "cmax.toml"

ERA_START = dt.date(2020, 1, 1)
"""No date in a manifest is earlier: the oldest GPU cmax rates (H100) shipped in 2022, so a
benchmark or incident period before 2020 is a mistake (``period_start = 0`` in a generated
manifest became 1970-01-01 and stretched the reliability period over 56 years)."""

ERA_END = dt.date(2100, 1, 1)
"""Nor later: a year such as 9999 is a typo, not a plan."""

MIN_USD_PER_GPU_HOUR = 0.10
"""Below this a quote is a unit mistake (cents, or $/GPU-minute): the reference price points
in reference/economics.toml run $1.60-3.44 per H100/H200 hour."""

MAX_USD_PER_GPU_HOUR = 100.0
"""Above this likewise (per-node or per-cluster-hour prices): 30x the dearest reference point."""


def _plain_path(value: str) -> str:
    """A declared path holds no control characters: a NUL cannot be in any file name (the OS
    call raises), and others are pasting accidents."""
    bad = next((c for c in value if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise ValueError(f"a file path without control characters (found {bad!r})")
    return value


RelPath = Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS),
                    AfterValidator(_plain_path)]


def _in_era(value: dt.date) -> dt.date:
    if not ERA_START <= value < ERA_END:
        raise ValueError(f"a date from {ERA_START} to {ERA_END} (GPU benchmarking era)")
    return value


EraDate = Annotated[dt.date, AfterValidator(_in_era)]

Label = Annotated[str, Field(min_length=1, max_length=200)]
"""An id or version string (workload, driver, container): a few dozen characters in real
manifests; a megabyte string would only be carried into every report."""


class _Strict(BaseModel):
    # inf/nan are valid TOML floats but no valid price, uptime or duration (and not valid JSON)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """``num_gpus = true`` would otherwise be read as 1 GPU, ``usd_per_gpu_hour = true``
        as $1: a boolean is never a number here."""
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if annotation in (int, float) or (int in get_args(annotation)
                                              or float in get_args(annotation)):
                raise ValueError("a number, not true/false")
        return value


class Provider(_Strict):
    name: str = Field(min_length=1, max_length=200)
    cluster: str = Field(min_length=1, max_length=200)
    region: Label | None = None


class System(_Strict):
    gpu: str = Field(min_length=1, description="GPU id from the reference GPU catalogue")
    nodes: int = Field(gt=0, le=100_000)
    gpus_per_node: int = Field(gt=0, le=72)
    interconnect: Label | None = None
    driver: Label | None = None
    cuda: Label | None = None
    nccl: Label | None = None


class Benchmark(_Strict):
    date: EraDate
    reference: Label = "latest"


class RunSpec(_Strict):
    workload: Label
    precision: Label
    num_gpus: int = Field(gt=0, le=1_000_000)
    log: RelPath
    # bounded far above real configs, and within Int64 (vp = 2**64 crashed the run table)
    seq_len: int | None = Field(default=None, gt=0, le=100_000_000)
    gbs: int | None = Field(default=None, gt=0, le=100_000_000)
    mbs: int | None = Field(default=None, gt=0, le=1_000_000)
    tp: int | None = Field(default=None, gt=0, le=1_000_000)
    pp: int | None = Field(default=None, gt=0, le=1_000_000)
    cp: int | None = Field(default=None, gt=0, le=1_000_000)
    ep: int | None = Field(default=None, gt=0, le=1_000_000)
    vp: int | None = Field(default=None, gt=0, le=1_000_000)
    framework: Label | None = None
    container: Label | None = None
    experiment: str | None = Field(
        default=None, min_length=1,
        description="picks one experiment when `log` is a DGXC parse-script CSV/JSON or an "
        "llmb-run database holding several (substring of its filename / workload key)")
    job_id: str | None = Field(
        default=None, pattern=r"^[0-9]+([_+][0-9]+)?$",
        description="the Slurm job id of the run, when the log's file name does not carry "
        "it (llmb-run log-<exp>_<jobid>_<retry>.out, slurm-<jobid>.out): its [[accounting]] "
        "row is the run's clock")

    @field_validator("workload", "precision")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()


class PathSpec(_Strict):
    path: RelPath


class MlperfSpec(PathSpec):
    cited: bool = Field(
        default=False, description="another submitter's published result, included as "
        "context: shown on the scorecard, never rated as this provider's evidence")
    round: str | None = Field(
        default=None, pattern=r"^v?\d+\.\d+$",
        description="the MLPerf Training round the results were submitted to (e.g. \"5.0\"), "
        "when no v<round> folder in the path says it: picks the RCPs and NVIDIA's reference")


class InferenceSpec(_Strict):
    """A serving benchmark result and what it was run on (what the file does not say)."""

    result: RelPath
    model: Label = Field(description="model id, e.g. llama3.3-70b, gpt-oss-120b")
    precision: Label = Field(description="weights precision served: fp8, nvfp4, bf16")
    gpus: int = Field(gt=0, le=1_000_000, description="GPUs serving the benchmark")
    input_len: int = Field(gt=0, le=10_000_000, description="input (prompt) tokens per request")
    output_len: int = Field(gt=0, le=10_000_000, description="output tokens per request")
    framework: Label | None = None
    version: Label | None = None
    concurrency: int | None = Field(default=None, gt=0, le=10_000_000)
    ttft_p99_ms: float | None = Field(default=None, gt=0, description="TTFT p99 SLO")
    tpot_p99_ms: float | None = Field(default=None, gt=0, description="TPOT p99 SLO")
    prefill_gpus: int | None = Field(
        default=None, gt=0, le=1_000_000,
        description="disaggregated serving: the GPUs running prefill (with decode_gpus)")
    decode_gpus: int | None = Field(
        default=None, gt=0, le=1_000_000,
        description="disaggregated serving: the GPUs running decode; output per GPU is "
                    "counted over them, as the references count it")

    @model_validator(mode="after")
    def _split(self) -> InferenceSpec:
        prefill, decode = self.prefill_gpus, self.decode_gpus
        if (decode is None) != (prefill is None):
            raise ValueError("prefill_gpus and decode_gpus together (a disaggregated split), "
                             "or neither")
        if prefill is not None and decode is not None and prefill + decode != self.gpus:
            raise ValueError(f"prefill_gpus + decode_gpus = gpus ({prefill} + {decode} is not "
                             f"{self.gpus})")
        return self


class StorageSpec(_Strict):
    """Storage evidence and what it is of (what the file does not say)."""

    result: RelPath = Field(description="an MLPerf Storage summary.json, a fio JSON result, or "
                            "a training log whose checkpoint save lines are read")
    round: str | None = Field(
        default=None, pattern=r"^v?\d+\.\d+$",
        description="the MLPerf Storage round (tool version) the summary was run with, when no "
        "v<round> folder in its path says it (e.g. \"v1.0\")")
    accelerator: Label | None = Field(
        default=None, description="the accelerator MLPerf Storage emulated, when neither the "
        "summary's folder (configs/overrides.yaml, *_metadata.json) nor the file says it")
    model: Label | None = Field(
        default=None, description="the model a training log's checkpoints are of (e.g. "
        "llama3.1-405b): its checkpoint size comes from reference/storage.csv")
    checkpoint_gib: float | None = Field(
        default=None, gt=0, le=1e7, description="checkpoint size in GiB, when the model's is "
        "not in the reference")
    gpus: int | None = Field(default=None, gt=0, le=1_000_000,
                             description="GPUs of the training run a log's checkpoints are of")
    contracted_gib_s: float | None = Field(
        default=None, gt=0, le=1e6, description="the bandwidth the contract promises (GiB/s): "
        "a fio result is rated against it (no public reference exists for fio)")


class Reliability(_Strict):
    incidents: RelPath
    period_start: EraDate
    period_end: EraDate
    gpus_in_service: int = Field(gt=0, le=10_000_000)
    checkpoint_interval_min: float = Field(default=30.0, gt=0, le=7 * 24 * 60)
    restart_min: float = Field(default=15.0, ge=0, le=7 * 24 * 60)
    job_gpus: int | None = Field(default=None, gt=0, le=1_000_000)

    @field_validator("period_end")
    @classmethod
    def _end_after_start(cls, value: dt.date, info: ValidationInfo) -> dt.date:
        start = info.data.get("period_start")
        if isinstance(start, dt.date) and value < start:
            raise ValueError(f"a date on or after period_start ({start})")
        return value


def period_bounds(start: dt.date, end: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """[start 00:00 UTC, day after end 00:00 UTC): the manifest's dates are inclusive."""
    return (dt.datetime.combine(start, dt.time(), dt.UTC),
            dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), dt.UTC))


class Sla(_Strict):
    uptime_pct: float = Field(gt=0, le=100)
    credits: list[tuple[float, float]] = Field(default_factory=list)
    counts_gpu_faults: bool = Field(
        default=False, description="the contract counts a node with a failed GPU as down "
        "(the monitoring's GPU count below gpus_per_node while the node is up)")

    @field_validator("credits")
    @classmethod
    def _credits(cls, value: list[tuple[float, float]]) -> list[tuple[float, float]]:
        for below_pct, credit_pct in value:
            if not 0 < below_pct <= 100 or not 0 <= credit_pct <= 100:
                raise ValueError("each credit tier is [below_uptime_pct, credit_pct], both 0-100")
        tiers = sorted(value, key=lambda tier: -tier[0])
        for (upper, upper_credit), (lower, lower_credit) in itertools.pairwise(tiers):
            if upper == lower:
                raise ValueError(f"one credit per uptime threshold ({upper:g} appears twice)")
            if lower_credit < upper_credit:
                raise ValueError(
                    f"credits that grow as uptime falls (below {lower:g} % gives "
                    f"{lower_credit:g} %, less than {upper_credit:g} % below {upper:g} %)")
        return tiers


def _prometheus_url(value: str) -> str:
    """An http(s) address without credentials: they come from the environment, since the
    manifest travels with the bundle (cmax/ingest/monitoring/prometheus.py)."""
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("the Prometheus server's http:// or https:// address "
                         "(http://prometheus:9090)")
    if parts.username or parts.password:
        raise ValueError("an address without user or password (set CMAX_PROMETHEUS_TOKEN, or "
                         "CMAX_PROMETHEUS_USER and CMAX_PROMETHEUS_PASSWORD, in the "
                         "environment)")
    if parts.query or parts.fragment:
        raise ValueError("the server's address only, without ?query or #fragment")
    return value


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"a regular expression ({exc})") from None
    return value


class Monitoring(_Strict):
    """The buyer's own monitoring, a witness of node availability the provider does not write
    (docs/manifest.md, cmax/ingest/monitoring/)."""

    prometheus: Annotated[str, AfterValidator(_prometheus_url)] | None = Field(
        default=None, max_length=2_000)
    up_answer: RelPath | None = None
    gpus_answer: RelPath | None = None
    xid_answer: RelPath | None = None
    slurm_events: RelPath | None = None
    slurm_reasons: RelPath | None = None
    kubernetes: RelPath | None = None
    up: str = Field(default='up{job="node"}', min_length=1, max_length=2_000)
    ready: str | None = Field(
        default='kube_node_status_condition{condition="Ready",status="true"}', max_length=2_000)
    gpus: str | None = Field(default="count by (Hostname) (DCGM_FI_DEV_GPU_TEMP)",
                             max_length=2_000)
    xid: str | None = Field(default="DCGM_FI_DEV_XID_ERRORS", max_length=2_000)
    instance_regex: Annotated[str, AfterValidator(_regex)] = Field(
        default=r"^([^:.]+)", max_length=500)
    step_s: int = Field(default=60, ge=1, le=3_600)
    slurm_timezone: str = Field(default="UTC", max_length=100)

    @model_validator(mode="after")
    def _one_source(self) -> Monitoring:
        if self.prometheus and self.up_answer:
            raise ValueError("either prometheus (a live server) or up_answer (a saved answer), "
                             "not both")
        if not (self.prometheus or self.up_answer or self.slurm_events or self.slurm_reasons
                or self.kubernetes):
            raise ValueError("a source: prometheus, up_answer, slurm_events, slurm_reasons or "
                             "kubernetes")
        if (self.gpus_answer or self.xid_answer) and not self.up_answer:
            raise ValueError("gpus_answer and xid_answer beside an up_answer")
        try:
            zoneinfo.ZoneInfo(self.slurm_timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"slurm_timezone: an IANA time zone such as UTC or Europe/Paris "
                             f"(found {self.slurm_timezone!r})") from None
        return self


class Pricing(_Strict):
    """The quote. In US dollars (``usd_per_gpu_hour``), or in another currency with the rate
    to dollars the buyer states (``currency``, ``quote_per_gpu_hour``,
    ``usd_per_currency_unit``): cmax never assumes a rate, and a quote in euros read as dollars
    moves every price it advises by the exchange rate."""

    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    quote_per_gpu_hour: float | None = Field(default=None, gt=0, le=1_000_000)
    usd_per_currency_unit: float | None = Field(default=None, gt=0, le=1_000_000)
    rate_source: str | None = Field(default=None, max_length=200)

    @model_validator(mode="before")
    @classmethod
    def _in_dollars(cls, data: Any) -> Any:
        """A quote in another currency becomes dollars only at a stated rate."""
        if not isinstance(data, dict):
            return data
        currency = data.get("currency", "USD")
        if isinstance(currency, str):
            currency = currency.strip().upper()
            data = {**data, "currency": currency}
        if currency == "USD" or not isinstance(currency, str):
            if data.get("usd_per_currency_unit") is not None:
                raise ValueError("currency = \"EUR\" (the quote's ISO 4217 code) beside "
                                 "usd_per_currency_unit; a quote in dollars takes no rate")
            if "usd_per_gpu_hour" not in data and data.get("quote_per_gpu_hour") is not None:
                return {**data, "usd_per_gpu_hour": data["quote_per_gpu_hour"]}
            return data
        if "usd_per_gpu_hour" in data:
            raise ValueError(f"the quote in {currency} as quote_per_gpu_hour with "
                             f"usd_per_currency_unit (US dollars per 1 {currency}), not "
                             f"usd_per_gpu_hour: a figure in {currency} read as dollars is off "
                             "by the exchange rate")
        quote, rate = data.get("quote_per_gpu_hour"), data.get("usd_per_currency_unit")
        if quote is None or rate is None:
            raise ValueError(f"quote_per_gpu_hour (in {currency}) and usd_per_currency_unit "
                             f"(US dollars per 1 {currency}, with rate_source): cmax converts a "
                             "quote only at a rate you state")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (quote, rate)):
            return data  # the fields' own checks name what is wrong
        return {**data, "usd_per_gpu_hour": round(float(quote) * float(rate), 6)}

    usd_per_gpu_hour: float

    @field_validator("usd_per_gpu_hour")
    @classmethod
    def _per_gpu_hour(cls, value: float) -> float:
        """Out of these bounds a figure is in another unit; cmax.price.units holds a quote
        inside them to the GPU's own market band."""
        if not MIN_USD_PER_GPU_HOUR <= value <= MAX_USD_PER_GPU_HOUR:
            raise ValueError(
                f"a price per GPU per hour from ${MIN_USD_PER_GPU_HOUR:g} to "
                f"${MAX_USD_PER_GPU_HOUR:g} (a per-month price ÷ 730 h, a per-node price ÷ "
                "the node's GPUs, cents ÷ 100)")
        return value
    term_months: int = Field(default=12, gt=0, le=120)
    # the largest all-in figure in reference/economics.toml (GB300 NVL72) is under 3 kW
    watts_per_gpu: float | None = Field(default=None, gt=0, le=10_000)
    workloads: str | None = Field(default=None, max_length=2_000)

    @field_validator("workloads")
    @classmethod
    def _basket(cls, value: str | None) -> str | None:
        """The buyer's basket, read by cmax.submission.basket.parse_basket: refused here, with the
        manifest line, rather than when the price is worked out."""
        if value is not None:
            from cmax.errors import UsageError
            from cmax.submission.basket import parse_basket

            try:
                parse_basket(value, field="pricing.workloads")
            except UsageError as exc:
                raise ValueError(exc.expected or exc.message) from None
        return value


class UnitSpec(_Strict):
    """A scalable unit handed over on its own (NVIDIA's BM01: every unit within 5% of the
    target), named by its hosts."""

    name: Label = Field(description="the unit's name, e.g. \"su1\"")
    hosts: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        min_length=1, max_length=4096,
        description="the unit's hosts: names, Slurm host lists (node[001-064]) or shell "
        "patterns (node0*); a result belongs to the unit holding every host its file names")
    files: list[RelPath] = Field(
        default_factory=list, max_length=4096,
        description="evidence files of this unit that name no host (training logs): a file "
        "that names hosts belongs to the unit holding them, whatever is listed here")


class Manifest(_Strict):
    provider: Provider
    system: System
    benchmark: Benchmark
    runs: list[RunSpec] = Field(default_factory=list)
    nccl: list[PathSpec] = Field(default_factory=list)
    mlperf: list[MlperfSpec] = Field(default_factory=list)
    inference: list[InferenceSpec] = Field(default_factory=list)
    power: list[PathSpec] = Field(
        default_factory=list, description="GPU power telemetry files (one per host, named "
        "after it) covering the training runs: their measured energy per token")
    storage: list[StorageSpec] = Field(
        default_factory=list, description="storage and checkpoint evidence: MLPerf Storage "
        "summaries, fio results, training logs with checkpoint save lines")
    accounting: list[PathSpec] = Field(
        default_factory=list, description="Slurm accounting of the runs' jobs (sacct --json or "
        "sacct -P output): when each job started and ended, a clock the log does not write")
    units: list[UnitSpec] = Field(
        default_factory=list, max_length=256, description="the scalable units handed over, "
        "each judged on its own (cmax accept)")
    audit: PathSpec | None = None
    reliability: Reliability | None = None
    monitoring: Monitoring | None = None
    sla: Sla | None = None
    pricing: Pricing | None = None
    declarations: dict[str, bool | str | int | float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _monitoring_period(self) -> Manifest:
        if self.monitoring is not None and self.reliability is None:
            raise ValueError("[monitoring] is read over the [reliability] period: add "
                             "[reliability] with period_start and period_end")
        return self


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _lookup(data: Any, loc: tuple[int | str, ...]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _in_data(data: Any, loc: tuple[int | str, ...]) -> int:
    """How many leading parts of ``loc`` name real keys; pydantic appends the member type of
    a union (``declarations.x.bool``), which is not a key the user wrote."""
    for depth, part in enumerate(loc):
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return depth
    return len(loc)


def _shown(value: Any) -> str:
    """A value the way it is written in TOML (true, 2026-07-01), not as a Python repr."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dt.date):
        return value.isoformat()
    shown = repr(value)
    # a 10,000-character path or a 200-deep array would drown the one-line error
    return shown if len(shown) <= 120 else f"{shown[:100]}... ({len(shown):,} characters)"


def _keys_at(loc: tuple[int | str, ...]) -> list[str]:
    """The keys the contract allows in the table at ``loc`` (``runs[0]`` -> RunSpec's)."""
    model: Any = Manifest
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return []
        inner = [a for a in (field.annotation, *get_args(field.annotation))
                 if isinstance(a, type) and issubclass(a, BaseModel)]
        inner += [b for a in get_args(field.annotation) for b in get_args(a)
                  if isinstance(b, type) and issubclass(b, BaseModel)]
        if not inner:
            return []
        model = inner[0]
    return list(model.model_fields)


def parse_manifest(data: dict[str, Any], *, source: str | Path) -> Manifest:
    """Validate already-parsed TOML data; errors name the key, the value and what was expected."""
    runs = data.get("runs")
    if isinstance(runs, list) and len(runs) > MAX_RUNS:
        raise ManifestError(f"{len(runs):,} [[runs]] entries", file=source, field="runs",
                            expected=f"at most {MAX_RUNS} runs in one bundle",
                            fix="split the runs over several bundles (cmax report takes many)")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # a typo shows up as an unknown key plus a missing one: the unknown key explains both
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = tuple(err["loc"])
        key = _dotted(loc)
        if err["type"] == "missing":
            raise ManifestError(
                "required key is missing", file=source, field=key,
                fix=f"add `{loc[-1]}` to the [{_dotted(loc[:-1]) or 'top level'}] table",
            ) from None
        if err["type"] == "extra_forbidden":
            from cmax.reading.suggest import did_you_mean

            hint = did_you_mean(str(loc[-1]), _keys_at(loc[:-1]))
            raise ManifestError(
                "unknown key" + (f"; {hint}" if hint else ""), file=source, field=key,
                expected="a key from the cmax.toml contract in `cmax docs manifest`",
                fix="check the spelling or remove it",
            ) from None
        expected = err["msg"].removeprefix("Value error, ")
        depth = _in_data(data, loc)
        if depth < len(loc):  # a union: every member's complaint, under the user's key
            loc = loc[:depth]
            key = _dotted(loc)
            expected = " or ".join(dict.fromkeys(
                e["msg"].removeprefix("Input should be ") for e in errors
                if tuple(e["loc"])[:depth] == loc))
        value = _lookup(data, loc)
        raise ManifestError(
            f"invalid value {_shown(value)}", file=source, field=key, expected=expected,
        ) from None


def check_sanity(manifest: Manifest, *, source: str | Path) -> Manifest:
    """Cross-key checks each key's own bounds cannot make: the manifest must describe one
    consistent system. ``gpus_in_service = 1`` on a 512-GPU system divided every incident
    over one GPU-period the wrong way round and priced the cluster at $0.00 with no finding."""
    system_gpus = manifest.system.nodes * manifest.system.gpus_per_node
    rel = manifest.reliability
    if rel is not None and rel.gpus_in_service < system_gpus:
        raise ManifestError(
            f"{rel.gpus_in_service} GPUs in service is fewer than the {system_gpus} GPUs the "
            f"system declares ({manifest.system.nodes} nodes x "
            f"{manifest.system.gpus_per_node})", file=source, field="reliability.gpus_in_service",
            expected=f"at least {system_gpus}",
            fix="count every GPU the incident log covers, or correct [system]")
    return manifest


def load_manifest(path: Path) -> Manifest:
    """Read and validate ``cmax.toml``."""
    data = read_toml(path, what="manifest", error=ManifestError,
                     missing_fix=f"a bundle needs a {MANIFEST_NAME} at its top level (see README)")
    return manifest_from(data, path)


def manifest_from(data: dict[str, Any], path: Path) -> Manifest:
    """Validate the decoded ``cmax.toml`` at ``path``."""
    return check_sanity(parse_manifest(data, source=path), source=path)
