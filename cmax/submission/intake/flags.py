"""Which llmb-run jobs are not for rating, and why: one home for the rule, read by the
llmb-run SQLite reader (``cmax/ingest/formats/llmb_sqlite.py``) and the llmb-config reader.

llmb-run records each job's launch switches: ``proxy`` (a reduced configuration on fewer GPUs,
"for debugging only ... must not be compared with production configurations or used for
validation", NVIDIA/exemplar-performance:cli/llmb-run/README.md@e249aa3), ``profile_enabled``
(nsys/torch profiling, which slows the steps it measures; Exemplar requires it off,
Exemplar_validation.md@e249aa3), ``env_overrides`` / ``model_overrides`` and, since v26.08.00,
``mbridge_args`` (raw Megatron-Bridge arguments from ``llmb-run submit --mbridge-arg``, which
"take precedence" over the recipe's, cli/llmb-run/README.md@e249aa3): the recipe was changed at
launch, so the run is no longer the recipe its baseline was measured with. The
job-history database stores them as ``proxy``/``profile_enabled`` integers and
``env_overrides_json``/``model_overrides_json`` (``json.dumps(value or {})``, so ``"{}"`` when
empty; cli/llmb-run/src/llmb_run/job_history.py@e249aa3); ``llmb-config_<jobid>.yaml`` holds
them under ``job_config``.

A node list that cannot hold the job's scale is refused too: llmb-run asks Slurm for
ceil(scale / GPUs per node) nodes, with 8 GPUs per node for A100/H100/B200/B300 and 4 for
GB200/GB300 (``GPU_TYPE_TO_NUM_GPUS``, cli/llmb-run/src/llmb_run/constants.py@e249aa3, held
in reference/gpus.toml), so
fewer nodes than that means the run was not the scale it claims. The job database has the
node list; an archive or a folder of experiments has none (llmb-config states the scale and
GPUs per node, not the nodes), so there the node count the job's log prints is read
(``SLURM_JOB_NUM_NODES``/``SLURM_NNODES``, ``num_nodes``:
:func:`cmax.ingest.llmb_config.refuse_short_logs`). Host
names in a log's NCCL lines are not counted: a log's head names only the hosts that printed
there, a lower bound that cannot show a node list too short.
"""

from __future__ import annotations

import json
import math
from typing import Any

from cmax.reference.gpus import gpus_per_node

#: GPU family -> GPUs per node as llmb-run sizes a job (reference/gpus.toml ``gpus_per_node``)
GPUS_PER_NODE = gpus_per_node()
MAX_GPUS_PER_NODE = max(GPUS_PER_NODE.values())

FIX = ("rerun the workload at its Exemplar configuration (`llmb-run submit` without "
       "--proxy, profiling, -e/--env, model overrides or --mbridge-arg) and rate that job")


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false", "no", "none", "null")
    return bool(value)


def _overridden(value: Any) -> str | None:
    """The overrides as shown in the error, or None when there are none."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return text[:120]
    if not value:
        return None
    if isinstance(value, dict):
        return ", ".join(sorted(str(k) for k in value))[:120]
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)[:120]
    return str(value)[:120]


def blockers(*, proxy: Any = None, profile_enabled: Any = None, env_overrides: Any = None,
             model_overrides: Any = None, mbridge_args: Any = None,
             hosts: int | None = None, scale: Any = None,
             gpu_type: str | None = None, gpus_per_node: Any = None,
             hosts_from: str = "node_list") -> list[str]:
    """Every reason a job is not for rating, each naming its llmb-run flag; empty: ratable.
    ``hosts_from`` names where the node count was read."""
    found: list[str] = []
    if _truthy(proxy):
        found.append("proxy = true (a reduced proxy configuration, not the recipe's scale)")
    if _truthy(profile_enabled):
        found.append("profile_enabled = true (profiling slows the steps it measures)")
    for name, value in (("env_overrides", env_overrides), ("model_overrides", model_overrides),
                        ("mbridge_args", mbridge_args)):
        shown = _overridden(value)
        if shown is not None:
            found.append(f"{name} set ({shown}): the recipe was changed at launch")
    try:
        gpus = int(scale) if scale is not None else None
    except (TypeError, ValueError):
        gpus = None
    per_node = _per_node(gpu_type, gpus_per_node)
    if hosts is not None and gpus is not None and hosts * per_node < gpus:
        found.append(f"{hosts_from} has {hosts} node(s), which cannot hold scale {gpus} at "
                     f"{per_node} GPUs per node (needs {math.ceil(gpus / per_node)})")
    return found


def _per_node(gpu_type: str | None, gpus_per_node: Any) -> int:
    try:
        declared = int(gpus_per_node)
    except (TypeError, ValueError):
        declared = 0
    if declared > 0:
        return declared
    return GPUS_PER_NODE.get(str(gpu_type or "").strip().lower(), MAX_GPUS_PER_NODE)
