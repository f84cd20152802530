"""Write cmax/validate/known_logs.json: the fingerprints of the training logs cmax ships.

    python tools/write_known_logs.py [--check]

Reads every sample bundle (cmax.submission.samples) through the pipeline and keeps, per training
run,
its owner (the bundle's provider and cluster names), its path and its first post-warm-up steps
(cmax.validate.known_logs.fingerprint). ``--check`` exits 1 when the file is out of step.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cmax.pipeline import load
from cmax.submission.samples import sample_bundles
from cmax.validate.copies import steady_series
from cmax.validate.known_logs import INDEX, fingerprint


def index() -> dict[str, Any]:
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
    return {"about": "fingerprints of the training logs cmax ships (cmax.validate.known_logs; "
            "written by tools/write_known_logs.py)", "logs": logs}


def main() -> int:
    text = json.dumps(index(), indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        return 0 if INDEX.read_text(encoding="utf-8") == text else 1
    INDEX.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
