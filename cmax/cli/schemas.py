"""JSON Schemas of what cmax reads and prints, every property described.

``cmax schema --model NAME``: ``scorecard`` and ``price`` come from the pydantic models;
``manifest`` from the manifest model, its properties described by the one table that defines
them, docs/manifest.md (shipped in the package); ``validate`` and ``audit`` describe the
``--format json`` documents of those commands, the audit's drift items and Exemplar statuses
from their models. :func:`undescribed` lists any property left without a description (a test
keeps it empty for manifest, validate and audit).

The scorecard's and the findings' fields are described by the docstring under each field
(a string literal on the line after ``x: int``), read here from the models' source
(:func:`model_schema`) rather than by pydantic when each model class is made
(``use_attribute_docstrings``): that read parses the modules' source and cost every command
about 30 ms of start-up, for descriptions only this command prints.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, get_args

from cmax.ingest.evidence import TABLES

if TYPE_CHECKING:
    from pydantic import BaseModel

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# the sections that name evidence files are described by their table's declaration
_MANIFEST_TOP = {
    **{t.section: f"{'one entry per file, each ' if t.many else ''}{t.what}: "
                  f"{'[[' if t.many else '['}{t.section}{']]' if t.many else ']'}"
       for t in TABLES if t.section is not None},
    "provider": "who is rated: [provider]", "system": "the cluster: [system]",
    "benchmark": "when the evidence was collected and against which reference: [benchmark]",
    "sla": "the contracted uptime and credits: [sla]",
    "pricing": "the quote being negotiated: [pricing]",
    "declarations": "self-declared attestations and features (key = bool/str/number), scored "
                    "at reduced credit and marked unverified: [declarations]",
}


def model_schema(model: type[BaseModel],
                 mode: Literal["validation", "serialization"] = "validation") -> dict[str, Any]:
    """``model``'s JSON Schema with each field's docstring as its description (a description
    given with ``Field(description=...)`` stays), for the model and every model it holds."""
    schema = model.model_json_schema(mode=mode)
    models = _models(model)
    for name, part in [(schema.get("title"), schema), *schema.get("$defs", {}).items()]:
        if name not in models:
            continue
        docs = _field_docs(models[name])
        properties = part.get("properties", {})
        for key, prop in properties.items():
            if key in docs and "description" not in prop:
                # pydantic writes a property's keys in sorted order: so does this
                properties[key] = dict(sorted({**prop, "description": docs[key]}.items()))
    return schema


def _models(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """``model`` and every model its fields and computed fields hold, by class name (the
    name pydantic gives each one's ``$defs`` entry)."""
    from pydantic import BaseModel

    found: dict[str, type[BaseModel]] = {}
    todo = [model]
    while todo:
        cls = todo.pop()
        if cls.__name__ in found:
            continue
        found[cls.__name__] = cls
        types: list[Any] = [f.annotation for f in cls.model_fields.values()]
        types += [f.return_type for f in cls.model_computed_fields.values()]
        while types:
            held = types.pop()
            if isinstance(held, type) and issubclass(held, BaseModel):
                todo.append(held)
            types.extend(get_args(held))
    return found


def _field_docs(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> the docstring under it, in ``model`` and the models it derives from
    (cleaned as pydantic cleans one: :func:`inspect.cleandoc`)."""
    from pydantic import BaseModel

    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        body = _class_bodies(cls.__module__).get(cls.__qualname__, [])
        for field, after in itertools.pairwise(body):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[field.target.id] = inspect.cleandoc(after.value.value)
    return docs


_BODIES: dict[str, dict[str, list[ast.stmt]]] = {}


def _class_bodies(module: str) -> dict[str, list[ast.stmt]]:
    """The statements of each top-level class of ``module``, its source parsed once."""
    if module not in _BODIES:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
        _BODIES[module] = {node.name: node.body for node in tree.body
                           if isinstance(node, ast.ClassDef)}
    return _BODIES[module]


def _manifest_table() -> dict[tuple[str, str], str]:
    """(table, key) -> 'meaning (type; required)' from docs/manifest.md's key table."""
    from cmax.resources import data_dir

    text = (data_dir("docs") / "manifest.md").read_text(encoding="utf-8")
    rows: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`["):
            continue
        table = re.match(r"`(\[\[?[a-z_]+\]\]?)`", cells[0])
        if table is None:
            continue
        for key in re.findall(r"`([a-z_]+)`", cells[0][table.end():]):
            rows[(table[1], key)] = f"{cells[3]} ({cells[1]}; required: {cells[2]})"
    return rows


def manifest_schema() -> dict[str, Any]:
    from cmax.submission.manifest import Manifest

    schema = Manifest.model_json_schema()
    table = _manifest_table()
    # each model's cmax.toml table(s), read off the manifest's own properties: a model under
    # an array is [[name]], else [name] (PathSpec serves both [[nccl]] and [audit])
    tables: dict[str, list[str]] = {}
    for name, prop in schema["properties"].items():
        prop.setdefault("description", _MANIFEST_TOP.get(name, f"the [{name}] table"))
        refs = re.findall(r"#/\$defs/(\w+)", str(prop))
        if refs:
            tables.setdefault(refs[0], []).append(
                f"[[{name}]]" if prop.get("type") == "array" else f"[{name}]")
    for model, model_tables in tables.items():
        for key, prop in schema["$defs"].get(model, {}).get("properties", {}).items():
            found = [f"{t} {table[(t, key)]}" if len(model_tables) > 1 else table[(t, key)]
                     for t in model_tables if (t, key) in table]
            if found and "description" not in prop:
                prop["description"] = "; ".join(found)
    return {"$schema": DIALECT, "title": "cmax.toml (the bundle manifest)", **schema}


def _finding() -> dict[str, Any]:
    """A finding as ``cmax validate --format json`` writes it: the Finding model's fields
    (described there) without ``run_id``, every one present."""
    from cmax.cli.validate_cmd import FINDING_KEYS
    from cmax.findings import Finding

    props = model_schema(Finding)["properties"]
    return {"type": "object", "description": "one way the submission could mislead",
            "required": list(FINDING_KEYS),
            "properties": {key: props[key] for key in FINDING_KEYS}}


def validate_schema() -> dict[str, Any]:
    from cmax.scorecard import ClaimEntry

    counts = {sev: {"type": "integer", "description": f"{sev} findings"}
              for sev in ("error", "warning", "info")}
    claims = model_schema(ClaimEntry)
    return {"$schema": DIALECT, "title": "cmax validate --format json", "type": "object",
            "required": ["findings", "counts"], "$defs": claims.pop("$defs"),
            "properties": {
                "findings": {"type": "array", "items": _finding(),
                             "description": "every finding, errors first"},
                "counts": {"type": "object", "properties": counts, "required": list(counts),
                           "description": "findings per severity"},
                "claims": {"type": "array", "items": claims,
                           "description": "the claims ledger: every claim the ratings rest "
                           "on and what the evidence says about it"}}}


_DRIFT = {
    "cluster": "the cluster folder under the runs root",
    "kind": "what changed: regression_vs_previous / _vs_best (beyond noise), tier_down, "
            "tier_up (info), new_audit_fail (a FAIL the previous audit did not have), "
            "audit_fail (a FAIL on a cluster's first audited run), "
            "exemplar_expiring / _expired / _lapsed, "
            "sla_breach, evidence_changed (a recorded run's bytes changed), audits_stopped, "
            "not_counted (the run's ratio of the workload does not count: withheld or "
            "unverified, so not compared; `after` says why, `compared_with` the last run "
            "whose ratio counts)",
    "workload": "the workload, or `nccl <collective> <nodes>n`, it concerns (null for the run)",
    "before": "the value before (a ratio, tier or date; sla_breach: the contracted uptime %)",
    "after": "the value now (sla_breach: the measured uptime %, `metric` says which)",
    "change_pct": "after vs before, %", "metric": "which number changed",
    "period": "sla_breach: the reliability period measured (start–end)",
    "credit_pct": "sla_breach: the service credit owed, % of the period's bill",
    "run": "the run folder that shows it", "compared_with": "the run folder compared with",
    "noise_pct": "the run-to-run noise the change exceeded, %",
    "severity": "problem (counts towards exit 1) or info", "message": "one sentence for people",
}
_EXEMPLAR = {
    "cluster": "the cluster folder", "status": "valid, expiring, expired, lapsed (a later run "
    "failed the bar) or never", "passed_run": "the run that passed the suite",
    "passed_on": "its date", "expires_on": "when the validation ends",
    "days_left": "days until then (as of the audit's date)",
    "ended_by": "the later run that failed the bar (lapsed)",
}


def _described(model: Any, descriptions: dict[str, str]) -> dict[str, Any]:
    schema: dict[str, Any] = model.model_json_schema()
    for key, prop in schema.get("properties", {}).items():
        prop.setdefault("description", descriptions[key])
    return schema


def audit_schema() -> dict[str, Any]:
    from cmax.history.drift import DriftItem, ExemplarStatus

    def integer(text: str) -> dict[str, Any]:
        return {"type": "integer", "description": text}

    runs = {"found": integer("run folders under the root"),
            "scored": integer("newly scored and recorded by this pass"),
            "already_recorded": integer("found and already in the history"),
            "unusable": integer("runs that could not be scored (listed under unusable)"),
            "in_history": integer("runs the history holds"),
            "clusters_in_history": integer("clusters the history holds")}
    path_reason = {"type": "object", "properties": {
        "path": {"type": "string", "description": "the file or folder"},
        "error": {"type": "string", "description": "why, in one line"},
        "reason": {"type": "string", "description": "why it was ignored"}}}
    return {"$schema": DIALECT, "title": "cmax audit --format json", "type": "object",
            "properties": {
                "root": {"type": "string", "description": "the runs root"},
                "history": {"type": "string", "description": "the history table's location"},
                "history_version": {"type": ["integer", "null"],
                                    "description": "the table version reported on"},
                "time_travel": {"type": "boolean", "description": "an older version was "
                                "read (--history-version / --history-as-of): nothing scored"},
                "as_of": {"type": ["string", "null"], "format": "date",
                          "description": "the day expiry and stale clusters are judged on"},
                "runs": {"type": "object", "properties": runs, "description": "counts"},
                "items": {"type": "array", "description": "drift to review, ordered",
                          "items": _described(DriftItem, _DRIFT)},
                "exemplar": {"type": "array", "description": "per cluster, its Exemplar "
                             "validation", "items": _described(ExemplarStatus, _EXEMPLAR)},
                "unusable": {"type": "array", "items": path_reason,
                             "description": "runs that could not be scored (exit 2)"},
                "ignored": {"type": "array", "items": path_reason,
                            "description": "stray files beside the runs (not fatal)"},
                "notes": {"type": "array", "items": {"type": "string"},
                          "description": "one-off messages (e.g. a history migration)"},
                "exit_code": {"type": "integer", "description": "0 nothing to review, 1 "
                              "drift, 2 an unusable run, before --fail-on"},
                "reports": {"type": "array", "items": {"type": "string"},
                            "description": "trend report files written (-o)"}}}


def schemas() -> dict[str, Any]:
    from cmax.scorecard import PriceAdvice, Scorecard

    return {"scorecard": model_schema(Scorecard, mode="serialization"),
            "price": model_schema(PriceAdvice, mode="serialization"),
            "manifest": manifest_schema(), "validate": validate_schema(),
            "audit": audit_schema()}


def undescribed(schema: dict[str, Any], path: str = "") -> Iterator[str]:
    """Every property path (``a.b[]``) in ``schema`` without a description."""
    for name, sub in schema.get("$defs", {}).items():
        yield from undescribed({k: v for k, v in sub.items() if k != "$defs"},
                               f"$defs.{name}")
    for key, prop in schema.get("properties", {}).items():
        where = f"{path}.{key}" if path else key
        if not prop.get("description"):
            yield where
        yield from undescribed(prop, where)
        if isinstance(prop.get("items"), dict):
            yield from undescribed(prop["items"], where + "[]")
