"""Kubernetes node conditions and events as a witness: ``kubectl get ... -o json``.

Read from the API objects as kubectl prints them (a ``List`` whose ``items`` are objects):

* ``kubectl get events -A --field-selector involvedObject.kind=Node -o json``: core/v1
  ``Event`` items; ``reason`` ``NodeNotReady`` (the node lifecycle controller and the
  kubelet, kubernetes/kubernetes ``pkg/kubelet/events/event.go``) opens an outage of
  ``involvedObject.name`` and ``NodeReady`` closes it; the time is ``lastTimestamp``, else
  ``eventTime``, else ``firstTimestamp``. An outage still open at the end of the file is down
  to the end of the period.
* ``kubectl get nodes -o json``: ``Node`` items whose ``Ready`` condition is not ``True`` are
  down from the condition's ``lastTransitionTime`` to the end of the period (the object
  records no end).

Both kinds may be in one file (``kubectl get nodes,events -o json``).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from cmax.errors import MonitoringError
from cmax.ingest.monitoring.witness import NodeWitness, Span, merge_spans

UTC = dt.UTC
SHAPE = ("the JSON of `kubectl get events -o json` or `kubectl get nodes -o json` (a List of "
         "Event or Node items)")
DOWN_REASONS = frozenset({"NodeNotReady"})
UP_REASONS = frozenset({"NodeReady"})


def _when(text: object) -> dt.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def read_kubernetes(text: str, *, where: str, start: dt.datetime, end: dt.datetime
                    ) -> tuple[NodeWitness, ...]:
    """The nodes' NotReady spans inside ``[start, end)``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MonitoringError(f"not JSON ({exc.msg})", file=where, line=exc.lineno,
                              expected=SHAPE) from None
    items = doc.get("items") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise MonitoringError("no items list", file=where, expected=SHAPE)
    transitions: dict[str, list[tuple[dt.datetime, bool, str]]] = {}
    spans: dict[str, list[tuple[Span, str]]] = {}
    try:
        for item in items:
            kind = item.get("kind") if isinstance(item, dict) else None
            if kind == "Event":
                _event(item, transitions)
            elif kind == "Node":
                _node(item, spans, end)
    except (ValueError, TypeError, AttributeError) as exc:
        raise MonitoringError(f"unreadable item ({exc})", file=where, expected=SHAPE) from None
    for node, moves in transitions.items():
        opened: tuple[dt.datetime, str] | None = None
        for at, down, why in sorted(moves):
            if down and opened is None:
                opened = (at, why)
            elif not down and opened is not None:
                spans.setdefault(node, []).append(((opened[0], at), opened[1]))
                opened = None
        if opened is not None:
            spans.setdefault(node, []).append(((opened[0], end), opened[1]))
    nodes = []
    for node, found in sorted(spans.items()):
        kept = [((max(a, start), min(b, end)), why) for (a, b), why in found
                if min(b, end) > max(a, start)]
        if kept:
            nodes.append(NodeWitness(host=node.lower(), label=node,
                                     down=merge_spans(s for s, _ in kept),
                                     reasons=tuple(sorted(kept))))
    return tuple(nodes)


def _event(item: dict[str, Any], out: dict[str, list[tuple[dt.datetime, bool, str]]]) -> None:
    obj = item.get("involvedObject") or item.get("regarding") or {}
    reason = item.get("reason")
    if obj.get("kind") != "Node" or reason not in DOWN_REASONS | UP_REASONS:
        return
    at = (_when(item.get("lastTimestamp")) or _when(item.get("eventTime"))
          or _when(item.get("firstTimestamp")))
    if at is None:
        raise ValueError(f"event {reason} of {obj.get('name')} without a time")
    out.setdefault(str(obj["name"]), []).append(
        (at, reason in DOWN_REASONS, f"{reason}: {item.get('message') or ''}".strip(": ")))


def _node(item: dict[str, Any], out: dict[str, list[tuple[Span, str]]], end: dt.datetime
          ) -> None:
    name = str(item["metadata"]["name"])
    for cond in (item.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready" and cond.get("status") != "True":
            since = _when(cond.get("lastTransitionTime"))
            if since is not None:
                why = f"Ready={cond.get('status')}: {cond.get('reason') or ''}".strip(": ")
                out.setdefault(name, []).append(((since, end), why))
