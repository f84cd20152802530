"""``cmax schema``: every schema (scorecard, price, manifest, validate, audit) with every
property described, and the documents the commands print conform to them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from cmax.cli import exits, main
from cmax.cli.schemas import model_schema, schemas, undescribed
from tests.paths import SAMPLES


@pytest.mark.parametrize("name", ["scorecard", "price", "manifest", "validate", "audit"])
def test_every_property_is_described(name: str) -> None:
    assert list(undescribed(schemas()[name])) == []


def test_manifest_descriptions_come_from_docs_manifest_md() -> None:
    schema = schemas()["manifest"]
    run = schema["$defs"]["RunSpec"]["properties"]
    assert "one per training log" in run["workload"]["description"]
    assert "[[nccl]]" in schema["$defs"]["PathSpec"]["properties"]["path"]["description"]


def test_scorecard_descriptions_come_from_field_docstrings() -> None:
    defs = schemas()["scorecard"]["$defs"]
    assert "out-of-place" in defs["NetworkResult"]["properties"]["busbw_gbps"]["description"]
    assert defs["Gate"]["properties"]["cap"]["description"].startswith("the tier a failed gate")


class _Inner(BaseModel):
    size: int
    """how big,
        in bytes"""


class _Base(BaseModel):
    name: str
    """what it is called"""


class _Outer(_Base):
    inner: list[_Inner] | None = None
    """the parts"""
    given: int = Field(0, description="said in Field")
    """a docstring a Field description wins over"""
    bare: int = 0


def test_field_docstrings_become_descriptions_only_in_the_schema() -> None:
    """The models do not read their docstrings when made (that parse cost every command's
    start-up); ``cmax schema`` reads them: inherited fields, nested models, a Field's own
    description kept, a docstring cleaned as pydantic cleans one."""
    assert _Outer.model_fields["name"].description is None
    schema = model_schema(_Outer)
    props = schema["properties"]
    assert props["name"]["description"] == "what it is called"
    assert props["inner"]["description"] == "the parts"
    assert props["given"]["description"] == "said in Field"
    assert "description" not in props["bare"]
    assert schema["$defs"]["_Inner"]["properties"]["size"]["description"] == "how big,\nin bytes"
    assert list(props["inner"]) == sorted(props["inner"])  # pydantic's key order kept


@pytest.mark.parametrize("model", ["cmax.scorecard:Scorecard", "cmax.findings:Finding"])
def test_the_models_leave_their_docstrings_to_cmax_schema(model: str) -> None:
    import importlib

    module, name = model.split(":")
    config: ConfigDict = getattr(importlib.import_module(module), name).model_config
    assert not config.get("use_attribute_docstrings")


def test_validate_claims_and_findings_are_described(capsys: pytest.CaptureFixture[str]) -> None:
    schema = schemas()["validate"]
    assert "claims" in schema["properties"]
    finding = schema["properties"]["findings"]["items"]
    assert finding["required"] == ["rule", "severity", "file", "line", "message", "fix"]
    assert main(["validate", str(SAMPLES / "aurora-compute"), "--format", "json"]) in (0, 1)
    document = json.loads(capsys.readouterr().out)
    assert document["claims"]
    _conforms(document, schema)


def test_undescribed_finds_a_missing_description() -> None:
    schema = {"properties": {"a": {"type": "object", "description": "x",
                                   "properties": {"b": {"type": "string"}}}}}
    assert list(undescribed(schema)) == ["a.b"]


def _conforms(document: object, schema: dict[str, object]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(document, schema)


def test_sample_manifests_and_validate_output_conform(
        capsys: pytest.CaptureFixture[str]) -> None:
    schema = schemas()
    for sample in sorted(SAMPLES.iterdir()):
        manifest = tomllib.loads((sample / "cmax.toml").read_text())
        _conforms(json.loads(json.dumps(manifest, default=str)), schema["manifest"])
    assert main(["validate", str(SAMPLES / "cinder-gpu"), "--format", "json"]) == 1
    _conforms(json.loads(capsys.readouterr().out), schema["validate"])


def test_audit_output_conforms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    from cmax.history import audit as audit_mod
    from tests.history.history_fakes import drifting_runs, fake_assess

    root = drifting_runs(tmp_path / "runs")
    monkeypatch.setattr(audit_mod, "_default_assess", fake_assess)
    assert main(["audit", str(root), "--format", "json"]) == exits.FINDINGS
    _conforms(json.loads(capsys.readouterr().out), schemas()["audit"])


@pytest.mark.parametrize("name", ["scorecard", "price", "manifest", "validate", "audit"])
def test_cli_prints_each(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--model", name, "--format", "json"]) == exits.OK
    assert json.loads(capsys.readouterr().out)["title"]
