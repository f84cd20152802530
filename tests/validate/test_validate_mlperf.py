"""A bundle holding a real MLPerf submitter folder, end to end: ingest parses it once, the
rules read the parsed sets, the score rates NVIDIA's own result against itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cmax.pipeline import load
from cmax.resolve.case import Case
from cmax.score import load_rubric, score
from tests.fakes import manifest_text
from tests.paths import DATA

ORG = DATA / "mlperf" / "v5.0" / "NVIDIA"
SYSTEM = "eos-dfw_n64_ngc25.01_nemo"

def manifest(*, name: str = "NVIDIA", cluster: str = "eos-dfw", gpu: str = "h100-sxm",
             nodes: int = 64, date: str = "2025-06-04", path: str = "v5.0/NVIDIA") -> str:
    """The cmax.toml of a bundle holding one MLPerf submitter folder at ``path``; by default
    NVIDIA's v5.0 Eos submission (64 nodes x 8 H100, published 2025-06-04)."""
    return manifest_text(f'[[mlperf]]\npath = "{path}"', name=name, cluster=cluster, gpu=gpu,
                         nodes=nodes, interconnect=None, date=date)


def bundle(root: Path, gpu: str = "h100-sxm") -> Path:
    org = root / "v5.0" / "NVIDIA"
    shutil.copytree(ORG / "results" / SYSTEM, org / "results" / SYSTEM)
    (org / "systems").mkdir(parents=True)
    shutil.copy(ORG / "systems" / f"{SYSTEM}.json", org / "systems")
    (root / "cmax.toml").write_text(manifest(gpu=gpu))
    return root


def test_nvidia_submission_in_a_bundle(tmp_path: Path) -> None:
    with load(bundle(tmp_path / "b")) as loaded:
        [s] = loaded.case.mlperf_sets
        assert s.round == "5.0" and s.num_gpus == 512
        assert loaded.case.mlperf.height == 3
        mlperf_findings = [f for f in loaded.findings if f.rule.startswith("mlperf.")]
        assert mlperf_findings == []  # compliant, RCP pass, scaling.json as MLCommons wrote it
        facts = {f.kind: f.value for e in loaded.case.files for f in e.facts}
        assert facts["gpu"] == "NVIDIA H100-SXM5-80GB" and facts["gpu_count"] == "512"
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
    [m] = card.mlperf
    assert m.ratio == 1.0 and m.verdict == "pass" and m.num_gpus == 512


def test_system_json_contradicting_the_manifest_is_an_error(tmp_path: Path) -> None:
    with load(bundle(tmp_path / "b", gpu="b200")) as loaded:
        hits = [f for f in loaded.findings if f.rule == "mlperf.system-mismatch"]
    assert [(f.severity, f.file, f.line) for f in hits] == [
        ("error", f"v5.0/NVIDIA/systems/{SYSTEM}.json", 21)]  # accelerator_model_name


def test_scaling_json_removed_is_flagged(tmp_path: Path) -> None:
    root = bundle(tmp_path / "b")
    (root / "v5.0" / "NVIDIA" / "results" / SYSTEM / "llama31_405b" / "scaling.json").unlink()
    with load(root) as loaded:
        [hit] = [f for f in loaded.findings if f.rule == "mlperf.rcp-scaling"]
        assert "1.16667" in hit.message and "no scaling.json" in hit.message
        [s] = loaded.case.mlperf_sets
        assert s.score.score_min == s.score.unscaled_min  # 230.7 min: what cmax used to report


def test_manifest_round_when_the_path_names_none(tmp_path: Path) -> None:
    root = bundle(tmp_path / "b")
    (root / "v5.0").rename(root / "evidence")
    text = (root / "cmax.toml").read_text().replace('path = "v5.0/NVIDIA"',
                                                    'path = "evidence/NVIDIA"')
    (root / "cmax.toml").write_text(text)
    with load(root) as loaded:
        [s] = loaded.case.mlperf_sets
        assert s.round is None  # llama31_405b ran in v5.0, v5.1 and v6.0
    (root / "cmax.toml").write_text(text + 'round = "5.0"\n')
    with load(root) as loaded:
        [s] = loaded.case.mlperf_sets
        assert s.round == "5.0"
        assert not [f for f in loaded.findings if f.rule.startswith("mlperf.")]


