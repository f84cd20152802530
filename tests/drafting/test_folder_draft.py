"""`cmax init` on a folder drafts only what the evidence says (cmax/drafting/folder_draft.py).

The shipped samples are the round trip: init on a sample's own files (its cmax.toml removed)
must draft the values its manifest took from that evidence, leave the rest to a person, and,
with the person's answers added, rate the sample as it is rated today.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cmax.cli import main
from cmax.pipeline import assess
from cmax.submission.intake import toml_text
from tests.paths import SAMPLES

EVIDENCE_KEYS = {"provider": ("cluster",), "system": ("gpu", "gpus_per_node", "nodes",
                                                      "interconnect"), "benchmark": ("date",)}
ENTRY_KEYS = {"runs": ("log", ("workload", "precision", "num_gpus", "gbs")),
              "nccl": ("path", ()), "inference": ("result", ("model", "precision", "gpus",
                                                             "input_len", "output_len")),
              "storage": ("result", ("model", "gpus", "round", "accelerator"))}

NOT_STATED: dict[str, dict[str, Any]] = {
    "aurora-compute": {}, "borealis-cloud": {},
    # no audit: nccl-tests show 8 InfiniBand NICs, not their rate
    "cinder-gpu": {"system.interconnect": None},
    # no audit: the fabric is not stated; the nccl sweep spans 128 of the 144 trays the
    # manifest counts (8 racks x 18), and no file names the other 16
    "zenith-nvl72": {"system.interconnect": None, "system.nodes": 128},
    # serving results state GPUs per result, not per node; vLLM states no GPU count or precision
    # (InferenceX's agg rows carry no date either)
    "halcyon-serve": {"system.nodes": None, "system.gpus_per_node": None,
                      "benchmark.date": None},
}
"""Per sample, what its evidence does not state as its manifest does (None: left a TODO)."""

SAMPLE_NAMES = sorted(NOT_STATED)


def _draft(sample: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    bundle = shutil.copytree(SAMPLES / sample, tmp_path / sample)
    (bundle / "cmax.toml").unlink()
    assert main(["init", str(bundle)]) == 0
    return bundle, capsys.readouterr().out


def test_every_sample_is_covered() -> None:
    assert sorted(p.name for p in SAMPLES.iterdir() if (p / "cmax.toml").exists()) == \
        SAMPLE_NAMES


@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_init_drafts_the_values_the_samples_evidence_states(
        sample: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, text = _draft(sample, tmp_path, capsys)
    draft = tomllib.loads(text)
    manifest = tomllib.loads((SAMPLES / sample / "cmax.toml").read_text())
    unstated = NOT_STATED[sample]
    for section, keys in EVIDENCE_KEYS.items():
        for key in keys:
            expected = unstated.get(f"{section}.{key}", manifest[section].get(key))
            assert draft[section].get(key) == expected, f"{section}.{key}"
    for table, (path_key, keys) in ENTRY_KEYS.items():
        drafted = {e[path_key]: e for e in draft.get(table, [])}
        for entry in manifest.get(table, []):
            name = entry[path_key]
            if f"{table}.{name}" in unstated:
                assert name not in drafted and f'# {path_key} = "{name}"' in text
                continue
            assert {k: drafted[name].get(k) for k in keys} == \
                {k: entry.get(k) for k in keys}, name
    audit = manifest.get("audit", {}).get("path")
    assert draft.get("audit", {}).get("path") == audit
    # what only a person knows stays a TODO: price, SLA, period, declarations, the name
    assert {"pricing", "sla", "reliability", "declarations"}.isdisjoint(draft)
    assert draft["provider"]["name"] == "undeclared provider"
    assert f'# incidents = "{manifest["reliability"]["incidents"]}"' in text
    assert "# [declarations]" in text and "# tenant_network_isolation = true" in text


def _answers(draft: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    """The draft completed as a person would: the manifest's values where the draft has a
    TODO, the draft's own values everywhere else."""
    merged = {k: dict(v) if isinstance(v, dict) else v for k, v in manifest.items()}
    for section in EVIDENCE_KEYS:
        merged[section].update({k: v for k, v in draft[section].items() if k != "name"})
    for table, (path_key, _) in ENTRY_KEYS.items():
        drafted = {e[path_key]: e for e in draft.get(table, [])}
        merged[table] = [drafted.get(e[path_key], e) for e in manifest.get(table, [])]
        if not merged[table]:
            del merged[table]
    return merged


def _toml(data: dict[str, Any]) -> str:
    out: list[str] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += [f"[{key}]", *(toml_text.line(k, v) for k, v in value.items())]
        elif isinstance(value, list):
            for entry in value:
                out += [f"[[{key}]]", *(toml_text.line(k, v) for k, v in entry.items())]
    return "\n".join(out) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_the_completed_draft_rates_the_sample_as_its_manifest_does(
        sample: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Aurora's draft named the cluster after its folder and dated it by the audit, and rated
    Underperforming instead of Gold once completed; now every sample keeps its tier."""
    bundle, text = _draft(sample, tmp_path, capsys)
    manifest = tomllib.loads((SAMPLES / sample / "cmax.toml").read_text())
    (bundle / "cmax.toml").write_text(_toml(_answers(tomllib.loads(text), manifest)))
    assert assess(bundle).tier == assess(SAMPLES / sample).tier


def _nemo_log(text: str, *, members: bool = True) -> str:
    if not members:  # a NeMo 2 log that prints no world size
        text = "\n".join(line for line in text.splitlines() if "MEMBER:" not in line) + "\n"
    return text


def test_a_gpu_count_is_never_read_from_a_file_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`..._20240406.log` drafted 20,240,406 GPUs and `09_nemo1.log` 9: a name's numbers are
    dates and sequence numbers as often as scales."""
    log = (SAMPLES / "aurora-compute" / "training" / "llama3.1-405b_bf16_512.log").read_text()
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "llama3.1-405b_bf16_20240406.log").write_text(_nemo_log(log, members=False))
    (folder / "09_llama3.1-405b_bf16.log").write_text(_nemo_log(log, members=False))
    assert main(["init", str(folder)]) == 0
    text = capsys.readouterr().out
    assert "20240406 " not in text.replace("_20240406.log", "") and "num_gpus = 9" not in text
    assert text.count("# num_gpus = 0                                 # TODO: the file states "
                      "no GPU count") == 2
    assert "\n[[runs]]\n" not in text  # both runs are left commented out


