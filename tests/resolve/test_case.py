"""The case: resolved once at ingest, immutable, and all the later stages read.

The stages after ingest must be functions of the case alone: the same findings, scorecard and
price whether the bundle's files still exist or not (a .tar.gz bundle's temporary directory is
gone once it is closed).
"""

from __future__ import annotations

import builtins
import dataclasses
import io
import tarfile
from pathlib import Path

import polars as pl
import pytest

from cmax.ingest.evidence import EvidenceFile
from cmax.ingest.facts import Fact
from cmax.pipeline import load
from cmax.price import price
from cmax.render.reports import brief_html, scorecard_json
from cmax.resolve.case import Case, resolve
from cmax.resolve.runs import BaselineRow
from cmax.score import load_rubric, score
from cmax.validate import validate
from tests.fakes import BASELINES, FakeReference
from tests.paths import SAMPLES
from tests.validate.validate_fakes import HonestBundle


def _tarball(tmp_path: Path, sample: str) -> Path:
    archive = tmp_path / f"{sample}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(SAMPLES / sample, arcname=sample)
    return archive


def test_stages_give_the_same_output_after_the_bundle_is_closed(tmp_path: Path) -> None:
    """validate, score, price and render read only the case (PDFs are left to tests/render:
    they render the same scorecard JSON)."""
    rubric = load_rubric(None)
    with load(_tarball(tmp_path, "borealis-cloud")) as loaded:
        case, reference, findings = loaded.case, loaded.reference, loaded.findings
        root = case.root
        card_open = score(case, findings, reference, rubric)
        price_open = price(case, card_open, reference)
    assert not root.exists()  # the archive's temporary directory is gone
    again = validate(case, reference)
    assert again == findings
    card_closed = score(case, again, reference, rubric)
    assert card_closed.model_dump_json() == card_open.model_dump_json()
    price_closed = price(case, card_closed, reference)
    assert price_closed.model_dump_json() == price_open.model_dump_json()
    card_open = card_open.model_copy(update={"price": price_open})
    card_closed = card_closed.model_copy(update={"price": price_closed})
    assert scorecard_json(card_closed) == scorecard_json(card_open)
    assert brief_html(card_closed) == brief_html(card_open)


