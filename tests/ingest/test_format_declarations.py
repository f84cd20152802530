"""Formats declared as data, their modules imported on first use (formats/_declarations.py).

Detection must not depend on which format modules happen to be imported: every file under
tests/data and samples/ is identified in a fresh interpreter twice, once with no format
module imported (each imported only when detection asks for it) and once with all of them,
and both answers must be the same file by file (a format, or the same refusal).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cmax.ingest import formats
from cmax.ingest.formats import _declarations
from cmax.ingest.formats._training_log import TrainingLogFormat
from tests.paths import DATA, REPO, SAMPLES

DETECT_ALL = """
import json, sys
from pathlib import Path
from cmax.errors import CmaxError
from cmax.ingest import formats
if sys.argv[1] == "eager":
    formats.all_formats()
out = {}
for name in sys.argv[2:]:
    try:
        out[name] = formats.identify(Path(name))[0].id
    except CmaxError as exc:
        out[name] = "refused: " + exc.message
print(json.dumps(out))
"""


def _files() -> list[str]:
    return sorted(str(p) for root in (DATA, SAMPLES) for p in root.rglob("*") if p.is_file())


def _detect(mode: str, files: list[str]) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", DETECT_ALL, mode, *files], cwd=REPO,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_lazy_and_eager_registries_detect_every_file_alike() -> None:
    files = _files()
    lazy, eager = _detect("lazy", files), _detect("eager", files)
    differ = {name: (lazy[name], eager[name]) for name in files if lazy[name] != eager[name]}
    assert not differ
    detected = {fmt for fmt in lazy.values() if not fmt.startswith("refused")}
    assert len(detected) > 25  # the files span nearly every format: the check has teeth


def test_reading_one_log_imports_its_format_module_alone() -> None:
    probe = """
import sys
from pathlib import Path
from cmax.ingest.formats import identify
fmt, _ = identify(Path(sys.argv[1]))
print(fmt.id, sorted(m.rsplit(".", 1)[1] for m in sys.modules
                     if m.startswith("cmax.ingest.formats.") and ".formats._" not in m))
"""
    log = DATA / "ingest/nemo2_llama3.1-8b_fp8.log"
    done = subprocess.run([sys.executable, "-c", probe, str(log)], cwd=REPO,
                          capture_output=True, text=True, check=True)
    assert done.stdout.split(None, 1) == ["nemo2", "['nemo']\n"]


def test_each_declaration_is_what_its_module_registers() -> None:
    """The declarations and the imported plugins agree format by format: the id, the module
    and the role; priority and markers exist only in the declaration."""
    registered = {fmt.id: fmt for fmt in formats.all_formats()}
    declared = {d.id: d for d in _declarations.DECLARATIONS}
    assert registered.keys() == declared.keys()
    for format_id, fmt in registered.items():
        d = declared[format_id]
        assert fmt.home == f"cmax.ingest.formats.{d.module}", format_id
        assert (fmt.role, fmt.priority, fmt.markers) == (d.role, d.priority, d.markers)
        assert fmt.declaration is d


def test_every_plugin_module_is_declared() -> None:
    """A module added under cmax/ingest/formats without a declaration would never be
    imported: every module not starting with ``_`` is named by a declaration."""
    package = REPO / "cmax" / "ingest" / "formats"
    modules = {p.stem for p in package.glob("*.py") if not p.stem.startswith("_")}
    assert modules == {d.module for d in _declarations.DECLARATIONS}


def test_the_run_logs_are_the_text_run_formats() -> None:
    """Validation tells the per-step training logs by their declaration (a ``run`` role read by
    markers), without importing them: the same set as the training-log plugin class."""
    text_runs = {d.id for d in formats.declarations() if d.role == "run" and d.markers}
    assert text_runs == {f.id for f in formats.all_formats() if isinstance(f, TrainingLogFormat)}


def test_a_declaration_is_text_or_structural() -> None:
    with pytest.raises(ValueError, match="not both"):
        _declarations.Declaration("x", "x", "run", 1)
    with pytest.raises(ValueError, match="not both"):
        _declarations.Declaration("x", "x", "run", 1, json=True,
                                  markers=(formats.Marker(b"a", "a"),))


def test_a_module_that_does_not_register_its_declared_format_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    formats.declare(_declarations.Declaration("phantom", "cmax.ingest.formats._serving", "run", 1,
                                                       json=True))
    try:
        with pytest.raises(RuntimeError, match=r"_serving does not register .*'phantom'"):
            formats.by_id("phantom")
    finally:
        formats.forget("phantom")
