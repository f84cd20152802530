"""The ``[monitoring]`` section read into witnesses, once, at ingest.

A live Prometheus is asked once per query over the ``[reliability]`` period (in windows the
server accepts); a bundle for offline use carries the same answers saved as files. Slurm and
Kubernetes files are read as their own witnesses. Nothing here falls back: a server that
cannot be reached or refuses a query, or a file that is not what its key says, is one
:class:`~cmax.errors.MonitoringError` naming it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from cmax.errors import MonitoringError
from cmax.ingest.monitoring.accounting import LOOKBACK_S, MAX_UNWITNESSED, Grid, account, infer_step
from cmax.ingest.monitoring.kube import read_kubernetes
from cmax.ingest.monitoring.prometheus import Series, fetch_range, parse_answers
from cmax.ingest.monitoring.slurm_events import read_events, read_reasons
from cmax.ingest.monitoring.witness import Witness
from cmax.submission.manifest import Manifest, Monitoring, period_bounds

GAPS_RULE = (f"a step with no sample within Prometheus's {LOOKBACK_S / 60:g}-minute lookback "
             f"is unwitnessed, neither up nor down; a node-month more than "
             f"{MAX_UNWITNESSED:.0%} unwitnessed is not assessed from the monitoring")
EVENTS_RULE = ("a node is down from each event's start to its end (an open one to the end of "
               "the period); a node without events was up")

Resolve = Callable[[str, str], Path]
"""(bundle-relative path, manifest key) -> the file, refusing paths that leave the bundle"""


def _read_text(path: Path, where: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MonitoringError(f"cannot read: {exc}", file=where) from None


def read_monitoring(manifest: Manifest, resolve: Resolve) -> tuple[Witness, ...]:
    """Every witness ``[monitoring]`` names, over the ``[reliability]`` period."""
    spec, rel = manifest.monitoring, manifest.reliability
    if spec is None or rel is None:
        return ()
    start, end = period_bounds(rel.period_start, rel.period_end)
    pattern = re.compile(spec.instance_regex)
    gpn = manifest.system.gpus_per_node
    out: list[Witness] = []
    if spec.prometheus or spec.up_answer:
        out.append(_prometheus(spec, resolve, start, end, pattern, gpn))
    files: list[tuple[str | None, str]] = [(spec.slurm_events, "slurm_events"),
                                           (spec.slurm_reasons, "slurm_reasons"),
                                           (spec.kubernetes, "kubernetes")]
    for rel_path, key in files:
        if rel_path is None:
            continue
        path = resolve(rel_path, f"monitoring.{key}")
        text = _read_text(path, rel_path)
        if key == "kubernetes":
            nodes = read_kubernetes(text, where=rel_path, start=start, end=end)
        elif key == "slurm_events":
            nodes = read_events(text, where=rel_path, start=start, end=end,
                                zone=spec.slurm_timezone)
        else:
            nodes = read_reasons(text, where=rel_path, start=start, end=end,
                                 zone=spec.slurm_timezone)
        rule = EVENTS_RULE if key != "slurm_reasons" else (
            "sinfo -R lists nodes down when it ran: each is down from its timestamp to the "
            "end of the period")
        out.append(Witness(kind="kubernetes" if key == "kubernetes" else "slurm",
                           source=rel_path, start=start, end=end, resolution_s=None,
                           nodes=nodes, gaps_rule=rule,
                           sha256=hashlib.sha256(text.encode()).hexdigest()))
    return tuple(out)


def _prometheus(spec: Monitoring, resolve: Resolve, start: dt.datetime, end: dt.datetime,
                pattern: re.Pattern[str], gpus_per_node: int) -> Witness:
    queries = [q for q in (spec.up, spec.ready, spec.gpus, spec.xid) if q]
    answers: dict[str, list[Series]] = {}
    digest = hashlib.sha256()
    notes: list[str] = []
    if spec.prometheus:
        source = spec.prometheus
        step = float(spec.step_s)
        for name in ("up", "ready", "gpus", "xid"):
            query = getattr(spec, name)
            if query:
                series, sha = fetch_range(spec.prometheus, query, start.timestamp(),
                                          end.timestamp(), step)
                answers[name] = series
                digest.update(sha.encode())
        if not answers.get("ready"):
            answers["ready"] = []
    else:
        assert spec.up_answer is not None
        source = spec.up_answer
        for name, rel_path in (("up", spec.up_answer), ("gpus", spec.gpus_answer),
                               ("xid", spec.xid_answer)):
            if rel_path is None:
                continue
            text = _read_text(resolve(rel_path, f"monitoring.{name}_answer"), rel_path)
            digest.update(text.encode())
            answers[name] = parse_answers(text, where=rel_path)
        saved = (spec.up_answer, spec.gpus_answer, spec.xid_answer)
        queries = [f"saved answers: {', '.join(p for p in saved if p)}"]
        found = infer_step(answers["up"])
        step = found if found else float(spec.step_s)
        notes.append(f"resolution {step:g} s, the spacing of the saved answer's points")
    up = answers.get("up", []) + answers.get("ready", [])
    if not answers.get("up"):
        return Witness(kind="prometheus", source=source, start=start, end=end,
                       resolution_s=step, nodes=(), queries=tuple(queries), gaps_rule=GAPS_RULE,
                       sha256=digest.hexdigest(),
                       notes=(*notes, f"no series for {spec.up!r} in the period"))
    grid = Grid(start, end, step)
    nodes, unmapped = account(up, grid, pattern, gpus=answers.get("gpus", []),
                              gpus_per_node=gpus_per_node, xid=answers.get("xid", []))
    if unmapped:
        raise MonitoringError(
            f"[monitoring] instance_regex {spec.instance_regex!r} maps no host from "
            f"{len(unmapped)} series (e.g. {unmapped[0]!r})", field="monitoring.instance_regex",
            expected="a regular expression whose first group (or group 'host') is the host "
            "name in the series' node, Hostname or instance label",
            fix="correct instance_regex, or narrow the selector to the cluster's nodes")
    if answers.get("gpus") == [] and spec.gpus:
        notes.append(f"no series for {spec.gpus!r}: GPU faults on nodes that stay up are not "
                     "assessed")
    return Witness(kind="prometheus", source=source, start=start, end=end, resolution_s=step,
                   nodes=nodes, queries=tuple(queries), gaps_rule=GAPS_RULE,
                   gpu_faults_assessed=bool(answers.get("gpus")), sha256=digest.hexdigest(),
                   notes=tuple(notes))
