"""A bundle that names no rateable evidence is an error (completeness.no-rateable-evidence):
`cmax validate` passed a manifest of an incident log and declarations, and `cmax score` then
rated it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.cli import main
from tests.fakes import manifest_text, reliability_toml
from tests.paths import SAMPLES

INCIDENTS = reliability_toml() + """
[declarations]
soc2_type2 = true
"""


def test_a_bundle_of_an_incident_log_and_declarations_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    shutil.copy(SAMPLES / "aurora-compute" / "incidents.csv", bundle)
    (bundle / "cmax.toml").write_text(manifest_text(INCIDENTS))
    assert main(["validate", str(bundle)]) == 1
    out = capsys.readouterr().out
    assert "completeness.no-rateable-evidence" in out
    assert "cmax.toml names no evidence a rating can rest on (it names only " \
           "reliability.incidents)" in out


def test_a_bundle_naming_no_file_is_refused(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "cmax.toml").write_text(manifest_text('[declarations]\nsoc2_type2 = true\n'))
    assert main(["validate", str(bundle)]) == 1
    assert "cmax.toml names no evidence a rating can rest on\n" in capsys.readouterr().out


def test_an_audit_alone_is_rateable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: one piece of measured evidence is enough for this rule."""
    bundle = tmp_path / "b"
    (bundle / "audit").mkdir(parents=True)
    shutil.copy(SAMPLES / "aurora-compute" / "audit" / "audit.values.json", bundle / "audit")
    (bundle / "cmax.toml").write_text(manifest_text('[audit]\npath = "audit/audit.values.json"\n'))
    main(["validate", str(bundle)])
    assert "no-rateable-evidence" not in capsys.readouterr().out
