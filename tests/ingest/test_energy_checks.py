"""Telemetry that cannot stand for the run gives no J/token: too few GPUs covered, flat-lined
series, power a loaded GPU never draws (cmax/ingest/energy.py)."""

from __future__ import annotations

import random

import polars as pl

from cmax.ingest.energy import implausible_power, telemetry_energy
from cmax.ingest.evidence import POWER_SCHEMA


def _power(gpus: int, *, watts: float = 650.0, flat: int = 0, samples: int = 20) -> pl.DataFrame:
    """``gpus`` GPUs (8 per host) sampled each second, each with its own 5 W of noise; the
    first ``flat`` read one value."""
    rng = random.Random(11)
    rows = [{"host": f"node-{i // 8:03d}", "gpu": i % 8, "time_s": 100.0 + t,
             "power_w": watts if i < flat else round(watts + rng.gauss(0, 5), 1),
             "source_file": "power.json", "line": None}
            for i in range(gpus) for t in range(samples)]
    return pl.DataFrame(rows, schema=POWER_SCHEMA)


def _energy(power: pl.DataFrame, gpus: int = 512) -> dict[str, object]:
    out = telemetry_energy(power, 100.0, 119.0, num_gpus=gpus, tokens_per_s_per_gpu=1000.0)
    assert out is not None
    return out


def _checks(out: dict[str, object]) -> list[str]:
    checks = out["telemetry_checks"]
    assert isinstance(checks, list)
    return [str(c) for c in checks]


def test_sixteen_of_512_gpus_give_no_figure() -> None:
    out = _energy(_power(16))
    assert "joules_per_token" not in out and out["power_w_per_gpu"] is not None
    assert any("J/token withheld: 16 of the run's 512 GPUs (3%)" in c for c in _checks(out))


def test_a_node_short_of_the_whole_run_still_gives_one() -> None:
    """504 of 512 GPUs (one node's exporter down): 98 %, the figure stands, the gap is named."""
    out = _energy(_power(504))
    assert out["joules_per_token"] is not None
    assert any("covers 504 GPU(s) of the run's 512" in c for c in _checks(out))


def test_flat_lined_gpus_are_not_coverage() -> None:
    """480 of 512 GPUs sampled, 64 of them one value throughout: 416 (81 %) counted."""
    out = _energy(_power(480, flat=64))
    assert "joules_per_token" not in out
    checks = " ".join(_checks(out))
    assert "64 GPU(s) read one value at every sample" in checks and "416 of" in checks


def test_power_implausible_for_the_runs_load() -> None:
    assert implausible_power(120.0, 700.0, 45.0) is not None  # 17 % of TDP at 45 % MFU
    assert implausible_power(450.0, 700.0, 45.0) is None
    assert implausible_power(120.0, 700.0, 8.0) is None  # a lightly loaded run may idle
    assert implausible_power(120.0, None, 45.0) is None  # no TDP in the reference: no claim


def test_copied_gpus_are_not_coverage() -> None:
    """512 GPUs sampled, 64 of them another GPU's series re-jittered by 0.5 W (a tenth of a
    GPU's own noise): 448 (88 %) counted, below the 90 % a figure needs."""
    power = _power(512)
    rng = random.Random(3)
    copies = (power.filter(pl.col("host") < "node-008")
              .with_columns(pl.col("host").str.replace("node-00", "node-05"),
                            (pl.col("power_w") + pl.Series(
                                [rng.gauss(0, 0.5) for _ in range(64 * 20)])).round(1)))
    power = pl.concat([power.filter(pl.col("host") < "node-050"), copies,
                       power.filter(pl.col("host") >= "node-058")])
    assert power.select(pl.struct("host", "gpu").n_unique()).item() == 512
    checks = " ".join(_checks(out := _energy(power)))
    assert "joules_per_token" not in out
    assert "64 GPU series copy another GPU's (e.g. node-050 GPU 0 is node-000 GPU 0's, " \
           "re-jittered): not counted" in checks and "448 of the run's 512" in checks
