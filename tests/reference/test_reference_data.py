"""The reference release: every seed row present under canonical ids, sources, errata,
validation at load, the "latest" rule and the non-performance baselines."""

from __future__ import annotations

import csv
import datetime as dt
import re
import shutil
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from cmax.errors import CmaxError, ReferenceDataError
from cmax.reference import GpuSpec, Reference, clear_cache, load_reference
from cmax.reference.checksum import GUARDED_FILES, write_checksums
from cmax.resources import data_dir
from tests.paths import REPO, latest_release

SEED = REPO / "reference" / "seed" / "dgxc_reference.csv"


@pytest.fixture(scope="module")
def ref() -> Reference:
    return load_reference("latest")


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "reference"
    shutil.copytree(data_dir("reference"), target)
    return target


def test_release_id_and_cache(ref: Reference) -> None:
    assert ref.release == latest_release()
    assert load_reference(latest_release()) is ref  # pinned id and "latest" share the cached load
    assert load_reference() is ref


def test_unknown_release_lists_known_ones() -> None:
    known = re.escape(latest_release())
    with pytest.raises(CmaxError, match=rf"unknown reference release '1999\.1\.0'.*{known}"):
        load_reference("1999.1.0")


def test_every_seed_row_is_present(ref: Reference) -> None:
    df = ref.baselines
    assert df.height == 643
    assert df["baseline_id"].n_unique() == 643
    by_gpu = Counter(df["gpu"].to_list())
    assert by_gpu == {"h100-sxm": 356, "gb200": 131, "gb300": 91, "b200": 36, "b300": 29}
    by_repo = Counter(df["source_repo"].to_list())
    assert by_repo == {"NVIDIA/dgxc-benchmarking": 332, "NVIDIA-NeMo/Megatron-Bridge": 293,
                       "NVIDIA/NeMo": 18}


def test_seed_figures_copied_as_printed(ref: Reference) -> None:
    with SEED.open(newline="", encoding="utf-8") as fh:
        seed = list(csv.DictReader(fh))
    ours = Counter(
        (r["source_model"], r["source_repo"], r["num_gpus"], r["step_time_s"],
         r["tokens_per_s_per_gpu"], r["model_tflops_per_gpu"], r["mfu_pct"])
        for r in ref.baselines.to_dicts()
    )

    def num(text: str) -> float | None:
        return float(text) if text else None

    theirs = Counter(
        (r["model"], r["source_repo"], int(r["num_gpus"]), num(r["step_time_s"]),
         num(r["tokens_per_s_per_gpu"]), num(r["model_tflops_per_gpu"]), num(r["mfu"]))
        for r in seed
    )
    assert ours == theirs


def test_canonical_ids(ref: Reference) -> None:
    df = ref.baselines
    assert set(df["precision"].unique()) == {"bf16", "fp8", "nvfp4"}
    assert set(df["gpu"].unique()) <= {"h100-sxm", "h200", "b200", "b300", "gb200", "gb300"}
    models = set(df["model"].unique())
    for wanted in ("gpt3-175b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "nemotron4-15b",
                   "nemotron4-340b", "grok1-314b", "deepseek-v3", "llama4-maverick",
                   "nemotronh-56b"):
        assert wanted in models
    assert all(m in ref.models for m in models)
    assert "mixtral-8x7b" in ref.models  # architecture catalogued even without rows
    assert set(df["task"].unique()) == {"pretrain", "sft", "lora"}
    lora = df.filter(pl.col("task") == "lora")
    assert set(lora["workload"].unique()) >= {"llama3.1-70b-lora", "llama3.1-8b-lora"}


def test_every_row_cites_its_original_source(ref: Reference) -> None:
    df = ref.baselines
    assert df["source"].str.contains(r"^(NVIDIA|NVIDIA-NeMo)/[\w.-]+:\S.* @ \S").all()
    assert df["source_date"].dtype == pl.Date
    dgxc = df.filter(pl.col("source_repo") == "NVIDIA/dgxc-benchmarking")
    assert dgxc["recipe_release"].str.contains(r"^v2[45]\.\d\d").all()
    others = df.filter(pl.col("source_repo") != "NVIDIA/dgxc-benchmarking")
    assert others["recipe_release"].is_null().all()
    assert others["source"].str.contains(r"@ (commit|branch) ").all()


def test_known_errata_flagged_not_fixed(ref: Reference) -> None:
    grok = ref.baseline("dgxc-v25.05-grok1-314b-gb200-bf16-512")
    assert grok["tokens_per_s_per_gpu"] == 1118.5  # as printed (572679 / 512)
    assert "disagrees with seq x GBS / step time" in grok["erratum"]
    llama4 = ref.baseline("dgxc-v25.05-llama4-maverick-gb200-bf16-128")
    assert llama4["mfu_pct"] == 18.71
    assert "FP8 peak" in llama4["erratum"]
    big = ref.baseline("dgxc-v25.05.01-llama3.1-405b-h100-sxm-bf16-512")
    assert "16 query groups" in big["erratum"] and big["mfu_pct"] == 55.34
    proxy = ref.baseline("dgxc-v25.02-llama3.1-405b-h100-sxm-bf16-96-proxy21l")
    assert proxy["proxy"] and proxy["layers"] == 21 and proxy["step_time_s"] == 8.87
    clean = ref.baseline("dgxc-v25.05.02-grok1-314b-h100-sxm-fp8-512")
    assert clean["erratum"] is None and clean["step_time_s"] == 13.433