def test_documents_and_copied_lines_are_left_out_and_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sources.md quoting a NeMo step line was drafted as a one-step NeMo log."""
    log = (SAMPLES / "aurora-compute" / "training" / "llama3.1-405b_bf16_512.log").read_text()
    step = next(line for line in log.splitlines() if "iteration 1/" in line)
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "run.log").write_text(log)
    (folder / "sources.md").write_text(f"# Sources\n\nA step line reads:\n{step}\n")
    (folder / "expected.json").write_text('{"step_time_s": 19.89, "iterations": [35, 44]}\n')
    assert main(["init", str(folder)]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("[[runs]]") == 1 and 'log = "run.log"' in captured.out
    assert "cmax init: left out sources.md: a document (.md), not tool output" in captured.err
    assert re.search(r"cmax init: left out expected.json: .*unrecognised evidence format",
                     captured.err)
    assert "#   sources.md: a document (.md), not tool output" in captured.out


def test_a_folder_of_junk_is_refused_naming_every_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder without one evidence file exited 0 with a draft of defaults."""
    folder = tmp_path / "junk"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    (folder / "data.csv").write_text("a,b\n1,2\n")
    (folder / "README.md").write_text("# read me\n")
    assert main(["init", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no evidence file cmax reads in this folder" in err
    for name in ("notes.txt: unrecognised evidence format", "data.csv: unrecognised",
                 "README.md: documentation"):
        assert name in err


def test_an_archive_is_not_named_after_its_temporary_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The cluster comes from the audit or the hosts; an archive of files that name neither
    leaves it a TODO instead of the temporary folder it was unpacked into."""
    folder = tmp_path / "f"
    (folder / "training").mkdir(parents=True)
    shutil.copy(SAMPLES / "aurora-compute" / "training" / "llama3.1-405b_bf16_512.log",
                folder / "training")
    packed = tmp_path / "bundle.tar.gz"
    with tarfile.open(packed, "w:gz") as tar:
        tar.add(folder, arcname="bundle")
    assert main(["init", str(packed)]) == 0
    captured = capsys.readouterr()
    assert "# cluster = ...                               # TODO: the cluster's name" \
        in captured.out
    assert "cmax init: no file states [provider] cluster" in captured.err
    assert "date = 2026-09-14                            # bundle/training/" in captured.out


def test_an_mlperf_system_json_drafts_the_system_and_its_results_one_entry(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Azure's published v4.1 H200 submission (64 nodes x 8 H200): the system JSON states the
    GPU, the nodes and the GPUs per node; the ten result files are one [[mlperf]] entry; the
    draft, with the person's cluster name, loads and rates the set on its 512 GPUs."""
    from tests.paths import DATA

    bundle = tmp_path / "b"
    shutil.copytree(DATA / "mlperf" / "v4.1" / "Azure", bundle / "v4.1" / "Azure")
    assert main(["init", str(bundle)]) == 0
    out = capsys.readouterr().out
    system = "v4.1/Azure/systems/ND_H200_v5_n64_nemo.json"
    assert f'gpu = "h200"                                 # {system}:21' in out
    assert f"gpus_per_node = 8                            # {system}:20" in out
    assert f"nodes = 64                                   # {system}:6" in out
    assert out.count("\n[[mlperf]]\n") == 1
    assert 'path = "v4.1/Azure/results/ND_H200_v5_n64_nemo/llama2_70b_lora"' in out
    assert f"# {system}: MLPerf system description, read with the [[mlperf]] results" in out
    (bundle / "cmax.toml").write_text(out.replace(
        "# cluster = ...", 'cluster = "azure-h200"').replace(
        'name = "undeclared provider"', 'name = "Azure"'))
    [m] = assess(bundle).mlperf
    # comparable and corroborated by the files the draft read (no reference row may exist)
    assert m.num_gpus == 512 and m.verdict not in ("not_comparable", "unverified")


def test_storage_results_are_drafted_with_what_their_folder_does_not_say(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An MLPerf Storage summary outside a v<round> folder and without its overrides, and a
    fio result: each a [[storage]] entry, the round, accelerator and contract left TODO."""
    from tests.paths import DATA

    folder = tmp_path / "evidence"
    folder.mkdir()
    shutil.copy(DATA / "storage" / "mlperf_storage_v1.0" / "HPE" / "summary.json",
                folder / "summary.json")
    shutil.copy(DATA / "storage" / "fio" / "fio3_two_groups.json", folder / "fio.json")
    assert main(["init", str(folder)]) == 0
    text = capsys.readouterr().out
    draft = tomllib.loads(text)
    assert [e["result"] for e in draft["storage"]] == ["fio.json", "summary.json"]
    assert "# round = " in text and "# accelerator = " in text
    assert "# contracted_gib_s = " in text
