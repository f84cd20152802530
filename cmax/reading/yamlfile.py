"""Reading YAML from evidence (llmb-run's ``llmb-config_<jobid>.yaml``) inside stated bounds.

``yaml.safe_load`` constructs no arbitrary objects, but it is not bounded: an alias bomb
(anchors referring to anchors, ten aliases on each of nine levels: under 2 KB) loads as a
value that any walk over it (``str()``, a flag check) expands to 10^9 nodes, and 50,000
nested brackets exhaust the recursion of PyYAML's composer (``RecursionError``). So the
document's event stream is read first, by libyaml's parser, which is a state machine with
no recursion, and counted: nesting (:data:`~cmax.reading.limits.MAX_YAML_DEPTH`), alias references
(:data:`~cmax.reading.limits.MAX_YAML_ALIASES`) and the nodes a walk of the loaded value would
visit, every alias expanded (:data:`~cmax.reading.limits.MAX_YAML_NODES`). An alias to a node that
holds it (a loop) is refused too. Only a document inside every bound is then loaded, by the
same C parser and PyYAML's safe constructor. Any of these is one error naming the file, the
line and the bound.
"""

from __future__ import annotations

from typing import Any

from cmax.errors import EvidenceError
from cmax.reading.limits import MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_NODES, Where, limit_error


def load_yaml(text: str, *, file: Where = None) -> Any:
    """The single YAML document in ``text``, its shape checked against the bounds above
    before it is built. ``yaml.YAMLError`` propagates for callers that word a syntax error
    themselves (with the line from its ``problem_mark``)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        check_shape(yaml.parse(text, Loader=loader), file=file)
    except yaml.YAMLError as exc:  # libyaml's own bound, 1,000 levels, met while scanning ahead
        if "maximum nesting depth" not in str(exc):
            raise
        mark = getattr(exc, "problem_mark", None)
        raise limit_error("YAML nesting", f"{MAX_YAML_DEPTH} levels", file=file,
                          line=None if mark is None else mark.line + 1) from None
    try:
        return yaml.load(text, Loader=loader)  # a safe loader; the shape is bounded above
    except (ValueError, OverflowError) as exc:  # a date 2026-13-45, an int of 5,000 digits
        raise EvidenceError(f"a YAML value cannot be read: {str(exc)[:120]}", file=file,
                            expected="the plain YAML llmb-run writes",
                            fix="check that the file is the unmodified tool output") from None


def check_shape(events: Any, *, file: Where = None) -> None:
    """Walk a YAML event stream: nesting, aliases and expanded nodes against their bounds."""
    import yaml

    anchors: dict[str, int] = {}  # anchor -> the expanded size of the node it names
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, expanded size so far)
    aliases = nodes = 0
    for event in events:
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_nodes) >= MAX_YAML_DEPTH:
                raise limit_error("YAML nesting", f"{MAX_YAML_DEPTH} levels", file=file,
                                  line=line)
            open_nodes.append((event.anchor, 1))
            size = 1
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, size = open_nodes.pop()
            if anchor is not None:
                anchors[anchor] = size
            if open_nodes:
                parent, held = open_nodes[-1]
                open_nodes[-1] = (parent, held + size)
            continue
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor is not None:
                anchors[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise limit_error(f"more than {MAX_YAML_ALIASES} YAML aliases",
                                  f"{MAX_YAML_ALIASES} aliases", file=file, line=line)
            if event.anchor not in anchors:
                raise EvidenceError(f"YAML alias *{str(event.anchor)[:40]} refers to a node "
                                    "that holds it, or to no anchor", file=file, line=line,
                                    expected="the plain YAML llmb-run writes (no anchors)",
                                    fix="check that the file is the unmodified tool output")
            size = anchors[event.anchor]
        else:
            continue
        nodes += size
        if nodes > MAX_YAML_NODES:
            raise limit_error("YAML with its aliases expanded", f"{MAX_YAML_NODES:,} nodes",
                              file=file, line=line)
        if open_nodes and not isinstance(event, yaml.CollectionStartEvent):
            parent, held = open_nodes[-1]
            open_nodes[-1] = (parent, held + size)
