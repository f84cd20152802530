"""The ClusterMAX audit (``audit.values.json`` written by SemiAnalysis' ``cmax audit``).

Recognised by its JSON shape (``audit_data`` and ``cluster``, or the bare collector JSON);
graded into ``audit_checks`` rows: PASS / WARNING / FAIL / SKIPPED, derived as ClusterMAX does
(research clustermax_audit_format.md).

The file holds raw collector facts only (research/clustermax_audit_format.md §0); the verdicts
are computed at report time by ``audit_report.evaluate()``. This module re-derives them for
the 55 rule keys plus the 4 security extensions (§3.3), in ClusterMAX's order (§3.2):

1. harness gate: a check that does not exist for this orchestrator is SKIPPED (even if absent);
2. an absent (or null) key is not graded: the row is omitted, never SKIPPED or FAIL;
3. a "does not apply" sentinel is SKIPPED;
4. a conclusively false prerequisite is SKIPPED;
5. a failing value blocked by a guard is PASS (verified some other way) or SKIPPED (not
   applicable, or unverified);
6. otherwise FAIL for MISSING/VERSION rules, WARNING for CONFIG rules and for ``unknown``.

One deliberate tightening: ClusterMAX passes any value its rule does not flag, so a sentinel
such as ``untested`` or a value outside the documented vocabulary would PASS. Here a check
passes only on a value that is known to be good; anything unrecognised is a WARNING
("unverified"), because an unknown value must never count as a pass.

Both raw layouts are handled: Slurm/standalone (``audit.version`` 2.1) and Kubernetes
(``audit.version`` 1.0, fleet-shaped ``security.bmcIpmi``, no ``access.sudoAvailable``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.errors import CmaxError, EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import AuditFormat, Probe, register

ALL = frozenset({"slurm", "k8s", "standalone"})
SO = frozenset({"slurm", "k8s"})
SLURM = frozenset({"slurm"})
K8S = frozenset({"k8s"})

STATUSES = ("PASS", "WARNING", "FAIL", "SKIPPED")

# criterion id -> category in the ClusterMAX criteria catalogue (research §5)
CRITERION_CATEGORY: dict[str, str] = {
    **dict.fromkeys(("sudo-available", "user-management", "ssh-between-nodes", "external-idp",
                     "helm-access", "vcluster-tenancy", "rbac-access"), "access"),
    **dict.fromkeys((
        "security-nvidia-driver", "security-nvidia-container-toolkit", "cuda-toolkit-security",
        "security-runc", "security-docker", "security-connectx-firmware",
        "guest-kernel-current", "ubuntu-kernel-fragnesia-dirty-frag", "security-januscape",
        "security-qemu-virtio-serial", "security-vmscape", "security-bmc-ipmi",
        "ufm-secured-bare-metal-cloud", "security-pcie-passthrough", "security-nvlink-boundary",
        "security-observability-isolation", "security-virtio-net-bluefield",
        "security-dpu-host-isolation"), "security"),
    **dict.fromkeys(("gpu-drivers", "container-toolkit", "gpudirect-rdma", "pcie-acs",
                     "gdrcopy", "vboost-control", "vm-iommu-passthrough", "arm-smmu-cmdqv"),
                    "gpu-stack"),
    **dict.fromkeys(("ncu-profiling", "perf-access"), "profiling"),
    **dict.fromkeys(("idle-thermals", "xid-monitoring", "monitoring-stack",
                     "cpu-power-governor", "gpu-job-attribution"), "monitoring"),
    **dict.fromkeys(("fabric-class", "hca-naming", "topology-conf", "gang-scheduling",
                     "bin-packing", "nccl-autoconfig", "ib-tenant-isolation",
                     "nccl-ib-qps-entropy", "ingress-controller", "load-balancer"),
                    "networking"),
    **dict.fromkeys(("nccl-installed", "mpi-srun-pmix", "hpc-sdk", "lmod"), "software"),
    **dict.fromkeys(("pyxis", "enroot", "nccl-topo-file-container", "docker-workers",
                     "singularity"), "containers"),
    **dict.fromkeys(("dcgm-healthchecks", "healthcheck-program", "prolog-fast",
                     "auto-remediation"), "health"),
    **dict.fromkeys(("shared-fs", "default-storage-class", "csi-rwx"), "storage"),
    **dict.fromkeys(("slurm-commands", "sacct-accounting", "resource-limits", "gpu-operator",
                     "network-operator", "mpi-operator", "workload-schedulers"), "scheduler"),
}

_NOT_APPLICABLE = {"not_applicable", "n_a", "na"}
_UNREAD = {"unknown", "not_found", "none", "", "unavailable", "untested"}
_NO_NCU_VERDICT = {"compile-failed", "pod-failed", "resource-unavailable", "untested", "unknown"}
_TOPO_RAN_NOT = {"launch_failed", "check_incomplete", "no_allocation", "no_srun",
                 "check_disabled"}


@dataclass(frozen=True)
class CheckResult:
    """One graded row of the audit report."""

    key: str
    group: str  # ClusterMAX report category: versions, isolation, hardware, ...
    category: str  # criteria-catalogue category: security, networking, ...
    criterion: str
    status: str  # PASS / WARNING / FAIL / SKIPPED
    observed: str | None
    minimum: str | None
    basis: str


@dataclass
class AuditReport:
    cluster: str | None
    harness: str
    environment: str | None
    checks: list[CheckResult]
    audited_at: str | None = None

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for c in self.checks if c.status == s) for s in STATUSES}


class _Missing:
    pass


MISSING = _Missing()


def _norm(value: object) -> str:
    text = str(value).strip().lower()
    for ch in "- /":
        text = text.replace(ch, "_")
    return text


def _get(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return MISSING
        data = data[part]
    return MISSING if data is None else data


def _bool(value: object) -> bool | None:
    """ClusterMAX's boolean reading: true/"true"/"1"/"yes" and false/"false"/"0"/"no"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    return None


