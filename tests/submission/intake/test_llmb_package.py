"""An llmb-run package (the Exemplar archive, an install folder, a folder of experiments) is
rated as it is: its manifest is drafted from the llmb-config files and logs."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from cmax.errors import CmaxError, EvidenceError
from cmax.findings import Finding
from cmax.pipeline import assess, load
from cmax.states import State
from cmax.submission.intake.draft import Commercial
from tests.submission.intake.llmb_fakes import (
    LOGIN,
    Job,
    archive,
    config_text,
    install,
    slower_log,
    write_jobs,
)

TODAY = dt.date.today().isoformat() + "T10:00:00"
H100_SUITE = [  # reference/exemplar.toml, v26.08.00 h100
    Job(job_id=101, workload="pretrain_gpt_oss", model_name="gpt_oss", model_size="120b",
        dtype="bf16"),
    Job(job_id=102, dtype="bf16"),
    Job(job_id=103, dtype="fp8"),
    Job(job_id=104, workload="pretrain_nemotron-h", model_name="nemotron-h", model_size="56b"),
    Job(job_id=105, workload="pretrain_qwen3", model_name="qwen3", model_size="235b",
        dtype="bf16"),
]


def _suite(**changes: object) -> list[Job]:
    jobs = []
    for job in H100_SUITE:
        fields = {**job.__dict__, "scale": 512, "launch_time": TODAY, **changes}
        jobs.append(Job(**fields))  # type: ignore[arg-type]
    return jobs


def _rules(findings: Sequence[Finding], family: str = "exemplar.") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in findings:
        if f.rule.startswith(family):
            out.setdefault(f.rule, []).append(f.message)
    return out


@pytest.mark.parametrize("name", ["llmb-archive_26.08.00_20261101T120000Z.tar.zst",
                                  "llmb-archive-20261101T120000Z.tar.zst"])
def test_archive_is_rated_as_it_is(tmp_path: Path, name: str) -> None:
    jobs = [Job(job_id=3913022, retries=(0, 1, 2)), Job(job_id=3913030, dtype="bf16"),
            Job(job_id=3913001, dtype="bf16")]  # an earlier run of the same configuration
    path = archive(tmp_path / name, jobs, staging=tmp_path / "stage")
    with load(path) as loaded:
        manifest = loaded.bundle.manifest
        assert loaded.bundle.root.name == "llmb-archive-20261101T120000Z"
        assert manifest.system.gpu == "h100-sxm" and manifest.system.gpus_per_node == 8
        assert manifest.system.nodes == 8
        runs = {(r.workload, r.precision, r.num_gpus, r.log.split("_")[-2]): r
                for r in manifest.runs}
        assert set(runs) == {("llama3.1-70b", "fp8", 64, "3913022"),
                             ("llama3.1-70b", "bf16", 64, "3913001"),
                             ("llama3.1-70b", "bf16", 64, "3913030")}  # every job of it
        fp8 = runs["llama3.1-70b", "fp8", 64, "3913022"]
        assert fp8.log.endswith("_3913022_2.out")  # highest retry
        assert fp8.container == "nvcr.io/nvidia/nemo:26.06.01"
        assert loaded.case.runs.height == 3
        assert set(loaded.case.runs["status"].to_list()) == {"success"}
        notes = _rules(loaded.findings)["exemplar.left-out"]
        assert any("no price" in n for n in notes)
        assert manifest.pricing is None and manifest.sla is None
    with load(path) as loaded:
        assert any("jobs 3913001, 3913030 ran one configuration (llama3.1 70b bf16 at 64 "
                   "GPUs): each is a run of it" in n
                   for n in _rules(loaded.findings)["exemplar.left-out"])


def test_each_job_of_one_configuration_knows_its_runs_entry(tmp_path: Path) -> None:
    """Several jobs of one configuration are several [[runs]] entries: each package job names
    the entry drafted from it, and the run read for that entry is that job's."""
    jobs = [Job(job_id=3913001, dtype="bf16"), Job(job_id=3913030, dtype="bf16"),
            Job(job_id=3913022, dtype="bf16", retries=(0, 1))]
    with load(write_jobs(tmp_path / "pkg", jobs)) as loaded:
        package, case = loaded.case.package, loaded.case
        assert package is not None and len(package.jobs) == 3
        runs = case.runs.select("entry", "job_id").rows()
        for job in package.jobs:
            spec = loaded.bundle.manifest.runs[job.entry]
            assert f"_{job.job_id}_" in spec.log
            assert (job.entry, str(job.job_id)) in runs
            resolved = next(r for r in case.resolved if r.spec_index == job.entry)
            assert resolved.get_str("job_id") == str(job.job_id)


