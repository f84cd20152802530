"""A bundle with [[power]] nvidia-smi telemetry: the run's measured J/token end to end."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

import pytest

from cmax.cli import main
from tests.fakes import manifest_text

T0 = dt.datetime(2026, 9, 14, 8, 0, 0, tzinfo=dt.UTC)
STEP_S = 14.66  # Llama 3.1 70B BF16 on 64 H100, GBS 128: 128 x 8192 / 14.66 / 64 = 1,117.6
# the run's 50 step times: three warm-up steps, then STEP_S with a few tens of milliseconds of
# jitter (pairs either side of it), and the last step, the recipe's steady-state window
# (DGXC <= v25.04: the last training step), exactly STEP_S
STEPS = [38.2, 19.9, 15.4] + [
    STEP_S + (1 if i % 2 else -1) * random.Random(f"step/{i // 2}").randint(5, 60) / 1000
    for i in range(46)] + [STEP_S]
SPAN_S = int(sum(STEPS)) + 2  # seconds of telemetry: the whole job


def _watts(second: int, gpu: int, host: int) -> str:
    """One GPU's nvidia-smi reading: 700 W and its own few watts of noise, drawn per host, GPU
    pair and second, so no two hosts' files (nor two GPUs' series) are alike. GPUs 2k and 2k+1
    sit the same amount either side of 700 W, so each second's readings average exactly 700 W
    and the expected figure is exact."""
    pair = gpu // 2
    wobble = random.Random(f"{host}/{pair}/{second}").randint(30, 600) / 100
    return f"{700 + wobble if gpu % 2 else 700 - wobble:.2f}"


def _bundle(root: Path, hosts: int, dcgm: bool = False) -> Path:
    (root / "training").mkdir(parents=True)
    (root / "power").mkdir()
    lines = ["------------------------ arguments ------------------------",
             "  global_batch_size ............................... 128",
             "  seq_length ...................................... 8192",
             "  world_size ...................................... 64",
             "-------------------- end of arguments ---------------------"]
    for it, step in enumerate(STEPS, start=1):
        done = T0 + dt.timedelta(seconds=sum(STEPS[:it]))
        stamp = done.strftime("%Y-%m-%d %H:%M:%S")
        lines.append(
            f" [{stamp}] iteration {it:8d}/{50:8d} | consumed samples: {128 * it:12d} | "
            f"elapsed time per iteration (ms): {step * 1000:.1f} | learning rate: "
            "3.000000E-05 | global batch size:   128 | lm loss: 8.090000E+00 | loss scale: 1.0 | "
            "grad norm: 1.797 | number of skipped iterations:   0 | number of nan iterations:"
            "   0 |")
    (root / "training" / "llama3.1-70b.log").write_text("\n".join(lines) + "\n")
    if dcgm:  # one Prometheus range-query answer for every host's DCGM Exporter
        start = int(T0.timestamp())
        result = [{"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": str(g),
                              "Hostname": f"gpu-node-{h:02d}",
                              "instance": f"gpu-node-{h:02d}:9400"},
                   "values": [[start + s, _watts(s, g, h)] for s in range(SPAN_S)]}
                  for h in range(hosts) for g in range(8)]
        (root / "power" / "dcgm.json").write_text(json.dumps(
            {"status": "success", "data": {"resultType": "matrix", "result": result}}))
        hosts = 0
    for h in range(hosts):
        rows = ["timestamp, index, power.draw [W], temperature.gpu"]
        for s in range(SPAN_S):
            for g in range(8):
                stamp = (T0 + dt.timedelta(seconds=s)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
                rows.append(f"{stamp}, {g}, {_watts(s, g, h)} W, {58 + (g + h) % 5}")
        (root / "power" / f"gpu-node-{h:02d}.csv").write_text("\n".join(rows) + "\n")
    power = "".join(f'\n[[power]]\npath = "power/gpu-node-{h:02d}.csv"\n' for h in range(hosts))
    if dcgm:
        power = '\n[[power]]\npath = "power/dcgm.json"\n'
    (root / "cmax.toml").write_text(manifest_text(f"""
[[runs]]
workload = "llama3.1-70b"
precision = "bf16"
num_gpus = 64
gbs = 128
seq_len = 8192
log = "training/llama3.1-70b.log"
{power}""", name="Telemetry Cloud", cluster="gpu-node", nodes=8, interconnect=None,
                                              date="2026-09-14"))
    return root


def _card(bundle: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main(["score", str(bundle), "--format", "json"])
    card: dict[str, Any] = json.loads(capsys.readouterr().out)
    return card


def _workload(bundle: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    [w] = _card(bundle, capsys)["workloads"]
    return w  # type: ignore[no-any-return]


def test_nvidia_smi_telemetry_of_every_host_gives_the_runs_measured_j_per_token(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """8 hosts x 8 GPUs at 700 W over the window: 700 ÷ 1,117.6 tokens/s/GPU = 0.6264 J/token,
    measured, beside the nominal 1,989 W all-in figure."""
    card = _card(_bundle(tmp_path / "all", 8), capsys)
    [w] = card["workloads"]
    tps = 128 * 8192 / STEP_S / 64
    assert w["measured_joules_per_token"] == pytest.approx(700 / tps, abs=1e-5)
    assert w["measured_power_w_per_gpu"] == pytest.approx(700.0)
    assert str(w["energy_checks"]).startswith("['power telemetry: 64 GPU(s) sampled every 1 s")
    [energy] = [j for j in card["judgements"]
                if j["kind"] == "energy" and j["id"] == w["run_id"]]
    assert (energy["state"], energy["findings"]) == ("earned", [])
    assert len(energy["witnesses"]) == 8
    assert [f["rule"] for f in card["findings"] if f["severity"] == "error"] == []


def test_telemetry_of_one_host_says_which_gpus_it_covers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = _workload(_bundle(tmp_path / "one", 1), capsys)
    assert "the telemetry covers 8 GPU(s) of the run's 64" in str(w["energy_checks"])


def test_dcgm_exporter_telemetry_gives_the_same_measured_j_per_token(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = _workload(_bundle(tmp_path / "dcgm", 8, dcgm=True), capsys)
    assert w["measured_joules_per_token"] == pytest.approx(700 / (128 * 8192 / STEP_S / 64),
                                                           abs=1e-5)


def test_measured_energy_is_attested_by_its_telemetry_and_the_priced_power_assumed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The run's J/token measured from its telemetry is provider-attested, witnessed by the
    power files; the J/token the price divides the reference's default power by is assumed,
    whatever telemetry the bundle holds."""
    bundle = _bundle(tmp_path / "priced", 8, dcgm=True)
    with (bundle / "cmax.toml").open("a") as f:
        f.write("\n[pricing]\nusd_per_gpu_hour = 2.45\n")
    card = _card(bundle, capsys)
    energy = {j["id"]: j for j in card["judgements"] if j["kind"] == "energy"}
    [run_id] = [w["run_id"] for w in card["workloads"]]
    measured, priced = energy[run_id], energy["watts_per_gpu"]
    assert (measured["state"], measured["provenance"]) == ("earned", "provider-attested")
    assert [(w["file"], w["author"]) for w in measured["witnesses"]] == [
        ("power/dcgm.json", "provider")]
    assert priced["state"] == "assumed" and priced["provenance"] != "provider-attested"
    assert priced["witnesses"] == []
