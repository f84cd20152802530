"""GPU facts have one home, reference/gpus.toml: every list a stage uses is read from it, and
every GPU any reference table names is in it."""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

import pytest

from cmax.errors import ReferenceDataError
from cmax.reference import load_reference
from cmax.reference.gpus import (
    families,
    gpu_family,
    gpus_per_node,
    rack_scale_families,
    read_families,
)
from tests.paths import REFERENCE


@pytest.mark.parametrize(("name", "family"), [
    ("NVIDIA H100-SXM5-80GB", "h100"), ("h100-sxm", "h100"), ("NVIDIA H100-PCIe-80GB", "h100-pcie"),
    ("NVIDIA H100 NVL", "h100-nvl"), ("NVIDIA H100 80GB HBM3", "h100"),
    ("NVIDIA Blackwell GPU (GB200)", "gb200"), ("NVIDIA B200-SXM-180GB", "b200"),
    ("128xNVIDIA GB200", "gb200"), ("64xND_H200_v5", "h200"), ("8xH100", "h100"),
    ("NVIDIA H200-NVL-141GB", "h200-nvl"), ("NVIDIA GH200 480GB", "gh200"),
    ("NVIDIA H20", "h20"), ("NVIDIA L40S", "l40s"), ("AMD Instinct MI300X", "mi300x"),
    ("TPU-v5p", "tpuv5p"), ("TPU-Trillium", "tpuv6e"), ("Intel Gaudi 3", "gaudi3"),
    ("NVIDIA DGX H100 with NVLink", "h100"), ("a mystery chip", None), ("", None),
])
def test_gpu_family(name: str, family: str | None) -> None:
    assert gpu_family(name) == family


def test_the_lists_stages_read_come_from_the_file() -> None:
    data = tomllib.loads((REFERENCE / "gpus.toml").read_text(encoding="utf-8"))
    catalogue = data["gpus"]
    assert {f.catalogue_id for f in families() if f.catalogue_id} == set(catalogue)
    per_node = gpus_per_node()
    for gid, raw in catalogue.items():
        assert per_node.get(raw["family"]) == raw.get("gpus_per_node"), gid
    assert per_node["a100"] == 8 and per_node["gb200"] == 4
    assert set(rack_scale_families()) == {"gb200", "gb300"}
    # the llmb-run intake and the NVL72 notes read these, not lists of their own
    from cmax.submission.intake.flags import GPUS_PER_NODE
    assert per_node == GPUS_PER_NODE
    for entry in [*catalogue.values(), *data["families"].values()]:
        assert entry["source"], entry["name"]


def test_every_gpu_a_reference_table_names_is_in_the_file() -> None:
    ref = load_reference("latest")
    known = {f.catalogue_id for f in families() if f.catalogue_id}
    with (REFERENCE / "inference.csv").open(encoding="utf-8") as fh:
        serving = {r["gpu"] for r in csv.DictReader(fh)}
    named: dict[str, set[str]] = {
        "baselines.csv": set(ref.baselines["gpu"].unique().to_list()), "inference.csv": serving}
    network = tomllib.loads((REFERENCE / "network.toml").read_text(encoding="utf-8"))
    named["network.toml"] = {g for b in network["baselines"] for g in b.get("gpus", [])
                             if g != "*"}
    economics = tomllib.loads((REFERENCE / "economics.toml").read_text(encoding="utf-8"))
    named["economics.toml"] = set(economics["system_power"]) | set(economics["price_bands"])
    for table, gpus in named.items():
        assert gpus and gpus <= known, f"{table} names {sorted(gpus - known)}, not in gpus.toml"
    exemplar = tomllib.loads((REFERENCE / "exemplar.toml").read_text(encoding="utf-8"))
    suite_gpus = {g for r in exemplar["releases"].values() for g in r["suites"]}
    assert {gpu_family(g) for g in suite_gpus} <= {f.id for f in families()}
    # MLPerf system accelerators are printed names: each must read as a known family
    with (REFERENCE / "mlperf_nvidia.csv").open(encoding="utf-8") as fh:
        accelerators = {r["accelerator"] for r in csv.DictReader(fh)}
    assert accelerators and all(gpu_family(a) for a in accelerators), accelerators


def test_a_bad_entry_names_its_field(tmp_path: Path) -> None:
    bad = tmp_path / "gpus.toml"
    bad.write_text('[gpus.x]\nfamily = "X 1"\n', encoding="utf-8")
    with pytest.raises(ReferenceDataError, match="family"):
        read_families(bad)
    bad.write_text('[families.a]\ngpus_per_node = 0\n', encoding="utf-8")
    with pytest.raises(ReferenceDataError, match="gpus_per_node"):
        read_families(bad)
    bad.write_text('[families.a]\n[gpus.b]\nfamily = "a"\n', encoding="utf-8")
    with pytest.raises(ReferenceDataError, match="named twice: a"):
        read_families(bad)