def _observed(value: object) -> str | None:
    if value is MISSING:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


# A grader sees the value and the whole audit_data; returns (status, basis).
Grade = tuple[str, str]
Grader = Callable[[Any, "_Ctx"], Grade]


@dataclass
class _Ctx:
    data: dict[str, Any]
    harness: str
    environment: str | None
    amd: bool
    gpu_model: str

    def get(self, dotted: str) -> Any:
        return _get(self.data, dotted)


def _unverified(value: object) -> Grade:
    if _norm(value) == "unknown":
        return "WARNING", "unverified"
    return "WARNING", f"unrecognised value {_observed(value)!r}; not counted as a pass"


def _status_grader(*, fail: tuple[str, ...] = (), warn: tuple[str, ...] = (),
                   ok: tuple[str, ...] = ("pass",), guard: Callable[[_Ctx], Grade | None]
                   | None = None) -> Grader:
    """Grade a status-vocabulary value; ``guard`` may turn a flagged value into PASS/SKIPPED."""

    def grade(value: Any, ctx: _Ctx) -> Grade:
        v = _norm(value)
        if v in fail or v in warn:
            if guard is not None and (guarded := guard(ctx)) is not None:
                return guarded
            return ("FAIL", "VERSION") if v in fail else ("WARNING", "CONFIG")
        if v in ok:
            return "PASS", ""
        return _unverified(value)

    return grade


def _bool_grader(*, bad: bool, severity: str, basis: str | None = None,
                 guard: Callable[[_Ctx], Grade | None] | None = None) -> Grader:
    """Grade a boolean fact; ``bad`` is the failing value, ``severity`` FAIL or WARNING."""
    flagged = basis or ("MISSING" if severity == "FAIL" else "CONFIG")

    def grade(value: Any, ctx: _Ctx) -> Grade:
        if (decided := _decided(value, good=not bad)) is not None:
            return decided
        if guard is not None and (guarded := guard(ctx)) is not None:
            return guarded
        return severity, flagged

    return grade


def _decided(value: object, *, good: bool) -> Grade | None:
    """A yes/no fact's grade where the value alone decides it: unverified when it is no
    boolean, PASS when it is ``good``; None when it is the other value and the check has to
    look further (a guard, a related fact)."""
    b = _bool(value)
    if b is None:
        return _unverified(value)
    return ("PASS", "") if b is good else None


def _modern_rdma(path: object) -> bool:
    """GPUDirect RDMA through dma-buf or the open kernel module (no nvidia-peermem needed)."""
    return isinstance(path, dict) and bool(_bool(path.get("dmaBuf"))
                                           or _bool(path.get("nvidiaOpen")))


# ----------------------------------------------------------------------------- guards

def _amd_skip(ctx: _Ctx) -> Grade | None:
    return ("SKIPPED", "not applicable: AMD GPUs") if ctx.amd else None


def _worker_not_run(ctx: _Ctx) -> Grade | None:
    if _bool(ctx.get("containers.workerCheckOk")) is False:
        return "SKIPPED", "guard-suppressed (unverified): the worker container check never ran"
    return None


def _toolkit_guard(ctx: _Ctx) -> Grade | None:
    if ctx.amd:
        return "SKIPPED", "not applicable: AMD GPUs"
    if _bool(ctx.get("containers.dockerNvidiaRuntimeConfigured")) is True:
        return "PASS", "verified: docker nvidia runtime configured"
    return _worker_not_run(ctx)


