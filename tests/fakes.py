"""The one fake reference the tests share (validation, scoring, pricing, CLI).

:class:`FakeReference` has the API of :class:`cmax.reference.view.ReferenceData` (what every
stage reads from ``cmax.reference.Reference``), with numbers taken from public sources: DGXC
v25.05 H100 expected step times (Llama 3.1 405B BF16 19.81 s / FP8 13.02 s at 512 GPUs, GBS
256; Grok-1 314B FP8 13.433 s at 512 GPUs, GBS 1024), the README per-sample FLOPs constants
(2.17e16 and 4.27e15 at seq 8192) and the H100 dense peaks (989 BF16, 1979 FP8).

Baselines are given either as rows (each naming workload, gpu, precision, num_gpus; default:
:data:`BASELINES`) or, for hand-checkable scoring tests, as a mapping
``{(workload, precision, num_gpus): row}`` whose rows match any GPU.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from cmax.errors import NotInCatalogue
from cmax.reference.inference import INFERENCE_COLUMNS
from cmax.reference.known_logs import KnownEvidence, load_known_logs
from cmax.reference.storage import StorageReference, load_storage
from tests.paths import REFERENCE

PER_SAMPLE = {"llama3.1-405b": 2.17e16, "grok1-314b": 4.27e15}
PEAKS = {"h100-sxm": {"bf16": 989.0, "fp8": 1979.0}}
# published shapes (reference/models.toml): Llama 3.1 405B 126 x 16384, Grok-1 64 x 6144
SHAPES = {"llama3.1-405b": (126, 16384), "grok1-314b": (64, 6144)}

LLAMA3 = {"interruptions": 419, "gpus": 16384, "days": 54,
          "source": "Llama 3 405B, arXiv:2407.21783 §3.3.4"}

BASELINE_COLUMNS = ["baseline_id", "workload", "gpu", "precision", "num_gpus", "seq_len", "gbs",
                    "mbs", "tp", "pp", "cp", "ep", "vp", "step_time_s", "tokens_per_s_per_gpu",
                    "model_tflops_per_gpu", "mfu_pct", "framework", "container",
                    "recipe_release", "source", "erratum", "proxy"]


def _baseline(bid: str, workload: str, precision: str, n: int, gbs: int, step: float,
              tp: int, pp: int, cp: int, ep: int | None, vp: int, *, proxy: bool = False,
              erratum: str | None = None) -> dict[str, Any]:
    tokens = gbs * 8192 / step / n
    tflops = PER_SAMPLE[workload] * gbs / step / n / 1e12
    return {"baseline_id": bid, "workload": workload, "gpu": "h100-sxm", "precision": precision,
            "num_gpus": n, "seq_len": 8192, "gbs": gbs, "mbs": 1, "tp": tp, "pp": pp, "cp": cp,
            "ep": ep, "vp": vp, "step_time_s": step, "tokens_per_s_per_gpu": round(tokens, 1),
            "model_tflops_per_gpu": None,
            "mfu_pct": round(100 * tflops / PEAKS["h100-sxm"][precision], 2),
            "framework": "NeMo 2.0", "container": "nvcr.io/nvidia/nemo:25.04.01",
            "recipe_release": "v25.08.01", "source": "NVIDIA/dgxc-benchmarking (fake test row)",
            "erratum": erratum, "proxy": proxy}


BASELINES = [
    _baseline("dgxc-405b-bf16-512", "llama3.1-405b", "bf16", 512, 256, 19.81, 8, 8, 2, None, 8),
    _baseline("dgxc-405b-bf16-1024", "llama3.1-405b", "bf16", 1024, 512, 19.95, 8, 8, 2, None,
              8),
    _baseline("dgxc-405b-fp8-512", "llama3.1-405b", "fp8", 512, 256, 13.02, 8, 8, 2, None, 8),
    _baseline("dgxc-grok-fp8-512", "grok1-314b", "fp8", 512, 1024, 13.433, 4, 8, 2, 8, 8),
    {**_baseline("dgxc-405b-bf16-128-v25.04", "llama3.1-405b", "bf16", 128, 64, 19.50, 8, 8, 2,
                 None, 8), "recipe_release": "v25.04.01"},  # measures the last step only
    _baseline("dgxc-grok-bf16-256-proxy", "grok1-314b", "bf16", 256, 1024, 20.7, 4, 4, 2, 8, 8,
              proxy=True, erratum="tokens/s printed as half of seq x GBS / step"),
]


@dataclass(frozen=True)
class FakeGpu:
    id: str
    peak_tflops: dict[str, float]
    tdp_w: float = 700.0


@dataclass(frozen=True)
class FakeArchitecture:
    id: str
    layers: int
    hidden: int


class FakeReference:
    """Stand-in for cmax.reference.Reference; records match_baseline calls in ``calls``."""

    def __init__(
        self,
        baselines: (Sequence[Mapping[str, Any]] | Mapping[tuple[str, str, int], Mapping[str, Any]]
                    | None) = None,
        *,
        network: Mapping[tuple[str, str, int], Mapping[str, Any]] | None = None,
        mlperf: Mapping[tuple[str, int], Mapping[str, Any]] | None = None,
        mlperf_table: Any = None,
        flops_per_token: Mapping[tuple[str, int], float] | None = None,
        economics: Mapping[str, Any] | None = None,
        release: str = "test-2026.1",
    ) -> None:
        self.network = dict(network or {})
        self.mlperf = dict(mlperf or {})
        self.mlperf_table = mlperf_table  # a cmax.reference.mlperf.MlperfReference
        self.flops_per_token = dict(flops_per_token or {})
        self.economics = dict(economics or {})
        self.release = release
        self.calls: list[tuple[Any, ...]] = []
        rows = BASELINES if baselines is None else baselines
        if isinstance(rows, Mapping):
            self._rows = [{"workload": w, "precision": p, "num_gpus": n, **row}
                          for (w, p, n), row in rows.items()]
        else:
            self._rows = [dict(r) for r in rows]

    @property
    def baselines(self) -> pl.DataFrame:
        overrides = {"ep": pl.Int64, "model_tflops_per_gpu": pl.Float64, "erratum": pl.String}
        frame = pl.DataFrame(self._rows or BASELINES, schema_overrides=overrides,
                             infer_schema_length=None)
        return frame if self._rows else frame.clear()

    def gpu(self, gpu_id: str) -> FakeGpu:
        if gpu_id not in PEAKS:
            raise NotInCatalogue(f"unknown GPU {gpu_id!r}")
        return FakeGpu(gpu_id, PEAKS[gpu_id])

    def peak_tflops(self, gpu: str, precision: str) -> float:
        try:
            return PEAKS[gpu][precision]
        except KeyError:
            raise NotInCatalogue(f"no peak for {gpu} {precision}") from None

    @property
    def models(self) -> dict[str, FakeArchitecture]:
        return {w: FakeArchitecture(w, *shape) for w, shape in SHAPES.items()}

    def architecture(self, workload: str) -> FakeArchitecture:
        if workload not in SHAPES:
            raise NotInCatalogue(f"unknown model {workload!r}")
        return self.models[workload]

    def has_model(self, workload: str) -> bool:
        return workload in PER_SAMPLE or any(w == workload for w, _ in self.flops_per_token)

    def model_flops_per_token(self, workload: str, seq_len: int) -> float:
        if (workload, seq_len) in self.flops_per_token:
            return self.flops_per_token[(workload, seq_len)]
        if workload not in PER_SAMPLE:
            raise NotInCatalogue(f"unknown model {workload!r}")
        return PER_SAMPLE[workload] / 8192

    def model_flops_per_sample(self, workload: str, seq_len: int) -> float:
        return self.model_flops_per_token(workload, seq_len) * seq_len

    def source_flops_per_token(self, workload: str, seq_len: int, convention: str) -> float:
        raise NotInCatalogue(f"no {convention} FLOPs convention in the fake reference")

    def select(self, *, workload: str | None = None, gpu: str | None = None,
               precision: str | None = None) -> pl.DataFrame:
        frame = self.baselines
        for name, value in (("workload", workload), ("gpu", gpu), ("precision", precision)):
            if value is not None and name in frame.columns:
                frame = frame.filter(pl.col(name) == value)
        return frame

    def match_baseline(self, workload: str, gpu: str, precision: str, num_gpus: int,
                       gbs: int | None = None, seq_len: int | None = None
                       ) -> dict[str, Any] | None:
        self.calls.append(("match_baseline", workload, gpu, precision, num_gpus, gbs, seq_len))
        for row in self._rows:
            if (row.get("workload"), row.get("precision"), row.get("num_gpus")) != (
                    workload, precision, num_gpus):
                continue
            if row.get("gpu") not in (None, gpu):
                continue
            if gbs is not None and row.get("gbs") not in (None, gbs):
                continue
            if seq_len is not None and row.get("seq_len") not in (None, seq_len):
                continue
            return dict(row)
        return None

    def network_baseline(self, interconnect: str, collective: str, nodes: int, *,
                         sizes: Collection[int] = (), nvlink_domain: bool = False,
                         gpu: str | None = None) -> dict[str, Any] | None:
        row = self.network.get((interconnect, collective, nodes))
        return None if row is None else dict(row)

    def reliability_baseline(self) -> dict[str, Any]:
        return dict(LLAMA3)

    @property
    def inference(self) -> pl.DataFrame:
        """The shipped serving references (their model names; matching is the real one's)."""
        return pl.read_csv(REFERENCE / "inference.csv", schema=INFERENCE_COLUMNS)

    def match_inference(self, model: str, gpu: str, precision: str, input_len: int,
                        output_len: int) -> dict[str, Any] | None:
        return None

    @property
    def storage(self) -> StorageReference | None:
        """The shipped storage references (medians, sizes, rules)."""
        return load_storage(REFERENCE / "storage.toml")

    def match_mlperf_inference(self, model: str, gpu: str,
                               scenario: str) -> dict[str, Any] | None:
        """The shipped MLPerf scenario rows, looked up as the real reference does."""
        from cmax.reference.inference import mlperf_scenario, model_names
        return next((r for r in self.inference.to_dicts() if r["gpu"] == gpu
                     and mlperf_scenario(r) == scenario.lower() and model.lower()
                     in model_names(r)), None)

    def mlperf_reference(self) -> Any:
        return self.mlperf_table

    def known_evidence(self) -> KnownEvidence:
        """The shipped release's fingerprints of public evidence (they name no number a
        test's rows could change)."""
        return load_known_logs(REFERENCE)


def manifest_text(evidence: str, *, name: str = "Example Cloud",
                  cluster: str = "example-h100-a", gpu: str = "h100-sxm", nodes: int = 64,
                  gpus_per_node: int = 8, interconnect: str | None = "infiniband-ndr-8x400",
                  date: str = "2026-10-01") -> str:
    """A minimal valid cmax.toml (provider, the system, benchmark date) plus ``evidence``, the
    TOML of the evidence and commercial sections a test needs (``[[nccl]]``, ``[[runs]]``,
    ``[pricing]``, ...). The tests that write a cmax.toml start from this one text, so a change
    to the required sections is made here once."""
    fabric = f'interconnect = "{interconnect}"\n' if interconnect else ""
    return (
        f'[provider]\nname = "{name}"\ncluster = "{cluster}"\n\n'
        f'[system]\ngpu = "{gpu}"\nnodes = {nodes}\ngpus_per_node = {gpus_per_node}\n'
        f"{fabric}\n[benchmark]\ndate = {date}\n\n{evidence.strip()}\n"
    )


def reliability_toml(gpus_in_service: int = 512) -> str:
    """The ``[reliability]`` section for an ``incidents.csv`` of the samples' kind: the quarter
    2026-07-01 to 2026-09-30 over ``gpus_in_service`` GPUs."""
    return ('\n[reliability]\nincidents = "incidents.csv"\nperiod_start = 2026-07-01\n'
            f"period_end = 2026-09-30\ngpus_in_service = {gpus_in_service}\n")


def run_toml(workload: str, precision: str, gpus: int, log: str) -> str:
    """One ``[[runs]]`` entry: the claims a training log is rated on."""
    return (f'[[runs]]\nworkload = "{workload}"\nprecision = "{precision}"\n'
            f'num_gpus = {gpus}\nlog = "{log}"\n')