def test_system_json_software_feeds_the_driver_floor_once_per_system(tmp_path: Path) -> None:
    """NVIDIA's published EOS-DFW system JSON states driver 570.86.10 under
    other_software_stack: below the 570 branch's 570.211.01 security minimum."""
    with load(bundle(tmp_path / "b")) as loaded:
        hits = [f for f in loaded.findings if f.rule == "software.driver-security-floor"]
        rules = {f.rule for f in loaded.findings}
    [hit] = hits  # one finding for the system JSON, not one per result file
    assert hit.file == f"v5.0/NVIDIA/systems/{SYSTEM}.json" and hit.line == 35
    assert "570.86.10" in hit.message and "software.versions-unknown" not in rules


def _declared_accelerator(case: Case) -> str | None:
    """The accelerator the claims ledger holds as declared for the first MLPerf folder."""
    claim = case.claims.get("mlperf[0]", "mlperf_accelerator")
    return None if claim is None else claim.value


def test_system_json_beside_the_results_uses_the_declared_accelerator(tmp_path: Path) -> None:
    root = tmp_path / "b"
    org = root / "v5.0" / "NVIDIA"
    shutil.copytree(ORG / "results" / SYSTEM, org / "results" / SYSTEM)
    shutil.copy(ORG / "systems" / f"{SYSTEM}.json", org / "results" / f"{SYSTEM}.json")
    (root / "cmax.toml").write_text(manifest())
    with load(root) as loaded:
        [s] = loaded.case.mlperf_sets
        # the set states no accelerator; the one it is rated as is the ledger's declaration
        assert s.accelerator is None and s.num_gpus == 512
        assert _declared_accelerator(loaded.case) == "h100-sxm"
        assert any("beside the results" in n for n in s.notes)
        [warn] = [f for f in loaded.findings if f.rule == "mlperf.no-system"]
        assert warn.file == f"v5.0/NVIDIA/results/{SYSTEM}.json" and "as declared" in warn.message
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
    [m] = card.mlperf
    assert m.num_gpus == 512 and m.verdict == "pass"  # rated against NVIDIA's H100 reference

def test_system_json_inside_the_benchmark_folder_is_not_the_official_place(
        tmp_path: Path) -> None:
    """A system JSON inside the benchmark folder was read as systems/<system>.json, so its
    accelerator was rated as the submitter's statement; it is a provider's copy, like one
    beside the results: GPU count and software read, accelerator the manifest's, declared."""
    root = tmp_path / "b"
    org = root / "v5.0" / "NVIDIA"
    folder = org / "results" / SYSTEM / "llama31_405b"
    shutil.copytree(ORG / "results" / SYSTEM, org / "results" / SYSTEM)
    shutil.copy(ORG / "systems" / f"{SYSTEM}.json", folder / f"{SYSTEM}.json")
    (root / "cmax.toml").write_text(manifest())
    with load(root) as loaded:
        [s] = loaded.case.mlperf_sets
        assert s.system is not None and not s.system.official
        # the set states no accelerator; the one it is rated as is the ledger's declaration
        assert s.accelerator is None and s.num_gpus == 512
        assert _declared_accelerator(loaded.case) == "h100-sxm"
        assert any("inside the benchmark folder" in n for n in s.notes)
        [warn] = [f for f in loaded.findings if f.rule == "mlperf.no-system"]
        assert "inside the benchmark folder" in warn.message and "as declared" in warn.message
    (org / "systems").mkdir()
    shutil.copy(ORG / "systems" / f"{SYSTEM}.json", org / "systems" / f"{SYSTEM}.json")
    with load(root) as loaded:  # the official place, when present, is the one read
        [s] = loaded.case.mlperf_sets
        assert s.system is not None and s.system.official
        assert _declared_accelerator(loaded.case) is None
        assert not [f for f in loaded.findings if f.rule == "mlperf.no-system"]


