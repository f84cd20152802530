"""The bundle cross-examined: hosts across files and copies, tripped from real files and held
clean on the honest variants a real cluster produces (docs/rules.md, "Cross-file rules")."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
from pathlib import Path

import polars as pl

from cmax.findings import Finding
from cmax.pipeline import load
from cmax.resolve.hosts import Witness
from cmax.states import State
from cmax.validate import validate
from cmax.validate.cluster_hosts import foreign_witnesses
from tests.fakes import FakeReference
from tests.paths import DATA, SAMPLES
from tests.sample_bundles import straighten_fp8_loss
from tests.validate.crossfile_trips import honest_power, power_json
from tests.validate.test_validate_rules import NETWORK, run_case
from tests.validate.validate_fakes import HonestBundle, honest_times

SWEEP = "nccl/all_reduce_perf_64n.txt"


def _rules(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings}


def _sample(tmp_path: Path, name: str = "aurora-compute") -> Path:
    bundle = tmp_path / name
    shutil.copytree(SAMPLES / name, bundle)
    return bundle


def test_a_sweep_of_a_sister_partition_is_another_clusters(tmp_path: Path) -> None:
    """aurora-h100-east-100..163 share the naming scheme of the audit's aurora-h100-east-000,
    but no host: with it they are 65 compute hosts on a 64-node claim."""
    bundle = _sample(tmp_path)
    sweep = bundle / SWEEP
    sweep.write_text(re.sub(r"aurora-h100-east-0(\d\d)", lambda m: f"aurora-h100-east-1{m[1]}",
                            sweep.read_text(encoding="utf-8")), encoding="utf-8")
    with load(bundle) as loaded:
        hits = [f for f in loaded.findings if f.rule == "crossfile.hosts-of-another-cluster"]
    assert [f.file for f in hits] == [SWEEP]
    assert "aurora-h100-east-100" in hits[0].message


def test_the_samples_hosts_are_their_own(tmp_path: Path) -> None:
    for name in ("aurora-compute", "borealis-cloud", "zenith-nvl72"):
        with load(SAMPLES / name) as loaded:
            assert not {r for r in _rules(loaded.findings) if r.startswith("crossfile.")}


def _w(path: str, kind: str, hosts: list[str]) -> Witness:
    return Witness(path, kind, frozenset(hosts))


def test_honest_host_sets_stay_clean() -> None:
    """A 2-node sweep on other nodes than the diagnosed ones, an audit that names only its
    login node, a telemetry exporter's addresses: all of one cluster, or nothing to tell."""
    pair = _w("nccl/pair.txt", "nccl-tests", ["node-010", "node-011"])
    diag = _w("diag/node-005.json", "dcgm-diag", ["node-005"])
    full = _w("nccl/full.txt", "nccl-tests", [f"node-{i:03d}" for i in range(64)])
    login = _w("audit.json", "clustermax-audit", ["login-01"])
    exporter = _w("power.json", "dcgm-exporter-power", [f"10.0.0.{i}" for i in range(8)])
    for found in ([pair, diag], [full, login], [full, exporter], [full, diag]):
        assert not list(foreign_witnesses(found, 64))


def test_two_sweeps_of_elsewhere_do_not_vouch_for_each_other() -> None:
    one = _w("nccl/a.txt", "nccl-tests", [f"node-{100 + i}" for i in range(64)])
    two = _w("nccl/b.json", "nccl-tests-json", [f"node-{100 + i}" for i in range(64)])
    power = _w("power.json", "dcgm-exporter-power", ["node-000", "node-001"])
    assert [w.path for w, _, _ in foreign_witnesses([one, two, power], 64)] == [
        "nccl/a.txt", "nccl/b.json"]


def test_a_diagnostic_of_other_nodes_clears_nothing() -> None:
    diag = _w("diag/node-200.json", "dcgm-diag", ["node-200"])
    sweep = _w("nccl/full.txt", "nccl-tests", [f"node-{i:03d}" for i in range(64)])
    assert [w.path for w, _, _ in foreign_witnesses([diag, sweep], 64)] == [
        "diag/node-200.json"]


