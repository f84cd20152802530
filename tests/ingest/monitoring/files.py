"""Monitoring files in their real formats, written by tests, and a case that reads them.

* :func:`answer`: a Prometheus ``/api/v1/query_range`` answer, the JSON the live tests read
  from Debian's prometheus (tests/data/monitoring/*.json are such answers, captured);
* :func:`sacctmgr_events`: ``sacctmgr show event -P`` output (SchedMD/slurm
  ``src/sacctmgr/event_functions.c``: header ``Cluster|NodeName|TimeStart|TimeEnd|State|
  Reason|User``, times ``%Y-%m-%dT%H:%M:%S``, ``Unknown`` for an open end).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence

UTC = dt.UTC
Points = Sequence[tuple[dt.datetime, float]]


def answer(series: Iterable[tuple[dict[str, str], Points]]) -> str:
    """A successful range answer holding ``series`` (labels, points)."""
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels, "values": [[t.timestamp(), f"{v:g}"] for t, v in points]}
        for labels, points in series]}})


def steps(start: dt.datetime, end: dt.datetime, step_s: int,
          value: Callable[[dt.datetime], float | None]) -> list[tuple[dt.datetime, float]]:
    """Points every ``step_s`` in ``[start, end)``; ``value`` None leaves a gap."""
    out = []
    t = start
    while t < end:
        v = value(t)
        if v is not None:
            out.append((t, v))
        t += dt.timedelta(seconds=step_s)
    return out


def sacctmgr_events(rows: Iterable[tuple[str, str, str, str, str]],
                    cluster: str = "aurora") -> str:
    """``sacctmgr show event -P`` of node events (node list, start, end, state, reason)."""
    lines = ["Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User"]
    lines += [f"{cluster}|{n}|{a}|{b}|{s}|{r}|slurm(64030)" for n, a, b, s, r in rows]
    return "\n".join(lines) + "\n"

