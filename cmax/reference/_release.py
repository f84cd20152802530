"""A reference release: :class:`Reference`, and loading, verifying and caching one.

Private to :mod:`cmax.reference` (what a release holds, where its data lives and the "latest"
rule are described there and in docs/reference.md), which re-exports the public names; the
per-file readers imported here and the alias tables stay out of the package namespace.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import CmaxError, NotInCatalogue, ReferenceDataError
from cmax.reference._files import REINSTALL, read_reference_toml
from cmax.reference.architecture import Architecture, load_architectures
from cmax.reference.baselines import read_baselines, select_latest, validate_baselines
from cmax.reference.catalog import (
    GpuSpec,
    canonical_precision,
    gpu_alias_table,
    load_gpus,
    resolve_gpu,
)
from cmax.reference.economics import load_economics
from cmax.reference.flops import (
    CONVENTIONS,
    Task,
    cmax_flops_per_token,
    source_flops_per_token,
)
from cmax.reference.inference import load_inference, mlperf_scenario, model_names
from cmax.reference.known_logs import KnownEvidence, load_known_logs
from cmax.reference.mlperf import MlperfReference, load_mlperf_reference
from cmax.reference.network import find_network_baseline, load_network, resolve_interconnect
from cmax.reference.reliability import load_reliability
from cmax.reference.storage import StorageReference, load_storage

ARCHIVE_DIR = "releases"  # reference/releases/<id>/ holds superseded releases, if any
_TASK_SUFFIXES: tuple[Task, ...] = ("sft", "lora")


@dataclass
class Reference:
    """One verified reference release. Build with :func:`load_reference`."""

    release: str
    release_date: str
    directory: Path
    baselines: pl.DataFrame
    gpus: dict[str, GpuSpec]
    models: dict[str, Architecture]
    conventions: dict[str, Any]
    network: list[dict[str, Any]]
    reliability: dict[str, Any]
    economics: dict[str, Any]
    #: public per-GPU serving references (cmax.reference.inference)
    inference: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: MLPerf Storage medians, checkpoint sizes and comparability rules (None: no storage.toml)
    storage: StorageReference | None = None
    _gpu_aliases: dict[str, str] = field(default_factory=dict, repr=False)
    _model_aliases: dict[str, str] = field(default_factory=dict, repr=False)
    _rows: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._gpu_aliases = gpu_alias_table(self.gpus)
        for arch in self.models.values():
            for name in (arch.id, *arch.aliases):
                self._model_aliases[name] = arch.id
        self._rows = self.baselines.to_dicts()

    # --- GPUs --------------------------------------------------------------------------

    def gpu(self, gpu_id: str) -> GpuSpec:
        """The catalogue entry for ``gpu_id`` (aliases and any case accepted)."""
        return resolve_gpu(gpu_id, self.gpus, self._gpu_aliases)

    def peak_tflops(self, gpu_id: str, precision: str) -> float | None:
        """Dense peak TFLOP/s, or None where the GPU has no such tensor-core rate."""
        return self.gpu(gpu_id).peak(precision)

    # --- models and FLOPs --------------------------------------------------------------

    def resolve_workload(self, workload: str) -> tuple[str, str, Task]:
        """(canonical workload id, model id, task) for a workload or model name."""
        key = workload.strip().lower()
        task: Task = "pretrain"
        base = key
        for suffix in _TASK_SUFFIXES:
            if key.endswith(f"-{suffix}"):
                base, task = key[: -len(suffix) - 1], suffix
                break
        model = self._model_aliases.get(base)
        if model is None:
            raise NotInCatalogue(
                f"unknown model or workload {workload!r}", field="workload",
                expected="one of " + ", ".join(sorted(self.models)),
                fix="use a model id from `cmax reference list --what models`",
            )
        canonical = model if task == "pretrain" else f"{model}-{task}"
        return canonical, model, task

    def has_model(self, workload: str) -> bool:
        try:
            self.resolve_workload(workload)
        except CmaxError:
            return False
        return True

    def architecture(self, workload: str) -> Architecture:
        return self.models[self.resolve_workload(workload)[1]]

    def model_flops_per_token(self, workload: str, seq_len: int) -> float:
        """Training FLOPs per token (fwd + bwd) under cmax's architecture-true convention.

        Models without a public architecture fall back to the FLOPs/token their source
        implies (TFLOP/s / tokens/s at that seq_len); otherwise a ReferenceDataError.
        """
        _, model, task = self.resolve_workload(workload)
        arch = self.models[model]
        if arch.published:
            return cmax_flops_per_token(arch, seq_len, task)
        return self._implied_flops_per_token(model, seq_len)

    def model_flops_per_sample(self, workload: str, seq_len: int) -> float:
        return self.model_flops_per_token(workload, seq_len) * seq_len

    def source_flops_per_token(
        self,
        workload: str,
        seq_len: int,
        convention: str,
        *,
        tp: int = 1,
        layers: int | None = None,
    ) -> float:
        """FLOPs per token as a publisher counts them, with that publisher's own parameters."""
        _, model, _ = self.resolve_workload(workload)
        arch = self.models[model]
        over = self.conventions.get("overrides", {}).get(convention, {}).get(model)
        if over:
            arch = arch.with_overrides(over)
        if layers:
            arch = arch.with_layers(layers)
        return source_flops_per_token(arch, convention, seq_len, tp=tp)

    def _implied_flops_per_token(self, model: str, seq_len: int) -> float:
        implied = [
            r["model_tflops_per_gpu"] * 1e12 / r["tokens_per_s_per_gpu"]
            for r in self._rows
            if r["model"] == model and r["seq_len"] == seq_len
            and r["model_tflops_per_gpu"] and r["tokens_per_s_per_gpu"]
        ]
        if not implied:
            raise NotInCatalogue(
                f"{model}: no public architecture and no source figures at seq_len {seq_len}",
                field="seq_len", fix="use the seq_len of the published rows",
            )
        return float(statistics.median(implied))

    # --- baselines ---------------------------------------------------------------------

    def select(
        self,
        *,
        workload: str | None = None,
        gpu: str | None = None,
        precision: str | None = None,
        num_gpus: int | None = None,
        include_proxy: bool = True,
    ) -> pl.DataFrame:
        """Baseline rows filtered by canonical ids (aliases accepted)."""
        df = self.baselines
        if workload is not None:
            canonical, model, _ = self.resolve_workload(workload)
            bare = workload.strip().lower() in (model, *self.models[model].aliases)
            if canonical == model and bare:
                df = df.filter(pl.col("model") == model)  # a bare model id lists all its tasks
            else:
                df = df.filter(pl.col("workload") == canonical)
        if gpu is not None:
            df = df.filter(pl.col("gpu") == self.gpu(gpu).id)
        if precision is not None:
            df = df.filter(pl.col("precision") == canonical_precision(precision))
        if num_gpus is not None:
            df = df.filter(pl.col("num_gpus") == num_gpus)
        if not include_proxy:
            df = df.filter(~pl.col("proxy"))
        return df

    def baseline(self, baseline_id: str) -> dict[str, Any]:
        for row in self._rows:
            if row["baseline_id"] == baseline_id:
                return dict(row)
        raise ReferenceDataError(f"unknown baseline id {baseline_id!r}", field="baseline_id",
                                 fix="list ids with `cmax reference list`")

    def match_baseline(
        self,
        workload: str,
        gpu: str,
        precision: str,
        num_gpus: int,
        *,
        gbs: int | None = None,
        seq_len: int | None = None,
        framework: str | None = None,
        precision_recipe: str | None = None,
    ) -> dict[str, Any] | None:
        """The single "latest" comparable baseline row (rule in docs/reference.md), or None.

        Same workload (task included), GPU, precision and exact GPU count; gbs, seq_len,
        framework and quantisation recipe must match when given; proxy rows never match.
        """
        canonical, _, _ = self.resolve_workload(workload)
        gpu_id = self.gpu(gpu).id
        prec = canonical_precision(precision)
        candidates = [
            r for r in self._rows
            if r["workload"] == canonical and r["gpu"] == gpu_id and r["precision"] == prec
            and r["num_gpus"] == num_gpus and not r["proxy"]
            and (gbs is None or r["gbs"] == gbs)
            and (seq_len is None or r["seq_len"] == seq_len)
            and (framework is None or r["framework"] == framework)
            and (precision_recipe is None or r["precision_recipe"] == precision_recipe)
        ]
        best = select_latest(candidates)
        return dict(best) if best is not None else None

    # --- other baselines -----------------------------------------------------------------

    def match_inference(self, model: str, gpu: str, precision: str, input_len: int,
                        output_len: int) -> dict[str, Any] | None:
        """The offline serving reference row at this model (id or alias), GPU, precision and
        exact input/output length, or None; an unknown GPU or precision is NotInCatalogue.
        Curve points (rows stating an interactivity) are no offline maximum and are skipped."""
        gpu_id, prec = self.gpu(gpu).id, canonical_precision(precision)
        wanted = model.strip().lower()
        for row in self.inference.iter_rows(named=True):
            if (row["interactivity_tok_s_user"] is None and row["gpu"] == gpu_id
                    and row["precision"] == prec and row["input_len"] == input_len
                    and row["output_len"] == output_len
                    and wanted in model_names(row)):
                return dict(row)
        return None

    def match_mlperf_inference(self, model: str, gpu: str,
                               scenario: str) -> dict[str, Any] | None:
        """The MLPerf Inference reference row at this model (id or alias), GPU and LoadGen
        scenario (Offline, Server, Interactive), or None; an unknown GPU is NotInCatalogue.
        Precision is not a key: MLPerf fixes the accuracy target, not the number format."""
        gpu_id, wanted = self.gpu(gpu).id, model.strip().lower()
        for row in self.inference.iter_rows(named=True):
            if (row["gpu"] == gpu_id and mlperf_scenario(row) == scenario.strip().lower()
                    and wanted in model_names(row)):
                return dict(row)
        return None

    def interconnect(self, value: str) -> str:
        """The fabric id of an interconnect id or alias (unknown: ReferenceDataError)."""
        return resolve_interconnect(self.network, value)

    def network_baseline(
        self, interconnect: str | None, collective: str, nodes: int,
        *, sizes: Collection[int] = (), nvlink_domain: bool = False, gpu: str | None = None,
    ) -> dict[str, Any] | None:
        return find_network_baseline(self.network, interconnect, collective, nodes, sizes=sizes,
                                     nvlink_domain=nvlink_domain, gpu=gpu)

    def reliability_baseline(self) -> dict[str, Any]:
        return dict(self.reliability)

    def mlperf_reference(self) -> MlperfReference:
        """NVIDIA's MLPerf Training submissions and MLCommons' RCPs (cmax.reference.mlperf)."""
        return load_mlperf_reference(self.directory)

    def known_evidence(self) -> KnownEvidence:
        """Fingerprints of the public logs and sweeps cmax ships (cmax.reference.known_logs)."""
        return load_known_logs(self.directory)

    def default_watts_per_gpu(self, gpu_id: str) -> float | None:
        """All-in watts per GPU (system max power / GPUs x PUE) where sourced, else None."""
        watts: dict[str, float] = self.economics["default_watts_per_gpu"]
        return watts.get(self.gpu(gpu_id).id)


