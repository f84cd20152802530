"""The import contract: cmax's layers as docs/architecture.md draws them, held by the imports.

Every import counts: at the top of a module, inside a function (deferred for start-up time)
and under ``TYPE_CHECKING``; a cycle held apart only by a deferred import is still a cycle,
and the day someone moves that import to the top it fails at import time. So do imports by
name: ``sys.modules["cmax.x"]`` and ``import_module("cmax.x")`` are edges, and one whose name
is computed (the format registry importing each declared module) is resolved in ``DYNAMIC``
from the data that names its targets; an unresolved one fails.

``LAYERS`` lists the parts of ``cmax`` (its sub-packages and root modules) from the bottom up.
A module may import from its own part, from a part in its own layer, or from a lower layer;
never from a higher one, and no two parts may import each other even within a layer. A new
part must be placed here deliberately (a test fails until it is). Each failure names the
importing module and line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
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
    ("cmax.findings", "cmax.states", "cmax.throughput", "cmax.quantiles", "cmax.recipes"),
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


def _is_import_call(node: ast.AST) -> bool:
    """``importlib.import_module(...)`` or ``__import__(...)``, under any alias."""
    return (isinstance(node, ast.Call) and bool(node.args)
            and ast.unparse(node.func).rpartition(".")[2] in ("import_module", "__import__"))


def _modules_lookup(node: ast.AST) -> ast.expr | None:
    """The key of ``sys.modules[key]`` or ``sys.modules.get(key)``: a module found by name."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "sys.modules":
        return node.slice
    if (isinstance(node, ast.Call) and ast.unparse(node.func) == "sys.modules.get"
            and node.args):
        return node.args[0]
    return None


def _loop_values(tree: ast.AST) -> dict[ast.AST, list[str]]:
    """Names bound by ``for name in ("a", "b")`` (a literal of strings), where they are used:
    ``for name in (...): import_module(name)`` names its modules as plainly as a literal."""
    out: dict[ast.AST, list[str]] = {}
    for loop in ast.walk(tree):
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
                and isinstance(loop.iter, ast.Tuple | ast.List)
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                        for e in loop.iter.elts)):
            continue
        values = [str(e.value) for e in loop.iter.elts if isinstance(e, ast.Constant)]
        for node in ast.walk(loop):
            if isinstance(node, ast.Name) and node.id == loop.target.id:
                out[node] = values
    return out


@dataclass(frozen=True)
class Dynamic:
    """An import by a computed name (``import_module(name)``, ``sys.modules[name]``)."""

    module: str
    function: str  # the enclosing function's qualified name ("" at module level)
    line: int


def _scan(module: str, tree: ast.AST) -> tuple[list[Import], list[Dynamic]]:
    """The imports of one module: the statements, ``import_module``/``sys.modules`` with a
    literal name (or a loop over literals), and the dynamic ones the caller must resolve."""
    here = module if MODULES.get(module, Path()).name == "__init__.py" else \
        module.rpartition(".")[0]
    loops = _loop_values(tree)
    found: list[Import] = []
    dynamic: list[Dynamic] = []

    def visit(node: ast.AST, function: str) -> None:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                     for a in node.names]
        else:
            key = node.args[0] if isinstance(node, ast.Call) and _is_import_call(node) \
                else _modules_lookup(node)
            if key is not None:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    names = [key.value]
                elif key in loops:
                    names = loops[key]
                else:
                    dynamic.append(Dynamic(module, function, getattr(node, "lineno", 0)))
        for name in names:
            target = _owner(name) if name.split(".")[0] == "cmax" else None
            if target is not None and target != module:
                found.append(Import(module, target, getattr(node, "lineno", 0)))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            function = f"{function}.{node.name}" if function else node.name
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "")
    return found, dynamic


def _table(module: str, name: str) -> set[str]:
    """The module names held by the module-level dict ``name`` of ``module`` (its values, or
    the first item of each tuple value): the table a lazy ``__getattr__`` imports from."""
    for node in ast.parse(MODULES[module].read_text(encoding="utf-8")).body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign):
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name:
            table = ast.literal_eval(value)
            return {v[0] if isinstance(v, tuple) else v for v in table.values()}
    raise AssertionError(f"{module} has no literal table {name}")


def _declared_formats() -> set[str]:
    """The modules the format declarations name: what the registry imports by computed name."""
    from cmax.ingest.formats._declarations import DECLARATIONS
    from cmax.ingest.formats._protocol import module_of

    return {module_of(d) for d in DECLARATIONS}


