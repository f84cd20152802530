"""DataFrame accessors (cmax/frames.py): typed columns, batches, the history; all documented."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import polars as pl
import pytest

import cmax
import cmax.frames as cf
from cmax.scorecard import Scorecard

DOC = Path(__file__).parents[1] / "docs" / "python-api.md"


@cache
def _cards() -> tuple[Scorecard, ...]:
    return tuple(cmax.assess(b) for b in cmax.sample_bundles())


@pytest.mark.parametrize(("accessor", "schema", "per_card"), [
    (cf.scorecards, cf.SCORECARD_SCHEMA, lambda c: 1),
    (cf.workloads, cf.WORKLOAD_SCHEMA, lambda c: len(c.workloads)),
    (cf.network, cf.NETWORK_SCHEMA, lambda c: len(c.network)),
    (cf.gates, cf.GATE_SCHEMA, lambda c: len(c.gates)),
    (cf.findings, cf.FINDING_SCHEMA, lambda c: len(c.findings)),
    (cf.judgements, cf.JUDGEMENT_SCHEMA, lambda c: len(c.judgements)),
])
def test_batch_and_single_have_the_declared_columns(accessor, schema, per_card) -> None:  # type: ignore[no-untyped-def]
    cards = _cards()
    batch = accessor(cards)
    assert dict(batch.schema) == schema
    assert batch.height == sum(per_card(c) for c in cards)
    one = accessor(cards[0])
    assert dict(one.schema) == schema and one.height == per_card(cards[0])
    assert set(one["provider"].to_list()) == {cards[0].provider}
    empty = accessor([])
    assert empty.height == 0 and dict(empty.schema) == schema


def test_values_match_the_scorecard() -> None:
    card = _cards()[1]
    frame = cf.workloads(card)
    assert frame["ratio"].to_list() == [w.ratio for w in card.workloads]
    assert frame["window_first"].to_list() == [w.window[0] if w.window else None
                                               for w in card.workloads]
    gates = cf.gates(card)
    assert gates.filter(pl.col("status") == "failed")["binding_cap"].to_list() == [
        g.cap for g in card.gates if g.status == "failed"]


def test_judgements_carry_the_provenance_of_each_claim() -> None:
    card = _cards()[0]
    frame = cf.judgements(card)
    runs = frame.filter(pl.col("kind") == "training_run")
    assert runs["id"].to_list() == [w.run_id for w in card.workloads]
    assert set(runs["provenance"].to_list()) == {"provider-attested"}
    audit = frame.filter(pl.col("kind") == "audit").row(0, named=True)
    assert audit["provenance"] == "provider-attested"
    assert audit["independent_witnesses"] == 0


def test_findings_from_a_list() -> None:
    card = _cards()[2]
    frame = cf.findings(card.findings)
    assert frame.height == len(card.findings) and frame["provider"].null_count() == frame.height


def test_history_reads_the_audit_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cmax.history import audit as audit_mod
    from cmax.history import run_audit
    from cmax.history.store import DATASET_SCHEMA
    from tests.history.history_fakes import fake_assess, write_run

    root = tmp_path / "runs"
    write_run(root, "east", "20251001-000000",
              workloads=[["llama3.1-70b", "fp8", 512, 1.0, 0.99, 1.01]])
    monkeypatch.setattr(audit_mod, "_default_assess", fake_assess)
    run_audit(root, None)
    frame = cf.history(root / ".cmax-history")
    assert dict(frame.schema) == DATASET_SCHEMA
    assert set(frame["row_kind"].to_list()) == {"run", "workload"}


def _documented_columns(section: str) -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"<!-- columns:{section} -->")
    end = text.index("<!-- columns:end -->", start)
    return set(re.findall(r"^\| `([a-z_0-9]+)` \|", text[start:end], flags=re.M))


@pytest.mark.parametrize(("section", "schema"), [
    ("scorecards", cf.SCORECARD_SCHEMA), ("workloads", cf.WORKLOAD_SCHEMA),
    ("network", cf.NETWORK_SCHEMA), ("gates", cf.GATE_SCHEMA), ("findings", cf.FINDING_SCHEMA),
    ("judgements", cf.JUDGEMENT_SCHEMA),
])
def test_every_frame_column_is_documented(section: str, schema: dict[str, object]) -> None:
    assert _documented_columns(section) == set(schema) - {"provider", "cluster"}


def test_every_history_column_is_documented() -> None:
    from cmax.history.store import DATASET_SCHEMA

    assert _documented_columns("history") == set(DATASET_SCHEMA)


def test_workloads_name_what_the_log_states_against_the_declaration(tmp_path: Path) -> None:
    """Aurora's fp8 log declared bf16: its row's precision is the declared bf16 the
    reference was looked up by, and log_states says the log states fp8."""
    from cmax.pipeline import assess
    from tests.sample_bundles import fp8_run_declared_bf16

    frame = cf.workloads(assess(fp8_run_declared_bf16(tmp_path)))
    assert frame.select("precision", "log_states").rows() == [
        ("bf16", ""), ("bf16", "precision=fp8"), ("fp8", "")]


def test_a_path_instead_of_a_scorecard_is_one_clear_error() -> None:
    """A bundle path in the list failed deep inside a frame with an AttributeError."""
    from cmax.errors import CmaxError

    with pytest.raises(CmaxError, match=r"cards: item 1 is a str \('samples/x'\) \(expected "
                                        r"cmax Scorecard objects\); fix: pass cmax.assess"):
        cf.scorecards([_cards()[0], "samples/x"])  # type: ignore[list-item]
