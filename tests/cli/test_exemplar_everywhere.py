"""One Exemplar state everywhere (issue 37): score text and JSON, the gate, ``--fail-on
exemplar``, price, JUnit and CTRF, frames, the leaderboard, the scorecard HTML and the brief
agree, for every run passing, one of two runs of a workload failing, the only run
unverified, and no training runs."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from cmax import frames
from cmax.cli import exits, main
from cmax.cli.policies import scorecard_trips
from cmax.cli.score_cmd import scorecard_text
from cmax.export.checks import scorecard_checks
from cmax.export.junit import to_junit
from cmax.render import reports, views
from cmax.scorecard import Scorecard
from cmax.states import State
from tests.paths import SAMPLES

AURORA = SAMPLES / "aurora-compute"
BF16_LOG = "training/llama3.1-405b_bf16_512.log"


def _runs(manifest: str) -> tuple[str, list[str], str]:
    """cmax.toml split into what comes before the runs, each [[runs]] block, and the rest."""
    head, _, rest = manifest.partition("[[runs]]")
    blocks = ["[[runs]]" + b for b in rest.split("[[runs]]")]
    last, _, tail = blocks[-1].partition("\n[[nccl]]")
    blocks[-1] = last
    return head, blocks, "\n[[nccl]]" + tail


def _slowed(log: str, factor: float) -> str:
    """The same NeMo 2 log run ``factor`` times slower: each step time divided by it and the
    printed TFLOP/s multiplied, so the log's own arithmetic still agrees."""
    log = re.sub(r"train_step_timing in s: ([0-9.]+)",
                 lambda m: f"train_step_timing in s: {float(m[1]) / factor:.2f}", log)
    return re.sub(r"TFLOPS_per_GPU: ([0-9.e+]+)",
                  lambda m: f"TFLOPS_per_GPU: {float(m[1]) * factor:.3e}", log)


def one_of_two_runs_fails(tmp: Path) -> Path:
    """Aurora with a second bf16 run of the same workload at ~0.85 of reference."""
    root = tmp / "two-runs"
    shutil.copytree(AURORA, root)
    slow = "training/llama3.1-405b_bf16_512_second.log"
    (root / slow).write_text(_slowed((root / BF16_LOG).read_text(), 0.85))
    head, blocks, tail = _runs((root / "cmax.toml").read_text())
    second = blocks[0].replace(BF16_LOG, slow)
    (root / "cmax.toml").write_text(head + "".join([*blocks, second.rstrip() + "\n"]) + tail)
    return root


def only_run_unverified(tmp: Path) -> Path:
    """Aurora's bf16 run alone, its log without the configuration header (what it ran rests
    on cmax.toml alone)."""
    root = tmp / "unverified"
    shutil.copytree(AURORA, root)
    log = (root / BF16_LOG).read_text()
    (root / BF16_LOG).write_text(log[log.index("Training epoch"):])
    head, blocks, tail = _runs((root / "cmax.toml").read_text())
    (root / "cmax.toml").write_text(head + blocks[0] + tail)
    return root


# bundle, the suite's state, the verdicts of the runs deciding it (the second bf16 run, ~0.85,
# also holds the first at unverified: crossfile.runs-disagree)
CASES: dict[str, tuple[Callable[[Path], Path], State, list[str]]] = {
    "all pass": (lambda tmp: AURORA, State.MET, ["pass"] * 3),
    "one of two runs fails": (one_of_two_runs_fails, State.NOT_MET,
                              ["pass", "unverified", "fail", "pass"]),  # grok, bf16 x2, fp8
    "only run unverified": (only_run_unverified, State.NOT_EVALUATED, ["unverified"]),
    "no training runs": (lambda tmp: SAMPLES / "halcyon-serve", State.NOT_EVALUATED, []),
}
GATE = {State.MET: "passed", State.NOT_MET: "failed", State.NOT_EVALUATED: "not_evaluated"}
CHECK = {State.MET: "passed", State.NOT_MET: "failed", State.NOT_EVALUATED: "skipped"}
FLAG = {State.MET: True, State.NOT_MET: False, State.NOT_EVALUATED: None}


@pytest.mark.parametrize("case", list(CASES))
def test_every_surface_says_the_same(case: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    build, state, verdicts = CASES[case]
    bundle = str(build(tmp_path))
    # cmax score --format json --fail-on exemplar: the JSON, the gate and the exit code
    code = main(["score", bundle, "--format", "json", "--fail-on", "exemplar"])
    out = capsys.readouterr()
    assert code == (exits.OK if state is State.MET else exits.FINDINGS), out.err
    data = json.loads(out.out)
    assert data["exemplar_state"] == state.value and data["exemplar_pass"] is FLAG[state]
    assert data["exemplar"]["state"] == state.value
    assert [r["verdict"] for w in data["exemplar"]["workloads"] for r in w["runs"]] == verdicts
    gates = {g["id"]: g for g in data["gates"]}
    if "exemplar_suite" in gates:  # a serving-only bundle is not judged by training gates
        assert gates["exemplar_suite"]["status"] == GATE[state]
    card = Scorecard.model_validate(data)
    assert card.exemplar_state is state
    # the text of cmax score, the --fail-on reason
    assert f"Exemplar-style suite: {state.label} (bar 95%)" in scorecard_text(card)[2]
    trips = scorecard_trips(card, "exemplar")
    assert trips is None if state is State.MET else f"suite is {state.label}" in (trips or "")
    # cmax price
    assert main(["price", bundle]) in (exits.OK, exits.FINDINGS)
    assert f"Exemplar (performance only): {state.label}." in capsys.readouterr().out
    # JUnit / CTRF read the same check
    (suite,) = [c for c in scorecard_checks(card) if c.id == "cmax.score.exemplar-suite"]
    assert suite.status == CHECK[state] and suite.message.startswith(state.label)
    case_xml = next(c for c in ET.fromstring(to_junit(scorecard_checks(card), name="cmax")).iter(
        "testcase") if c.get("name") == "cmax.score.exemplar-suite")
    assert ({"passed": None, "failed": "failure", "skipped": "skipped"}[CHECK[state]]
            in {None, *(child.tag for child in case_xml)})
    # frames, the leaderboard (CSV and HTML), the scorecard HTML and the brief
    row = frames.scorecards(card).row(0, named=True)
    assert row["exemplar_state"] == state.value and row["exemplar_pass"] is FLAG[state]
    rows = views.leaderboard_rows([("x", card)])
    assert f",{state.value}," in reports.leaderboard_csv(rows).splitlines()[1]
    chip = f'state-{state.value}">{state.label}</span>'
    assert chip in reports.leaderboard_html(rows, "html", defaultdict(lambda: None))
    html = reports.scorecard_html(card, "x", "html", reports.ScorecardCharts())
    assert f"Exemplar (performance only): <span class=\"chip {state.tone} {chip}" in html
    assert f"Exemplar {state.label} (performance only)" in reports.brief_html(card)