def test_a_best_job_renumbered_last_does_not_stand_alone(tmp_path: Path) -> None:
    """llmb-run reports the latest job of a configuration: the fast job renumbered above a
    run 15 % slower. The package is rated on both: the slow run fails (and holds the fast one
    at unverified, crossfile.runs-disagree), the suite is not met. Two honest runs of it (1 %
    apart) meet it."""
    slow = Job(job_id=3913001, log=slower_log(1.15), launch_time="2026-10-30T20:00:00")
    fast = Job(job_id=3913090)
    card = assess(write_jobs(tmp_path / "played", [slow, fast]))
    assert sorted(w.verdict for w in card.workloads) == ["fail", "unverified"]
    assert card.exemplar.state is State.NOT_MET
    honest = [Job(job_id=3913001, log=slower_log(1.01), launch_time="2026-10-30T20:00:00"),
              Job(job_id=3913090)]
    card = assess(write_jobs(tmp_path / "honest", honest))
    assert [w.verdict for w in card.workloads] == ["pass", "pass"]
    assert card.exemplar.state is State.MET


def test_install_folder_and_folder_of_experiments(tmp_path: Path) -> None:
    root = install(tmp_path / "llmb", [Job()])
    with load(root) as loaded:
        assert loaded.case.package is not None
        assert loaded.case.package.kind == "llmb-run install folder"
        assert loaded.bundle.manifest.runs[0].log.startswith("workloads/pretrain_llama3.1/")
    with load(root / "workloads" / "pretrain_llama3.1") as loaded:
        assert loaded.case.package is not None
        assert loaded.case.package.kind == "folder of llmb-run experiments"


def test_quote_term_and_small_manifest(tmp_path: Path) -> None:
    root = write_jobs(tmp_path / "pkg", [Job()])
    card = assess(root, commercial=Commercial(quote=2.4, term_months=24))
    assert card.price is not None
    (root / "cmax.toml").write_text(
        '[provider]\nname = "Example GPU Cloud"\ncluster = "east-1"\n\n'
        "[pricing]\nusd_per_gpu_hour = 2.1\n\n"
        "[sla]\nuptime_pct = 99.5\n")
    with load(root) as loaded:
        manifest = loaded.bundle.manifest
        assert manifest.provider.name == "Example GPU Cloud"
        assert manifest.pricing is not None and manifest.pricing.usd_per_gpu_hour == 2.1
        assert manifest.sla is not None and manifest.runs[0].workload == "llama3.1-70b"
        notes = _rules(loaded.findings)["exemplar.left-out"]
        assert not any("price" in n or "[sla]" in n for n in notes)


@pytest.mark.parametrize(("change", "flag"), [
    ({"proxy": True}, "proxy = true"),
    ({"profile_enabled": True}, "profile_enabled = true"),
    ({"env_overrides": {"NCCL_ALGO": "Ring"}}, "env_overrides set (NCCL_ALGO)"),
    ({"model_overrides": {"mbs": 2}}, "model_overrides set (mbs)"),
    ({"mbridge_args": ("--micro_batch_size=2", "model.hidden_size=4096")},
     "mbridge_args set (--micro_batch_size=2, model.hidden_size=4096)"),
])
def test_not_for_rating_job_is_refused(tmp_path: Path, change: dict[str, object],
                                       flag: str) -> None:
    root = write_jobs(tmp_path / "pkg", [Job(**change)])  # type: ignore[arg-type]
    with pytest.raises(EvidenceError, match="not for rating") as info, load(root):
        pass
    assert flag in str(info.value)
    config = Path(str(info.value.file))
    assert config.name == "llmb-config_3913022.yaml"
    assert info.value.line is not None
    key = flag.split(" ")[0]
    assert (root / config).read_text().splitlines()[info.value.line - 1].strip().startswith(key)


