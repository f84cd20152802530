"""What a real log says about itself beyond its step lines, read and cross-examined: the
network's shape in Megatron's argument dump, Lightning's ``devices``/``num_nodes``, and the
``llmb-config_<jobid>.yaml`` llmb-run writes beside a job's log.

Formats: the argument dump is NVIDIA/Megatron-LM megatron/training/arguments.py's
(``  <arg> <dots> <value>`` between ``arguments`` rules, as in
tests/data/ingest/megatron_bridge_llama3.1-70b.log; a real one is quoted in NVIDIA/Megatron-LM
issue #516: ``  fp8 ..... None``, ``  hidden_size ..... 1024``,
``  global_batch_size ..... 64``); the trainer block is NeMo's configuration
dump (``trainer:`` / ``  devices: 8`` / ``  num_nodes: 2``, OmegaConf YAML as in
tests/data/ingest/nemo2_identity_preamble.log); the llmb-config keys and order are
NVIDIA/exemplar-performance cli/llmb-run/example_llmb_config.yaml @ e249aa3 (as
tests/submission/intake/llmb_fakes.py writes them).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmax.errors import EvidenceError
from cmax.ingest.textlines import head_facts
from cmax.pipeline import load
from tests.fakes import manifest_text, run_toml
from tests.paths import DATA
from tests.submission.intake.llmb_fakes import Job, config_text

LOG = DATA / "ingest" / "megatron_bridge_llama3.1-70b.log"


def _dump(**args: object) -> str:
    lines = ["0: ------------------------ arguments ------------------------"]
    lines += [f"0:   {k} {'.' * (48 - len(k))} {v}" for k, v in sorted(args.items())]
    lines.append("0: -------------------- end of arguments ---------------------")
    return "\n".join(lines) + "\n"


def _log(folder: Path, name: str, head: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(head + LOG.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def _bundle(root: Path, log: str, *, workload: str = "llama3.1-70b", gpus: int = 64,
            precision: str = "fp8") -> Path:
    (root / "cmax.toml").write_text(manifest_text(
        run_toml(workload, precision, gpus, log), interconnect=None, date="2026-05-01"),
        encoding="utf-8")
    return root


def test_megatron_shape_and_lightning_trainer_are_facts(tmp_path: Path) -> None:
    head = _dump(num_layers=32, hidden_size=4096, num_attention_heads=32, fp8="hybrid",
                 ffn_hidden_size=14336) + "trainer:\n  devices: 8\n  num_nodes: 2\n"
    facts = {(f.kind, f.value) for f in head_facts(_log(tmp_path, "a.log", head))}
    assert {("architecture", "layers=32"), ("architecture", "hidden=4096"),
            ("architecture", "heads=32"), ("precision", "fp8=hybrid"),
            ("parallel", "devices=8"), ("node_count", "2")} <= facts
    # ffn_hidden_size is not the hidden size
    assert ("architecture", "hidden=14336") not in facts


def test_the_dump_of_a_bf16_run_as_megatron_prints_it(tmp_path: Path) -> None:
    # the shape of NVIDIA/Megatron-LM issue #516's dump: fp8 None, a 1024-wide network
    head = _dump(fp8="None", hidden_size=1024, num_layers=24, global_batch_size=64,
                 fp8_amax_history_len=1)
    facts = {(f.kind, f.value) for f in head_facts(_log(tmp_path, "a.log", head))}
    assert {("precision", "fp8=None"), ("architecture", "hidden=1024"),
            ("architecture", "layers=24"), ("parallel", "gbs=64")} <= facts


def test_an_8b_network_declared_as_70b_is_named(tmp_path: Path) -> None:
    _log(tmp_path / "training", "run.log", _dump(num_layers=32, hidden_size=4096))
    with load(_bundle(tmp_path, "training/run.log")) as loaded:
        found = [f for f in loaded.findings if f.rule == "identity.architecture"]
        model = loaded.case.claims.get("runs[0]", "model")
    assert len(found) == 1 and found[0].severity == "error"
    assert "hidden size 4096, not 8192" in found[0].message
    assert "llama3.1-8b" in found[0].message
    assert model is not None and model.status == "contradicted"


def test_the_declared_networks_shape_corroborates_the_model(tmp_path: Path) -> None:
    _log(tmp_path / "training", "run.log", _dump(num_layers=80, hidden_size=8192))
    with load(_bundle(tmp_path, "training/run.log")) as loaded:
        rules = {f.rule for f in loaded.findings}
        model = loaded.case.claims.get("runs[0]", "model")
    assert "identity.architecture" not in rules
    assert model is not None and model.status == "corroborated"
    assert [c.text for c in model.support] == ["hidden size 8192", "80 layers"]


def _job_folder(root: Path, *, scale: int = 64, size: str = "70b") -> str:
    folder = root / "llama3.1/experiments/pretrain_llama3.1/run_1/pretrain_llama3.1"
    _log(folder, "log-pretrain_llama3.1_70b_fp8_123_0.out")
    job = Job(job_id=123, model_name="llama3.1", model_size=size, dtype="fp8", scale=scale,
              gpu_type="h100")
    (folder / "llmb-config_123.yaml").write_text(config_text(job), encoding="utf-8")
    return (folder / "log-pretrain_llama3.1_70b_fp8_123_0.out").relative_to(root).as_posix()


def test_llmb_config_beside_the_log_corroborates_the_claims(tmp_path: Path) -> None:
    log = _job_folder(tmp_path)
    with load(_bundle(tmp_path, log)) as loaded:
        claims = {c.kind: c for c in loaded.case.claims if c.subject == "runs[0]"}
        errors = [f for f in loaded.findings if f.rule.startswith("identity.")
                  and f.severity == "error"]
    assert {k for k in ("model", "gpu_count", "precision", "gpu")
            if claims[k].status == "corroborated"} == {"model", "gpu_count", "precision", "gpu"}
    assert "llmb-config_123.yaml:" in claims["gpu_count"].support[0].cite()
    assert errors == []


def test_llmb_config_beside_the_log_contradicts_a_larger_claim(tmp_path: Path) -> None:
    log = _job_folder(tmp_path, scale=64)
    with load(_bundle(tmp_path, log, gpus=512)) as loaded:
        found = [f for f in loaded.findings if f.rule == "identity.gpu-count"]
    assert found and "model_info.scale" in found[0].message


def test_a_broken_llmb_config_beside_the_log_is_one_error(tmp_path: Path) -> None:
    log = _job_folder(tmp_path)
    config = next(tmp_path.rglob("llmb-config_123.yaml"))
    config.write_text("model_info: [unclosed\n", encoding="utf-8")
    with pytest.raises(EvidenceError, match="llmb-config"), load(_bundle(tmp_path, log)):
        pass


def test_a_folder_without_llmb_config_reads_as_before(tmp_path: Path) -> None:
    (tmp_path / "training").mkdir()
    shutil.copy(LOG, tmp_path / "training" / "run.log")
    with load(_bundle(tmp_path, "training/run.log")) as loaded:
        record = next(f for f in loaded.case.files if f.path == "training/run.log")
    assert not [f for f in record.facts if f.where and "llmb-config" in f.where]