def _validate(b: HonestBundle, root: Path) -> set[str]:
    return _rules(validate(b.build(root), FakeReference(network=NETWORK)))


def test_repeated_honest_runs_are_not_copies(tmp_path: Path) -> None:
    """The same configuration run twice (its own jitter, the same warm-up and stall
    iterations, the same loss curve) is two measurements."""
    b = HonestBundle()
    first = b.runs[0]
    b.runs.append(dataclasses.replace(first, seed=99, times=honest_times(first.base_step, 99),
                                      spec={"log": "training/rerun.log"}))
    assert "crossfile.copied-run" not in _validate(b, tmp_path)


def test_a_copy_rejittered_by_its_own_jitter_is_not_told_apart(tmp_path: Path) -> None:
    """The honest limit: noise as large as the run's jitter added to a copy makes it a run
    with twice the noise, which two honest runs also are."""
    b = HonestBundle()
    first = b.runs[0]
    rng = random.Random(4)
    times = [round(t * (1 + rng.gauss(0, 0.01)), 2) for t in first.times]
    b.runs.append(dataclasses.replace(first, times=times, spec={"log": "training/rerun.log"}))
    assert "crossfile.copied-run" not in _validate(b, tmp_path)


def test_a_repeated_honest_sweep_is_not_a_copy(tmp_path: Path) -> None:
    """A second sweep of the same fabric: the latency-bound sizes move by a percent or more."""
    def case(b: HonestBundle, root: Path) -> object:
        ev = b.build(root)
        rng = random.Random(8)
        noise = [1 + rng.gauss(0, 0.01) for _ in range(ev.nccl.height)]
        again = ev.nccl.with_columns(
            (pl.col("time_us") * pl.Series(noise)).round(1),
            pl.lit("nccl/again.txt").alias("source_file"), pl.lit("nccl[1]").alias("run_id"))
        ev.nccl = pl.concat([ev.nccl, again])
        return ev
    assert "crossfile.copied-sweep" not in _rules(run_case(case, tmp_path))  # type: ignore[arg-type]


def test_honest_telemetry_is_no_copy(tmp_path: Path) -> None:
    from tests.validate.crossfile_trips import _with_power

    found = _rules(run_case(_with_power(honest_power()), tmp_path))
    assert not {r for r in found if r.startswith("crossfile.")}


def test_a_copied_gpu_series_is_named(tmp_path: Path) -> None:
    from tests.validate.crossfile_trips import _with_power

    hits = [f for f in run_case(_with_power(power_json(["node-000"], gpus=3, copy_from=0)),
                                tmp_path) if f.rule == "crossfile.copied-telemetry"]
    assert len(hits) == 2 and "GPU 0 of node-000" in hits[0].message


def test_a_rejittered_gpu_series_is_a_copy(tmp_path: Path) -> None:
    """GPU 1's series standing for GPUs 5 and 6 of node-000, 3 W higher and re-jittered by
    2 W (a tenth of a GPU's own noise): each follows GPU 1 about the job's load."""
    from tests.validate.crossfile_trips import _with_power

    text = power_json(["node-000"], samples=60, load=True, copies={5: 1, 6: 1}, rejitter=2.0)
    hits = [f for f in run_case(_with_power(text), tmp_path)
            if f.rule == "crossfile.copied-telemetry"]
    assert [f.message.split(" follows")[0] for f in hits] == [
        "GPU 5 of node-000", "GPU 6 of node-000"]
    assert "follows GPU 1 of node-000" in hits[0].message and "re-jittered" in hits[0].message


def test_a_node_copied_into_another_file_is_a_copy(tmp_path: Path) -> None:
    """node-001's telemetry in a second file is node-000's, re-jittered, an hour later."""
    from tests.validate.crossfile_trips import _with_power

    own = power_json(["node-000"], samples=60, load=True)
    rng = random.Random(2)
    doc = json.loads(own)
    for series in doc["data"]["result"]:
        series["metric"].update(Hostname="node-001", instance="node-001:9400")
        series["values"] = [[t + 3600, f"{float(v) + rng.gauss(0, 2):.1f}"]
                            for t, v in series["values"]]
    copied = json.dumps(doc)
    hits = [f for f in run_case(_with_power(own, copied), tmp_path)
            if f.rule == "crossfile.copied-telemetry"]
    assert [f.file for f in hits] == ["telemetry/power1.json"] * 8
    assert "GPU 3 of node-001 follows GPU 3 of node-000 (telemetry/power.json)" in hits[3].message


