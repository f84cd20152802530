"""GPU power telemetry (nvidia-smi CSV): read as the ``power`` table, malformed rows refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmax.errors import EvidenceError
from cmax.ingest.detect import detect_format
from cmax.ingest.formats.nvidia_smi_power import frame, parse
from tests.paths import DATA

POWER = DATA / "ingest" / "power" / "gpu-node-01.csv"


def test_nvidia_smi_csv_is_read_per_gpu_and_second() -> None:
    """8 GPUs x 31 one-second samples; GPU 5 printed [N/A] once (no reading, kept as null);
    the last row was cut mid-write and is left out with a note."""
    assert detect_format(POWER) == "nvidia-smi-power"
    log = parse(POWER)
    rows = frame(log, source_file="power/gpu-node-01.csv")
    assert log.host == "gpu-node-01" and rows.height == 248
    assert rows["gpu"].n_unique() == 8 and rows["power_w"].null_count() == 1
    first = rows.row(0, named=True)
    # 2026-09-14 08:00:00.250 read as UTC
    assert (first["gpu"], first["power_w"], first["line"]) == (0, 650.0, 2)
    assert first["time_s"] == pytest.approx(1789372800.25)
    assert log.notes == ["line 250: the last row is cut mid-write; left out"]


def test_a_malformed_row_inside_the_file_is_one_error_naming_its_line(tmp_path: Path) -> None:
    lines = POWER.read_text().splitlines()
    lines[10] = "2026/09/14 08:00:01.250, 1, lots W, 61, 1980, 2619, 100, 45"
    bad = tmp_path / "gpu-node-01.csv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvidenceError) as info:
        parse(bad)
    assert info.value.line == 11 and "malformed nvidia-smi row" in info.value.message


DCGM = DATA / "ingest" / "power" / "dcgm_power_range.json"


def test_dcgm_exporter_range_query_is_read_per_host_and_gpu() -> None:
    """Prometheus' answer for DCGM_FI_DEV_POWER_USAGE over 30 s at a 5 s step: 2 hosts (their
    Hostname labels) x 2 GPUs x 7 samples; a "NaN" sample is a missing reading."""
    from cmax.ingest.formats import Probe
    from cmax.ingest.formats.dcgm_exporter_power import DcgmExporterPower

    assert detect_format(DCGM) == "dcgm-exporter-power"
    fmt = DcgmExporterPower()
    rows = fmt.frame(fmt.parse(Probe(DCGM)), source_file="power/dcgm.json")
    assert rows.height == 28 and rows["power_w"].null_count() == 1
    assert sorted(rows["host"].unique().to_list()) == ["gpu-node-01", "gpu-node-02"]
    first = rows.row(0, named=True)
    assert (first["host"], first["gpu"], first["time_s"], first["power_w"]) == (
        "gpu-node-01", 0, 1789372800.0, 640.0)


def test_a_dcgm_series_without_a_gpu_label_is_one_error(tmp_path: Path) -> None:
    import json

    from cmax.ingest.formats import Probe
    from cmax.ingest.formats.dcgm_exporter_power import DcgmExporterPower

    doc = json.loads(DCGM.read_text())
    del doc["data"]["result"][2]["metric"]["gpu"]
    bad = tmp_path / "dcgm.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(EvidenceError, match=r"data.result\[2\]: a series without a GPU index"):
        DcgmExporterPower().parse(Probe(bad))