def test_gpu_catalogue_and_aliases(ref: Reference) -> None:
    for alias in ("h100", "H100", "h100-sxm5", "H100-SXM", " h100_sxm "):
        assert ref.gpu(alias).id == "h100-sxm"
    spec = ref.gpu("gb300")
    assert isinstance(spec, GpuSpec)
    assert spec.peak_tflops == {"bf16": 2450.0, "fp16": 2450.0, "fp8": 4900.0, "nvfp4": 14700.0}
    assert ref.peak_tflops("h100", "FP8") == 1979.0
    assert ref.peak_tflops("H100", "BF16") == 989.0
    assert ref.peak_tflops("h100", "nvfp4") is None  # Hopper has no FP4 tensor cores
    assert ref.peak_tflops("b300", "mxfp8") == 4500.0
    for gid in ("h100-sxm", "h200", "b200", "b300", "gb200", "gb300"):
        g = ref.gpu(gid)
        assert g.memory_gb > 0 and g.hbm_tbps > 0 and g.tdp_w > 0 and g.source
    with pytest.raises(ReferenceDataError, match=r"unknown GPU 'a100'.*h100-sxm"):
        ref.gpu("a100")


def test_models(ref: Reference) -> None:
    assert ref.has_model("llama3.1-70b") and ref.has_model("LLAMA3_70B")
    assert ref.has_model("llama3-70b-lora") and ref.has_model("nemotron3-super")
    assert not ref.has_model("gpt5")
    assert ref.resolve_workload("Llama3-70B-SFT") == ("llama3.1-70b-sft", "llama3.1-70b", "sft")
    # no public architecture: FLOPs/token implied by the source's own TFLOP/s and tokens/s
    super_rows = ref.baselines.filter(pl.col("model") == "nemotron3-super")
    seq = int(super_rows["seq_len"][0])
    implied = ref.model_flops_per_token("nemotron3-super", seq)
    assert 1e9 < implied < 1e12
    with pytest.raises(CmaxError, match="no public architecture"):
        ref.model_flops_per_token("nemotron3-super", 123)


# --- the "latest" rule -------------------------------------------------------------------


def test_latest_prefers_revised_baseline(ref: Reference) -> None:
    row = ref.match_baseline("grok1-314b", "H100", "FP8", 512)
    assert row is not None
    assert row["baseline_id"] == "dgxc-v25.05.02-grok1-314b-h100-sxm-fp8-512"
    assert row["recipe_release"] == "v25.05.02" and row["source_date"] == dt.date(2025, 6, 10)


def test_latest_newest_container_and_filters(ref: Reference) -> None:
    latest = ref.match_baseline("llama3.1-70b", "h100-sxm", "fp8", 64)
    assert latest is not None
    assert latest["baseline_id"] == "mbridge-26.04.01-llama3.1-70b-h100-sxm-fp8-64"
    by_gbs = ref.match_baseline("llama3.1-70b", "h100-sxm", "fp8", 64, gbs=128)
    assert by_gbs is not None
    assert by_gbs["baseline_id"] == "mbridge-25.11-llama3.1-70b-h100-sxm-fp8-cs-64"
    assert ref.match_baseline("llama3.1-70b", "h100-sxm", "fp8", 64, gbs=7) is None
    assert ref.match_baseline("llama3.1-70b", "h100-sxm", "fp8", 65) is None  # exact scale
    dgxc = ref.match_baseline("llama3.1-70b", "h100", "fp8", 64, framework="nemo2")
    assert dgxc is not None and dgxc["baseline_id"] == "dgxc-v25.04-llama3.1-70b-h100-sxm-fp8-64"


def test_latest_never_matches_proxy_and_prefers_primary(ref: Reference) -> None:
    # the only 32-GPU Llama 3.1 405B rows are reduced-layer proxies
    assert not ref.select(workload="llama3.1-405b", gpu="h100", num_gpus=32).is_empty()
    assert ref.match_baseline("llama3.1-405b", "h100", "bf16", 32) is None
    row = ref.match_baseline("deepseek-v3", "h100", "fp8", 1024)
    assert row is not None and row["alternate"] is False
    assert row["baseline_id"] == "mbridge-25.09-deepseek-v3-h100-sxm-fp8-1024"


def test_sample_bundle_workloads_have_baselines(ref: Reference) -> None:
    for workload, precision, gbs in (("llama3.1-405b", "bf16", 256),
                                     ("llama3.1-405b", "fp8", 256), ("grok1-314b", "fp8", 1024)):
        row = ref.match_baseline(workload, "h100-sxm", precision, 512, gbs=gbs, seq_len=8192)
        assert row is not None and row["step_time_s"] > 0


