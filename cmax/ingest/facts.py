"""Identity facts: what an evidence file says about itself, with the line that says it.

A manifest *claims* a GPU, a precision, a model, a scale and a cluster; the evidence files
*state* them too (nccl-tests device lines name the GPU and the host, a NeMo log prints its
world size and experiment name, an MLPerf system JSON names its accelerator and count, an
audit names its cluster). Parsers record every such statement as a :class:`Fact` while they
read the file, so that later stages can check the claims against the evidence without opening
any file again. This module imports nothing heavy: every stage and every parser may use it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The kinds of fact a parser may record. ``value`` is always the text as printed (trimmed),
#: so a finding can quote it; normalising (``"NVIDIA H100 80GB HBM3"`` -> ``h100-sxm``) is the
#: job of whoever compares it with a claim.
FACT_KINDS: dict[str, str] = {
    "gpu": "a GPU model name as the file prints it (device line, nvidia-smi, system JSON)",
    "gpu_count": "how many GPUs the run used (world size, nccl ranks, accelerators x nodes)",
    "node_count": "how many nodes the run used",
    "host": "a compute host the file names (one fact per distinct host)",
    "service_host": "a host the file names that runs no rated work: the login or head node an "
                    "audit ran from (not counted among the cluster's hosts)",
    "precision": "a precision the file states (fp8 / bf16 / fp16 / mxfp8 / nvfp4, as printed)",
    "model": "a model or workload name the file states (experiment, config or benchmark name)",
    "experiment": "the experiment or job name as printed",
    "container": "a container image the file names",
    "framework": "a framework or framework version the file names",
    "cluster": "a cluster name the file states about itself",
    "fabric": "an interconnect / transport the file shows (NET/IB, NET/Socket, EFA, ...)",
    "nvlink_domain": "the NVLink domain (NVL72 rack) a host is in: NCCL MNNVL fabric UUID + clique",
    "software": "a software version the file states (``where`` names the component: nccl)",
    "system": "a system or platform name (MLPerf system_name, submitter platform)",
    "submitter": "the MLPerf submitter",
    "parallel": "a parallel-config key=value the file states (tp=8, pp=4, gbs=512, devices=8 "
                "GPUs per node, ...)",
    "architecture": "a model-shape key=value the file states (layers=80, hidden=8192, heads=64)",
    "tally": "a cluster-wide count or flag an audit states (``where`` is its key path: "
             "gpus.pcieAcs.enabledCount, gpus.total, ...), for its internal-consistency checks",
}


@dataclass(frozen=True, order=True)
class Fact:
    """One statement an evidence file makes about itself.

    ``line`` is 1-based in the file (None when the format has no lines, e.g. a JSON key path
    is given in ``where`` instead). ``where`` says where inside the file when a line alone
    would not (``"systems/x.json: accelerator_model_name"``).
    """

    kind: str
    value: str
    line: int | None = None
    where: str | None = None

    def cite(self, file: str) -> str:
        """``file:line`` (or ``file (where)``) for a finding that quotes this fact."""
        loc = f"{file}:{self.line}" if self.line is not None else file
        return f"{loc} ({self.where})" if self.where else loc


def facts_of(facts: tuple[Fact, ...] | list[Fact], kind: str) -> list[Fact]:
    """The facts of one kind, in file order."""
    return [f for f in facts if f.kind == kind]