@pytest.mark.parametrize(("nodes", "refused"), [(8, True), (64, False)])
def test_a_log_whose_node_count_cannot_hold_the_scale_is_refused(
        tmp_path: Path, nodes: int, refused: bool) -> None:
    """An archive has no node list (llmb-config states scale and GPUs per node): the node
    count the job's log prints (Slurm's environment) is checked against the scale instead."""
    from tests.submission.intake.llmb_fakes import LOG

    log = f"SLURM_JOB_NUM_NODES={nodes}\n".encode() + LOG.read_bytes()
    path = archive(tmp_path / "llmb-archive-x.tar.zst", [Job(scale=512)],
                   staging=tmp_path / "stage", log=log)
    if not refused:
        with load(path) as loaded:
            assert [r.num_gpus for r in loaded.bundle.manifest.runs] == [512]
        return
    with pytest.raises(EvidenceError, match="not for rating") as info, load(path):
        pass
    message = str(info.value)
    assert "the log (line 1) has 8 node(s), which cannot hold scale 512 at 8 GPUs per node " \
           "(needs 64)" in message
    assert info.value.line == 1 and str(info.value.file).endswith("_3913022_0.out")
    assert info.value.field == "runs[0].log"


def test_the_user_login_appears_in_no_output(tmp_path: Path) -> None:
    from cmax.submission.intake.package import draft_for

    path = archive(tmp_path / "llmb-archive-x.tar.zst", [Job()], staging=tmp_path / "stage")
    with load(path) as loaded:
        seen = json.dumps([f.model_dump() for f in loaded.findings])
        seen += repr(loaded.case.package) + repr(loaded.bundle.manifest)
        seen += repr([f.facts for f in loaded.case.files])
    card = assess(path, commercial=Commercial(quote=2.0))
    seen += card.model_dump_json()
    draft = draft_for(tmp_path / "stage", label="x")
    assert draft is not None
    seen += draft.text
    assert "user" not in draft.text.split("]")[0]
    assert LOGIN not in seen


def test_unknown_model_and_mixed_gpus_are_clear_errors(tmp_path: Path) -> None:
    root = write_jobs(tmp_path / "a", [Job(model_name="mystery", model_size="9b")])
    with pytest.raises(CmaxError, match="mystery 9b is not in the reference models"), load(root):
        pass
    root = write_jobs(tmp_path / "b", [Job(), Job(job_id=5, dtype="bf16", gpu_type="b200")])
    with pytest.raises(CmaxError, match="2 GPU types"), load(root):
        pass
    empty = tmp_path / "c" / "pretrain_x" / "experiments" / "e"
    empty.mkdir(parents=True)
    (empty / "llmb-config_7.yaml").write_text("job_info: [unclosed\n")
    with pytest.raises(CmaxError, match="not valid YAML") as info, load(tmp_path / "c"):
        pass
    assert "llmb-config_7.yaml" in str(info.value)


def test_exemplar_suite_complete_and_current_is_clean(tmp_path: Path) -> None:
    root = write_jobs(tmp_path / "pkg", _suite())
    with load(root, commercial=Commercial(quote=2.0)) as loaded:
        found = _rules(loaded.findings)
    assert set(found) == {"exemplar.left-out"}, found  # only the missing SLA and incidents


def test_exemplar_rules_trip(tmp_path: Path) -> None:
    jobs = _suite()[:3]
    jobs[1].image = "nvcr.io#nvidia/nemo:26.04.01"
    jobs[2].scale = 256
    jobs[0].launch_time = "2025-01-05T08:00:00"
    with load(write_jobs(tmp_path / "pkg", jobs)) as loaded:
        found = _rules(loaded.findings)
    assert "3 of the 5 H100 suite runs" in found["exemplar.suite-incomplete"][0]
    assert "pretrain_nemotron-h_56b:fp8" in found["exemplar.suite-incomplete"][0]
    assert "26.04.01" in found["exemplar.recipe-release-mixed"][0]
    assert "ran at 256 GPUs" in found["exemplar.off-scale"][0]
    assert "2025-01-05" in found["exemplar.expired"][0]


