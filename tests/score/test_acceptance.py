"""Acceptance per scalable unit (cmax/score/acceptance.py, ``cmax accept``): BM01 and NCCL
multi-node bandwidth judged unit by unit, with the unit that fails named."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cmax.cli import exits, main
from cmax.pipeline import assess
from tests.paths import DATA, SAMPLES

UNITS = """
[[units]]
name = "su1"
hosts = ["aurora-h100-east-[000-031]"]
files = ["training/llama3.1-405b_bf16_512.log", "training/llama3.1-405b_fp8_512.log"]

[[units]]
name = "su2"
hosts = ["aurora-h100-east-03[2-9]", "aurora-h100-east-0[4-6]*"]
files = ["training/grok1-314b_fp8_512.log"]
"""


def _two_units(tmp_path: Path) -> Path:
    """Aurora (every run within the bar) as two units of 32 nodes, su2's run replaced by
    Borealis' grok1 log (0.90 of the reference)."""
    bundle = shutil.copytree(SAMPLES / "aurora-compute", tmp_path / "two-units")
    shutil.copy(SAMPLES / "borealis-cloud" / "training" / "grok1-314b_fp8_512.log",
                bundle / "training" / "grok1-314b_fp8_512.log")
    manifest = bundle / "cmax.toml"
    text = manifest.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n[[runs]]")
    manifest.write_text(head + UNITS + sep + rest, encoding="utf-8")
    return bundle


def test_a_two_unit_bundle_names_the_unit_that_fails(tmp_path: Path) -> None:
    card = assess(_two_units(tmp_path))
    units = {u.name: u for u in card.acceptance}
    assert list(units) == ["su1", "su2"]
    bm01 = {name: u.requirements[0] for name, u in units.items()}
    assert bm01["su1"].status == "passed" and bm01["su1"].detail.startswith(
        "met: all 2 suite workloads meet the bar")
    assert bm01["su2"].status == "failed" and "grok1-314b fp8 512 GPUs (0.90" in bm01["su2"].detail
    assert units["su1"].hosts[0] == "aurora-h100-east-000" and len(units["su1"].hosts) == 32
    assert len(units["su2"].hosts) == 32
    # the 64-node sweep spans both units: it counts for neither, and the scorecard says so
    assert all(u.requirements[1].status == "not_evaluated" for u in units.values())
    assert any("nccl/all_reduce_perf_64n.txt names hosts of more than one unit" in n
               for n in card.notes)
    assert not any(u.accepted for u in units.values())


def test_cmax_accept_text_json_and_one_junit_suite_per_unit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import xmlschema

    bundle = str(_two_units(tmp_path))
    junit = tmp_path / "accept.xml"
    assert main(["accept", bundle, "--junit-xml", str(junit)]) == exits.FINDINGS
    text = capsys.readouterr().out
    assert "su2 (manifest [[units]], 32 hosts): NOT ACCEPTED" in text
    assert "0 of 2 unit(s) accepted" in text
    xmlschema.XMLSchema(str(DATA / "export" / "junit-10.xsd")).validate(str(junit))
    root = ET.parse(junit).getroot()
    assert [s.get("name") for s in root.iter("testsuite")] == ["cmax.unit.su1", "cmax.unit.su2"]
    failed = {c.get("name") for c in root.iter("testcase") if c.find("failure") is not None}
    assert failed == {"cmax.accept.su2.BM01", "cmax.accept.su1", "cmax.accept.su2"}
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["cmax.accept.su2.BM01:requirement"] == "BM01"
    assert main(["accept", bundle, "--format", "json"]) == exits.FINDINGS
    units = json.loads(capsys.readouterr().out)["units"]
    assert [(u["name"], u["requirements"][0]["status"]) for u in units] == [
        ("su1", "passed"), ("su2", "failed")]


@pytest.mark.parametrize(("sample", "code", "bm01"), [
    ("aurora-compute", exits.OK, "passed"),
    ("borealis-cloud", exits.FINDINGS, "failed"),
    ("halcyon-serve", exits.FINDINGS, "not_evaluated"),  # serving only: nothing to accept on
])
def test_a_bundle_without_units_is_one_unit(sample: str, code: int, bm01: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["accept", str(SAMPLES / sample), "--format", "json"]) == code
    (unit,) = json.loads(capsys.readouterr().out)["units"]
    assert unit["source"] == "whole bundle" and unit["requirements"][0]["status"] == bm01


def test_the_audits_login_node_is_no_host_of_the_unit(tmp_path: Path) -> None:
    """The ClusterMAX collector runs on aurora-h100-east-login-01 and reads one worker: the
    unit is the 64 compute hosts, the fleet the 512 GPUs (before: 65 hosts, 520 GPUs). An
    audit run on the worker it reads (standalone) counts that host as a compute host."""
    card = assess(SAMPLES / "aurora-compute")
    (unit,) = card.acceptance
    assert len(unit.hosts) == 64 and not [h for h in unit.hosts if "login" in h]
    (fleet,) = [c for c in card.claims if c.kind == "fleet"]
    assert "support 512 GPUs" in fleet.support[0].text
    bundle = shutil.copytree(SAMPLES / "aurora-compute", tmp_path / "standalone")
    audit = bundle / "audit" / "audit.values.json"
    text = audit.read_text(encoding="utf-8")
    audit.write_text(text.replace("aurora-h100-east-login-01", "aurora-h100-east-000"),
                     encoding="utf-8")
    (unit,) = assess(bundle).acceptance
    assert len(unit.hosts) == 64 and "aurora-h100-east-000" in unit.hosts


def test_the_scorecard_shows_each_unit_and_the_one_not_accepted(tmp_path: Path) -> None:
    import re

    from cmax.render.reports import scorecard_documents

    html = scorecard_documents(assess(_two_units(tmp_path)), "two-units").html
    section = html[html.index('id="acceptance"'):]
    section = section[:section.index("</section>")]
    rows = re.findall(r"<tr><td>(su\d)</td>.*?</tr>", section, flags=re.S)
    assert rows == ["su1", "su2"]
    su2 = section[section.index("<tr><td>su2</td>"):]
    assert "state-failed" in su2 and "not met: 0 of 1 suite workloads" in su2
    assert "not accepted" in su2 and "[[units]]" in section