def _data_root() -> Path:
    from cmax.resources import data_dir

    return data_dir("reference")


def _read_release(directory: Path) -> tuple[str, str]:
    path = directory / "release.toml"
    data = read_reference_toml(path, what="reference release file")
    if "release" not in data:
        raise ReferenceDataError("no release id", file=path, field="release", fix=REINSTALL)
    return str(data["release"]), str(data.get("date", ""))


def known_releases(root: Path | None = None) -> dict[str, Path]:
    """Release id -> folder: the current release plus any archived under releases/."""
    root = root or _data_root()
    found = {_read_release(root)[0]: root}
    archive = root / ARCHIVE_DIR
    if archive.is_dir():
        for sub in sorted(archive.iterdir()):
            if (sub / "release.toml").is_file():
                found[_read_release(sub)[0]] = sub
    return found


def load_reference(release: str = "latest", *, root: Path | None = None) -> Reference:
    """Load, verify and cache a reference release ("latest" = the current release)."""
    base = (root or _data_root()).resolve()
    releases = known_releases(base)
    if release in ("latest", "", None):
        directory = base
    elif release in releases:
        directory = releases[release]
    else:
        raise ReferenceDataError(
            f"unknown reference release {release!r}", field="benchmark.reference",
            expected="'latest' or one of " + ", ".join(sorted(releases)),
            fix="pin a release listed by `cmax reference show`",
        )
    return _load_cached(str(directory))


