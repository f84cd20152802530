"""The claims ledger (cmax/resolve/claims.py, cmax/resolve/run_claims.py): each run claim resolved
once, to
corroborated / declared / assumed / contradicted, with the evidence cited."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cmax.ingest.evidence import Evidence
from cmax.ingest.facts import Fact
from cmax.resolve.case import Case, resolve
from cmax.resolve.claims import Citation, Claim, Ledger, release_of
from tests.fakes import FakeReference
from tests.validate.validate_fakes import HonestBundle


def _case(tmp_path: Path, *facts: Fact, bundle: HonestBundle | None = None) -> Case:
    bundle = bundle or HonestBundle()
    ev = bundle.ingest(tmp_path)
    log = str(ev.runs["source_file"][0])
    ev.files = [dataclasses.replace(f, facts=(*f.facts, *facts)) if f.path == log else f
                for f in ev.files]
    return resolve(ev, FakeReference())


def _status(case: Case, kind: str, run: int = 0) -> str:
    claim = case.claims.get(case.resolved[run].run_id, kind)
    assert claim is not None
    return claim.status


def _unstated() -> HonestBundle:
    bundle = HonestBundle()
    for run in bundle.runs:
        run.stated = False
    return bundle


def test_declarations_alone_are_declared_only(tmp_path: Path) -> None:
    case = _case(tmp_path, bundle=_unstated())
    run = case.resolved[0].run_id
    kinds = [c.kind for c in case.claims.of(run)]
    assert kinds == ["gpu", "gpu_count", "model", "precision", "seq_len", "gbs", "parallel",
                     "software"]
    for kind in ("gpu_count", "model", "precision", "seq_len", "parallel", "software"):
        assert _status(case, kind) == "declared", kind
    # the GBS the log prints on its window's lines corroborates the declared 256
    gbs = case.claims.get(run, "gbs")
    assert gbs is not None and gbs.status == "corroborated"
    assert gbs.support[0].line is not None and "256" in gbs.support[0].text
    assert [c.kind for c in case.claims.unearned(run)] == ["model", "gpu_count", "precision"]


def test_log_statements_corroborate(tmp_path: Path) -> None:
    case = _case(tmp_path, Fact("gpu_count", "512", line=2), Fact("precision", "fp8=None", 3),
                 Fact("experiment", "pretrain_llama3.1-405b_bf16_512", 1),
                 Fact("parallel", "seq_len=8192", 4), Fact("parallel", "tp=8", 5),
                 Fact("parallel", "pp=8", 5), Fact("parallel", "cp=2", 5),
                 Fact("parallel", "vp=8", 5), Fact("parallel", "mbs=1", 5),
                 Fact("container", "nvcr.io#nvidia/nemo:25.04.01", 1), bundle=_unstated())
    for kind in ("gpu_count", "model", "precision", "seq_len", "parallel", "software"):
        assert _status(case, kind) == "corroborated", kind
    run = case.resolved[0].run_id
    assert case.claims.unearned(run) == []
    model = case.claims.get(run, "model")
    assert model is not None
    assert model.support[0].cite().endswith(":1: 'pretrain_llama3.1-405b_bf16_512'")


def test_log_statements_contradict_with_both_sides(tmp_path: Path) -> None:
    case = _case(tmp_path, Fact("node_count", "8", line=2), Fact("precision", "fp8=hybrid", 3),
                 Fact("experiment", "pretrain_grok1-314b_fp8", 1),
                 Fact("container", "nvcr.io/nvidia/nemo:24.09", 1))
    run = case.resolved[0].run_id
    scale = case.claims.get(run, "gpu_count")
    assert scale is not None and scale.status == "contradicted"
    assert scale.value == "512" and "8 node(s) x 8 GPUs = 64" in scale.against[0].text
    for kind in ("model", "precision", "software"):
        assert _status(case, kind) == "contradicted", kind


def test_unstated_configuration_is_assumed_from_the_recipe(tmp_path: Path) -> None:
    bundle = HonestBundle()
    bundle.runs[0].spec.update({"seq_len": None})
    bundle.runs[0].seq_len = None  # type: ignore[assignment]
    case = _case(tmp_path, bundle=bundle)
    claim = case.claims.get(case.resolved[0].run_id, "seq_len")
    assert claim is not None and claim.status == "assumed"
    assert claim.value == "8192" and claim.source.startswith("recipe ")


def test_ledger_is_extensible_and_serialisable() -> None:
    ledger = Ledger((Claim("runs[0]", "model", "x", "declared", "cmax.toml"),))
    cite = Citation("audit.json", None, "other-cluster", "cluster.name")
    more = ledger.added(Claim("cluster", "cluster", "a", "contradicted", "cmax.toml",
                              against=(cite,)))
    assert len(more) == 2 and more.get("cluster", "cluster") is not None
    assert more.as_json()[1]["against"][0]["where"] == "cluster.name"
    replaced = more.added(Claim("runs[0]", "model", "y", "corroborated", "the log"))
    assert [c.value for c in replaced.of("runs[0]")] == ["y"]


def test_release_of() -> None:
    assert release_of("nvcr.io#nvidia/nemo:25.04.01") == "25.04.01"
    assert release_of("nvcr.io/nvidia/nemo:24.09") == "24.09"
    assert release_of("nemo2") is None


def test_case_carries_the_ledger_after_plain_evidence(tmp_path: Path) -> None:
    ev: Evidence = HonestBundle().ingest(tmp_path)
    case = resolve(ev, FakeReference())
    runs = {r.run_id for r in case.resolved}
    assert len([c for c in case.claims if c.subject in runs]) == 8 * len(case.resolved)
    # and the bundle's own claims (cmax/resolve/bundle_claims.py): its manifest states no [pricing]
    assert {c.subject for c in case.claims} - runs == {"cluster", "reliability"}
