"""`cmax demo` end to end on the shipped samples: the skeleton's acceptance test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.scorecard import TIERS


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("demo")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["demo", "-o", str(out), "--format", "json"])
    assert code == 0
    return out, json.loads(buf.getvalue())


def test_demo_writes_every_report(demo: tuple[Path, dict[str, object]]) -> None:
    out, result = demo
    names = {p.name for p in out.iterdir()}
    assert "leaderboard.pdf" in names and "leaderboard.html" in names
    pdfs = [n for n in names if n.endswith(".scorecard.pdf")]
    briefs = [n for n in names if n.endswith(".brief.pdf")]
    # three H100 offers, a GB200 NVL72 and an H200 serving cluster
    assert len(pdfs) == 5 and len(briefs) == 5
    for name in names:
        if name.endswith(".pdf"):
            assert (out / name).read_bytes().startswith(b"%PDF-")
    files = result["files"]
    assert isinstance(files, list) and all(Path(f).exists() for f in files)


def test_demo_ranks_the_providers_by_quality(demo: tuple[Path, dict[str, object]]) -> None:
    _, result = demo
    providers = {p["provider"]: p for p in result["providers"]}  # type: ignore[attr-defined]
    aurora, borealis, cinder = (providers["Aurora Compute"], providers["Borealis Cloud"],
                                providers["Cinder GPU"])
    order = list(TIERS)
    assert aurora["exemplar_pass"] is True
    assert borealis["exemplar_pass"] is False
    assert order.index(aurora["tier"]) < order.index(borealis["tier"])
    assert order.index(aurora["tier"]) < order.index(cinder["tier"])
    # the ~10 % slower provider should be advised to pay materially less than it quotes
    assert borealis["ask_usd_per_gpu_hour"] < 2.25 * 0.95


def test_demo_rates_the_serving_sample(demo: tuple[Path, dict[str, object]]) -> None:
    """Halcyon Serve (H200, serving results only) is rated and priced on its serving ratio:
    97.3 % and 97.2 % of TensorRT-LLM's published per-GPU figures."""
    out, result = demo
    providers = {p["provider"]: p for p in result["providers"]}  # type: ignore[attr-defined]
    halcyon = providers["Halcyon Serve"]
    # no training suite: not evaluated (null), never passed, never failed
    assert halcyon["exemplar_pass"] is None and halcyon["exemplar_state"] == "not_evaluated"
    assert 3.40 * 0.96 < halcyon["ask_usd_per_gpu_hour"] < 3.40
    card = json.loads((out / "halcyon-serve-halcyon-h200-serve.scorecard.json").read_text())
    verdicts = [r["verdict"] for r in card["inference"]]
    # the DeepSeek-R1 sweep on InferenceX's H200 curve: CI 0.949-0.964 straddles the bar
    assert verdicts == ["pass", "pass", "inconclusive"]


def test_sample_reports_are_short_enough_to_act_on(demo: tuple[Path, dict[str, object]]) -> None:
    """Issue 15: a sample scorecard is at most 8 pages, a brief at most 2; value is reported."""
    from pypdf import PdfReader

    out, result = demo
    for pdf in sorted(out.glob("*.scorecard.pdf")):
        assert len(PdfReader(pdf).pages) <= 8, pdf.name
    for pdf in sorted(out.glob("*.brief.pdf")):
        assert len(PdfReader(pdf).pages) <= 2, pdf.name
    providers = result["providers"]
    assert isinstance(providers, list)
    assert all(p["usd_per_reference_gpu_hour"] is not None for p in providers)


def test_no_brief_turns_a_page_for_the_glossary_alone(
        demo: tuple[Path, dict[str, object]]) -> None:
    """Issue 30: Aurora's brief spilled only its glossary onto page 2, Borealis' and Cinder's
    the last rows of the value table; a brief fits one page in tighter type, or its second
    page holds more than the glossary, and the value table is never split."""
    from pypdf import PdfReader

    out, _ = demo
    pages = {pdf.name.split(".")[0]: [p.extract_text() for p in PdfReader(pdf).pages]
             for pdf in out.glob("*.brief.pdf")}
    assert len(pages["aurora-compute-aurora-h100-east"]) == 1
    value = "Value against the other clusters rated"
    for name, texts in pages.items():
        if len(texts) == 2:
            body = texts[1].split("TERMS USED HERE")[0]
            assert len(body.split()) > 40, name  # more than a running head before the terms
            if value in texts[0]:  # the table's heading and all its rows on one page
                assert "$ per reference" not in texts[1], name
    assert value in pages["borealis-cloud-borealis-h100-b"][1]


def test_demo_ranks_offers_across_gpu_generations_per_token(
        demo: tuple[Path, dict[str, object]]) -> None:
    """The GB200 NVL72 sample beside the H100 ones: ranked by $ per million training tokens on
    the workloads every offer ran (Llama 3.1 405B BF16 and FP8 at 512 GPUs, equal shares).
    Zenith: $4.20 / (423.606 tokens/s/GPU x 3600) x 1e6 / goodput 0.993128 = $2.7732 (BF16),
    $4.20 / (643.861 x 3600) x 1e6 / 0.993128 = $1.8245 (FP8): $2.2988 on the basket (goodput
    = interruptions 0.996378 x checkpoint time 0.996737, docs/scoring.md section 9); at the
    GB200 default 2600 W, 6.1378 and 4.0381 J/token: 5.0880, the least energy per token."""
    _, result = demo
    assert result["basket"] == {"llama3.1-405b:bf16": 0.5, "llama3.1-405b:fp8": 0.5}
    assert result["scales"] == {"llama3.1-405b:bf16": 512, "llama3.1-405b:fp8": 512}
    providers = {p["provider"]: p for p in result["providers"]}  # type: ignore[attr-defined]
    zenith = providers["Zenith Racks"]
    assert zenith["gpu"] == "gb200"
    assert zenith["usd_per_million_tokens"] == pytest.approx((2.7732 + 1.8245) / 2, abs=1e-4)
    assert zenith["joules_per_token"] == pytest.approx((6.1378 + 4.0381) / 2, abs=1e-4)
    assert zenith["joules_rank"] == 1
    assert zenith["joules_basis"] == "assumed (reference default power)"
    ranks = sorted((p["tokens_rank"], name) for name, p in providers.items()
                   if p["tokens_rank"] is not None)
    assert [name for _, name in ranks] == ["Cinder GPU", "Zenith Racks", "Aurora Compute",
                                           "Borealis Cloud"]
    # the cheapest per token is rated Underperforming: the ranking says so beside its price
    assert providers["Cinder GPU"]["decision"] == "do not sign without fixes"
    # the serving sample trains nothing: it has no training-token price to rank, and says why
    assert providers["Halcyon Serve"]["tokens_rank"] is None
    assert "output tokens on its scorecard" in providers["Halcyon Serve"]["tokens_unranked"]