def _rated(root: Path, old: str = "", new: str = "") -> tuple[set[str], object]:
    path = bundle(root)
    if old:
        toml = path / "cmax.toml"
        toml.write_text(toml.read_text().replace(old, new))
    with load(path) as loaded:
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
        return {f.rule for f in loaded.findings}, card.mlperf[0]


def test_nvidias_result_as_another_providers_evidence_is_not_rated(tmp_path: Path) -> None:
    """issue 26: NVIDIA's own Eos result submitted as a provider's evidence rated 1.000."""
    rules, m = _rated(tmp_path / "a", 'name = "NVIDIA"', 'name = "Borealis Cloud"')
    assert "mlperf.foreign-submitter" in rules
    assert m.verdict == "not_comparable" and m.ratio is None  # type: ignore[attr-defined]
    rules, m = _rated(tmp_path / "b", 'path = "v5.0/NVIDIA"',
                      'path = "v5.0/NVIDIA"\ncited = true')
    assert "mlperf.cited-context" in rules and "mlperf.foreign-submitter" not in rules
    assert m.verdict == "not_comparable" and m.score_min is not None  # type: ignore[attr-defined]


def test_a_run_replaced_by_an_edited_copy_is_a_clone(tmp_path: Path) -> None:
    root = bundle(tmp_path / "b")
    runs = root / "v5.0" / "NVIDIA" / "results" / SYSTEM / "llama31_405b"
    first = (runs / "result_0.txt").read_text()
    seed = next(line for line in first.splitlines() if '"key": "seed"' in line)
    (runs / "result_2.txt").write_text(first.replace(seed, seed.replace('"value": ',
                                                                          '"value": 1')))
    with load(root) as loaded:
        assert "mlperf.cloned-run" in {f.rule for f in loaded.findings}
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
    assert card.mlperf[0].verdict == "fail" and card.mlperf[0].ratio is None


def test_a_result_on_more_nodes_than_the_cluster_is_not_rated(tmp_path: Path) -> None:
    """The 64-node Eos-dfw result attached to a cluster that claims 8 nodes is another system's
    result: an error on the system JSON's number_of_nodes line, and shown, not rated."""
    rules, m = _rated(tmp_path / "b", "nodes = 64", "nodes = 8")
    assert {"identity.node-count", "identity.gpu-count"} <= rules
    assert m.verdict == "not_comparable" and m.ratio is None  # type: ignore[attr-defined]
    assert any("not this cluster" in n for n in m.notes)  # type: ignore[attr-defined]
    rules, m = _rated(tmp_path / "c", "gpu = \"h100-sxm\"", "gpu = \"b200\"")
    assert "mlperf.system-mismatch" in rules  # another accelerator: not rated either
    assert m.verdict == "not_comparable"  # type: ignore[attr-defined]


def test_a_system_json_edited_to_another_node_count_contradicts_the_runs(tmp_path: Path) -> None:
    """Real runs log submission_platform '64xNVIDIA HGX H100'; a system JSON edited to say 32
    nodes is a platform mismatch, on the run's submission_platform line."""
    root = bundle(tmp_path / "b")
    system = root / "v5.0" / "NVIDIA" / "systems" / f"{SYSTEM}.json"
    system.write_text(system.read_text().replace('"number_of_nodes": "64"',
                                                 '"number_of_nodes": "32"'))
    with load(root) as loaded:
        hits = [f for f in loaded.findings if f.rule == "mlperf.platform-mismatch"]
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
    assert len(hits) == 1 and hits[0].severity == "error" and hits[0].line is not None
    assert "'64xNVIDIA HGX H100' states 64 nodes" in hits[0].message
    assert card.mlperf[0].verdict == "not_comparable"