def test_gpus_of_one_job_tracking_its_load_are_not_copies(tmp_path: Path) -> None:
    """Eight nodes' GPUs following one load (a 90 W swing, checkpoint dips of 250 W), each
    with its own offset and noise; and a copy re-jittered by as much as a GPU's own noise
    (the honest limit: it is then, statistically, another GPU)."""
    from tests.validate.crossfile_trips import _with_power

    honest = power_json([f"node-{i:03d}" for i in range(8)], samples=60, load=True)
    limit = power_json(["node-000"], samples=60, load=True, copies={5: 1}, rejitter=25.0)
    for text in (honest, limit):
        assert "crossfile.copied-telemetry" not in _rules(run_case(_with_power(text), tmp_path))


def test_a_sweep_of_another_cluster_decides_nothing(tmp_path: Path) -> None:
    from cmax.score import score
    from cmax.score.rubric import load_rubric

    bundle = _sample(tmp_path)
    sweep = bundle / SWEEP
    sweep.write_text(re.sub(r"aurora-h100-east-0(\d\d)", lambda m: f"aurora-h100-east-1{m[1]}",
                            sweep.read_text(encoding="utf-8")), encoding="utf-8")
    with load(bundle) as loaded:
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric())
    assert [n.verdict for n in card.network] == ["not_comparable"]
    assert "not counted" in card.network[0].notes[-1]
    assert card.scale is not None and card.scale.fabric_nodes in (None, 0)


def test_hosts_named_only_by_the_incident_log_do_not_enlarge_the_fleet(tmp_path: Path) -> None:
    """200 nodes padded into the incident log and gpus_in_service 1,600 on a 64-node
    system: the fleet stays what the system and the witnesses show (the sweep's 64 hosts; the
    audit's login node is no compute host: 64 x 8 = 512 GPUs)."""
    import datetime as dt

    from cmax.resolve.incident_review import review_incidents

    b = HonestBundle(gpus_in_service=1600)
    padded = [{"start": dt.datetime(2026, 7, 1 + i % 28, 1, 0, tzinfo=dt.UTC),
               "end": dt.datetime(2026, 7, 1 + i % 28, 1, 5, tzinfo=dt.UTC),
               "node": f"node-{i:03d}", "gpu": None, "category": "Host Maintenance",
               "planned": True, "description": "drain", "source_file": "incidents.csv",
               "line": i + 2} for i in range(200)]
    b.incidents = [*b.incident_rows(), *padded]
    review = review_incidents(b.build(tmp_path))
    assert review is not None and review.evidence_gpus == review.fleet_gpus == 512


# --- clocks -------------------------------------------------------------------------------------

JOB_IDS = {"llama3.1-405b_bf16_512.log": "41001", "llama3.1-405b_fp8_512.log": "41002",
           "grok1-314b_fp8_512.log": "41003"}


def _with_accounting(tmp_path: Path, data: str, edit: object = None) -> Path:
    """The aurora sample with its runs' job ids and the jobs' sacct output (tests/data)."""
    bundle = _sample(tmp_path)
    toml = bundle / "cmax.toml"
    text = toml.read_text(encoding="utf-8")
    for log, job in JOB_IDS.items():
        line = f'log = "training/{log}"\n'
        text = text.replace(line, f'{line}job_id = "{job}"\n')
    name = Path(data).name
    toml.write_text(text + f'\n[[accounting]]\npath = "slurm/{name}"\n', encoding="utf-8")
    (bundle / "slurm").mkdir()
    content = (DATA / "ingest" / "slurm" / name).read_text(encoding="utf-8")
    if edit is not None:
        content = edit(content)  # type: ignore[operator]
    (bundle / "slurm" / name).write_text(content, encoding="utf-8")
    return bundle


