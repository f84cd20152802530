"""A bounded, deterministic fuzz campaign over every input family (issue 18).

Each family's real-format seed files (tests/data, the sample bundles) are mutated by the
seeded engine in tools/fuzz.py: byte flips, hostile tokens (inf, NaN, 5,000-digit integers,
NUL, nesting 3,000 deep, a 200 KB field), cut-off files, dropped and swapped lines, and, for
JSON, values replaced at any depth; the ``pipeline`` family puts the mutated file into a
whole bundle and runs ingest, validate, score and price. Every outcome must be a result or
one CmaxError; a crash, a hang, a multi-line error or JSON a strict parser rejects fails the
test, which prints one reproducer per distinct crash. The same seed always tries the same
inputs, so a failure here is reproduced with ``python tools/fuzz.py --family NAME --seed 18``.

Budget: 11,200 inputs, about 20 s of CPU (Python functions, not subprocesses);
the longer campaign is ``tools/fuzz.py`` (its figures are in the issue-18 report).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cmax.cli import main
from tools.fuzz import Family, families, generate, run_family

SEED = 18
# training logs and the 73 KB audit JSON cost ~10 ms an input, a whole bundle through
# ingest, validate, score and price ~50 ms; the rest ~2 ms
COUNTS = {"training": 1000, "audit": 1000, "pipeline": 200}
DEFAULT_COUNT = 1500
FAMILIES = {family.name: family for family in families(max_lines=40, pipeline=True)}


def _report(family: Family, tally: Any) -> str:
    lines = [f"{family.name}: {tally.crashed} crashes in {tally.tried} inputs"]
    for key, n in tally.crashes.most_common():
        seed_name, index = tally.examples[key]
        lines.append(f"  {n} x {key}  (input #{index} from {seed_name}; reproduce with "
                     f"python tools/fuzz.py --family {family.name} --seed {SEED} "
                     f"--max-lines 40 --save DIR)")
    lines += [f"  multi-line error {e}" for e in tally.bad_errors[:5]]
    return "\n".join(lines)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_mutated_input_is_a_result_or_one_error(tmp_path: Path, name: str) -> None:
    family = FAMILIES[name]
    count = COUNTS.get(name, DEFAULT_COUNT)
    tally = run_family(family, seed=SEED, count=count, workdir=tmp_path)
    assert tally.tried == count
    assert tally.crashed == 0 and not tally.bad_errors, _report(family, tally)
    # the campaign exercises both outcomes: it is not all refusals (or all successes)
    assert tally.results > 0 and tally.refused > 0


def test_the_campaign_is_deterministic() -> None:
    family = FAMILIES["nccl"]
    first = [data for _, _, data in generate(family, SEED, 50)]
    again = [data for _, _, data in generate(family, SEED, 50)]
    assert first == again and len(set(first)) > 40


@pytest.mark.parametrize("name", ["training", "nccl", "mlperf", "dgxc", "incidents", "audit"])
def test_cli_sample_exit_codes_and_strict_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """Through the CLI, a sample of each family's inputs: a refusal is exit 2 and exactly
    one stderr line; a result is exit 0 and stdout that parses without NaN/Infinity."""
    family = FAMILIES[name]

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON output")

    for index, base, data in generate(family, SEED + 1, 40):
        path = tmp_path / base.name
        path.write_bytes(data)
        code = main(["inspect", str(path), "--format", "json"])
        out, err = capsys.readouterr()
        assert code in (0, 2), f"input #{index}: exit {code}: {err[-500:]}"
        if code == 2:
            assert out == "" and err.count("\n") == 1 and err.startswith("cmax: error: "), (
                f"input #{index}: {err[-500:]}")
        else:
            json.loads(out, parse_constant=refuse)