#: every import by a computed name, by (module, function): the modules it can reach, read
#: from the data that names them. The registry imports each declared format's module (so a
#: format module importing the package :mod:`cmax.ingest.formats` would be a cycle); a lazy
#: ``__getattr__`` imports from its table. ``cmax._stage`` looks up its caller's own module,
#: and its ``lazy_names`` imports the submodules its callers list: those edges are drawn from
#: each caller (:func:`_lazy_names_edges`). A new dynamic import fails
#: :func:`test_every_dynamic_import_is_followed` until it is resolved here.
DYNAMIC: dict[tuple[str, str], Callable[[], set[str]]] = {
    ("cmax", "__getattr__"): lambda: _table("cmax", "_LAZY"),
    ("cmax.render", "__getattr__"): lambda: _table("cmax.render", "_LAZY"),
    ("cmax.cli", "LazyGroup.get_command"): lambda: _table("cmax.cli", "COMMANDS"),
    ("cmax.ingest.formats", "by_id"): _declared_formats,
    # sys.modules[fmt.home]: the docstring of each format's module, all_formats() imported
    ("cmax.ingest.formats_doc", "formats_markdown"): _declared_formats,
    # sys.modules[cls.__module__]: the source of a model class it already holds
    ("cmax.cli.schemas", "_class_bodies"): set,
    ("cmax._stage", "make_callable"): set,
    ("cmax._stage", "lazy_names.__getattr__"): set,
}


def _lazy_names_edges(module: str, tree: ast.AST) -> tuple[list[Import], list[Dynamic]]:
    """``lazy_names(__name__, {"name": "submodule"})``: the package imports those submodules."""
    found: list[Import] = []
    unresolved: list[Dynamic] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("lazy_names")):
            continue
        if (len(node.args) == 2 and ast.unparse(node.args[0]) == "__name__"
                and isinstance(node.args[1], ast.Dict)):
            for home in ast.literal_eval(node.args[1]).values():
                target = _owner(f"{module}.{home}")
                if target is not None:
                    found.append(Import(module, target, node.lineno))
        else:
            unresolved.append(Dynamic(module, "lazy_names(...)", node.lineno))
    return found, unresolved


def _imports() -> tuple[list[Import], list[Dynamic]]:
    found: list[Import] = []
    dynamic: list[Dynamic] = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for scan in (_scan, _lazy_names_edges):
            imports, computed = scan(module, tree)
            found += imports
            dynamic += computed
    unresolved = []
    for site in dynamic:
        resolve = DYNAMIC.get((site.module, site.function))
        if resolve is None:
            unresolved.append(site)
            continue
        found += [Import(site.module, target, site.line) for name in resolve()
                  if (target := _owner(name)) is not None and target != site.module]
    return found, unresolved


IMPORTS, UNRESOLVED = _imports()


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


def test_every_dynamic_import_is_followed() -> None:
    """An import by a computed name is an edge the contract cannot read off the code: each
    one is resolved in DYNAMIC, so a cycle through it fails like any other."""
    assert not UNRESOLVED, "imports by a computed name the contract cannot follow (resolve " \
        "them in DYNAMIC): " + ", ".join(f"{d.module}:{d.line} in {d.function or 'module'}"
                                         for d in UNRESOLVED)


def test_every_dynamic_entry_is_in_use() -> None:
    sites = set()
    for module, path in MODULES.items():
        sites |= {(d.module, d.function)
                  for d in _scan(module, ast.parse(path.read_text(encoding="utf-8")))[1]}
    assert not set(DYNAMIC) - sites, f"stale DYNAMIC entries: {sorted(set(DYNAMIC) - sites)}"


def test_the_contract_sees_dynamic_imports() -> None:
    """The registry imports every declared format's module; a lazy package its submodules;
    the CLI each command's module."""
    seen = {(i.source, i.target) for i in IMPORTS}
    assert ("cmax.ingest.formats", "cmax.ingest.formats.nemo") in seen
    assert ("cmax.ingest.formats", "cmax.ingest.formats.fio") in seen
    assert ("cmax.score", "cmax.score.rubric") in seen
    assert ("cmax.cli", "cmax.cli.inspect_cmd") in seen


def test_the_contract_sees_a_module_looked_up_by_name() -> None:
    """``sys.modules["cmax"]`` reaches the top-level package as surely as ``import cmax``;
    a computed key is a dynamic import to resolve; a loop over literal names is followed."""
    tree = ast.parse("import sys\nimport importlib\n"
                     "def form(stage):\n    return getattr(sys.modules['cmax'], stage)\n"
                     "def other(name):\n    return sys.modules.get(name)\n"
                     "def warm():\n    for n in ('cmax.score', 'json'):\n"
                     "        importlib.import_module(n)\n")
    found, dynamic = _scan("cmax._stage", tree)
    assert [(i.target, i.line) for i in found] == [("cmax", 4), ("cmax.score", 9)]
    assert dynamic == [Dynamic("cmax._stage", "other", 6)]