def _crossfile(bundle: Path) -> list[Finding]:
    with load(bundle) as loaded:
        return [f for f in loaded.findings if f.rule.startswith("crossfile.")]


def test_the_samples_jobs_witness_their_runs(tmp_path: Path) -> None:
    for i, name in enumerate(("sacct.json", "sacct_parsable.txt")):
        assert _crossfile(_with_accounting(tmp_path / str(i), name)) == []


def test_a_job_shorter_than_its_printed_steps_contradicts_the_log(tmp_path: Path) -> None:
    """The fp8 run prints 685 s of steps; its job held the allocation 10 minutes."""
    bundle = _with_accounting(tmp_path, "sacct_parsable.txt", lambda t: t.replace(
        "2026-09-14T08:34:25|00:13:55", "2026-09-14T08:30:30|00:10:00", 1))
    hits = _crossfile(bundle)
    assert [(f.rule, f.run_id) for f in hits] == [("crossfile.job-shorter-than-steps",
                                                    "runs[1]")]
    assert "685 s" in hits[0].message and "600 s" in hits[0].message


def test_a_few_seconds_of_clock_skew_stay_clean(tmp_path: Path) -> None:
    """An accounting clock 20 s short of the printed steps (a node clock off the
    controller's, stamps rounded): within the slack."""
    bundle = _with_accounting(tmp_path, "sacct_parsable.txt", lambda t: t.replace(
        "2026-09-14T08:34:25|00:13:55", "2026-09-14T08:31:35|00:11:05", 1))
    assert _crossfile(bundle) == []


def test_a_renumbered_best_job_breaks_the_order(tmp_path: Path) -> None:
    """The bf16 job (submitted first) renumbered 41009 to supersede the later ones."""
    bundle = _with_accounting(tmp_path, "sacct.json",
                              lambda t: t.replace('"job_id": 41001', '"job_id": 41009'))
    toml = bundle / "cmax.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('"41001"', '"41009"'),
                    encoding="utf-8")
    hits = _crossfile(bundle)
    assert {(f.rule, f.run_id) for f in hits} == {("crossfile.job-order", "runs[0]")}


def test_a_job_of_a_sister_cluster_is_not_this_clusters(tmp_path: Path) -> None:
    bundle = _with_accounting(tmp_path, "sacct_parsable.txt", lambda t: t.replace(
        "41003|41003|grok1-314b_fp8_512|aurora|aurora-h100-east-[000-063]",
        "41003|41003|grok1-314b_fp8_512|aurora|aurora-h100-east-[100-163]"))
    hits = _crossfile(bundle)
    assert [(f.rule, f.run_id) for f in hits] == [("crossfile.job-of-another-cluster",
                                                    "runs[2]")]


def test_honest_jobs_are_clean(tmp_path: Path) -> None:
    from tests.validate.crossfile_trips import HONEST_JOBS, with_jobs

    found = run_case(with_jobs(HONEST_JOBS), tmp_path)
    assert not {f.rule for f in found if f.rule.startswith("crossfile.")}


# --- fabrication ----------------------------------------------------------------------------


def test_a_fabricated_looking_pass_is_held_unverified(tmp_path: Path) -> None:
    """The aurora fp8 run with its loss replaced by a straight line: still fast enough to
    pass, but held at unverified with the rule named."""
    from cmax.score import score
    from cmax.score.rubric import load_rubric

    bundle = _sample(tmp_path)
    straighten_fp8_loss(bundle)
    with load(bundle) as loaded:
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric())
        before = {f.rule for f in loaded.findings if f.run_id == "runs[1]"}
    assert "fabrication.formula-loss" in before
    fp8 = card.workloads[1]
    assert fp8.verdict == "unverified" and "fabrication.formula-loss" in fp8.notes[-1]