def test_validate_and_score_open_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stronger than a closed bundle: with every way of opening a file disabled, the stages
    after resolve still run (the reference and the rubric are loaded before)."""
    rubric = load_rubric(None)
    with load(SAMPLES / "aurora-compute") as loaded:
        case, reference, findings = loaded.case, loaded.reference, loaded.findings

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a stage opened a file: {args[:1]}")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(io, "open", refuse)
    for name in ("open", "read_text", "read_bytes", "exists", "is_file", "stat"):
        monkeypatch.setattr(Path, name, refuse)
    assert validate(case, reference) == findings
    card = score(case, findings, reference, rubric)
    assert card.workloads and price(case, card, reference) is not None


def test_the_case_is_immutable(tmp_path: Path) -> None:
    case = resolve(HonestBundle().ingest(tmp_path), FakeReference())
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.runs = pl.DataFrame()
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.resolved[0].window = case.resolved[0].window  # type: ignore[misc]
    assert resolve(case, FakeReference()) is case


def test_each_run_carries_its_typed_baseline_window_and_clean_steps(tmp_path: Path) -> None:
    case = resolve(HonestBundle().ingest(tmp_path), FakeReference())
    run = case.resolved[0]
    assert isinstance(run.baseline, BaselineRow)
    assert run.baseline.baseline_id == "dgxc-405b-bf16-512" and run.baseline_exact
    assert (run.window.first, run.window.last) == (35, 44)
    assert run.window_steps["iteration"].to_list() == list(range(35, 45))
    assert run.clean_steps.height == 50
    assert [d.present for d in case.declared] == [True] * len(case.declared)


def test_the_window_follows_the_matched_baselines_recipe_release(tmp_path: Path) -> None:
    """A v25.05 baseline was measured over iterations 11-44 (cmax/recipes/window.py): so is the
    run."""
    ref = FakeReference([{**row, "recipe_release": "v25.05.01"} for row in BASELINES])
    run = resolve(HonestBundle().ingest(tmp_path), ref).resolved[0]
    assert (run.window.first, run.window.last) == (11, 44)


def test_a_missing_file_is_recorded_once_with_its_manifest_line(tmp_path: Path) -> None:
    bundle = HonestBundle(skip_files=("incidents.csv",))
    evidence = bundle.build(tmp_path)  # ingest refuses a bundle missing a declared file
    manifest_text = "[reliability]\nincidents = \"incidents.csv\"\n"
    case = resolve(evidence, FakeReference(), manifest_text=manifest_text)
    missing = [d for d in case.declared if not d.present]
    assert [(d.key, d.manifest_line) for d in missing] == [("reliability.incidents", 2)]


def test_logged_gbs_comes_from_the_facts_the_parser_recorded(tmp_path: Path) -> None:
    """When the parser recorded ``gbs=`` facts, no file is read: the log may be gone."""
    bundle = HonestBundle()
    evidence = bundle.ingest(tmp_path)
    log = bundle.runs[0].log
    (tmp_path / log).unlink()
    files = [dataclasses.replace(f, facts=(Fact("parallel", "gbs=512", line=2),))
             if f.path == log else f for f in evidence.files]
    evidence.files = files
    run = resolve(evidence, FakeReference()).resolved[0]
    assert run.logged_gbs and {gbs for _, gbs in run.logged_gbs} == {512}
    rules = {f.rule for f in validate(evidence, FakeReference()) if f.run_id == run.run_id}
    assert "consistency.manifest-vs-log" in rules


def test_files_are_digested_once_by_ingest(tmp_path: Path) -> None:
    """Duplicate evidence is found from the recorded digests, not by hashing files again."""
    evidence = HonestBundle().ingest(tmp_path)
    first = evidence.files[0]
    evidence.files = [*evidence.files, EvidenceFile(path="copy/" + first.path, kind=first.kind,
                                                    sha256=first.sha256,
                                                    size_bytes=first.size_bytes)]
    hits = [f for f in validate(evidence, FakeReference()) if f.rule == "statistics.duplicate-log"]
    assert hits and "byte-identical" in hits[0].message
    assert isinstance(resolve(evidence, FakeReference()), Case)


def test_each_run_reads_its_steps_in_line_order_however_ingest_gave_them(tmp_path: Path) -> None:
    """In file order (nearly always) the steps are used as they are; shuffled, they are
    sorted: the same steps and clean steps either way."""
    evidence = HonestBundle().ingest(tmp_path)
    shuffled = dataclasses.replace(
        evidence, steps=evidence.steps.sample(fraction=1.0, shuffle=True, seed=7))
    assert not shuffled.steps["line"].is_sorted()
    ordered = resolve(evidence, FakeReference()).resolved
    again = resolve(shuffled, FakeReference()).resolved
    for a, b in zip(ordered, again, strict=True):
        assert a.steps["line"].is_sorted() and a.steps.equals(b.steps)
        assert a.clean_steps.equals(b.clean_steps)


def test_clean_steps_are_unique_finite_and_in_iteration_order() -> None:
    from cmax.ingest.textlines import clean_steps

    steps = pl.DataFrame({"iteration": [3, 1, 2, 1, None, 4, 5],
                          "step_time_s": [3.0, 1.0, 2.0, 9.0, 7.0, float("nan"), 0.0],
                          "line": [1, 2, 3, 4, 5, 6, 7]})
    assert clean_steps(steps).rows() == [(1, 1.0, 2), (2, 2.0, 3), (3, 3.0, 1)]
    rising = steps.slice(0, 0).vstack(pl.DataFrame(
        {"iteration": [0, 1, 5], "step_time_s": [1.0, 2.0, 3.0], "line": [9, 8, 7]}))
    assert clean_steps(rising).equals(rising)  # already clean: used as it is


def test_a_fallback_note_names_only_what_the_run_states() -> None:
    """A run that states its GBS but not its sequence length read "sequence length None"."""
    from cmax.reference.view import RefView
    from cmax.resolve.case import match_baseline

    ref = RefView(FakeReference())
    row, exact, note = match_baseline(ref, "llama3.1-405b", "h100-sxm", "bf16", 512, 999, None)
    assert row is not None and not exact and note is not None
    assert note.startswith("no baseline at GBS 999: matched the recipe's GBS 256 / sequence "
                           "length 8192")
    assert "None" not in note
