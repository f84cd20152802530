"""Software floors: the host stack is one the reference recipes support and that is patched.

The DGXC recipes state minimum host versions (driver, CUDA, NCCL). Below them the recipe is
unsupported and the reference numbers do not apply. Separately, ClusterMAX grades the NVIDIA
driver against a per-branch security minimum; a driver below it is a known-vulnerable host.
Versions come from [system] in cmax.toml and, when present, from the ClusterMAX audit, from
each MLPerf system JSON's ``other_software_stack`` (checked once per system JSON) and from the
NCCL library an nccl-tests output loaded (its ``NCCL version`` banner or ``nccl-library``
code; checked once per version, citing the first file that printed it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import polars as pl

from cmax.findings import Finding
from cmax.ingest.facts import facts_of
from cmax.reading.limits import MAX_INT_DIGITS
from cmax.validate.context import Context
from cmax.validate.registry import Rule, finding, register

Version = tuple[int, ...]

# DGXC README.md @ v26.06.01 ("Software requirements"): minimum and recommended host versions.
RECIPE_FLOORS: dict[str, tuple[str, str | None]] = {
    "driver": ("535.129.03", "570.172.08"),
    "cuda": ("12.3", "12.8"),
    "nccl": ("2.19.4", None),
}
# ClusterMAX minimum-versions.json (table generated 2026-08-19): NVIDIA driver by branch.
DRIVER_SECURITY_MINIMUMS: dict[int, str] = {
    535: "535.309.01", 570: "570.211.01", 580: "580.159.03", 590: "590.48.01", 595: "595.71.05",
}
_LABEL = {"driver": "NVIDIA driver", "cuda": "CUDA", "nccl": "NCCL"}

register(Rule(
    "software.below-recipe-floor", "error", "Host software below the recipe minimum",
    "The reference recipes require at least driver 535.129.03, CUDA 12.3 and NCCL 2.19.4. On an "
    "older stack the recipe is unsupported, so the reference numbers do not apply to the run.",
    "Upgrade the host stack to the recipe minimum (recommended: driver 570.172.08+, CUDA 12.8+) "
    "and re-run.",
    "NVIDIA/dgxc-benchmarking README.md @ v26.06.01, software requirements.",
))
register(Rule(
    "software.below-recommended", "info", "Host software below the recommended version",
    "Supported, but older than the versions NVIDIA recommends for the current recipes; newer "
    "drivers and CUDA releases carry performance fixes the reference may include.",
    "Upgrade to driver 570.172.08+ and CUDA 12.8+ when convenient.",
    "NVIDIA/dgxc-benchmarking README.md @ v26.06.01.",
))
register(Rule(
    "software.driver-security-floor", "warning", "NVIDIA driver below the security minimum",
    "ClusterMAX grades the driver per branch against NVIDIA security bulletins (535.309.01, "
    "570.211.01, 580.159.03, 590.48.01, 595.71.05); below it the host has published "
    "vulnerabilities (criterion security-nvidia-driver).",
    "Install the latest driver of the branch (or a newer branch).",
    "SemiAnalysisAI/ClusterMAX minimum-versions.json, table of 2026-08-19.",
))
register(Rule(
    "software.version-conflict", "warning", "Declared and audited versions differ",
    "cmax.toml declares one version and the ClusterMAX audit observed another, so either the "
    "declaration is stale or the audit is of a different system.",
    "Correct [system] in cmax.toml to what the cluster runs, or re-run the audit.",
))
register(Rule(
    "software.unparseable-version", "warning", "A version string cannot be read",
    "The version is not a dotted number, so it cannot be checked against any floor.",
    "Write versions as printed by the tool, e.g. driver \"570.172.08\", cuda \"12.8\", "
    "nccl \"2.27.7\".",
))
register(Rule(
    "software.versions-unknown", "info", "Host software versions not stated",
    "Without driver, CUDA and NCCL versions the software floors cannot be checked.",
    "Add driver, cuda and nccl to [system] in cmax.toml, or include a ClusterMAX audit.",
))

_NUM = re.compile(r"^\D*?(\d+(?:\.\d+)*)")
# an audit's observed text: "580.159.03", or "fail (version 570.148.08)"
_OBSERVED = re.compile(r"(?:^|version\s+)(\d+\.\d+(?:\.\d+)*)")


def parse_version(text: str) -> Version | None:
    match = _NUM.match(text.strip())
    if not match:
        return None
    parts = match.group(1).split(".")
    if any(len(p) > MAX_INT_DIGITS for p in parts):  # no version; int() raised past 4,300
        return None
    return tuple(int(p) for p in parts)


def _fmt(version: Version) -> str:
    return ".".join(str(p) for p in version)


def _below(have: Version, floor_text: str) -> bool:
    floor = parse_version(floor_text) or ()
    width = max(len(have), len(floor))
    return have + (0,) * (width - len(have)) < floor + (0,) * (width - len(floor))


_AUDIT_CHECKS = {
    "driver": "securityVersions.nvidiaDriver",
    "cuda": "securityVersions.cudaToolkit",
    "nccl": "software.nccl.version",
}


def _audited(ctx: Context) -> dict[str, tuple[str, str | None]]:
    """Versions the audit observed (its checks' ``observed`` column): component -> (version,
    audit file)."""
    out: dict[str, tuple[str, str | None]] = {}
    audit_file = ctx.manifest.audit.path if ctx.manifest.audit else None
    checks = ctx.tables["audit_checks"]
    for comp, check_id in _AUDIT_CHECKS.items():
        rows = checks.filter(pl.col("check_id").cast(pl.String).str.starts_with(check_id))
        for row in rows.iter_rows(named=True):
            match = _OBSERVED.search(str(row.get("observed") or ""))
            if match:
                out[comp] = (match.group(1), row.get("source_file") or audit_file)
                break
    return out


def _audit_failed_driver(ctx: Context) -> bool:
    checks = ctx.tables["audit_checks"]
    hit = checks.filter(
        pl.col("check_id").cast(pl.String).str.starts_with("securityVersions.nvidiaDriver")
        & (pl.col("status").cast(pl.String).str.to_uppercase() == "FAIL"))
    return not hit.is_empty()


def check(ctx: Context) -> Iterator[Finding]:
    system = ctx.manifest.system
    declared = {"driver": system.driver, "cuda": system.cuda, "nccl": system.nccl}
    audited = _audited(ctx)
    known: Known = {}
    for comp in ("driver", "cuda", "nccl"):
        text = declared[comp]
        if text:
            version = parse_version(text)
            if version is None:
                yield finding("software.unparseable-version",
                              f"[system] {comp} = {text!r} is not a version number",
                              file=ctx.manifest_file)
                continue
            known[comp] = (version, text, ctx.manifest_file, None)
            seen = audited.get(comp)
            if seen:
                audit_version = parse_version(seen[0])
                if audit_version and _fmt(audit_version) != _fmt(version):
                    yield finding("software.version-conflict",
                                  f"{_LABEL[comp]}: cmax.toml declares {text}, the audit "
                                  f"observed {seen[0]}", file=seen[1])
        elif comp in audited:
            text, where = audited[comp]
            version = parse_version(text)
            if version:
                known[comp] = (version, text, where, None)
    stated = [known, *_mlperf_stated(ctx)]
    measured = _nccl_tests_stated(ctx)
    if not any(stated):
        missing = [_LABEL[c] for c in _LABEL if not any(c in m for m in measured)]
        read = "; ".join(f"NCCL {m['nccl'][1]} read from {m['nccl'][2]}" for m in measured)
        yield finding("software.versions-unknown",
                      "no " + ", ".join(missing) + " version stated"
                      + (f" ({read})" if read else ""), file=ctx.manifest_file)
    stated += measured
    for source in stated:
        yield from _floors(ctx, source)


Known = dict[str, tuple[Version, str, str | None, int | None]]


def _mlperf_stated(ctx: Context) -> list[Known]:
    """The versions each MLPerf system JSON states (``other_software_stack``), one source per
    system JSON however many result files and benchmark folders share it."""
    out: list[Known] = []
    seen: set[str] = set()
    root = ctx.evidence.root
    for s in getattr(ctx.evidence, "mlperf_sets", ()):
        if s.system is None:
            continue
        try:
            rel = s.system.path.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            rel = s.system.path.name
        if rel in seen:
            continue
        seen.add(rel)
        found: Known = {}
        for comp, (text, _key, line) in s.system.software().items():
            version = parse_version(text) if comp in _LABEL else None
            if version is not None:
                found[comp] = (version, text, rel, line)
        if found:
            out.append(found)
    return out


def _nccl_tests_stated(ctx: Context) -> list[Known]:
    """The NCCL library each distinct version of which an nccl-tests output loaded, one source
    per version (the first file and line that printed it) however many files repeat it."""
    out: dict[str, Known] = {}
    for file in ctx.evidence.files:
        for fact in facts_of(file.facts, "software"):
            version = parse_version(fact.value) if fact.where == "nccl" else None
            if version is not None and _fmt(version) not in out:
                out[_fmt(version)] = {"nccl": (version, fact.value, file.path, fact.line)}
    return list(out.values())


def _floors(ctx: Context, known: Known) -> Iterator[Finding]:
    for comp, (version, text, where, line) in known.items():
        floor, recommended = RECIPE_FLOORS[comp]
        if _below(version, floor):
            yield finding("software.below-recipe-floor",
                          f"{_LABEL[comp]} {text} is below the recipe minimum {floor}",
                          file=where, line=line)
        elif recommended and _below(version, recommended):
            yield finding("software.below-recommended",
                          f"{_LABEL[comp]} {text} is below the recommended {recommended}",
                          file=where, line=line)
    if "driver" in known and not _audit_failed_driver(ctx):
        version, text, where, line = known["driver"]
        minimum = DRIVER_SECURITY_MINIMUMS.get(version[0])
        if minimum and _below(version, minimum):
            yield finding("software.driver-security-floor",
                          f"NVIDIA driver {text} is below the {version[0]} branch security "
                          f"minimum {minimum} (criterion security-nvidia-driver)",
                          file=where, line=line)
