"""What an llmb-run package says about itself beyond its runs, carried on the case
(``Evidence.package``) for the Exemplar rules: the jobs' suite keys, recipe releases and
dates, and what opening it left out. Plain data with no imports, so the case can hold it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class PackageJob:
    job_id: int
    entry: int  # the drafted manifest's [[runs]] entry its log is read for (runs[entry])
    config: str  # bundle-relative llmb-config path
    suite_key: str  # exemplar.yaml's "<workload_key>_<model_size>", e.g. pretrain_llama3.1_70b
    dtype: str
    scale: int
    recipe_release: str | None  # workload_info.gsw_version
    images: tuple[str, ...]
    launched: dt.date | None
    unit: str = ""  # its package's folder in a bundle of several scalable units, else ""
    # job_info.launch_time (llmb-run's clock at submission): job ids rise with it
    launched_at: dt.datetime | None = None


@dataclass(frozen=True)
class PackageFacts:
    kind: str  # "llmb-run archive", "llmb-run install folder", "folder of llmb-run experiments"
    gpu_type: str  # llmb-run's gpu_type, e.g. "gb200"
    jobs: tuple[PackageJob, ...]
    notes: tuple[str, ...] = ()
    units: tuple[str, ...] = ()  # the scalable units' packages of a bundle of several
