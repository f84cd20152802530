"""`cmax init` drafts a manifest that loads as it is: for the samples, the public example files
in tests/data and an llmb-run Exemplar archive; each value says where it was read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.cli import main
from cmax.errors import ManifestError
from cmax.pipeline import load
from tests.paths import DATA, SAMPLES
from tests.submission.intake.llmb_fakes import LOGIN, Job, archive

FOLDERS = [SAMPLES / "aurora-compute", SAMPLES / "borealis-cloud", SAMPLES / "cinder-gpu",
           DATA / "ingest"]
"""Folders whose evidence states every required value: the draft loads as it is."""
SHORT = {DATA / "nccl": ["[provider] cluster", "[benchmark] date"],
         DATA / "validate": ["[provider] cluster", "[system] gpu", "[system] gpus_per_node",
                             "[system] nodes"]}
"""Folders whose evidence leaves required values unstated, and those values."""


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_draft_loads_as_it_is(folder: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    bundle = shutil.copytree(folder, tmp_path / "b")
    (bundle / "cmax.toml").unlink(missing_ok=True)
    assert main(["init", str(bundle), "-o", str(bundle / "cmax.toml")]) == 0
    text = (bundle / "cmax.toml").read_text()
    assert "# TODO: the quoted price per GPU-hour" in text
    assert "no file states" not in capsys.readouterr().err
    with load(bundle) as loaded:  # no CmaxError: the draft is a valid manifest as written
        assert loaded.bundle.manifest.pricing is None


@pytest.mark.parametrize("folder", list(SHORT), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_value_no_file_states_is_left_to_a_person(folder: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """No placeholder that loads: a required value no file states is commented out, init
    names it, and the draft does not load until someone states it (an unnamed GPU drafted as
    h100-sxm passed the "Modern GPU" gate)."""
    bundle = shutil.copytree(folder, tmp_path / "b")
    (bundle / "cmax.toml").unlink(missing_ok=True)
    assert main(["init", str(bundle), "-o", str(bundle / "cmax.toml")]) == 0
    err = capsys.readouterr().err
    assert f"cmax init: no file states {', '.join(SHORT[folder])}: the draft does not " \
           "load" in err
    first = SHORT[folder][0].replace("[", "").replace("] ", ".")
    with pytest.raises(ManifestError, match=f"{first}: required key is missing"), load(bundle):
        pass


def test_sample_values_carry_their_source(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(SAMPLES / "aurora-compute")]) == 0
    text = capsys.readouterr().out
    assert 'nodes = 64                                   # nccl/all_reduce_perf_64n.txt:3' in text
    run = 'workload = "llama3.1-405b"                   # training/llama3.1-405b_bf16_512.log:'
    assert run in text  # the log's own statement, with its line
    out = tmp_path / "cmax.toml"
    out.write_text("x")
    assert main(["init", str(SAMPLES / "aurora-compute"), "-o", str(out)]) == 2
    assert "will not overwrite" in capsys.readouterr().err and out.read_text() == "x"


def test_llmb_archive_draft(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = archive(tmp_path / "llmb-archive_26.08.00_20261101T120000Z.tar.zst", [Job()],
                   staging=tmp_path / "stage")
    assert main(["init", str(path)]) == 0
    text = capsys.readouterr().out
    assert 'gpu = "h100-sxm"' in text and "llmb-config_3913022.yaml:18 gpu_type h100" in text
    assert 'workload = "llama3.1-70b"' in text and "(the highest retry wins)" in text
    assert LOGIN not in text


def test_audit_fabric_drafts_the_interconnect(capsys: pytest.CaptureFixture[str]) -> None:
    """The ClusterMAX audit states its compute fabric's class, NIC count and rate (8 x NDR
    400G IB): that names a reference fabric id; its GPUs per node and date come with it."""
    assert main(["init", str(DATA / "ingest")]) == 0
    text = capsys.readouterr().out
    assert ('interconnect = "infiniband-ndr-8x400"        # example_audit.values.json '
            'networking.nicFabric: 8 x NDR 400G IB') in text
    assert "gpus_per_node = 8                            # example_audit.values.json " \
           "gpus.perNode" in text
    # the runs' own dates, not the audit's: the latest first stamp a run prints
    assert "date = 2026-05-31                            # mlperf/results/" in text
    assert "the runs print 2024-12-01 to 2026-05-31" in text
    assert 'gbs = 128                                    # dgxc_parse_nemo2.csv:2' in text


def test_nccl_alone_leaves_the_interconnect_a_todo(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """nccl-tests print the transport and the NICs (NET/IB : Using [0]mlx5_0:1/IB ...) but not
    the link rate: the line stays a TODO naming what was seen and the ids that fit; the
    ranks per host and the hosts give GPUs per node and nodes."""
    folder = tmp_path / "f"
    folder.mkdir()
    shutil.copy(DATA / "nccl" / "tag_output_2node.txt", folder)
    assert main(["init", str(folder)]) == 0
    text = capsys.readouterr().out
    assert ('# interconnect = "..."                       # TODO: tag_output_2node.txt:23 '
            'shows 8 InfiniBand NIC(s), not their rate: infiniband-hdr-8x200 or '
            'infiniband-ndr-8x400') in text
    assert "gpus_per_node = 8                            # tag_output_2node.txt:" in text
    assert "nodes = 2 " in text


def test_a_folder_of_unit_archives_drafts_every_unit(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    handover = tmp_path / "handover"
    handover.mkdir()
    for n, day in enumerate(("20261101T120000Z", "20261102T120000Z")):
        archive(handover / f"llmb-archive_26.08.00_{day}.tar.zst",
                [Job(job_id=3913022 + n, scale=512)], staging=tmp_path / f"stage{n}")
    assert main(["init", str(handover)]) == 0
    text = capsys.readouterr().out
    assert "nodes = 128" in text and "2 units, each its largest job's scale (512, 512)" in text
    assert text.count("[[runs]]") == 2
    assert "llmb-archive_26.08.00_20261102T120000Z/llmb-archive-20261101T120000Z/" in text
