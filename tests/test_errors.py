"""The error tree: every class is a CmaxError (exit 2, one line), and re-raising with context
keeps the class, the line and the fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cmax import errors
from cmax.cli import main
from cmax.errors import CmaxError, EvidenceError, EvidenceFormatError

TREE = {
    "UsageError": CmaxError, "BundleError": CmaxError, "ManifestError": CmaxError,
    "EvidenceError": CmaxError, "EvidenceFormatError": EvidenceError,
    "ReferenceDataError": CmaxError, "NotInCatalogue": errors.ReferenceDataError,
    "RubricError": CmaxError, "HistoryError": CmaxError, "MonitoringError": CmaxError,
}


def test_tree_matches_the_docstring() -> None:
    assert set(errors.__all__) == {"CmaxError", *TREE}
    for name, parent in TREE.items():
        cls = getattr(errors, name)
        assert cls.__bases__ == (parent,), name
        assert name in (errors.__doc__ or ""), f"{name} missing from the drawn tree"


def test_with_context_keeps_class_line_and_fix() -> None:
    original = EvidenceFormatError("unrecognised evidence format", file="/tmp/x/a.log",
                                   line=7, fix="see docs/formats.md")
    moved = original.with_context(file="a.log", field="runs[0].log")
    assert type(moved) is EvidenceFormatError
    assert (moved.line, moved.fix, moved.message) == (7, "see docs/formats.md",
                                                       "unrecognised evidence format")
    assert str(moved) == moved.one_line() == (
        "a.log:7: runs[0].log: unrecognised evidence format; fix: see docs/formats.md")
    assert original.file == "/tmp/x/a.log" and original.field is None  # a copy, not a mutation
    assert moved.with_context(line=None).line is None


@pytest.mark.parametrize("name", sorted(TREE))
def test_every_class_is_one_line_exit_2(name: str, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    import cmax.ingest

    def boom(path: object) -> dict[str, object]:
        raise getattr(errors, name)("bad input", file="f.txt", line=3, fix="do this")

    monkeypatch.setattr(cmax.ingest, "inspect_file", boom)
    assert main(["inspect", "whatever"]) == 2
    err = capsys.readouterr().err
    assert err == "cmax: error: f.txt:3: bad input; fix: do this\n"


@pytest.mark.parametrize(("what", "expected"), [
    ("manifest", "ManifestError"), ("rubric", "RubricError"), ("log", "EvidenceError"),
    ("history", "HistoryError"), ("reference", "ReferenceDataError")])
def test_errors_are_raised_at_their_node(what: str, expected: str, tmp_path: Path) -> None:
    """Each input's failure is raised as its own class, so a caller can tell a bad bundle
    from a broken rubric or history without reading the message."""
    from cmax.history.discover import discover_runs
    from cmax.ingest.textlines import query_lines
    from cmax.reference._files import read_reference_toml
    from cmax.reference.rubric_file import read_rubric_file
    from cmax.submission.manifest import load_manifest

    bad = tmp_path / "bad.toml"
    bad.write_text("x = [\n")
    calls: dict[str, Callable[[], object]] = {
        "manifest": lambda: load_manifest(bad),
        "rubric": lambda: read_rubric_file(bad),
        "reference": lambda: read_reference_toml(bad, what="GPU catalogue"),
        "log": lambda: query_lines(tmp_path / "missing.log", lambda lf: lf, keys=["x"]),
        "history": lambda: discover_runs(tmp_path / "no-runs-root"),
    }
    with pytest.raises(CmaxError) as caught:
        calls[what]()
    assert type(caught.value).__name__ == expected
