"""Slurm's node state history as a witness: ``sacctmgr show event -P`` and ``sinfo -R``.

Formats from SchedMD/slurm@284c3b95f08a2dc2478499837b03355e1b9c5c75:

* ``sacctmgr show event -P`` (``src/sacctmgr/event_functions.c``: node events print
  ``Cluster,NodeName,Start,End,State,Reason,User`` by default; ``src/sacctmgr/common.c``
  names those columns ``Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User``). ``-P``
  separates fields with ``|`` and no trailing one (``-p`` adds it). An event still open has
  ``TimeEnd`` ``Unknown`` (``src/common/parse_time.c``: a zero time prints ``Unknown``).
  ``NodeName`` is a host list (``gpu[001-004,009]``). Slurm records a node event when a node
  goes down, drained or failed, so every event is time the node was not available to jobs.
* ``sinfo -R`` (``src/sinfo/opts.c``: ``reason:20 ,user:9 ,timestamp:19 ,nodelist:0``, header
  ``REASON USER TIMESTAMP NODELIST``): the nodes down or drained *now*, since ``TIMESTAMP``.
  It records no end, so each row is down from its timestamp to the end of the period.

Times are printed ``%Y-%m-%dT%H:%M:%S`` in the local time of the host that ran the command
(``slurm_make_time_str``, unless ``SLURM_TIME_FORMAT`` changed it): ``[monitoring]
slurm_timezone`` says which zone that was (UTC unless stated).
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

from cmax.errors import MonitoringError
from cmax.ingest.monitoring.witness import NodeWitness, Span, merge_spans

UTC = dt.UTC
_SLURM_TIME = "%Y-%m-%dT%H:%M:%S"
_OPEN = frozenset({"unknown", "none", ""})
EVENTS_SHAPE = ("sacctmgr show event -P output: a header naming NodeName, TimeStart (or Start) "
                "and TimeEnd (or End), then one |-separated event per line")
REASONS_SHAPE = "sinfo -R output: a header REASON USER TIMESTAMP NODELIST, then one row each"


def expand_hostlist(expr: str) -> list[str]:
    """``gpu[001-003,007],login1`` -> gpu001, gpu002, gpu003, gpu007, login1 (Slurm host lists,
    one bracket group per name, ranges keeping their zero padding)."""
    names: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", expr):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", part.strip())
        if not m:
            if part.strip():
                names.append(part.strip())
            continue
        head, body, tail = m.groups()
        for item in body.split(","):
            lo, _, hi = item.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise ValueError(f"host list range {item!r}")
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                names.append(f"{head}{n:0{width}d}{tail}")
    return names


def _time(text: str, zone: zoneinfo.ZoneInfo) -> dt.datetime | None:
    text = text.strip()
    if text.lower() in _OPEN:
        return None
    return dt.datetime.strptime(text, _SLURM_TIME).replace(tzinfo=zone).astimezone(UTC)


def _collect(rows: list[tuple[str, dt.datetime, dt.datetime, str]],
             start: dt.datetime, end: dt.datetime) -> tuple[NodeWitness, ...]:
    by_host: dict[str, list[tuple[Span, str]]] = {}
    for host, a, b, reason in rows:
        lo, hi = max(a, start), min(b, end)
        if hi > lo:
            by_host.setdefault(host.lower(), []).append(((lo, hi), reason))
    return tuple(
        NodeWitness(host=h, label=h, down=merge_spans(s for s, _ in spans),
                    reasons=tuple(sorted(spans)))
        for h, spans in sorted(by_host.items()))


def read_events(text: str, *, where: str, start: dt.datetime, end: dt.datetime,
                zone: str) -> tuple[NodeWitness, ...]:
    """The nodes' down spans inside ``[start, end)`` from ``sacctmgr show event -P``."""
    tz = zoneinfo.ZoneInfo(zone)
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if not lines:
        raise MonitoringError("empty Slurm event file", file=where, expected=EVENTS_SHAPE)
    head_n, head = lines[0]
    cols = [c.strip().lower() for c in head.rstrip("|").split("|")]

    def col(*names: str) -> int:
        for name in names:
            if name in cols:
                return cols.index(name)
        raise MonitoringError(f"no {names[0]} column in the header", file=where, line=head_n,
                              expected=EVENTS_SHAPE,
                              fix="save `sacctmgr show event -P` (or add format=NodeName,"
                              "TimeStart,TimeEnd,State,Reason)")

    node_i, start_i, end_i = col("nodename"), col("timestart", "start"), col("timeend", "end")
    reason_i = cols.index("reason") if "reason" in cols else None
    state_i = cols.index("state") if "state" in cols else None
    rows = []
    for n, line in lines[1:]:
        fields = line.rstrip("|").split("|") if line.endswith("|") else line.split("|")
        if len(fields) < len(cols):
            raise MonitoringError(f"{len(fields)} fields where the header has {len(cols)}",
                                  file=where, line=n, expected=EVENTS_SHAPE)
        if not fields[node_i].strip():
            continue  # a cluster event (TRES changes), not a node's
        try:
            a = _time(fields[start_i], tz)
            b = _time(fields[end_i], tz)
            hosts = expand_hostlist(fields[node_i])
        except ValueError as exc:
            raise MonitoringError(f"unreadable event ({exc})", file=where, line=n,
                                  expected="times as 2026-10-03T14:05:00 (or Unknown for an "
                                  "open event) and a Slurm host list") from None
        if a is None:
            raise MonitoringError("an event without a start time", file=where, line=n,
                                  expected=EVENTS_SHAPE)
        reason = " ".join(x for x in (
            fields[state_i].strip() if state_i is not None else "",
            fields[reason_i].strip() if reason_i is not None else "") if x)
        rows += [(h, a, b or end, reason) for h in hosts]
    return _collect(rows, start, end)


def read_reasons(text: str, *, where: str, start: dt.datetime, end: dt.datetime,
                 zone: str) -> tuple[NodeWitness, ...]:
    """The nodes ``sinfo -R`` lists as down or drained, each from its timestamp to ``end``."""
    tz = zoneinfo.ZoneInfo(zone)
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    head = lines[0][1] if lines else ""
    if not head.lstrip().startswith("REASON") or "NODELIST" not in head:
        raise MonitoringError("not sinfo -R output", file=where,
                              line=lines[0][0] if lines else None, expected=REASONS_SHAPE,
                              fix="save the output of `sinfo -R`")
    at_time, at_nodes = head.index("TIMESTAMP"), head.index("NODELIST")
    rows = []
    for n, line in lines[1:]:
        stamp, nodes = line[at_time:at_nodes].strip(), line[at_nodes:].strip()
        reason = line[:head.index("USER")].strip() if "USER" in head else line[:at_time].strip()
        try:
            a = _time(stamp, tz)
            hosts = expand_hostlist(nodes)
        except ValueError as exc:
            raise MonitoringError(f"unreadable row ({exc})", file=where, line=n,
                                  expected=REASONS_SHAPE + " (TIMESTAMP as 2026-10-03T14:05:00)"
                                  ) from None
        if a is None:
            continue  # no time: nothing to say when it began
        rows += [(h, a, end, reason) for h in hosts]
    return _collect(rows, start, end)
