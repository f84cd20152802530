"""NVIDIA Exemplar Performance suites and rules (``reference/exemplar.toml``): which runs
(workload x precision) each GPU type must pass in a recipe release, at which scale, and how
long a validation lasts. Read by the Exemplar rules (``cmax/validate/exemplar.py``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

from cmax.errors import ReferenceDataError
from cmax.reference._files import REINSTALL, read_reference_toml

FILE = "exemplar.toml"


@dataclass(frozen=True)
class ExemplarRelease:
    version: str
    date: dt.date
    source: str
    rules_source: str
    scale: int
    repeats: int
    profile: bool
    bar_pct: float
    validity_months: int
    suites: dict[str, tuple[str, ...]]  # llmb-run gpu_type -> "<suite key>:<dtype>" runs

    def suite(self, gpu_type: str) -> tuple[str, ...]:
        return self.suites.get(gpu_type.strip().lower(), ())


@lru_cache(maxsize=1)
def current_release() -> ExemplarRelease:
    from cmax.resources import data_dir

    path = data_dir("reference") / FILE
    data = read_reference_toml(path, what="Exemplar suites")
    try:
        version = str(data["current"])
        raw = data["releases"][version]
        return ExemplarRelease(
            version=version, date=raw["date"], source=str(raw["source"]),
            rules_source=str(raw["rules_source"]), scale=int(raw["scale"]),
            repeats=int(raw["repeats"]), profile=bool(raw["profile"]),
            bar_pct=float(raw["bar_pct"]), validity_months=int(raw["validity_months"]),
            suites={str(k): tuple(str(r) for r in v) for k, v in raw["suites"].items()})
    except (KeyError, TypeError, ValueError) as exc:
        raise ReferenceDataError(f"Exemplar suites malformed: {exc}", file=path,
                                 fix=REINSTALL) from None