def test_real_quirks_are_not_fabrication(tmp_path: Path) -> None:
    """A restart before the window (a second warm-up mid-log), a slow checkpoint step, a log
    printed to two decimals: none is a fabrication warning."""
    b = HonestBundle()
    run = b.runs[0]
    run.times = [*run.times[:30], run.base_step * 2.5, *run.times[31:]]
    found = _validate(b, tmp_path)
    assert not {r for r in found if r.startswith("fabrication.")}


def test_an_honest_clock_with_a_checkpoint_and_a_restart_stays_clean(tmp_path: Path) -> None:
    """Stamps one second apart from the printed steps' rounding, a 20 s checkpoint save after
    iteration 20, and a restart after iteration 40 (the stamp jumps 300 s, the iteration goes
    back to 38): the whole run's clock agrees with its steps."""
    b = HonestBundle()
    run = b.runs[0]
    clock, stamps, its, times = 1_789_372_800.0, [], [], []
    for i, t in enumerate(run.times):
        clock += t + (20.0 if i == 21 else 0.0)
        stamps.append(float(round(clock)))
        its.append(i)
        times.append(t)
        if i == 40:  # the job restarts from the checkpoint of iteration 37
            clock += 300.0
            for j in (38, 39, 40):
                clock += run.times[j]
                stamps.append(float(round(clock)))
                its.append(j)
                times.append(run.times[j])
    run.times, run.iterations = times, its
    run.extra_steps["wall_time_s"] = stamps
    found = _validate(b, tmp_path)
    assert not {r for r in found if r in ("consistency.stamps-shorter-than-steps",
                                         "consistency.run-wall-clock")}


# --- runs of one configuration -------------------------------------------------------------


def test_the_fastest_of_several_runs_is_held_and_the_configuration_pooled(tmp_path: Path) -> None:
    """Three fp8 runs: two at the cluster's speed, one 12 % faster. The fast one is held at
    unverified (crossfile.runs-disagree); the honest repeat is not."""
    from tests.validate.crossfile_trips import _faster_rerun

    found = run_case(_faster_rerun, tmp_path)
    held = {f.run_id for f in found if f.rule == "crossfile.runs-disagree"}
    assert held == {"runs[4]"}


def test_a_newer_container_is_another_configuration(tmp_path: Path) -> None:
    """The same workload on a newer NeMo release, genuinely 8 % faster: nothing to compare."""
    b = HonestBundle()
    first = b.runs[1]
    b.runs.append(dataclasses.replace(
        first, seed=31, times=honest_times(first.base_step * 0.92, 31),
        container="nvcr.io/nvidia/nemo:25.07.00", spec={"log": "training/new.log"}))
    assert "crossfile.runs-disagree" not in _validate(b, tmp_path)


def test_a_configuration_is_rated_on_all_its_runs() -> None:
    from cmax.judgement.exemplar import judge_exemplar
    from cmax.scorecard import WorkloadResult

    def run(ratio: float, verdict: str) -> WorkloadResult:
        return WorkloadResult(workload="llama3.1-405b", precision="fp8", num_gpus=512,
                              log="t.log", status="success", steps_total=50, ratio=ratio,
                              verdict=verdict, bar=0.95)

    judged = judge_exemplar([run(1.02, "pass"), run(0.85, "fail"), run(0.86, "fail")], 0.95)
    assert judged.state is State.NOT_MET and "its 3 runs pool to 0.907" in judged.reason
    assert judge_exemplar([run(1.02, "pass"), run(0.99, "inconclusive")], 0.95).state is State.MET
    # no run fails, yet a lucky pass among slow held runs pools below the bar
    assert judge_exemplar([run(1.02, "pass"), run(0.86, "unverified"), run(0.85, "unverified")],
                          0.95).state is State.NOT_MET


# --- logs cmax ships ------------------------------------------------------------------------


def test_a_sample_log_relabelled_as_another_providers_is_known(tmp_path: Path) -> None:
    """Borealis Cloud's fp8 log submitted as Aurora Compute's."""
    bundle = _sample(tmp_path)
    log = "training/llama3.1-405b_fp8_512.log"
    shutil.copy(SAMPLES / "borealis-cloud" / log, bundle / log)
    with load(bundle) as loaded:
        hits = [f for f in loaded.findings if f.rule == "crossfile.known-log"]
    assert [f.run_id for f in hits] == ["runs[1]"]
    assert "samples/borealis-cloud/training/llama3.1-405b_fp8_512.log" in hits[0].message