def test_a_run_whose_stop_time_was_edited_is_not_a_result(tmp_path: Path) -> None:
    """run_stop moved an hour earlier: the run's last blocks and evaluations are now timed
    after its stop. The package has no valid result (scored as failed)."""
    root = bundle(tmp_path / "b")
    runs = root / "v5.0" / "NVIDIA" / "results" / SYSTEM / "llama31_405b"
    text = (runs / "result_1.txt").read_text()
    stop = next(line for line in text.splitlines() if '"key": "run_stop"' in line)
    event = json.loads(stop.split(":::MLLOG", 1)[1])
    edited = stop.replace(f'"time_ms": {event["time_ms"]}',
                          f'"time_ms": {event["time_ms"] - 3_600_000}')
    assert edited != stop
    (runs / "result_1.txt").write_text(text.replace(stop, edited))
    with load(root) as loaded:
        hits = [f for f in loaded.findings if f.rule == "mlperf.event-order"]
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
    assert len(hits) == 1 and "stop time was edited" in hits[0].message
    assert card.mlperf[0].verdict == "fail" and card.mlperf[0].ratio is None


AZURE = DATA / "mlperf" / "v4.1" / "Azure"


def _azure(root: Path, provider: str) -> tuple[set[str], object]:
    shutil.copytree(AZURE, root / "v4.1" / "Azure")
    (root / "cmax.toml").write_text(
        manifest(name=provider, cluster="nd-h200-v5", gpu="h200", date="2024-11-13",
                 path="v4.1/Azure"))
    with load(root) as loaded:
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
        return {f.rule for f in loaded.findings}, card.mlperf[0]


def test_another_clouds_published_result_is_not_this_providers(tmp_path: Path) -> None:
    """issue 26: another provider's published result (Azure's v4.1 ND H200 v5 submission)
    was accepted as this one's; it is a foreign submitter, shown and not rated. As Azure's
    own evidence it is not foreign."""
    rules, m = _azure(tmp_path / "a", "Borealis Cloud")
    assert "mlperf.foreign-submitter" in rules
    assert m.verdict == "not_comparable" and m.ratio is None  # type: ignore[attr-defined]
    rules, m = _azure(tmp_path / "b", "Microsoft Azure")
    assert "mlperf.foreign-submitter" not in rules and "mlperf.platform-mismatch" not in rules
    assert m.verdict != "not_comparable"  # type: ignore[attr-defined]


def test_a_hand_written_scaling_factor_is_an_error(tmp_path: Path) -> None:
    """NVIDIA's EOS-DFW 405B runs converge faster than the RCP mean: the review wrote 1.16667;
    a scaling.json of 0.80 would shorten the official time by a fifth."""
    root = bundle(tmp_path / "b")
    path = root / "v5.0" / "NVIDIA" / "results" / SYSTEM / "llama31_405b" / "scaling.json"
    path.write_text('{"scaling_factor": 0.8}')
    with load(root) as loaded:
        hits = [f for f in loaded.findings if f.rule.startswith("mlperf.")]
    assert [(f.rule, f.severity) for f in hits] == [("mlperf.scaling-mismatch", "error")]
    assert "says 0.8, the RCPs give 1.16667" in hits[0].message


def _org_bundle(root: Path, org_dir: Path) -> Path:
    """One shipped submitter folder as its own provider's bundle."""
    shutil.copytree(org_dir, root / org_dir.parent.name / org_dir.name)
    (root / "cmax.toml").write_text(manifest(name=org_dir.name,
                                             path=f"{org_dir.parent.name}/{org_dir.name}"))
    return root