def test_exemplar_suites_match_the_release() -> None:
    from cmax.reference.exemplar import current_release

    release = current_release()
    assert {k: len(v) for k, v in release.suites.items()} == {
        "gb300": 14, "gb200": 13, "b300": 13, "b200": 12, "h100": 5}
    assert (release.scale, release.validity_months, release.version) == (512, 12, "26.08.00")


def test_a_bundle_with_its_own_manifest_is_not_drafted(tmp_path: Path) -> None:
    from tests.paths import SAMPLES

    sample = shutil.copytree(SAMPLES / "aurora-compute", tmp_path / "s")
    write_jobs(sample / "llmb", [Job()])
    with load(sample) as loaded:
        assert loaded.case.package is None and len(loaded.bundle.manifest.runs) == 3


def _unit_archive(folder: Path, name: str, jobs: list[Job]) -> Path:
    folder.mkdir(exist_ok=True)
    return archive(folder / f"{name}.tar.zst", jobs, staging=folder.parent / f"stage-{name}")


def test_several_scalable_units_are_judged_each_on_its_own(tmp_path: Path) -> None:
    """Requirements for AI Clouds v2.3 BM01: the suite on every scalable unit handed over. Two
    archives side by side are two units: unit A holds the whole H100 suite, unit B two runs;
    only B is incomplete, and the system is both units (2 x 512 GPUs = 128 nodes)."""
    handover = tmp_path / "handover"
    _unit_archive(handover, "llmb-archive_26.08.00_20261101T120000Z", _suite())
    b_jobs = [Job(**{**job.__dict__, "job_id": job.job_id + 1000}) for job in _suite()[:2]]
    _unit_archive(handover, "llmb-archive_26.08.00_20261102T120000Z", b_jobs)
    with load(handover, commercial=Commercial(quote=2.0)) as loaded:
        found = _rules(loaded.findings)
        manifest = loaded.bundle.manifest
        package = loaded.case.package
    assert package is not None and package.units == (
        "llmb-archive_26.08.00_20261101T120000Z", "llmb-archive_26.08.00_20261102T120000Z")
    assert manifest.system.nodes == 128 and len(manifest.runs) == 7
    assert found["exemplar.suite-incomplete"] == [
        "unit llmb-archive_26.08.00_20261102T120000Z: 3 of the 5 H100 suite runs of recipe "
        "release 26.08.00 have no job at 512 GPUs: pretrain_llama3.1_70b:fp8, "
        "pretrain_nemotron-h_56b:fp8, pretrain_qwen3_235b:bf16"]
    assert "exemplar.units-missing" not in found


def test_a_system_larger_than_its_units_is_named(tmp_path: Path) -> None:
    """One unit's suite for a system of 2 x 512 GPUs ([system] from a small manifest)."""
    root = write_jobs(tmp_path / "pkg", _suite())
    small = Commercial(quote=2.0, manifest={"system": {"nodes": 128}})
    with load(root, commercial=small) as loaded:
        found = _rules(loaded.findings)
    assert found["exemplar.units-missing"] == [
        "the system's 1,024 GPUs ([system] nodes x gpus_per_node) are 2 scalable units of 512; "
        "the bundle holds the suite of 1"]
    with load(root, commercial=Commercial(quote=2.0)) as loaded:
        assert "exemplar.units-missing" not in _rules(loaded.findings)


def test_install_folders_side_by_side_are_units_too(tmp_path: Path) -> None:
    install(tmp_path / "su1", _suite())
    install(tmp_path / "su2", [Job(**{**job.__dict__, "job_id": job.job_id + 1000})
                               for job in _suite()])
    with load(tmp_path, commercial=Commercial(quote=2.0)) as loaded:
        package = loaded.case.package
        found = _rules(loaded.findings)
    assert package is not None and package.units == ("su1", "su2")
    assert {job.unit for job in package.jobs} == {"su1", "su2"} and len(package.jobs) == 10
    assert "exemplar.suite-incomplete" not in found and "exemplar.units-missing" not in found


