"""The shipped sample bundles are what ``tools/make_samples.py`` writes, byte for byte.

The samples are the demo a buyer first sees and the fixtures many tests rate; a hand edit to
one of them that the generator does not make would be lost the next time someone regenerates
them, silently changing tiers and scores. Regenerating into a temporary folder must give the
same files with the same bytes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.paths import REPO, SAMPLES


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_generator_reproduces_every_sample(tmp_path: Path) -> None:
    out = tmp_path / "samples"
    script = REPO / "tools" / "make_samples.py"
    done = subprocess.run([sys.executable, str(script), "--out", str(out)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    made, shipped = _files(out), _files(SAMPLES)
    assert sorted(made) == sorted(shipped)
    differ = [name for name in made if made[name] != shipped[name]]
    assert not differ, f"samples/ differs from tools/make_samples.py's output in {differ}"
