"""Write reference/known_logs.json: fingerprints of the public evidence cmax ships.

    python tools/write_known_logs.py [--check]

Reads every sample bundle (cmax.submission.samples) through the pipeline and keeps, per training
run, its owner (the bundle's provider and cluster names), its path and its first post-warm-up
steps (cmax.validate.known_logs.fingerprint); and reads each nccl-tests output published by
others that tests/data/nccl copies verbatim (:data:`PUBLIC_SWEEPS`, each with the source its
SOURCES.md entry names) through cmax's nccl-tests parser, keeping every printed row. The file
is reference data: after writing it, bump reference/release.toml and run
``python -m cmax.reference.checksum --write``. ``--check`` exits 1 when the file is out of step.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cmax.ingest.formats import NcclFormat, identify
from cmax.pipeline import load
from cmax.reference.known_logs import FILE
from cmax.resources import data_dir
from cmax.submission.samples import sample_bundles
from cmax.validate.copies import steady_series
from cmax.validate.known_logs import fingerprint

REPO = Path(__file__).resolve().parents[1]
#: (file under the repository, owner, public source): the nccl-tests outputs tests/data/nccl
#: copies verbatim (tests/data/nccl/SOURCES.md, "published output, copied verbatim")
PUBLIC_SWEEPS = (
    ("tests/data/nccl/exec_cmd_2node.txt", "Oracle",
     "oracle-quickstart/oci-hpc-oke:docs/running-nccl-rccl-tests-from-slurm-operator.md"
     "@02456972d66d38aa2c1e92814083f8ba898ae0e2"),
    ("tests/data/nccl/alltoall_blank_redop.txt", "",
     "NVIDIA/nccl-tests issue #78 (comment of 2021-12-08, 8 nodes x 8 V100)"),
    ("tests/data/nccl/nvl72/gb200_one_rack.txt", "CoreWeave",
     "coreweave/nccl-tests pull request #43 (2025-02-20, a full NVL72 rack run)"),
)


def _logs() -> list[dict[str, Any]]:
    logs = []
    for bundle in sample_bundles():
        with load(bundle) as loaded:
            owner = loaded.case.manifest.provider.name
            cluster = loaded.case.manifest.provider.cluster
            for view in loaded.case.resolved:
                if view.summary is None and view.clean_steps.height:
                    series = steady_series(view).join(
                        view.clean_steps.select("iteration", "loss"), on="iteration")
                    logs.append({"owner": owner, "cluster": cluster,
                                 "path": f"samples/{bundle.name}/{view.file}",
                                 **fingerprint(series)})
    return logs


def _sweeps() -> list[dict[str, Any]]:
    out = []
    for rel, owner, source in PUBLIC_SWEEPS:
        path = REPO / rel
        fmt, probe = identify(path)
        assert isinstance(fmt, NcclFormat), f"{rel} is not nccl-tests output"
        rows = fmt.frame(fmt.parse(probe), run_id="known", source_file=rel, path=path)
        out.append({"owner": owner, "source": source, "path": rel,
                    "collective": str(rows["collective"][0]),
                    "rows": [[int(size), bool(in_place), float(time)] for size, in_place, time
                             in rows.select("size_bytes", "in_place", "time_us").iter_rows()
                             if time is not None]})
    return out


def index() -> dict[str, Any]:
    return {"about": "fingerprints of the public evidence cmax ships: the sample bundles' "
            "training logs and the nccl-tests outputs others published that its test data "
            "copies verbatim (cmax.reference.known_logs; written by tools/write_known_logs.py)",
            "logs": _logs(), "sweeps": _sweeps()}


def main() -> int:
    text = json.dumps(index(), indent=1) + "\n"
    target = data_dir("reference") / FILE
    if "--check" in sys.argv[1:]:
        return 0 if target.read_text(encoding="utf-8") == text else 1
    target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