def test_a_published_sweep_of_another_operator_is_known_and_not_counted(tmp_path: Path) -> None:
    """CoreWeave's published NVL72 rack run (its five rows, both passes) printed as Zenith's
    own intra-rack sweep: known, and it decides nothing; Oracle's published sweep in Oracle's
    own bundle is Oracle's."""
    from cmax.score import score
    from cmax.score.rubric import load_rubric

    bundle = _sample(tmp_path, "zenith-nvl72")
    manifest = bundle / "cmax.toml"
    shutil.copy(DATA / "nccl" / "nvl72" / "gb200_one_rack.txt", bundle / "nccl" / "rack.txt")
    manifest.write_text(manifest.read_text(encoding="utf-8")
                        + '\n[[nccl]]\npath = "nccl/rack.txt"\n', encoding="utf-8")
    with load(bundle) as loaded:
        hits = [f for f in loaded.findings if f.rule == "crossfile.known-sweep"]
        card = score(loaded.case, loaded.findings, loaded.reference, load_rubric())
    assert [f.file for f in hits] == ["nccl/rack.txt"]
    assert "coreweave/nccl-tests pull request #43" in hits[0].message
    rack = [n for n in card.network if n.file == "nccl/rack.txt"]
    assert rack and all(n.verdict == "not_comparable" for n in rack)

    oracle = _sample(tmp_path, "borealis-cloud")
    shutil.copy(DATA / "nccl" / "exec_cmd_2node.txt", oracle / "nccl" / "two_node.txt")
    toml = oracle / "cmax.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(re.sub(r'name = "[^"]*"', 'name = "Oracle"', text, count=1)
                    + '\n[[nccl]]\npath = "nccl/two_node.txt"\n', encoding="utf-8")
    with load(oracle) as loaded:
        assert "crossfile.known-sweep" not in _rules(loaded.findings)


def test_the_index_of_shipped_logs_is_in_step_with_the_samples() -> None:
    import subprocess
    import sys

    from tests.paths import REPO

    done = subprocess.run([sys.executable, str(REPO / "tools" / "write_known_logs.py"),
                           "--check"], capture_output=True, check=False)
    assert done.returncode == 0, "run python tools/write_known_logs.py"


def _package_jobs(launch_hours: list[int]) -> object:
    import datetime as dt

    from cmax.submission.intake.facts import PackageFacts, PackageJob

    start = dt.datetime(2026, 9, 14, 8, tzinfo=dt.UTC)
    jobs = tuple(PackageJob(job_id=100 + i, entry=i, config=f"j{i}/llmb-config.yaml",
                            suite_key="pretrain_llama3.1_405b", dtype="bf16", scale=512,
                            recipe_release="26.08", images=(), launched=start.date(),
                            launched_at=start + dt.timedelta(hours=h))
                 for i, h in enumerate(launch_hours))
    return PackageFacts(kind="llmb-run archive", gpu_type="h100", jobs=jobs)


def test_a_renumbered_job_of_an_llmb_package_breaks_the_order(tmp_path: Path) -> None:
    """llmb-run rates the highest job id of a configuration: the first run's job (launched
    first) renumbered 102 above jobs launched after it. In order, the package is clean."""
    reference = FakeReference(network=NETWORK)
    ev = HonestBundle().build(tmp_path / "a")
    ev.package = _package_jobs([2, 3, 0])  # type: ignore[assignment]
    hits = [f for f in validate(ev, reference) if f.rule == "crossfile.job-order"]
    assert [f.run_id for f in hits] == ["runs[2]"] and "job 102" in hits[0].message
    ev = HonestBundle().build(tmp_path / "b")
    ev.package = _package_jobs([0, 1, 2])  # type: ignore[assignment]
    assert "crossfile.job-order" not in _rules(validate(ev, reference))