def _worker_check_guard(ctx: _Ctx) -> Grade | None:
    if _bool(ctx.get("containers.dockerNvidiaRuntimeConfigured")) is True:
        return "PASS", "verified: container toolkit attested by the nvidia runtime"
    return None


def _bluefield_absent(ctx: _Ctx, record: str) -> bool:
    rec = ctx.get(f"securityVersions.{record}")
    if not isinstance(rec, dict):
        return False
    return _norm(rec.get("platformMode")) == "absent" or rec.get("bluefieldPresent") is False


def _ncu_conclusive(ctx: _Ctx) -> bool:
    access = ctx.get("software.ncu.hardwareCounterAccess")
    if access is MISSING:
        return True
    inconclusive = set(_NO_NCU_VERDICT)
    if ctx.harness == "k8s":
        inconclusive.add("no-ncu")
    return str(access).strip().lower() not in inconclusive


def _ncu_installed_guard(ctx: _Ctx) -> Grade | None:
    if ctx.amd:
        return "SKIPPED", "not applicable: AMD GPUs"
    if not _ncu_conclusive(ctx):
        return "SKIPPED", "guard-suppressed (unverified)"
    return None


# ----------------------------------------------------------------------------- special rules

def _version_record(record: str, *, amd_guard: bool = False,
                    bluefield_guard: bool = False) -> Grader:
    def guard(ctx: _Ctx) -> Grade | None:
        if amd_guard and ctx.amd:
            return "SKIPPED", "not applicable: AMD GPUs"
        if bluefield_guard and _bluefield_absent(ctx, record):
            return "SKIPPED", "not applicable: BlueField absence proven"
        if _get(ctx.data, f"securityVersions.{record}.gracePeriod.active") is True:
            return "PASS", "vendor grace period active"
        return None

    return _status_grader(fail=("fail",), warn=("unknown",), guard=guard)


def _bluefield_exposure(value: Any, ctx: _Ctx) -> Grade:
    status = ctx.get("securityVersions.virtioNetBluefield.status")
    if status is not MISSING and _norm(status) in _NOT_APPLICABLE:
        return "SKIPPED", "collector reported not applicable"
    v = _norm(value)
    if v in ("none", "live"):
        return "PASS", "the firmware row carries the verdict"
    if v.startswith("latent"):
        if ctx.get("securityVersions.virtioNetBluefield.gracePeriod.active") is True:
            return "PASS", "vendor grace period active"
        return "WARNING", "CONFIG"
    return _unverified(value) if v != "unknown" else ("WARNING", "unverified")


def _dpu_isolation(value: Any, ctx: _Ctx) -> Grade:
    v = _norm(value)
    if v in ("fail", "unknown"):
        if _bluefield_absent(ctx, "dpuHostIsolation"):
            return "SKIPPED", "not applicable: BlueField absence proven"
        return "WARNING", "CONFIG"
    if v == "pass":
        return "PASS", ""
    return _unverified(value)


def _rdma_path(value: Any, ctx: _Ctx) -> Grade:
    if not isinstance(value, dict):
        return _unverified(value)
    if _modern_rdma(value):
        return "PASS", ""
    return _amd_skip(ctx) or ("WARNING", "CONFIG")


def _peermem(value: Any, ctx: _Ctx) -> Grade:
    if (decided := _decided(value, good=False)) is not None:
        return decided
    if _modern_rdma(ctx.get("gpus.gpuDirectRdmaPath")):
        return "PASS", "modern GPUDirect path present; legacy peermem harmless"
    return _amd_skip(ctx) or ("WARNING", "CONFIG")


def _pcie_acs(value: Any, ctx: _Ctx) -> Grade:
    if (decided := _decided(value, good=False)) is not None:
        return decided
    if _bool(ctx.get("gpus.pcieAcs.scoped")) is not True:
        return "SKIPPED", "guard-suppressed (unverified): ACS scope not established"
    return "WARNING", "CONFIG"


def _vboost(value: Any, ctx: _Ctx) -> Grade:
    if (decided := _decided(value, good=True)) is not None:
        return decided
    status = _norm(ctx.get("gpu_controls.vboost.status"))
    if ctx.amd:
        return "SKIPPED", "not applicable: AMD GPUs"
    if status in _NOT_APPLICABLE or ctx.gpu_model.upper() in ("B300", "GB300"):
        return "SKIPPED", "not applicable: no vboost slider on this GPU"
    if status in ("unavailable", "not_checked"):
        return "SKIPPED", "guard-suppressed (unverified): vboost never executed"
    return "WARNING", "CONFIG"