def test_every_published_scaling_json_agrees_with_the_rcps(tmp_path: Path) -> None:
    """The control: each scaling.json in tests/data/mlperf as MLCommons published it."""
    orgs = sorted({p.parents[3] for p in (DATA / "mlperf").rglob("scaling.json")})
    assert len(orgs) >= 8
    for i, org in enumerate(orgs):
        with load(_org_bundle(tmp_path / str(i), org)) as loaded:
            assert not [f for f in loaded.findings if f.rule == "mlperf.scaling-mismatch"], org


ORACLE = DATA / "mlperf" / "v4.0" / "Oracle"


def _oracle_bundle(root: Path, date: str, extra: str = "") -> Path:
    """Oracle's public v4.0 llama2_70b_lora result (run in spring 2024) in a bundle."""
    shutil.copytree(ORACLE, root / "v4.0" / "Oracle")
    (root / "cmax.toml").write_text(
        manifest(name="Oracle", nodes=1, date=date, path="v4.0/Oracle") + extra)
    return root


def test_a_run_from_an_earlier_round_is_outside_the_benchmark_period(tmp_path: Path) -> None:
    with load(_oracle_bundle(tmp_path / "b", "2026-09-15")) as loaded:
        hits = [f for f in loaded.findings if f.rule == "mlperf.run-outside-period"]
    assert len(hits) == 1 and hits[0].severity == "error"
    assert "more than 365 days before the [benchmark] date 2026-09-15" in hits[0].message
    assert hits[0].line is not None  # the run_start line of the file


def test_runs_within_the_period_and_cited_results_are_not_dated(tmp_path: Path) -> None:
    with load(_oracle_bundle(tmp_path / "a", "2024-06-01")) as loaded:
        assert not [f for f in loaded.findings if f.rule == "mlperf.run-outside-period"]
    with load(_oracle_bundle(tmp_path / "c", "2026-09-15", "cited = true\n")) as loaded:
        assert not [f for f in loaded.findings if f.rule == "mlperf.run-outside-period"]


def test_a_published_result_relabelled_as_the_providers_is_an_error(tmp_path: Path) -> None:
    """NVIDIA's v5.0 EOS-DFW result with every "NVIDIA" in its logs and system JSON rewritten
    to the provider's name: the submitter checks see the provider, the run times do not lie."""
    root = bundle(tmp_path / "b")
    manifest = root / "cmax.toml"
    manifest.write_text(manifest.read_text().replace('name = "NVIDIA"', 'name = "Example Cloud"'))
    for path in (root / "v5.0" / "NVIDIA").rglob("*"):
        if path.suffix in (".txt", ".json"):
            path.write_text(path.read_text().replace('"NVIDIA"', '"Example Cloud"'))
    with load(root) as loaded:
        hits = [f for f in loaded.findings if f.rule.startswith("mlperf.")]
    assert [(f.rule, f.severity) for f in hits] == [("mlperf.public-result", "error")]
    assert "3 of its 3 runs repeat" in hits[0].message
    assert "training_results_v5.0:NVIDIA/results/eos-dfw_n64_ngc25.01_nemo" in hits[0].message


def test_other_submitters_published_results_are_not_in_the_index(tmp_path: Path) -> None:
    """The index holds NVIDIA's submissions; Oracle's own result in Oracle's bundle is clean."""
    with load(_oracle_bundle(tmp_path / "b", "2024-06-01")) as loaded:
        assert not [f for f in loaded.findings if f.rule == "mlperf.public-result"]


LAMBDA = DATA / "mlperf" / "v5.0" / "Lambda"
LAMBDA_SYSTEM = "1cc_b200_n1_ngc25.04_nemo"


def _lambda_bundle(root: Path, provider: str, *, system_json: bool = True) -> Path:
    """Lambda's published v5.0 llama2_70b_lora result: its logs say submission_org
    SUBMISSION_ORG_PLACEHOLDER, its system JSON and its folder say Lambda."""
    org = root / "v5.0" / "Lambda"
    shutil.copytree(LAMBDA / "results", org / "results")
    if system_json:
        shutil.copytree(LAMBDA / "systems", org / "systems")
    (root / "cmax.toml").write_text(
        manifest(name=provider, gpu="b200", nodes=1, path="v5.0/Lambda"))
    return root


