"""``cmax score`` and ``cmax price``: output formats, exit codes, one-line user errors.

The pipeline (ingest, validate, reference) is replaced by a stub module so these tests pin the
commands' own behaviour; tests/test_demo.py runs the real chain on the sample bundles.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cmax.cli import main
from cmax.findings import Finding
from cmax.ingest.evidence import Evidence
from cmax.price import price
from cmax.score import Rubric, score
from cmax.scorecard import Scorecard
from tests.fakes import FakeReference
from tests.paths import SAMPLES
from tests.score.score_fakes import baseline, evidence, flat_steps, manifest, run_row

KEY = ("llama3.1-70b", "bf16", 64)


@dataclass
class _Loaded:
    bundle: Any
    evidence: Evidence
    reference: FakeReference
    findings: list[Finding]


def _stub(monkeypatch: pytest.MonkeyPatch, *, step: float = 10.0, pricing: bool = True,
          findings: list[Finding] | None = None) -> None:
    m = manifest() if pricing else manifest(pricing=None)
    ev = evidence(m, runs=[run_row()], steps=flat_steps("runs[0]", step))
    ref = FakeReference({KEY: baseline(9.0)})
    found = findings or []

    @contextmanager
    def load(bundle_path: str, *, commercial: object = None) -> Iterator[_Loaded]:
        yield _Loaded(types.SimpleNamespace(manifest=m), ev, ref, found)

    def assess(bundle_path: str, *, rubric: Rubric | None = None,
               rubric_path: str | None = None, commercial: object = None) -> Scorecard:
        assert rubric is not None
        card = score(ev, found, ref, rubric)
        if m.pricing is None:
            return card
        return card.model_copy(update={"price": price(ev, card, ref)})

    module = types.ModuleType("cmax.pipeline")
    module.load = load  # type: ignore[attr-defined]
    module.assess = assess  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cmax.pipeline", module)


def test_score_json_has_the_contract_keys(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch)
    assert main(["score", "bundle", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"tier", "exemplar_pass", "reference_release", "workloads", "categories",
            "price"} <= set(data)
    w = data["workloads"][0]
    assert w["ratio"] == pytest.approx(0.9) and w["verdict"] == "fail"
    assert data["price"]["ask_usd_per_gpu_hour"] == 1.89
    assert {"name", "score", "evidence"} <= set(data["categories"][0])


def test_score_exit_1_on_error_findings(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch, findings=[Finding(rule="schema.x", severity="error", message="m",
                                         fix="f")])
    assert main(["score", "bundle"]) == 1
    out = capsys.readouterr().out
    assert "Tier:" in out and "Findings: 1 error(s)" in out


def test_score_text_summary(monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch, step=9.0)
    assert main(["score", "bundle", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "Exemplar-style suite: met" in out and "llama3.1-70b" in out
    assert "Categories" in out and "Gates" in out and "ask $2.10" in out


def test_bad_rubric_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch)
    bad = tmp_path / "rubric.toml"
    bad.write_text('id = "x"\ntitle = "x"\nbasis = "x"\n[tiers]\nPlatinum = 1\n')
    for cmd in ("score", "price"):
        assert main([cmd, "bundle", "--rubric", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and str(bad) in err


def test_price_json_and_text(monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch)
    assert main(["price", "bundle", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["quoted_usd_per_gpu_hour"] == 2.10
    assert data["parity_usd_per_gpu_hour"] == pytest.approx(1.89)
    assert data["ask_usd_per_gpu_hour"] == 1.89
    assert data["adjustment_pct"] == pytest.approx(-10.0)
    assert main(["price", "bundle"]) == 0
    out = capsys.readouterr().out
    assert "ask          $1.89/GPU-hr (-10.00% vs quote)" in out and "Reasoning" in out


def test_price_without_pricing_is_exit_2(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _stub(monkeypatch, pricing=False)
    assert main(["price", "bundle", "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "pricing" in captured.err


SAMPLES = SAMPLES


def test_real_sample_bundles(capsys: pytest.CaptureFixture[str]) -> None:
    """The real chain: Cinder has error findings (exit 1) and fails the attestation gate;
    Borealis runs ~10 % slow, so its ask is ~10 % under its quote."""
    assert main(["score", str(SAMPLES / "cinder-gpu"), "--format", "json"]) == 1
    card = json.loads(capsys.readouterr().out)
    assert card["tier"] == "Underperforming" and card["finding_counts"]["error"] > 0
    assert any(not g["passed"] and "attestation" in g["reason"] for g in card["gates"])
    assert main(["price", str(SAMPLES / "borealis-cloud"), "--format", "json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert advice["throughput_ratio"] == pytest.approx(0.9, abs=0.01)
    assert -11.0 < advice["adjustment_pct"] < -9.0
    assert advice["ask_usd_per_gpu_hour"] < advice["quoted_usd_per_gpu_hour"]
