"""The one reference adapter: misses become None, bugs propagate."""

from __future__ import annotations

import pytest

from cmax.errors import CmaxError, NotInCatalogue
from cmax.reference import load_reference
from cmax.reference.view import RefView, market_price, num
from tests.fakes import FakeReference


def test_unknown_ids_are_none_not_errors() -> None:
    ref = RefView(FakeReference())
    assert ref.peak_tflops("h100-sxm", "bf16") == 989.0
    assert ref.peak_tflops("tpu-v9", "bf16") is None
    assert ref.gpu_id("tpu-v9") is None and ref.gpu_id("h100-sxm") == "h100-sxm"
    assert ref.flops_per_sample("llama3.1-405b", 8192) == pytest.approx(2.17e16)
    assert ref.flops_per_sample("no-such-model", 8192) is None
    assert ref.match_baseline("llama3.1-405b", "h100-sxm", "bf16", 512)["gbs"] == 256  # type: ignore[index]
    assert ref.match_baseline("llama3.1-405b", "h100-sxm", "fp4", 512) is None


def test_a_bug_in_the_reference_is_not_swallowed() -> None:
    class Broken(FakeReference):
        def peak_tflops(self, gpu: str, precision: str) -> float:
            raise TypeError("a bug, not a miss")

    with pytest.raises(TypeError):
        RefView(Broken()).peak_tflops("h100-sxm", "bf16")


@pytest.mark.parametrize("bug", [AttributeError("'dict' object has no attribute 'gbs'"),
                                 KeyError("gbs"), ValueError("bad row"),
                                 CmaxError("a user error is not a catalogue miss")])
def test_only_a_typed_catalogue_miss_is_absorbed(bug: Exception) -> None:
    """An AttributeError inside match_baseline once turned a Gold cluster Silver, silently:
    every exception but NotInCatalogue propagates."""
    class Broken(FakeReference):
        def match_baseline(self, *args: object, **kwargs: object) -> None:
            raise bug

    with pytest.raises(type(bug)):
        RefView(Broken()).match_baseline("llama3.1-405b", "h100-sxm", "bf16", 512)


def test_the_real_reference_raises_the_typed_miss() -> None:
    real = load_reference("latest")
    for miss in (lambda: real.gpu("tpu-v9"), lambda: real.resolve_workload("no-such-model"),
                 lambda: real.peak_tflops("h100-sxm", "int3")):
        with pytest.raises(NotInCatalogue):
            miss()


def test_the_real_reference_satisfies_the_adapter() -> None:
    ref = RefView(load_reference("latest"))
    assert ref.gpu_id("H100") == "h100-sxm"
    assert ref.flops_candidates("llama3.1-405b", 8192)["cmax"] > 0
    assert not ref.baselines_for("llama3.1-405b", "h100-sxm").is_empty()


def test_num_and_market_price() -> None:
    assert num({"a": "1.5"}, "a") == 1.5
    assert num({"a": float("nan")}, "a") is None and num({"a": True}, "a") is None
    econ = {"market_usd_per_gpu_hour": {"h100-sxm": 2.0}, "market_source": "test"}
    assert market_price(FakeReference(economics=econ), "h100-sxm") == (2.0, "test")
    assert market_price(FakeReference(), "h100-sxm") == (None, None)