def test_a_placeholder_submitter_is_named_by_the_system_json_and_folder(tmp_path: Path) -> None:
    logs = (LAMBDA / "results" / LAMBDA_SYSTEM / "llama2_70b_lora").glob("result_*.txt")
    assert all("SUBMISSION_ORG_PLACEHOLDER" in p.read_text() for p in logs)
    for name, system_json in (("a", True), ("b", False)):
        with load(_lambda_bundle(tmp_path / name, "Lambda", system_json=system_json)) as loaded:
            [s] = loaded.case.mlperf_sets
            assert s.submitter == "Lambda"
            assert not [f for f in loaded.findings if f.rule == "mlperf.foreign-submitter"]
            kinds = {(f.kind, f.value) for e in loaded.case.files for f in e.facts}
            assert ("submitter", "SUBMISSION_ORG_PLACEHOLDER") not in kinds


def test_a_placeholder_result_of_another_submitter_is_still_foreign(tmp_path: Path) -> None:
    """The placeholder hides nothing: folder and system JSON name Lambda, not the provider."""
    with load(_lambda_bundle(tmp_path / "b", "Example Cloud", system_json=False)) as loaded:
        hits = [f for f in loaded.findings if f.rule == "mlperf.foreign-submitter"]
    assert len(hits) == 1 and "submitted by 'Lambda'" in hits[0].message


def test_a_system_json_beside_the_benchmark_folder_is_used_with_its_place_stated(
        tmp_path: Path) -> None:
    """A provider's own layout: mlperf/llama2_70b_lora/result_*.txt and mlperf/system.json
    (Lambda's published files; the logs carry placeholders). The system JSON gives the
    submitter and the 8 GPUs, the result is rated, and the warning says where it was found."""
    root = tmp_path / "b"
    shutil.copytree(LAMBDA / "results" / LAMBDA_SYSTEM / "llama2_70b_lora",
                    root / "mlperf" / "llama2_70b_lora")
    shutil.copy(LAMBDA / "systems" / f"{LAMBDA_SYSTEM}.json", root / "mlperf" / "system.json")
    (root / "cmax.toml").write_text(
        manifest(name="Lambda", gpu="b200", nodes=1, path="mlperf/llama2_70b_lora"))
    with load(root) as loaded:
        [s] = loaded.case.mlperf_sets
        assert (s.submitter, s.num_gpus, s.accelerator) == ("Lambda", 8, None)
        assert _declared_accelerator(loaded.case) == "b200"
        hits = [f for f in loaded.findings if f.rule.startswith("mlperf.")]
        assert [(f.rule, f.file) for f in hits] == [("mlperf.no-system", "mlperf/system.json")]
        assert "beside the results, not under systems/" in hits[0].message
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric(None))
    [m] = card.mlperf
    assert m.ratio is not None and m.num_gpus == 8


def test_a_system_json_as_an_mlperf_path_is_refused_with_where_to_point(tmp_path: Path) -> None:
    """docs/manifest.md and validate agree: the system JSON is found from the results."""
    from cmax.errors import CmaxError

    root = bundle(tmp_path / "b")
    manifest = root / "cmax.toml"
    manifest.write_text(manifest.read_text().replace(
        'path = "v5.0/NVIDIA"', f'path = "v5.0/NVIDIA/systems/{SYSTEM}.json"'))
    try:
        with load(root):
            raise AssertionError("a system JSON was taken as an [[mlperf]] path")
    except CmaxError as exc:
        text = str(exc)
    assert "is an MLPerf system description" in text and "mlperf[0].path" in text
    assert "point path at the results" in text
    docs = (Path(__file__).parents[2] / "docs" / "manifest.md").read_text()
    assert "Not the system JSON: cmax finds it from the results" in docs
