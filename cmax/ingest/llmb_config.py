"""What an ``llmb-config_<jobid>.yaml`` beside a training log states about the log's job.

llmb-run writes the file into the experiment folder at launch, next to the job's logs
``log-<exp>_<jobid>_<retry>.out`` (NVIDIA/exemplar-performance
cli/llmb-run/example_llmb_config.yaml @ e249aa3): the model and its size, the dtype, the scale
(GPU count), the GPU type, the cluster's GPUs per node and the container images. A log
submitted from that folder carries these statements as identity facts of its own (each
citing the config file and line), so the claims ledger and the identity rules read them as
they read the log's own lines. The file is read with the package reader
(:func:`cmax.submission.intake.llmb.read_config`): one reader, one set of errors for a bad file.

A package job whose log prints fewer nodes than its scale needs is refused here
(:func:`refuse_short_logs`, with the rule of :func:`cmax.submission.intake.flags.blockers`): only
ingest
has read the logs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from cmax.errors import EvidenceError
from cmax.ingest.evidence import EvidenceFile, table_named
from cmax.ingest.facts import Fact, facts_of
from cmax.submission.intake.facts import PackageFacts
from cmax.submission.intake.flags import blockers

#: llmb-config key -> the fact kind it states
_KINDS = {"model_info.dtype": "precision", "model_info.scale": "gpu_count",
          "model_info.gpu_type": "gpu", "cluster_info.cluster_name": "cluster"}
_JOB_LOG = re.compile(r"^log-.*_(\d+)_\d+\.out$")


def beside(log: Path) -> Path | None:
    """The llmb-config of ``log``'s job in its folder: the one named by the log's job id
    (llmb-run's log name), else the folder's only one; None when there is none."""
    folder = log.parent
    match = _JOB_LOG.match(log.name)
    if match is not None:
        named = folder / f"llmb-config_{match.group(1)}.yaml"
        if named.is_file():
            return named
    configs = sorted(p for p in folder.glob("llmb-config_*.yaml") if p.is_file())
    return configs[0] if len(configs) == 1 else None


def config_facts(path: Path, rel: str) -> list[Fact]:
    """The identity facts an llmb-config states, each citing ``rel`` and its line."""
    from cmax.submission.intake.llmb import read_config

    values = read_config(path, rel)
    facts: list[Fact] = []

    def add(kind: str, value: object, key: str) -> None:
        text = str(value).strip() if value is not None else ""
        if text:
            facts.append(Fact(kind, text, None, values[key].where + f" ({key})"))

    name, size = values.get("model_info.model_name"), values.get("model_info.model_size")
    if name is not None:
        model = f"{name.value}_{size.value}" if size is not None and size.value else name.value
        add("model", model, "model_info.model_name")
    for key, kind in _KINDS.items():
        if key in values:
            add(kind, values[key].value, key)
    if "cluster_info.gpus_per_node" in values:
        add("parallel", f"devices={values['cluster_info.gpus_per_node'].value}",
            "cluster_info.gpus_per_node")
    images = values.get("container_info.images")
    for image in (images.value if images is not None and isinstance(images.value, list)
                  else []):
        add("container", image, "container_info.images")
    return facts


def refuse_short_logs(package: PackageFacts, logs: Mapping[int, EvidenceFile | None],
                      gpus_per_node: int) -> None:
    """A package job whose log prints a node count that cannot hold its scale is one error
    naming the log's line (``logs``: each drafted ``[[runs]]`` entry -> its ingested log)."""
    for job in package.jobs:
        log = logs.get(job.entry)
        stated = [f for f in facts_of(log.facts, "node_count") if f.value.isdigit()] \
            if log is not None else []
        if log is None or not stated:
            continue
        fewest = min(stated, key=lambda f: int(f.value))
        found = blockers(hosts=int(fewest.value), scale=job.scale, gpu_type=package.gpu_type,
                         gpus_per_node=gpus_per_node,
                         hosts_from=f"the log (line {fewest.line})" if fewest.line else "the log")
        if found:
            raise EvidenceError(f"llmb-run job {job.job_id} is not for rating: "
                                + "; ".join(found), file=log.path, line=fewest.line,
                                field=table_named("runs").key(job.entry),
                                fix="rate a job that ran at its llmb-config's scale "
                                f"({job.config}), or correct model_info.scale")
