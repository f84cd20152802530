"""How a training run is named wherever it is shown: by what its log states, the declaration
it contradicts marked ('llama3.1-405b fp8 (declared bf16) 512 GPUs').

A run's judgement, the Exemplar suite's reason and every report table name a run from these
functions, so a run whose log contradicts its cmax.toml reads the same in the JSON, the
frames and the tables. They live in the judgement layer because judgements are labelled
where they are made, and render (above it) styles the same label for its tables.
"""

from __future__ import annotations

from typing import Protocol


class RunIdentity(Protocol):
    """A training run's declared identity and what its log states against it (a
    WorkloadResult or a WorkloadEconomics: ``log_states`` holds each contradicted field's
    logged value, None where the log's statements name no single one)."""

    @property
    def workload(self) -> str: ...
    @property
    def precision(self) -> str: ...
    @property
    def num_gpus(self) -> int: ...
    @property
    def log_states(self) -> dict[str, str | None]: ...


def _gpus(value: str | int) -> str:
    return f"{value:,d}" if isinstance(value, int) else (
        f"{int(value):,d}" if value.isdigit() else value)


def stated(run: RunIdentity, name: str, *, upper: bool = False, grouped: bool = True) -> str:
    """One identity field (workload, precision, num_gpus) as the run's log states it, with
    the declaration marked where the log contradicts it: 'fp8 (declared bf16)'; 'bf16
    (contradicted by its log)' when the log's statements name no single value."""
    declared: str | int = getattr(run, name)
    case = str.upper if upper else str

    def shown(value: str | int) -> str:
        return _gpus(value) if name == "num_gpus" and grouped else case(str(value))

    if name not in run.log_states:
        return shown(declared)
    said = run.log_states[name]
    if said is None:
        return f"{shown(declared)} (contradicted by its log)"
    return f"{shown(said)} (declared {shown(declared)})"


def identity_label(run: RunIdentity, *, upper: bool = False, grouped: bool = False,
                   sep: str = " ") -> str:
    """A run's workload, precision and GPU count as its log states them (:func:`stated`):
    'llama3.1-405b fp8 (declared bf16) 512 GPUs', the declared values alone where the log
    agrees. Judgements use the plain form; report tables style it (upper-case precision,
    grouped GPU count, a ' · ' before the count)."""
    return (f"{stated(run, 'workload')} {stated(run, 'precision', upper=upper)}{sep}"
            f"{stated(run, 'num_gpus', grouped=grouped)} GPUs")