# --- validation at load ------------------------------------------------------------------


def test_checksum_mismatch_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "baselines.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("13.433", "12.000", 1),
                    encoding="utf-8")
    clear_cache()
    with pytest.raises(ReferenceDataError) as info:
        load_reference(root=root)
    text = info.value.one_line()
    assert "baselines.csv" in text and "modified" in text
    assert "python -m cmax.reference.checksum --write" in text
    clear_cache()


def test_schema_violation_names_row_and_column(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "baselines.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[5][rows[0].index("gpu")] = "h999"  # data row 5 = file line 6
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    write_checksums(root)
    clear_cache()
    with pytest.raises(ReferenceDataError) as info:
        load_reference(root=root)
    assert info.value.line == 6 and info.value.field == "gpu"
    clear_cache()


def test_a_broken_reference_toml_is_reference_data_error_with_its_line(tmp_path: Path) -> None:
    """The TOML reader shared with the manifest raises a plain CmaxError; a shipped file that
    does not parse is the reference data's fault, so it arrives as ReferenceDataError with the
    reader's message and line kept."""
    root = _copy(tmp_path)
    path = root / "gpus.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n[broken\n", encoding="utf-8")
    write_checksums(root)
    clear_cache()
    with pytest.raises(ReferenceDataError) as info:
        load_reference(root=root)
    assert info.value.file == str(path) and "invalid TOML" in info.value.message
    assert info.value.line == len(path.read_text(encoding="utf-8").splitlines())
    clear_cache()


def test_a_missing_reference_file_says_to_reinstall(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "release.toml").unlink()
    with pytest.raises(ReferenceDataError) as info:
        load_reference(root=root)
    assert info.value.fix is not None and "reinstall" in info.value.fix


def test_guarded_files_exclude_rubric() -> None:
    assert "rubric.toml" not in GUARDED_FILES
    assert "baselines.csv" in GUARDED_FILES


# --- network, reliability, MLPerf, economics -----------------------------------------------


def test_network_baselines(ref: Reference) -> None:
    nvls = ref.network_baseline(None, "all_reduce", 1)
    assert nvls is not None and nvls["busbw_gbps"] == 480.0 and nvls["fabric"] == "nvlink4-nvls"
    assert nvls["message_bytes"] == 8 * 2**30
    ring = ref.network_baseline("infiniband-ndr-8x400", "all_reduce_perf", 16)
    assert ring is not None and ring["busbw_gbps"] == 368.0 and ring["kind"] == "derived"
    assert "nccl-tests issue #290" in ring["source"]
    assert ref.network_baseline(None, "all_gather", 1)["busbw_gbps"] == 370.0  # type: ignore[index]
    assert ref.network_baseline(None, "all_reduce", 4) is None  # multi-node needs a fabric
    assert ref.network_baseline("roce-2x100", "all_reduce", 4) is None


def test_reliability_baseline(ref: Reference) -> None:
    r = ref.reliability_baseline()
    assert (r["interruptions"], r["gpus"], r["days"]) == (419, 16384, 54)
    assert r["per_1000_gpu_days"] == pytest.approx(419 / (16384 * 54) * 1000)
    assert r["mtbf_gpu_hours"] == pytest.approx(16384 * 54 * 24 / 419)  # 50,677 GPU-hours
    assert round(r["mtbf_gpu_hours"]) == 50677
    assert r["per_1000_node_days"] == pytest.approx(3.789, abs=1e-3)
    assert sum(c["count"] for c in r["categories"]) == 419
    assert "arXiv:2407.21783" in r["source"]


def test_mlperf_and_economics(ref: Reference) -> None:
    eco = ref.economics
    assert eco["household_kwh_per_year"] == 10791
    assert "eia.gov" in eco["household_source"]
    assert ref.default_watts_per_gpu("h100") == pytest.approx(10200 / 8 * 1.56)
    # a GB200 NVL72 rack's 120 kW over its 72 GPUs, x PUE 1.56 = 2600 W all-in per GPU
    assert ref.default_watts_per_gpu("gb200") == pytest.approx(120000 / 72 * 1.56)
    assert ref.default_watts_per_gpu("gb300") is None


def test_build_script_reproduces_the_release(tmp_path: Path) -> None:
    """tools/build_reference.py regenerates baselines.csv byte for byte from the seed."""
    import importlib.util
    import sys

    root = _copy(tmp_path)
    (root / "baselines.csv").unlink()
    script = REPO / "tools" / "build_reference.py"
    spec = importlib.util.spec_from_file_location("build_reference", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_reference"] = module  # dataclasses look their module up here
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("build_reference", None)
    assert module.main([str(SEED), "--out", str(root)]) == 0
    shipped = data_dir("reference")
    assert (root / "baselines.csv").read_bytes() == (shipped / "baselines.csv").read_bytes()
    assert (root / "SHA256SUMS").read_bytes() == (shipped / "SHA256SUMS").read_bytes()
