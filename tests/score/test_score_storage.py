"""Storage scored from evidence: each [[storage]] result against reference/storage.toml, or
shown and not rated with the reason; the checkpoint term of the price."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cmax.pipeline import load
from cmax.reference import load_reference
from cmax.reference.storage import checkpoint_share, checkpoint_what_if, parse_bandwidth
from cmax.reference.view import RefView
from cmax.resolve.case import resolve
from cmax.score.storage import storage_results
from cmax.scorecard import CheckpointCost, StorageResult
from tests.fakes import manifest_text
from tests.paths import DATA

STORAGE = DATA / "storage"
V1 = STORAGE / "mlperf_storage_v1.0"
V3 = STORAGE / "mlperf_storage_v3.0"
ALLUXIO = V3 / "Alluxio" / "training" / "unet3d" / "run" / "20260704_050040"
FARM = V3 / "FarmGPU" / "checkpointing" / "llama3-1t" / "20260724_174700"
NEBIUS = V3 / "Nebius" / "checkpointing" / "llama3-70b" / "20260714_121444"


def _score(tmp_path: Path, entries: list[tuple[Path, str]],
           edit: Callable[[dict[str, Any]], None] | None = None,
           extra: str = "") -> tuple[list[StorageResult], CheckpointCost | None]:
    """A bundle holding each source's folder (so the files beside a summary come along) at
    its path under tests/data/storage (the v<round> folder and the tool's result layout), with
    one [[storage]] entry per source."""
    toml = []
    for i, (source, fields) in enumerate(entries):
        folder = tmp_path / f"e{i}" / (source if source.is_dir() else source.parent
                                       ).relative_to(STORAGE)
        if source.is_dir():
            shutil.copytree(source, folder)
            result = folder / "summary.json"
            if edit is not None:
                data = json.loads(result.read_text())
                edit(data)
                result.write_text(json.dumps(data))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            result = folder / source.name
            shutil.copy(source, result)
        toml.append(f'[[storage]]\nresult = "{result.relative_to(tmp_path).as_posix()}"\n'
                    f"{fields}")
    (tmp_path / "cmax.toml").write_text(manifest_text("\n".join(toml) + extra))
    with load(tmp_path) as loaded:
        return storage_results(loaded.case, RefView(load_reference("latest")))


def test_v1_training_result_rated_against_its_closed_median(tmp_path: Path) -> None:
    """HPE's resnet50/h100 v1.0 run: 3,556 MiB/s against the median of 29 closed results."""
    [hpe], cost = _score(tmp_path, [(V1 / "HPE", "")])
    assert hpe.verdict == "rated" and hpe.unit == "MiB/s" and cost is None
    assert hpe.reference == 16162.1
    assert hpe.ratio == pytest.approx(3556.4502 / 16162.1)
    assert "29 results from 11 submitters" in str(hpe.reference_source)
    assert any("bar 90%" in d for d in hpe.detail)


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda d: d["metric"].update(train_au_mean_percentage=86.2,
                                  train_au_meet_expectation="fail"),
     "fails its own utilisation bar: mean AU 86.20% < 90%"),
    (lambda d: d.update(potential_caching=[1]), "potential page-cache hits"),
    (lambda d: d.update(data_size_per_host_GB=600.0),
     "dataset 600 GiB is below 5× the clients' memory (627 GiB)"),
])
def test_disqualified_training_results_are_shown_not_rated(
        tmp_path: Path, edit: Callable[[dict[str, Any]], None], reason: str) -> None:
    [hpe], _ = _score(tmp_path, [(V1 / "HPE", "")], edit)
    assert hpe.verdict == "not rated" and hpe.ratio is None
    assert reason in str(hpe.reason)
    assert hpe.measured == pytest.approx(3556.4502) and hpe.reference == 16162.1


