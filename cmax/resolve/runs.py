"""The typed records of a resolved training run: the reference baseline it is compared with
(:class:`BaselineRow`), the run's identity as the claims ledger resolved it (:class:`Stated`
values keyed by :data:`IDENTITY`) and the run with every per-run decision made
(:class:`ResolvedRun`).

:func:`cmax.resolve.case.resolve` builds them; the claims of a run
(:mod:`cmax.resolve.run_claims`), the
rules and the score read them. They live apart from the resolver so that what reads a run
need not import what builds the case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cmax.reading.coerce import as_int
from cmax.recipes.window import Window
from cmax.reference.view import num, text
from cmax.resolve.claims import ClaimStatus
from cmax.submission.manifest import RunSpec

#: What a run *is*: the workload, GPU, GPU count and precision a reference is looked up by,
#: and the framework, container and job id it ran with. The runs table holds only what the log
#: states; these values are the claims ledger's (cmax.toml's declaration, resolved against the
#: log's statements), built once per run in :func:`cmax.resolve.case.resolve` and read through
#: :meth:`ResolvedRun.get` / :meth:`ResolvedRun.stated` by every stage.
IDENTITY: tuple[str, ...] = ("workload", "gpu", "num_gpus", "precision", "framework",
                             "container", "job_id")


@dataclass(frozen=True)
class Stated:
    """One value of a run's identity and where it stands in the claims ledger: corroborated
    (the log states it), declared (only cmax.toml does), contradicted (the log states another
    value) or unstated, with the source the value was taken from; when contradicted, the one
    value the log states instead (``log_value``) where its statements agree on one."""

    value: str | int | None
    status: ClaimStatus
    source: str
    log_value: str | None = None

    @property
    def logged(self) -> bool:
        """The evidence states this value (it is not cmax.toml's word alone)."""
        return self.status == "corroborated"

    @property
    def known(self) -> str | int | None:
        """What the run is, as far as anyone can tell: where the log contradicts cmax.toml,
        the value the log states (it ran what it printed), or None where its statements
        disagree among themselves (nobody can tell); else the ledger's value. A figure that
        depends on what ran (an MFU's peak) reads this, never the contradicted declaration."""
        return self.log_value if self.status == "contradicted" else self.value


@dataclass(frozen=True)
class DerivedStepTime:
    """A step time the log does not print, derived from the per-GPU rate it does print
    (TorchTitan's ``tps``): GBS x sequence length / (GPUs x tokens/s/GPU), each input with its
    standing. What the log states is corroborated; what only cmax.toml states is declared, so
    a step time resting on it is labelled so wherever it is shown."""

    gbs: Stated
    seq_len: Stated
    num_gpus: Stated

    def declared(self) -> list[str]:
        """The inputs the log does not state (cmax.toml's word alone), in the note's words."""
        return [name for name, value in (("GBS", self.gbs), ("sequence length", self.seq_len),
                                         ("GPU count", self.num_gpus)) if not value.logged]

    def note(self) -> str:
        """How the step time was derived, for the result's notes and witnesses."""
        def part(name: str, value: Stated) -> str:
            return f"{name} {value.value} ({'the log' if value.logged else value.status})"
        basis = (f"step time derived from the log's tokens/s/GPU: "
                 f"{part('GBS', self.gbs)} x {part('sequence length', self.seq_len)} / "
                 f"({part('GPUs', self.num_gpus)} x tokens/s/GPU)")
        declared = self.declared()
        if not declared:
            return basis
        return (f"{basis}; the step times shown rest on cmax.toml's {', '.join(declared)}; the "
                "ratio does not (the same values divide the reference's tokens/s/GPU: it is "
                "the log's tokens/s/GPU against the reference's)")


@dataclass(frozen=True)
class BaselineRow:
    """A reference baseline row as the stages read it (one typed row, not a dict)."""

    baseline_id: str
    workload: str | None = None
    gpu: str | None = None
    precision: str | None = None
    num_gpus: int | None = None
    seq_len: int | None = None
    gbs: int | None = None
    mbs: int | None = None
    tp: int | None = None
    pp: int | None = None
    cp: int | None = None
    ep: int | None = None
    vp: int | None = None
    step_time_s: float | None = None
    tokens_per_s_per_gpu: float | None = None
    model_tflops_per_gpu: float | None = None
    mfu_pct: float | None = None
    framework: str | None = None
    container: str | None = None
    recipe_release: str | None = None
    source: str | None = None
    erratum: str | None = None
    flops_convention: str | None = None
    proxy: bool = False

    @classmethod
    def from_row(cls, row: Mapping[str, Any], fallback_id: str) -> BaselineRow:
        """Lenient conversion of a reference row (numbers as text, NaN, "true" all handled)."""
        def i(name: str) -> int | None:
            return as_int(row.get(name))

        def t(name: str) -> str | None:
            return text(row, name) or None

        proxy = row.get("proxy")
        return cls(
            baseline_id=t("baseline_id") or fallback_id, workload=t("workload"), gpu=t("gpu"),
            precision=t("precision"), num_gpus=i("num_gpus"), seq_len=i("seq_len"),
            gbs=i("gbs"), mbs=i("mbs"), tp=i("tp"), pp=i("pp"), cp=i("cp"), ep=i("ep"),
            vp=i("vp"), step_time_s=num(row, "step_time_s"),
            tokens_per_s_per_gpu=num(row, "tokens_per_s_per_gpu"),
            model_tflops_per_gpu=num(row, "model_tflops_per_gpu"), mfu_pct=num(row, "mfu_pct"),
            framework=t("framework"), container=t("container"),
            recipe_release=t("recipe_release"), source=t("source"), erratum=t("erratum"),
            flops_convention=t("flops_convention"),
            proxy=proxy is True or str(proxy).strip().lower() == "true")

    def config(self, name: str) -> int | None:
        """A recipe parameter (one of :data:`cmax.resolve.case.CONFIG_FIELDS`)."""
        value = getattr(self, name)
        return value if isinstance(value, int) else None


@dataclass(frozen=True, eq=False)
class ResolvedRun:
    """One training run with every per-run decision made (see the module docstring)."""

    run_id: str
    row: Mapping[str, Any]
    file: str | None
    #: the ``[[runs]]`` entry the run was read for (its runs-table ``entry``), and its index
    spec: RunSpec | None
    spec_index: int | None
    steps: pl.DataFrame
    clean_steps: pl.DataFrame
    window: Window
    window_steps: pl.DataFrame
    summary: pl.DataFrame | None
    baseline: BaselineRow | None = None
    baseline_exact: bool = False
    baseline_note: str | None = None
    #: (line, GBS) the log prints on the window's lines; empty when unknown
    logged_gbs: tuple[tuple[int, int], ...] = ()
    #: the run's identity (:data:`IDENTITY`), each value as the claims ledger resolved it
    identity: Mapping[str, Stated] = field(default_factory=dict)
    #: how the step times were derived where the log prints only a rate (None: printed)
    step_time_derived: DerivedStepTime | None = None

    def get(self, name: str) -> Any:
        """A run attribute. An identity field (:data:`IDENTITY`) is the ledger's value (its
        :meth:`stated`); any other is what the log states (the runs table), else cmax.toml's
        declaration (a configuration key the log is silent on)."""
        if name in IDENTITY:
            stated = self.identity.get(name)
            return None if stated is None else stated.value
        value = self.row.get(name)
        if value is None and self.spec is not None:
            value = getattr(self.spec, name, None)
        return value

    def stated(self, name: str) -> Stated:
        """An identity field's value with its ledger status (unstated when unresolved)."""
        return self.identity.get(name) or Stated(None, "unstated", "-")

    def get_int(self, name: str) -> int | None:
        return as_int(self.get(name))

    def get_str(self, name: str) -> str | None:
        value = self.get(name)
        return None if value is None else str(value).strip().lower()

    def measured(self, *, window: bool = False) -> pl.DataFrame:
        """Valid steps (only the window's if asked), or the valid summary row."""
        if self.summary is not None:
            return self.summary.filter(pl.col("step_time_s").is_finite()
                                       & (pl.col("step_time_s") > 0))
        return self.window_steps if window else self.clean_steps

    def line_of(self, iteration: int) -> int | None:
        """The log line of an iteration's first printing."""
        hit = self.steps.filter(pl.col("iteration") == iteration)
        if hit.is_empty():
            return None
        return as_int(hit["line"][0])
