"""docs/python-api.md's notebook walk-through runs as written (issue 40: the Python calls a
notebook makes; `cmax.price(path)` raised TypeError and showed `(*args, **kwargs)`).

The section's ``python`` blocks are executed in order in one namespace, as a notebook's cells
are; each block asserts what it shows."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import cmax
from tests.paths import DOCS, SAMPLES

SECTION = "## A notebook walk-through"


def _cells() -> list[str]:
    text = (DOCS / "python-api.md").read_text()
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_walk_through_has_cells() -> None:
    assert len(_cells()) >= 4


@pytest.mark.slow
def test_the_walk_through_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for number, cell in enumerate(_cells(), 1):
        exec(compile(cell, f"python-api.md cell {number}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "Scorecard('Aurora Compute', 'aurora-h100-east', tier='Gold'" in out


@pytest.mark.parametrize("stage", ["validate", "score", "price", "ingest"])
def test_each_stage_shows_its_real_signature(stage: str) -> None:
    signature = inspect.signature(getattr(cmax, stage))
    assert next(iter(signature.parameters)) == "bundle"
    assert "args" not in signature.parameters


def test_the_stage_form_still_takes_the_stages_arguments() -> None:
    from cmax.pipeline import load
    from cmax.score import load_rubric

    # the callable sub-package is what is tested: mypy sees only a module (cmax/_stage.py)
    with load(SAMPLES / "aurora-compute") as loaded:
        card = cmax.score(  # type: ignore[operator]
            loaded.case, loaded.findings, loaded.reference, load_rubric())
        advice = cmax.price(loaded.case, card, loaded.reference)  # type: ignore[operator]
    assert advice.ask_usd_per_gpu_hour == 2.45


def test_a_bundle_without_a_quote_is_one_clear_error(tmp_path: Path) -> None:
    import shutil

    bundle = shutil.copytree(SAMPLES / "aurora-compute", tmp_path / "b")
    toml = bundle / "cmax.toml"
    toml.write_text(re.sub(r"\[pricing\]\n.*?\n\n", "", toml.read_text(), flags=re.S))
    with pytest.raises(cmax.CmaxError, match="no \\[pricing\\] table"):
        cmax.price(bundle)  # type: ignore[operator]  # the callable sub-package's path form