def test_the_honest_v1_results_stay_rated(tmp_path: Path) -> None:
    """DDN passes the 5x rule only on MemTotal: 7,840 GiB ≥ 5 × 16 × 92.6 GiB (the misfilled
    host_memory_GB[0] × 16 would have asked 29,633 GiB); WEKA's a100 run has its own median."""
    ddn, weka = _score(tmp_path, [(V1 / "DDN", ""), (V1 / "WEKA", "")])[0]
    assert (ddn.verdict, weka.verdict) == ("rated", "rated")
    assert ddn.reference == 11934.7 and weka.reference == 12878.8


def test_a_v3_training_result_meets_only_a_v1_median(tmp_path: Path) -> None:
    """Alluxio's unet3d run emulated B200s with mlpstorage v3.0; the reference holds v1.0
    medians only: shown, not rated (the tool's version moves results)."""
    [alluxio], _ = _score(tmp_path, [(ALLUXIO, "")])
    assert alluxio.verdict == "not rated"
    assert "tool version v3.0: the reference median is v1.0's" in str(alluxio.reason)


def test_v3_checkpointing_saves_rated_per_model_at_the_full_process_count(
        tmp_path: Path) -> None:
    results, cost = _score(tmp_path, [(FARM, ""), (NEBIUS, "")])
    farm_save, farm_load, nebius_save, _ = results
    assert (farm_save.verdict, farm_load.verdict) == ("rated", "shown")
    assert farm_save.ratio == pytest.approx(169.67002 / 294.0)
    assert nebius_save.ratio == pytest.approx(19.45539 / 70.0)
    # the first rated checkpoint evidence prices checkpoint time: 15,427 GiB at 169.7 GiB/s
    assert cost is not None and cost.model == "llama3-1t"
    assert cost.save_s == pytest.approx(15426.589 / 169.67002)
    assert cost.share == pytest.approx(checkpoint_share(cost.save_s, 30.0))
    assert cost.ratio == pytest.approx((1 - cost.share) / (1 - cost.reference_share))
    assert cost.interval_basis.startswith("assumed")


def test_a_checkpoint_run_at_another_process_count_is_not_rated(tmp_path: Path) -> None:
    [save, _], cost = _score(tmp_path, [(NEBIUS, "")], lambda d: d.update(num_accelerators=8))
    assert save.verdict == "not rated" and "8 processes" in str(save.reason)
    assert cost is None


def test_checkpoint_lines_rated_per_gpu(tmp_path: Path) -> None:
    """Megatron saved a 70B checkpoint (911 GiB) in a median 24.95 s on 64 GPUs: 0.571 GiB/s
    per GPU against the v3.0 median's 70 ÷ 64 = 1.094."""
    results, cost = _score(tmp_path, [(STORAGE / "checkpoints" / "megatron_llama3.1-70b_ckpt.log",
                                       'model = "llama3.1-70b"\ngpus = 64\n')])
    [log] = results
    assert log.verdict == "rated" and log.unit == "GiB/s per GPU"
    save_s = (24.89513 + 25.01377) / 2
    assert log.measured == pytest.approx(911.0 / save_s / 64)
    assert log.ratio == pytest.approx(911.0 / save_s / 64 / (70.0 / 64))
    assert cost is not None and cost.save_s == pytest.approx(save_s)
    assert cost.reference_save_s == pytest.approx(911.0 / 70.0)


@pytest.mark.parametrize(("log", "fields", "reason"), [
    # the log states a world size of 64: a declared 32 would double the bandwidth per GPU
    ("megatron_llama3.1-70b_ckpt.log", 'model = "llama3.1-70b"\ngpus = 32\n',
     "cmax.toml says 32 GPUs; the log states 64"),
    # a log that states no world size: the count is the manifest's word only
    ("nemo2_llama3.1-8b_ckpt.log", 'model = "llama3.1-70b"\ngpus = 64\n',
     "the run's GPU count rests on cmax.toml alone"),
    # a size but no model: its bandwidth is shown beside no reference
    ("megatron_llama3.1-70b_ckpt.log", "gpus = 64\ncheckpoint_gib = 911.0\n",
     "no reference save bandwidth"),
])
def test_checkpoint_bandwidth_resting_on_declarations_is_not_rated(
        tmp_path: Path, log: str, fields: str, reason: str) -> None:
    [result], cost = _score(tmp_path, [(STORAGE / "checkpoints" / log, fields)])
    assert result.verdict in ("not rated", "shown") and result.ratio is None
    assert reason in str(result.reason) and cost is None