def _topo_file(value: Any, ctx: _Ctx) -> Grade:
    v = _norm(value)
    if v == "pass":
        return "PASS", ""
    if v in ("fail", "warning"):
        return "WARNING", "CONFIG"
    if v == "unknown":
        reason = _norm(ctx.get("nccl_topo_file.container.reason_code"))
        if reason in _TOPO_RAN_NOT:
            return "WARNING", "unverified: the container arm did not run"
        return "SKIPPED", "not applicable"
    return _unverified(value)


def _user_mgmt(value: Any, ctx: _Ctx) -> Grade:
    if not isinstance(value, dict):
        return _unverified(value)
    flags = [_bool(value.get("useradd")), _bool(value.get("groupadd"))]
    if False in flags:
        return "WARNING", "CONFIG"
    if all(f is True for f in flags):
        return "PASS", ""
    return "WARNING", "unverified"


def _numeric_limit(limit: int) -> Grader:
    def grade(value: Any, ctx: _Ctx) -> Grade:
        try:
            number = float(str(value).strip())
        except ValueError:
            return _unverified(value)
        return ("WARNING", "CONFIG") if number > limit else ("PASS", "")

    return grade


def _bmc_ipmi(block: Any, ctx: _Ctx) -> Grade:
    if not isinstance(block, dict):
        return _unverified(block)
    exposed = block.get("exposed")
    exposed_nodes = block.get("exposedNodes") or []
    if _bool(exposed) is True or exposed_nodes:
        return "FAIL", "BMC reachable from a tenant workload"
    total, checked = block.get("nodesTotal"), block.get("nodesChecked")
    if total is not None or checked is not None:
        complete = (isinstance(total, int) and isinstance(checked, int) and checked >= total
                    and block.get("nodeCoverageComplete") is not False)
        if _bool(exposed) is False and complete:
            return "PASS", f"{checked}/{total} workers checked, none exposed"
        return "WARNING", f"coverage incomplete ({checked}/{total} workers checked)"
    if _bool(exposed) is False:
        return "PASS", "aggregate exposed=false (no node coverage recorded)"
    return "WARNING", "exposure unknown"


def _ufm(block: Any, ctx: _Ctx) -> Grade:
    if not isinstance(block, dict):
        return _unverified(block)
    if block.get("applicable") is False:
        return "SKIPPED", "no native InfiniBand fabric detected"
    status = _norm(block.get("status"))
    if status in _NOT_APPLICABLE:
        return "SKIPPED", "collector reported not applicable"
    if status == "fail":
        return "FAIL", "status fail"
    if status == "pass":
        return "PASS", ""
    if status in ("manual", "unknown"):
        return "WARNING", f"status {status}"
    return _unverified(block.get("status"))


def _pcie_passthrough(block: Any, ctx: _Ctx) -> Grade:
    if (ctx.environment or "").lower() == "vm":
        return "SKIPPED", "not applicable inside a VM"
    if not isinstance(block, dict):
        return _unverified(block)
    required = _bool(block.get("hostVerificationRequired"))
    if required is True:
        return "WARNING", "host verification required=true"
    if required is False:
        return "PASS", ""
    return _unverified(block.get("hostVerificationRequired"))


def _nvlink_boundary(block: Any, ctx: _Ctx) -> Grade:
    if not isinstance(block, dict):
        return _unverified(block)
    if _bool(block.get("nvidiaGpuPresent")) is False:
        return "SKIPPED", "not applicable: no NVIDIA GPU"
    if _bool(block.get("domainExclusive")) is True:
        return "PASS", "provider attested an exclusive NVLink domain"
    if _bool(block.get("nvlinkExposed")) is False and _bool(block.get("topologyChecked")):
        return "PASS", "no tenant-visible NVLink"
    return "WARNING", "tenant-visible NVLink; provider must attest the physical domain"


# ----------------------------------------------------------------------------- the 59 checks

@dataclass(frozen=True)
class Check:
    key: str  # dotted path into audit_data, or an extension id
    group: str
    harnesses: frozenset[str]
    criterion: str | None
    grade: Grader
    source: str | None = None  # dotted path read by an extension check
    prerequisite: str | None = None
    minimum: str | None = None


def _v(record: str, criterion: str | None, harnesses: frozenset[str] = ALL, **kw: bool) -> Check:
    return Check(f"securityVersions.{record}.status", "versions", harnesses, criterion,
                 _version_record(record, **kw))


