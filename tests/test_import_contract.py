"""The import contract: cmax's layers as docs/architecture.md draws them, held by the imports.

Every import counts: at the top of a module, inside a function (deferred for start-up time)
and under ``TYPE_CHECKING``; a cycle held apart only by a deferred import is still a cycle,
and the day someone moves that import to the top it fails at import time.

``LAYERS`` lists the parts of ``cmax`` (its sub-packages and root modules) from the bottom up.
A module may import from its own part, from a part in its own layer, or from a lower layer;
never from a higher one, and no two parts may import each other even within a layer. A new
part must be placed here deliberately (a test fails until it is). Each failure names the
importing module and line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tests.paths import REPO

PACKAGE = REPO / "cmax"

#: cmax's layers from the bottom up: each entry is a first-level part of cmax (a package or a
#: root module), and a module belongs to the longest entry it is (or is inside of). Entries of
#: one layer may import each other, never in a cycle; a layer imports only the layers below.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cmax._about", "cmax.errors", "cmax._stage"),
    ("cmax.reading", "cmax.resources"),
    ("cmax.findings", "cmax.states", "cmax.throughput", "cmax.recipes"),
    ("cmax.scorecard",),
    ("cmax.reference",),
    ("cmax.submission",),
    ("cmax.ingest",),
    ("cmax.resolve",),
    ("cmax.validate",),
    ("cmax.judgement",),
    ("cmax.score",),
    ("cmax.price",),
    ("cmax.render", "cmax.drafting"),
    ("cmax.pipeline",),
    ("cmax.history",),
    ("cmax.frames", "cmax.export"),
    ("cmax.cli",),
    ("cmax.__main__",),
)

#: at most this many modules directly in cmax/ (besides __init__ and __main__): the others are
#: grouped into packages named for what they hold, so the folder tree shows the pipeline
MAX_ROOT_MODULES = 15


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (a package when a name is imported from it)
    line: int


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The cmax module ``name`` is, or the module holding it (a package for its names)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports() -> list[Import]:
    found = []
    for module, path in MODULES.items():
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                         for a in node.names]
            elif (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module")
                  and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)):
                names = [node.args[0].value]  # importlib.import_module("cmax....")
            else:
                continue
            for name in names:
                target = _owner(name) if name.split(".")[0] == "cmax" else None
                if target is not None and target != module:
                    found.append(Import(module, target, node.lineno))
    return found


IMPORTS = _imports()


_ENTRIES = sorted((e for layer in LAYERS for e in layer), key=len, reverse=True)
_LAYER = {entry: n for n, layer in enumerate(LAYERS) for entry in layer}


def _part(module: str) -> str:
    """The LAYERS entry ``module`` belongs to (itself when unplaced)."""
    return next((e for e in _ENTRIES if module == e or module.startswith(e + ".")), module)


def _cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


def _where(a: str, b: str) -> list[str]:
    return [f"{i.source}:{i.line} imports {i.target}" for i in IMPORTS
            if (i.source, i.target) == (a, b) or (_part(i.source), _part(i.target)) == (a, b)]


def test_no_module_cycle() -> None:
    cycles = _cycles((i.source, i.target) for i in IMPORTS)
    assert not cycles, "module import cycles (deferred imports count): " + "; ".join(
        " <-> ".join(c) + " [" + ", ".join(w for a in c for b in c for w in _where(a, b)) + "]"
        for c in cycles)


def test_no_cycle_between_parts() -> None:
    edges = {(_part(i.source), _part(i.target)) for i in IMPORTS
             if i.target != "cmax" and _part(i.source) != _part(i.target)}
    cycles = _cycles(edges)
    assert not cycles, "cycles between parts of cmax: " + "; ".join(
        " <-> ".join(c) + " [" + ", ".join(w for a in c for b in c for w in _where(a, b)) + "]"
        for c in cycles)


def test_every_part_has_a_layer() -> None:
    placed = [e for layer in LAYERS for e in layer]
    assert len(placed) == len(set(placed)), "an entry is listed twice"
    unplaced = sorted({m for m in MODULES if m != "cmax" and _part(m) not in _LAYER})
    assert not unplaced, f"place {unplaced} in LAYERS (a new part of cmax needs a layer)"


def test_imports_point_down_the_layers() -> None:
    upward = sorted({f"{i.source}:{i.line} imports {i.target} "
              f"({_part(i.source)} is below {_part(i.target)})"
              for i in IMPORTS
              if i.target != "cmax" and _LAYER.get(_part(i.source), len(LAYERS))
              < _LAYER.get(_part(i.target), 0)})
    assert not upward, "imports that point up the layers:\n" + "\n".join(upward)


def test_nothing_inside_imports_the_facade() -> None:
    """``cmax/__init__.py`` is for users: a module importing it imports every stage."""
    assert not [f"{i.source}:{i.line}" for i in IMPORTS if i.target == "cmax"]


def test_few_modules_loose_at_the_root() -> None:
    loose = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(loose) <= MAX_ROOT_MODULES, (
        f"{len(loose)} modules at cmax/ ({', '.join(loose)}): put new ones in the package "
        "named for what they hold")


def test_every_entry_is_a_first_level_part() -> None:
    """The layers name packages and root modules, so a part's inside is free to change."""
    assert all(e.count(".") == 1 for layer in LAYERS for e in layer)


def test_the_contract_sees_deferred_and_type_checking_imports() -> None:
    """The graph holds imports inside functions and under TYPE_CHECKING, not only the top:
    the manifest checks the basket inside a validator; the evidence names the manifest model
    for the type checker only."""
    seen = {(i.source, i.target) for i in IMPORTS}
    assert ("cmax.submission.manifest", "cmax.submission.basket") in seen
    assert ("cmax.ingest.evidence", "cmax.submission.manifest") in seen