def test_checkpoint_lines_without_size_or_gpus_are_shown(tmp_path: Path) -> None:
    [log], cost = _score(tmp_path, [(STORAGE / "checkpoints" / "nemo2_llama3.1-8b_ckpt.log",
                                     "")])
    assert log.verdict == "shown" and "checkpoint size" in str(log.reason)
    assert log.measured == pytest.approx((4.389 + 4.402) / 2) and cost is None
    assert any("async finalisation" in d for d in log.detail)


def test_fio_is_rated_only_against_a_contract(tmp_path: Path) -> None:
    fio = STORAGE / "fio" / "fio3_randread_grouped.json"
    [shown], _ = _score(tmp_path / "a", [(fio, "")])
    assert shown.verdict == "shown" and "contracted_gib_s" in str(shown.reason)
    [rated], _ = _score(tmp_path / "b", [(fio, "contracted_gib_s = 2.0\n")])
    assert rated.verdict == "rated" and rated.ratio == pytest.approx((256 / 0.19 / 1024) / 2.0)


def test_a_result_keeps_its_storage_entry_whatever_its_id(tmp_path: Path) -> None:
    """The [[storage]] entry a row was read for is its ``entry``, not its id: rows relabelled
    away from ``storage[i]`` are still held to their own entry's contract."""
    fio = STORAGE / "fio" / "fio3_randread_grouped.json"
    for name in ("a.json", "b.json"):
        shutil.copy(fio, tmp_path / name)
    (tmp_path / "cmax.toml").write_text(manifest_text(
        '[[storage]]\nresult = "a.json"\n\n'
        '[[storage]]\nresult = "b.json"\ncontracted_gib_s = 2.0\n'))
    with load(tmp_path) as loaded:
        case = loaded.case
        relabelled = dataclasses.replace(case, storage=case.storage.with_columns(
            pl.format("fio-run-{}", pl.int_range(pl.len())).alias("run_id")))
        shown, rated = storage_results(relabelled, RefView(load_reference("latest")))[0]
    assert shown.verdict == "shown" and "contracted_gib_s" in str(shown.reason)
    assert rated.verdict == "rated" and rated.ratio == pytest.approx((256 / 0.19 / 1024) / 2.0)


def test_calc_checkpoint_arithmetic_of_the_issue() -> None:
    """A 405B checkpoint (5,288 GiB) every 30 min: 1.85% of wall time at the MLPerf Storage
    v3.0 median (156 GiB/s), 7.31% at 40 GB/s (37.25 GiB/s)."""
    ref = load_reference("latest").storage
    assert ref is not None
    median = checkpoint_what_if(ref, "llama3.1-405b", 30.0)
    assert median["save_s"] == pytest.approx(5288 / 156)
    assert median["share"] == pytest.approx(0.0185, abs=5e-5)
    slow = checkpoint_what_if(ref, "llama3.1-405b", 30.0,
                              bandwidth_gib_s=parse_bandwidth("40GB/s"))
    assert slow["bandwidth_gib_s"] == pytest.approx(40e9 / 2**30)
    assert slow["share"] == pytest.approx(0.0731, abs=5e-5)
    with pytest.raises(ValueError, match="not a bandwidth with a unit"):
        parse_bandwidth("40")


