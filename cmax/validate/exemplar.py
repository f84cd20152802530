"""An llmb-run package judged as NVIDIA's Exemplar review would take it: the suite of its GPU
type complete, one recipe release throughout, the suite's scale, and within the 12 months a
validation lasts (``reference/exemplar.toml``, from exemplar.yaml and Exemplar_validation.md
of NVIDIA/exemplar-performance@e249aa3). What the package could not say (price, SLA,
incidents) is listed as info. Only a bundle opened from an llmb-run package
(``case.package``) is judged here; a hand-written manifest makes no Exemplar claim.

NVIDIA's Requirements for AI Clouds v2.3.1 (BM01) ask for the Exemplar benchmarks on every
scalable unit handed over ("e.g. 512 GPUs", NVIDIA/ai-cloud-validation:docs/references/
requirements-for-ai-clouds-v2.3.md and docs/requirements/offtake-requirements.yaml, version
2.3.1, @ 1207cb7). A bundle of several packages side by side (one archive or install folder
per unit) is judged unit by unit: each unit's suite and validity on
its own, the recipe release across all of them, and the system's GPUs (``[system]`` nodes x
GPUs per node) against the units the bundle holds, a unit being the suite's scale.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence

from cmax.findings import Finding
from cmax.submission.intake.facts import PackageJob
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register

SOURCE = ("NVIDIA/exemplar-performance:exemplar.yaml and Exemplar_validation.md @ e249aa3 "
          "(v26.08.00)")

register(Rule(
    "exemplar.suite-incomplete", "warning", "Exemplar suite runs missing",
    "Exemplar is validated per chip on every run (workload x precision) of the GPU type's suite, "
    "each with its own passing run; a package without some of them cannot qualify.",
    "Run the missing workloads (`llmb-run exemplar`, or each on its own) and archive again.",
    SOURCE,
))
register(Rule(
    "exemplar.recipe-release-mixed", "warning", "More than one recipe release",
    "Exemplar requires the latest recipe release at the start of testing and the same release "
    "for the whole certification; runs from different releases are not one suite.",
    "Re-run the odd runs with the release the rest used.",
    SOURCE,
))
register(Rule(
    "exemplar.off-scale", "warning", "Run not at the suite's scale",
    "The Exemplar suite is run at 512 GPUs, 1 repeat, profiling disabled; a run at another "
    "scale may be rated against its own reference but does not count towards the suite.",
    "Run the workload at the suite's scale.",
    SOURCE,
))
register(Rule(
    "exemplar.expired", "warning", "Older than the 12-month Exemplar validity",
    "An Exemplar validation is valid for 12 months; evidence older than that no longer stands "
    "for the system.",
    "Re-run the suite with the current recipe release.",
    SOURCE,
))
register(Rule(
    "exemplar.units-missing", "warning", "Scalable units without their suite",
    "NVIDIA's Requirements for AI Clouds v2.3.1 (BM01) ask for the Exemplar benchmarks on every "
    "scalable unit handed over (e.g. every 512 GPUs); a system larger than the units the "
    "bundle holds has units nobody measured.",
    "Run the suite on every unit and hand over one archive per unit, side by side in one "
    "folder.",
    "NVIDIA/ai-cloud-validation:docs/references/requirements-for-ai-clouds-v2.3.md @ 1207cb7 "
    "(BM01)",
))
register(Rule(
    "exemplar.left-out", "info", "Part of the rating not in the package",
    "An llmb-run package holds logs and job configurations only: price, term, SLA and incidents "
    "are not in it, so the parts of the rating that need them are left out, not guessed.",
    "Pass --quote/--term, or put the missing tables in a small cmax.toml beside the package.",
))


def _months_later(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, 28))


def check(ctx: Context, *, today: dt.date | None = None) -> Iterator[Finding]:
    package = ctx.case.package
    if package is None:
        return
    from cmax.reference.exemplar import current_release

    release = current_release()
    first = package.jobs[0].config if package.jobs else None
    suite = release.suite(package.gpu_type)
    units = package.units or ("",)
    for unit in units:
        jobs = [job for job in package.jobs if job.unit == unit]
        yield from _unit(jobs, unit, suite, package.gpu_type, today)
    system = ctx.manifest.system
    held = system.nodes * system.gpus_per_node // release.scale
    if held > len(units):
        yield finding("exemplar.units-missing",
                      f"the system's {system.nodes * system.gpus_per_node:,} GPUs ([system] "
                      f"nodes x gpus_per_node) are {held} scalable units of {release.scale}; "
                      f"the bundle holds the suite of {len(units)}", file=first)
    run_of = {v.spec_index: v.run_id for v in ctx.runs if v.spec_index is not None}
    for job in package.jobs:
        if job.scale != release.scale:
            yield finding("exemplar.off-scale",
                          f"job {job.job_id} ({job.suite_key} {job.dtype}) ran at {job.scale} "
                          f"GPUs; the Exemplar suite runs at {release.scale}",
                          file=job.config, run_id=run_of.get(job.entry))
    releases = {(job.recipe_release, job.images) for job in package.jobs}
    if len(releases) > 1:
        shown = "; ".join(f"{r or 'unknown'} ({', '.join(i) or 'no image'})"
                          for r, i in sorted(releases, key=str))
        yield finding("exemplar.recipe-release-mixed",
                      f"the package's jobs used {len(releases)} recipe releases: {shown}",
                      file=first)
    for note in package.notes:
        yield finding("exemplar.left-out", note)


def _unit(jobs: Sequence[PackageJob], unit: str, suite: tuple[str, ...], gpu_type: str,
          today: dt.date | None) -> Iterator[Finding]:
    """One scalable unit's (or a single package's) suite and validity."""
    from cmax.reference.exemplar import current_release

    release = current_release()
    first = jobs[0].config if jobs else unit or None
    label = f"unit {unit}: " if unit else ""
    have = {f"{job.suite_key}:{job.dtype}" for job in jobs if job.scale == release.scale}
    missing = [run for run in suite if run not in have]
    if suite and missing:
        yield finding("exemplar.suite-incomplete",
                      f"{label}{len(missing)} of the {len(suite)} {gpu_type.upper()} suite runs "
                      f"of recipe release {release.version} have no job at {release.scale} "
                      f"GPUs: {', '.join(missing)}", file=first)
    dates = [job.launched for job in jobs if job.launched is not None]
    now = today or dt.date.today()
    if dates and _months_later(min(dates), release.validity_months) < now:
        yield finding("exemplar.expired",
                      f"{label}the first job was launched on {min(dates)}, more than "
                      f"{release.validity_months} months before {now}", file=first)
