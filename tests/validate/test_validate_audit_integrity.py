"""An audit that contradicts itself, covers a pilot or names another cluster decides no gate."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cmax.validate import validate
from tests.fakes import FakeReference
from tests.paths import DATA
from tests.validate.validate_fakes import HonestBundle

EXAMPLE = json.loads((DATA / "ingest" / "example_audit.values.json").read_text())
RULES = {"audit.inconsistent", "audit.partial"}


def _rules_with(values: dict[str, Any], tmp_path: Path, nodes: int = 64) -> dict[str, str]:
    """The honest bundle of ``nodes`` nodes whose audit file is ``values`` (the published
    example audit, edited)."""
    bundle = HonestBundle()
    bundle.nodes, bundle.gpus_in_service = nodes, nodes * bundle.gpus_per_node
    assert bundle.audit_path is not None
    bundle.extra_files[bundle.audit_path] = json.dumps(values, indent=2)
    found = validate(bundle.ingest(tmp_path), FakeReference())
    return {f.rule: f.message for f in found if f.rule in RULES}


def test_the_published_example_audit_is_consistent(tmp_path: Path) -> None:
    # 16 nodes audited of the 64 claimed: a quarter, enough to decide
    assert _rules_with(EXAMPLE, tmp_path) == {}


def test_acs_flipped_off_while_its_count_says_on_everywhere(tmp_path: Path) -> None:
    values = copy.deepcopy(EXAMPLE)
    acs = values["audit_data"]["gpus"]["pcieAcs"]
    acs.update({"enabled": "false", "enabledCount": 16, "totalBridges": 16})
    found = _rules_with(values, tmp_path)
    assert "gpus.pcieAcs.enabled = false but enabledCount = 16 of 16 bridges" in found[
        "audit.inconsistent"]


def test_gpu_totals_that_do_not_add_up(tmp_path: Path) -> None:
    values = copy.deepcopy(EXAMPLE)
    values["audit_data"]["gpus"]["total"] = 512
    assert "gpus.total = 512 but nodeCount x perNode = 16 x 8 = 128" in _rules_with(
        values, tmp_path)["audit.inconsistent"]


def test_a_pilot_audit_of_a_large_system_is_partial(tmp_path: Path) -> None:
    found = _rules_with(EXAMPLE, tmp_path, nodes=128)  # 16 of 128 nodes: 12 %
    assert found == {"audit.partial": "the audit checked 16 node(s) of the 128 [system] claims "
                                      "(12%; at least 25% needed to decide a gate)"}