def test_the_gb200_sample_storage_evidence_moves_its_category_and_price(tmp_path: Path) -> None:
    """samples/zenith-nvl72 with and without its two [[storage]] entries (docs/scoring.md §9):
    storage goes from declarations only (53.3, unverified) to measured 42.1, and checkpoint
    time lowers the goodput ratio and the ask."""
    from cmax.pipeline import assess
    from tests.paths import SAMPLES

    with_storage = assess(SAMPLES / "zenith-nvl72")
    bare = tmp_path / "zenith"
    shutil.copytree(SAMPLES / "zenith-nvl72", bare)
    toml = (bare / "cmax.toml").read_text()
    (bare / "cmax.toml").write_text(toml[:toml.index("[[storage]]")]
                                    + toml[toml.index("[reliability]"):])
    without = assess(bare)

    def storage(card: Any) -> Any:
        return next(c for c in card.categories if c.name == "storage")

    assert (storage(without).score, storage(without).verified) == (pytest.approx(53.33, abs=0.01),
                                                                   False)
    assert (storage(with_storage).score, storage(with_storage).verified) == (
        pytest.approx(42.13, abs=0.01), True)
    assert [s.verdict for s in with_storage.storage] == ["rated", "rated", "shown"]
    assert with_storage.checkpoint is not None
    assert with_storage.checkpoint.ratio == pytest.approx(0.99674, abs=1e-5)
    assert with_storage.price is not None and without.price is not None
    assert (without.price.ask_usd_per_gpu_hour, with_storage.price.ask_usd_per_gpu_hour) == (
        4.11, 4.10)
    assert with_storage.price.goodput_ratio == pytest.approx(
        without.price.goodput_ratio * with_storage.checkpoint.ratio, abs=1e-6)
    assert "Goodput (interruptions and checkpoint time)" in [
        d.name for d in with_storage.price.drivers]
    assert with_storage.tier == without.tier == "Bronze"


def test_an_emulated_accelerator_only_cmax_toml_states_is_not_rated(tmp_path: Path) -> None:
    """The summary alone (no configs/overrides.yaml beside it) names no accelerator: declared
    a100, the run would meet the A100 median (12,879 MiB/s) instead of the H100's (16,162)."""
    summary = V1 / "HPE" / "summary.json"
    [declared], _ = _score(tmp_path / "a", [(summary, 'accelerator = "a100"\n')])
    assert declared.verdict == "not rated" and declared.declared == ["emulated accelerator"]
    assert "rests on cmax.toml alone" in str(declared.reason)
    [silent], _ = _score(tmp_path / "b", [(summary, "")])
    assert silent.verdict == "not rated"
    assert "the emulated accelerator is not stated" in str(silent.reason)


def test_a_declared_gpu_count_is_not_a_declared_accelerator(tmp_path: Path) -> None:
    """The emulated accelerator is matched by its column's exact name: a row whose entry
    filled only its GPUs (``accelerators``) keeps the accelerator its folder states and stays
    rated. No reader leaves a summary's process count null (``num_accelerators`` is required),
    so the row is the HPE summary's with that column emptied, resolved again."""
    summary = V1 / "HPE"
    folder = tmp_path / "e0" / summary.relative_to(STORAGE)
    shutil.copytree(summary, folder)
    (tmp_path / "cmax.toml").write_text(manifest_text(
        f'[[storage]]\nresult = "{(folder / "summary.json").relative_to(tmp_path).as_posix()}"'
        "\ngpus = 8\n"))
    reference = load_reference("latest")
    with load(tmp_path) as loaded:
        case = loaded.case
    silent = dataclasses.replace(
        case, storage=case.storage.with_columns(pl.lit(None, dtype=pl.Int64).alias("accelerators")))
    again = resolve(silent, reference)
    [result], _ = storage_results(again, RefView(reference))
    assert result.declared == ["GPUs"]
    assert result.verdict == "rated" and result.reference == 16162.1
    [row] = again.with_declared("storage").iter_rows(named=True)
    assert row["declared"] == ["accelerators"] and row["accelerator"] == "h100"
