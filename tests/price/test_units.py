"""The quote-unit check: a $/GPU-hour figure outside the GPU's published band is an error."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cmax.errors import ManifestError
from cmax.pipeline import load
from cmax.price.units import check_quote_unit
from cmax.reference import load_reference
from tests.paths import SAMPLES
from tests.score.score_fakes import manifest

ECON = {"price_bands": {"h100-sxm": {"low": 0.52, "high": 14.90, "source": "test band"}}}


def _check(quoted: float, gpu: str = "h100-sxm") -> None:
    m = manifest(pricing={"usd_per_gpu_hour": quoted, "term_months": 12})
    check_quote_unit(m, ECON, gpu, source="test/cmax.toml")


def test_per_node_hour_quote_names_the_node_and_the_fix() -> None:
    with pytest.raises(ManifestError) as err:
        _check(16.80)
    text = str(err.value)
    assert "pricing.usd_per_gpu_hour" in text and "above the dearest" in text
    assert "per-node-hour price (8 GPUs per node): $16.8 ÷ 8 = $2.1/GPU-hour" in text
    assert "usd_per_gpu_hour = 2.1" in text and "test band" in text


def test_a_per_gpu_price_divided_again_or_a_missing_digit() -> None:
    with pytest.raises(ManifestError) as err:
        _check(0.2625)
    text = str(err.value)
    assert "below the cheapest" in text
    assert "divided by the node's 8 GPUs again: $0.2625 × 8 = $2.1/GPU-hour" in text
    assert "a digit missing" in text


def test_a_day_price_and_the_manifest_bound_for_month_prices() -> None:
    day = re.escape("per-GPU-day price: $50.4 ÷ 24 = $2.1/GPU-hour")
    with pytest.raises(ManifestError, match=day):
        _check(50.40)
    # a month figure ($1,533) is over the manifest's own bound, whose message names the units
    with pytest.raises(ManifestError, match="÷ 730"):
        manifest(pricing={"usd_per_gpu_hour": 1533.0})


def test_quotes_inside_the_band_and_gpus_without_one_pass() -> None:
    for quoted in (0.52, 1.95, 2.25, 2.45, 14.90):
        _check(quoted)
    _check(40.0, gpu="gb200")  # no band for this GPU in ECON: only the manifest bounds apply


def test_the_shipped_band_rejects_a_node_hour_quote_in_a_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLES / "borealis-cloud", bundle)
    toml = bundle / "cmax.toml"
    toml.write_text(toml.read_text().replace("usd_per_gpu_hour = 2.25",
                                             "usd_per_gpu_hour = 18.00"))
    with pytest.raises(ManifestError, match=r"per-node-hour price .* = \$2.25/GPU-hour"), \
            load(bundle):
        pass


def test_the_shipped_bands_hold_every_sample_quote() -> None:
    ref = load_reference("latest")
    bands = ref.economics["price_bands"]
    assert {"h100-sxm", "h200", "b200", "gb200", "b300", "gb300"} <= set(bands)
    for band in bands.values():
        assert 0 < band["low"] < band["high"] and band["source"]


@pytest.mark.parametrize(("gpu", "per_gpu"), [("gb200", 4.54), ("b300", 5.00), ("gb300", 6.25)])
def test_the_shipped_blackwell_bands_catch_a_tray_hour_quote(gpu: str, per_gpu: float) -> None:
    """A 4-GPU NVL72 tray's hourly price typed as $/GPU-hour is named, with the figure to state."""
    econ = load_reference("latest").economics
    system = {"gpu": gpu, "nodes": 18, "gpus_per_node": 4, "interconnect": "infiniband-ndr-4x400"}
    m = manifest(system=system, pricing={"usd_per_gpu_hour": per_gpu * 4 * 2, "term_months": 12})
    with pytest.raises(ManifestError, match=r"per-node-hour price \(4 GPUs per node\)") as err:
        check_quote_unit(m, econ, gpu, source="test/cmax.toml")
    assert f"= ${per_gpu * 2:.4g}/GPU-hour" in str(err.value)
    ok = manifest(system=system, pricing={"usd_per_gpu_hour": per_gpu, "term_months": 12})
    check_quote_unit(ok, econ, gpu, source="test/cmax.toml")