@functools.lru_cache(maxsize=8)
def _load_cached(directory_text: str) -> Reference:
    # imported here so `python -m cmax.reference.checksum` runs without a double import
    from cmax.reference.checksum import verify_checksums

    directory = Path(directory_text)
    verify_checksums(directory)
    release, release_date = _read_release(directory)
    models = load_architectures(directory / "models.toml")
    gpus = load_gpus(directory / "gpus.toml")
    conv_path = directory / "conventions.toml"
    conventions = read_reference_toml(conv_path, what="FLOPs conventions")
    baselines_path = directory / "baselines.csv"
    baselines = read_baselines(baselines_path)
    validate_baselines(baselines, baselines_path, models=set(models), gpus=set(gpus),
                       conventions=set(CONVENTIONS))
    return Reference(
        release=release,
        release_date=release_date,
        directory=directory,
        baselines=baselines,
        gpus=gpus,
        models=models,
        conventions=conventions,
        network=load_network(directory / "network.toml"),
        reliability=load_reliability(directory / "reliability.toml",
                                     directory / "llama3_interruptions.csv"),
        economics=load_economics(directory / "economics.toml"),
        inference=load_inference(directory / "inference.csv", set(gpus)),
        storage=load_storage(directory / "storage.toml"),
    )


def clear_cache() -> None:
    """Forget loaded releases (tests that edit a copy of the data use this)."""
    _load_cached.cache_clear()