CHECKS: tuple[Check, ...] = (
    _v("nvidiaDriver", "security-nvidia-driver", amd_guard=True),
    _v("nvidiaContainerToolkit", "security-nvidia-container-toolkit", amd_guard=True),
    _v("cudaToolkit", "cuda-toolkit-security", amd_guard=True),
    _v("runc", "security-runc"),
    _v("docker", "security-docker"),
    _v("connectxFirmware", "security-connectx-firmware", SO),
    _v("dcgm", None),
    _v("dcgmExporter", None),
    _v("virtioNetBluefield", "security-virtio-net-bluefield", SO, bluefield_guard=True),
    Check("securityVersions.virtioNetBluefield.exposure", "isolation", SO,
          "security-virtio-net-bluefield", _bluefield_exposure),
    Check("securityVersions.dpuHostIsolation.status", "isolation", SO,
          "security-dpu-host-isolation", _dpu_isolation),
    Check("security.januscape.status", "isolation", ALL, "security-januscape",
          _status_grader(warn=("host_patch_required", "unknown"), ok=("not_exposed",))),
    Check("security.guestKernel.newerInstalled", "isolation", ALL, "guest-kernel-current",
          _bool_grader(bad=True, severity="FAIL", basis="VERSION")),
    Check("security.fragnesia.status", "isolation", ALL, "ubuntu-kernel-fragnesia-dirty-frag",
          _status_grader(fail=("fail",), warn=("unknown",))),
    Check("containers.nvidiaContainerToolkit", "containers", ALL, "container-toolkit",
          _bool_grader(bad=False, severity="FAIL", guard=_toolkit_guard)),
    Check("containers.workerCheckOk", "orchestration", ALL, None,
          _bool_grader(bad=False, severity="WARNING", guard=_worker_check_guard)),
    Check("containers.pyxisRuntimeWorks", "orchestration", SLURM, "pyxis",
          _bool_grader(bad=False, severity="WARNING")),
    Check("software.nvhpc.status", "software", SLURM, "hpc-sdk",
          _status_grader(fail=("fail",), warn=("unknown",), guard=_amd_skip)),
    Check("software.ncu.installed", "software", ALL, "ncu-profiling",
          _bool_grader(bad=False, severity="FAIL", guard=_ncu_installed_guard)),
    Check("software.ncu.profilingEnabled", "software", ALL, "ncu-profiling",
          _bool_grader(bad=False, severity="WARNING"), prerequisite="software.ncu.installed"),
    Check("software.lmod.modulesStatus", "software", SLURM, "lmod",
          _status_grader(warn=("fail", "unknown"))),
    Check("software.cudaVisibleDevicesStatus", "software", SO, None,
          _status_grader(warn=("fail", "unknown"))),
    Check("gpus.gdrcopy.installed", "hardware", SO, "gdrcopy",
          _bool_grader(bad=False, severity="FAIL", guard=_amd_skip)),
    Check("gpus.gpuDirectRdmaPath", "hardware", SO, "gpudirect-rdma", _rdma_path),
    Check("gpus.gpuDirectRdmaPath.nvidiaPeermemLegacy", "hardware", SO, "gpudirect-rdma",
          _peermem),
    Check("gpus.pcieAcs.enabled", "hardware", ALL, "pcie-acs", _pcie_acs),
    Check("gpu_controls.vboost.allowed", "hardware", ALL, "vboost-control", _vboost),
    Check("hbm_memory_exposure.status", "hardware", ALL, None,
          _status_grader(warn=("fail", "warning", "unknown"))),
    Check("kubelet_cpu_manager_policy.status", "orchestration", K8S, None,
          _status_grader(warn=("fail", "warning", "unknown"))),
    Check("vm_iommu.status", "hardware", ALL, "vm-iommu-passthrough",
          _status_grader(warn=("fail", "warning", "unknown"))),
    Check("arm_smmu_virtualization.status", "hardware", ALL, "arm-smmu-cmdqv",
          _status_grader(warn=("fail", "warning", "unknown"))),
    Check("nccl_topo_file.status", "networking", SLURM, "nccl-topo-file-container", _topo_file),
    Check("nccl_ib_qps.status", "networking", SO, "nccl-ib-qps-entropy",
          _status_grader(warn=("fail", "warning", "unknown"))),
    Check("networking.topologyConfigured", "networking", SO, "topology-conf",
          _bool_grader(bad=False, severity="WARNING")),
    Check("networking.hcaNamingValid", "networking", SLURM, "hca-naming",
          _bool_grader(bad=False, severity="WARNING")),
    Check("networking.ncclAutoConfig", "networking", SLURM, "nccl-autoconfig",
          _bool_grader(bad=False, severity="WARNING")),
    Check("storage.rwxStatus", "storage", K8S, "csi-rwx",
          _status_grader(warn=("fail", "unknown"))),
    Check("healthChecks.nhcInstalled", "health", SLURM, "healthcheck-program",
          _bool_grader(bad=False, severity="FAIL")),
    Check("healthChecks.monitoringStack.dcgmExporter", "health", SO, "monitoring-stack",
          _bool_grader(bad=False, severity="FAIL", guard=_amd_skip)),
    Check("healthChecks.dcgmInstalled", "health", SLURM, "dcgm-healthchecks",
          _bool_grader(bad=False, severity="FAIL", guard=_amd_skip)),
    Check("healthChecks.dcgmSlurm", "health", SLURM, "dcgm-healthchecks",
          _bool_grader(bad=False, severity="WARNING"), prerequisite="healthChecks.dcgmInstalled"),
    Check("access.sudoAvailable", "access", ALL, "sudo-available",
          _bool_grader(bad=False, severity="WARNING")),
    Check("access.userManagement", "access", ALL, "user-management", _user_mgmt),
    Check("access.sshToComputeNodes", "access", SLURM, "ssh-between-nodes",
          _bool_grader(bad=False, severity="WARNING")),
    Check("access.externalIdp.detected", "access", ALL, "external-idp",
          _bool_grader(bad=False, severity="WARNING")),
    Check("access.slurmCommandsOk", "access", SLURM, "slurm-commands",
          _bool_grader(bad=False, severity="WARNING")),
    Check("slurm.accounting.sacctAvailable", "orchestration", SLURM, "sacct-accounting",
          _bool_grader(bad=False, severity="WARNING")),
    Check("containers.enroot", "containers", SLURM, "enroot",
          _bool_grader(bad=False, severity="FAIL", guard=_worker_not_run)),
    Check("containers.enrootImportWorks", "containers", SLURM, "enroot",
          _bool_grader(bad=False, severity="WARNING"), prerequisite="containers.enroot"),
    Check("containers.dockerOnWorkers", "containers", SLURM, "docker-workers",
          _bool_grader(bad=False, severity="FAIL", guard=_worker_not_run)),
    Check("containers.singularity", "containers", SLURM, "singularity",
          _bool_grader(bad=False, severity="FAIL", guard=_worker_not_run)),
    Check("software.nccl.installed", "software", ALL, "nccl-installed",
          _bool_grader(bad=False, severity="FAIL", guard=_amd_skip)),
    Check("software.perf.installed", "software", ALL, "perf-access",
          _bool_grader(bad=False, severity="FAIL")),
    Check("software.perf.perfEventParanoid", "software", ALL, "perf-access", _numeric_limit(1),
          prerequisite="software.perf.installed", minimum="<= 1"),
    Check("software.perf.kptrRestrict", "software", ALL, "perf-access", _numeric_limit(0),
          prerequisite="software.perf.installed", minimum="<= 0"),
    Check("bmc-ipmi", "isolation", ALL, "security-bmc-ipmi", _bmc_ipmi,
          source="security.bmcIpmi"),
    Check("ufm-profile", "isolation", SO, "ufm-secured-bare-metal-cloud", _ufm,
          source="security.ufmSecuredBareMetalCloud"),
    Check("pcie-passthrough", "isolation", ALL, "security-pcie-passthrough", _pcie_passthrough,
          source="security.pciePassthrough"),
    Check("nvlink-boundary", "isolation", ALL, "security-nvlink-boundary", _nvlink_boundary,
          source="security.nvlinkBoundary"),
)