def test_a_microbenchmark_config_without_a_model_is_passed_over(tmp_path: Path) -> None:
    """llmb-run archives microbenchmark_nccl's llmb-config at the workload's top
    (archive.py@e249aa3); its writer (run_config.py ``create_llmb_config``) gives it the
    workload name for model_name and no dtype. It is not a run: noted, and the package's
    pretraining jobs are rated."""
    stage = tmp_path / "stage"
    (stage / "microbenchmark_nccl").mkdir(parents=True)
    text = config_text(Job(job_id=777)).replace("workload_type: pretrain",
                                                "workload_type: microbenchmark")
    text = text.replace("model_name: llama3.1", "model_name: nccl").replace(
        "dtype: fp8", "dtype: null")
    (stage / "microbenchmark_nccl" / "llmb-config_777.yaml").write_text(text)
    path = archive(tmp_path / "llmb-archive-x.tar.zst", [Job()], staging=stage)
    with load(path) as loaded:
        assert [r.workload for r in loaded.bundle.manifest.runs] == ["llama3.1-70b"]
        notes = _rules(loaded.findings)["exemplar.left-out"]
    assert any("job 777 (microbenchmark_nccl/llmb-config_777.yaml)"
               " is a microbenchmark workload: not rated" in n for n in notes), notes


def test_files_beside_the_unit_archives_come_along(tmp_path: Path) -> None:
    """A small cmax.toml beside the archives may name evidence of its own (nccl-tests
    output): it is rated with the units, not left behind when they are unpacked."""
    from tests.paths import DATA

    handover = tmp_path / "handover"
    _unit_archive(handover, "llmb-archive_26.08.00_20261101T120000Z", _suite())
    b_jobs = [Job(**{**job.__dict__, "job_id": job.job_id + 1000}) for job in _suite()]
    _unit_archive(handover, "llmb-archive_26.08.00_20261102T120000Z", b_jobs)
    (handover / "nccl").mkdir()
    shutil.copy(DATA / "nccl" / "tag_output_2node.txt", handover / "nccl")
    (handover / "cmax.toml").write_text('[[nccl]]\npath = "nccl/tag_output_2node.txt"\n\n'
                                        "[pricing]\nusd_per_gpu_hour = 2.2\n")
    with load(handover) as loaded:
        assert [n.path for n in loaded.bundle.manifest.nccl] == ["nccl/tag_output_2node.txt"]
        assert loaded.case.nccl.height > 0
        assert loaded.bundle.manifest.pricing is not None
        assert loaded.case.package is not None and len(loaded.case.package.units) == 2


@pytest.mark.parametrize(("body", "bound"), [
    ("".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)),
     "nodes"),
    ("x: " + "[" * 50_000 + "]" * 50_000 + "\n", "levels"),
])
def test_a_yaml_bomb_in_an_llmb_config_is_one_error(tmp_path: Path, body: str,
                                                    bound: str) -> None:
    """Issue 39: an alias bomb of under 2 KB ran until killed (or MemoryError, exit 70) and
    50,000 nested brackets raised RecursionError; each is now one error naming the bound."""
    job = Job()
    text = config_text(job).replace("job_config:", "a0: &a0 [lol]\n" + body + "job_config:")
    staging = tmp_path / "stage"
    path = archive(tmp_path / "llmb-archive_26.08.00_20261101T120000Z.tar.zst", [job],
                   staging=staging)
    config = next(staging.rglob("llmb-config_*.yaml"))
    config.write_text(text)
    path = archive(tmp_path / "bomb.tar.zst", [], staging=staging)
    with pytest.raises(EvidenceError, match=f"exceeds cmax's limit of .*{bound}") as info, \
            load(path):
        pass
    assert "llmb-config_3913022.yaml" in str(info.value)