# checks with no published criterion (ClusterMAX CLI-only): our catalogue category and label
CLI_ONLY: dict[str, tuple[str, str]] = {
    "securityVersions.dcgm.status": ("security", "cli:dcgm-minimum-version"),
    "securityVersions.dcgmExporter.status": ("security", "cli:dcgm-exporter-minimum-version"),
    "containers.workerCheckOk": ("containers", "cli:worker-container-check"),
    "software.cudaVisibleDevicesStatus": ("scheduler", "cli:cuda-visible-devices"),
    "hbm_memory_exposure.status": ("gpu-stack", "cli:hbm-memory-exposure"),
    "kubelet_cpu_manager_policy.status": ("security", "cli:kubelet-cpu-manager-policy"),
}


def _prerequisite_false(check: Check, ctx: _Ctx) -> bool:
    if check.prerequisite is None:
        return False
    if _bool(ctx.get(check.prerequisite)) is not False:
        return False
    if check.key == "containers.enrootImportWorks":
        return _bool(ctx.get("containers.workerCheckOk")) is not False
    if check.key == "software.ncu.profilingEnabled":
        return _ncu_conclusive(ctx)
    if check.key == "healthChecks.dcgmSlurm":
        return not ctx.amd
    return True


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _harness(values: dict[str, Any]) -> str:
    cluster = _dict(values.get("cluster"))
    data = _dict(values.get("audit_data")) if "audit_data" in values else values
    orch = str(cluster.get("orchestrator") or "").strip().lower()
    if orch in ALL:
        return orch
    audit_type = str(_get(data, "audit.type")).strip().lower()
    if audit_type in ALL:
        return audit_type
    if isinstance(data.get("kubernetes"), dict):
        return "k8s"
    if orch in ("kubernetes",):
        return "k8s"
    raise EvidenceError("cannot tell which harness produced the audit",
                        field="cluster.orchestrator", expected="slurm, k8s or standalone")


def _is_amd(data: dict[str, Any], cluster: dict[str, Any]) -> bool:
    if _bool(_get(data, "gpus.amd.present")) is True:
        return True
    if str(_get(data, "gpus.vendor")).lower() == "amd":
        return True
    return str(cluster.get("gpu_model", "")).upper().startswith("MI")


def grade_audit(values: dict[str, Any], *, harness: str | None = None) -> AuditReport:
    """Every graded row of an ``audit.values.json`` (absent keys are left out)."""
    if "audit_data" in values:
        data = values["audit_data"]
        cluster = _dict(values.get("cluster"))
    else:
        data, cluster = values, {}
    if not isinstance(data, dict):
        raise EvidenceError("audit_data is not an object", field="audit_data",
                            expected="the audit.values.json written by `cmax audit`")
    harness = harness or _harness(values)
    found = cluster.get("environment")
    environment = found if isinstance(found, str) else None  # a number is no environment
    ctx = _Ctx(data=data, harness=harness, environment=environment,
               amd=_is_amd(data, cluster), gpu_model=str(cluster.get("gpu_model", "")))
    rows: list[CheckResult] = []
    for check in CHECKS:
        path = check.source or check.key
        value = ctx.get(path)
        status, basis = _grade_one(check, value, ctx)
        if status is None:
            continue
        category, criterion = _category(check)
        minimum = check.minimum
        if check.group == "versions":
            rec = ctx.get(check.key.rsplit(".", 1)[0])
            if isinstance(rec, dict) and rec.get("minimum") is not None:
                minimum = str(rec["minimum"])
            version = rec.get("version") if isinstance(rec, dict) else None
            observed = f"{_observed(value)} (version {version})" if version else _observed(value)
        else:
            observed = _observed(value)
        rows.append(CheckResult(key=check.key, group=check.group, category=category,
                                criterion=criterion, status=status, observed=observed,
                                minimum=minimum, basis=basis))
    name = _get(data, "audit.clusterName")
    return AuditReport(
        cluster=None if name is MISSING else str(name), harness=harness,
        environment=environment, checks=rows,
        audited_at=cluster.get("audited_at") or _observed(_get(data, "audit.timestamp")),
    )


def _grade_one(check: Check, value: Any, ctx: _Ctx) -> tuple[str | None, str]:
    if ctx.harness not in check.harnesses:
        return "SKIPPED", f"n/a for {ctx.harness} machines"
    if value is MISSING:
        return None, "absent: not graded"
    if not isinstance(value, (dict, list)) and _norm(value) in _NOT_APPLICABLE:
        return "SKIPPED", "collector reported not applicable"
    if _prerequisite_false(check, ctx):
        return "SKIPPED", f"prerequisite {check.prerequisite} is false"
    return check.grade(value, ctx)


def _category(check: Check) -> tuple[str, str]:
    if check.criterion is not None:
        return CRITERION_CATEGORY.get(check.criterion, check.group), check.criterion
    return CLI_ONLY[check.key]


def audit_from_data(data: Any, path: Path) -> dict[str, Any]:
    """An already parsed document, checked to be an ``audit.values.json``."""
    if not is_audit_json(data):
        raise EvidenceError("not a ClusterMAX audit.values.json", file=path,
                            expected="an object with audit_data (and cluster) as `cmax audit` "
                            "writes")
    return data  # type: ignore[no-any-return]


def is_audit_json(data: object) -> bool:
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("audit_data"), dict):
        return True
    return isinstance(data.get("audit"), dict) and isinstance(data.get("securityVersions"), dict)


def audit_summary(report: AuditReport) -> dict[str, object]:
    return {
        "format": "clustermax-audit",
        "cluster": report.cluster,
        "harness": report.harness,
        "audited_at": report.audited_at,
        "counts": report.counts(),
        "checks": len(report.checks),
    }


# (kind, dotted path) of the identity an audit states, in the shapes of research
# clustermax_audit_format.md §2.2 (the normalised ``cluster`` summary) and §2.3 (raw collector
# JSON under ``audit_data``; the k8s shape has no driveConfig and names no login host)
_FACT_PATHS = (
    ("cluster", "audit_data.audit.clusterName"),
    ("gpu", "audit_data.gpus.model"),
    ("gpu", "cluster.gpu_model"),
    ("node_count", "cluster.nodes"),
    # the collector runs on a login or head node (audit.hostname, driveConfig.headNode) and
    # reads one worker (driveConfig.workerNode): only the worker is a compute host
    ("host", "audit_data.driveConfig.workerNode.hostname"),
    ("service_host", "audit_data.audit.hostname"),
    ("service_host", "audit_data.driveConfig.headNode.hostname"),
    # the compute fabric's NIC class, e.g. "NDR 400G IB" (networking.nicFabric, written by
    # the collector's audit-common.sh; its count and rate are tallies below)
    ("fabric", "audit_data.networking.nicFabric.computeFabricClass"),
    # the bare collector JSON (no merge step): the same records at the top level
    ("cluster", "audit.clusterName"),
    ("gpu", "gpus.model"),
    ("host", "driveConfig.workerNode.hostname"),
    ("service_host", "audit.hostname"),
    ("service_host", "driveConfig.headNode.hostname"),
    ("fabric", "networking.nicFabric.computeFabricClass"),
)


# the cluster-wide counts and flags the audit's own checks rest on, recorded as ``tally``
# facts (``where`` = the key without its ``audit_data.`` prefix) so validation can check them
# against each other (cmax/validate/audit_rules.py): a flag flipped by hand leaves its count
_TALLY_KEYS = ("gpus.total", "gpus.nodeCount", "gpus.perNode", "gpus.gpuDirectRdma",
               "gpus.pcieAcs.enabled", "gpus.pcieAcs.enabledCount", "gpus.pcieAcs.bridges",
               "gpus.pcieAcs.totalBridges", "gpus.dmesgErrors.nodesChecked",
               "networking.nicFabric.computeFabricCount", "networking.nicFabric.computeFabricGbps")


def _tallies(values: dict[str, Any]) -> list[Fact]:
    out = []
    for key in _TALLY_KEYS:
        for prefix in ("audit_data.", ""):
            value = _get(values, prefix + key)
            if value is MISSING or value is None or isinstance(value, (dict, list)):
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value).strip()
            out.append(Fact("tally", text, None, key))
            break
    return out


def audit_facts(values: dict[str, Any]) -> tuple[Fact, ...]:
    """The cluster name, GPU model, GPU node count, the compute host it read (``host``) and
    the login or head node it ran from (``service_host``), and the cluster-wide counts and
    flags its checks rest on (``tally``)."""
    facts: list[Fact] = _tallies(values)
    seen: set[tuple[str, str]] = set()
    for kind, dotted in _FACT_PATHS:
        value = _get(values, dotted)
        if value is MISSING or value is None or isinstance(value, (dict, list, bool)):
            continue
        text = str(value).strip()
        if kind == "service_host" and ("host", text) in seen:
            continue  # a standalone audit run on the worker it reads: a compute host
        if not text or text.lower() in _UNREAD or (kind, text) in seen:
            continue
        seen.add((kind, text))
        facts.append(Fact(kind, text, None, dotted))
    return tuple(facts)


Parsed = tuple[dict[str, Any], AuditReport]


class ClusterMaxAudit(AuditFormat[Parsed]):
    id = "clustermax-audit"
    title = "ClusterMAX audit values"
    tool = "SemiAnalysis ClusterMAX `cmax audit` (audit.values.json, raw Slurm or k8s shape)"
    sample = "ingest/example_audit.values.json"
    json_shape = staticmethod(is_audit_json)

    def parse(self, probe: Probe) -> Parsed:
        values = audit_from_data(
            probe.require_json("a ClusterMAX audit.values.json"), probe.path)
        try:
            report = grade_audit(values)
        except CmaxError as exc:
            if exc.file is not None:
                raise
            raise exc.with_context(file=probe.path) from None
        return values, report

    def summarise(self, parsed: Parsed, probe: Probe) -> dict[str, Any]:
        return audit_summary(parsed[1])

    def facts(self, parsed: Parsed) -> tuple[Fact, ...]:
        return audit_facts(parsed[0])

    def checks(self, parsed: Parsed, *,
               source_file: str) -> tuple[list[dict[str, Any]], str | None]:
        report = parsed[1]
        records = [{
            "check_id": c.key, "category": c.category, "criterion": c.criterion,
            "status": c.status, "observed": c.observed, "minimum": c.minimum,
            "evidence": f"{c.group}: audit_data.{c.key}" + (f" ({c.basis})" if c.basis else ""),
            "source_file": source_file,
        } for c in report.checks]
        return records, report.cluster


register(ClusterMaxAudit())
