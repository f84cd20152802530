"""A bounded, deterministic fuzz campaign over every input family (issue 18).

Each family's real-format seed files (tests/data, the sample bundles) are mutated by the
seeded engine in tools/fuzz.py: byte flips, hostile tokens (inf, NaN, 5,000-digit integers,
NUL, nesting 3,000 deep, a 200 KB field), cut-off files, dropped and swapped lines, and, for
JSON, values replaced at any depth; the ``pipeline`` family puts the mutated file into a
whole bundle and runs ingest, validate, score and price. Every outcome must be a result or
one CmaxError; a crash, a hang, a multi-line error or JSON a strict parser rejects fails the
test, which prints one reproducer per distinct crash. The same seed always tries the same
inputs, so a failure here is reproduced with ``python tools/fuzz.py --family NAME --seed 18``.

Issue 39 added a family per registered evidence format (``format:<id>``, from its documented
sample and the files holding the fields of the last two rounds: skipped iterations, consumed
samples, energy, timestamps, serving sweeps), mutated field by field as well as byte by byte;
the job-history SQLite with hostile cells and schema changes; and llmb-config YAML, alone and
drafted into a package, with anchors, aliases, tags and deep nesting put in.

Budget: about 16,000 inputs, about 60 s of CPU (Python functions, not subprocesses);
the longer campaign is ``tools/fuzz.py`` (its figures are in the issue-18 and issue-39
reports).
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
COUNTS = {"training": 1000, "audit": 1000, "pipeline": 200, "llmb-config": 600,
          "llmb-package": 150}
DEFAULT_COUNT = 1500
FORMAT_COUNT = 120  # each of the ~27 per-format families: every registered format
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
    count = COUNTS.get(name, FORMAT_COUNT if name.startswith("format:") else DEFAULT_COUNT)
    tally = run_family(family, seed=SEED, count=count, workdir=tmp_path)
    assert tally.tried == count
    assert tally.crashed == 0 and not tally.bad_errors, _report(family, tally)
    # the campaign exercises both outcomes: it is not all refusals (or all successes); a
    # format's own family is held to reaching its parser (a log reader drops a damaged line
    # and reads the rest, so some never refuse)
    assert tally.results > 0 and (tally.refused > 0 or name.startswith("format:"))


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


# --- hostile bundles: links, bombs, tar headers, control characters ------------------------
# Each input is a whole bundle built from a seeded choice, fed to `cmax validate`: the outcome
# must be a result (exit 0, or 1 with findings) or one error line (exit 2), never a traceback,
# never a line from outside the bundle, never a raw control character printed.
# CMAX_FUZZ_HOSTILE=N runs N inputs a family (the long variant; the suite runs a few each).

import io  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import tarfile  # noqa: E402

from tests.paths import SAMPLES  # noqa: E402

HOSTILE_COUNT = int(os.environ.get("CMAX_FUZZ_HOSTILE", "6"))
SECRET = "OUTSIDE-7f3a-SECRET"
CONTROLS = [chr(c) for c in (*range(0, 9), *range(11, 32), 0x7F, 0x85, 0x9B)] + [
    "\u202e", "\u2066", "\u200f", "\x1b]0;t\x07", "\x1b[2J", "\r"]


def _copy(tmp: Path, index: int) -> Path:
    dest = tmp / f"b{index}"
    shutil.copytree(SAMPLES / "aurora-compute", dest)
    return dest


def _links(rng: random.Random, tmp: Path, index: int) -> Path:
    root = _copy(tmp, index)
    outside = tmp / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (outside / "dir").mkdir(exist_ok=True)
    (outside / "dir" / "x.txt").write_text(SECRET)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    place = rng.choice([*files, root / "nccl" / "extra.txt", root / "training" / "sub"])
    target = outside / rng.choice(["secret.txt", "dir", "nowhere"])
    if rng.random() < 0.3:  # relative, climbing out
        target = Path(os.path.relpath(target, place.parent))
    place.unlink(missing_ok=True)
    place.symlink_to(target)
    return root


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return path


def _sample_members() -> list[tuple[tarfile.TarInfo, bytes]]:
    out = []
    for path in sorted((SAMPLES / "aurora-compute").rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            info = tarfile.TarInfo(path.relative_to(SAMPLES / "aurora-compute").as_posix())
            info.size = len(data)
            out.append((info, data))
    return out


def _bombs(rng: random.Random, tmp: Path, index: int) -> Path:
    members = _sample_members()
    for n in range(rng.randint(1, 4)):
        data = bytes([rng.choice((0, 32, 49))]) * rng.choice((1 << 20, 4 << 20, 16 << 20))
        info = tarfile.TarInfo(rng.choice(["", "nccl/", "training/"]) + f"z{n}.bin")
        info.size = len(data)
        members.insert(rng.randrange(len(members) + 1), (info, data))
    return _tar(tmp / f"bomb{index}.tar.gz", members)


PAX_SPARSE = [{"GNU.sparse.size": "100", "GNU.sparse.numblocks": "0"},
              {"GNU.sparse.map": "0,1", "GNU.sparse.size": "100"},
              {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": "1"}]


def _headers(rng: random.Random, tmp: Path, index: int) -> Path:
    members = _sample_members()
    if rng.random() < 0.25:  # a sparse member in PAX records, its map in the data (1.0)
        sparse = tarfile.TarInfo(rng.choice(["nccl/s.txt", "s.bin"]))
        sparse.pax_headers = rng.choice(PAX_SPARSE)
        data = b"%d\n" % rng.choice((3, 10**12)) + b"1\n" * rng.choice((3, 50_000))
        sparse.size = len(data)
        members.insert(rng.randrange(len(members) + 1), (sparse, data))
        path = tmp / f"head{index}.tar.gz"
        with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            for member, body in members:
                tar.addfile(member, io.BytesIO(body))
        return path
    info = tarfile.TarInfo(rng.choice(["x" * rng.randint(1, 3000), "a/" * 40 + "f",
                                       "././@LongLink", "nccl/n.txt"]))
    info.type = rng.choice([tarfile.REGTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE,
                            tarfile.GNUTYPE_SPARSE, tarfile.CHRTYPE, tarfile.FIFOTYPE,
                            tarfile.SYMTYPE, tarfile.LNKTYPE])
    info.linkname = "/etc/passwd"
    head = bytearray(info.tobuf(tarfile.GNU_FORMAT))
    claimed = rng.choice((0, 100, 1 << 20, 1 << 34))
    head[124:136] = f"{min(claimed, 8**11 - 1):011o}\0".encode()  # size field, checksum stale
    chk = sum(head[:148]) + 8 * 32 + sum(head[156:512])
    head[148:156] = f"{chk:06o}\0 ".encode()
    path = _tar(tmp / f"head{index}.tar", members)
    raw = path.read_bytes()
    cut = rng.choice([0, len(raw) // 2])
    cut -= cut % 512
    path.write_bytes(raw[:cut] + bytes(head) + b"y" * rng.choice((0, 512, 4096)) + raw[cut:])
    return path


def _controls(rng: random.Random, tmp: Path, index: int) -> Path:
    root = _copy(tmp, index)
    manifest = root / "cmax.toml"
    text = manifest.read_text()
    for key in rng.sample(["name", "cluster", "region", "container"], 2):
        start = text.index(f'{key} = "') + len(key) + 4
        junk = "".join(rng.choice(CONTROLS) for _ in range(rng.randint(1, 4)))
        text = text[:start] + json.dumps(junk)[1:-1] + text[start:]
    manifest.write_text(text)
    return root


HOSTILE_FAMILIES = {"links": _links, "bombs": _bombs, "headers": _headers,
                    "controls": _controls}


def _raw(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0
            or c in "\u202e\u2066\u200f"]


@pytest.mark.parametrize("name", list(HOSTILE_FAMILIES))
def test_hostile_bundles_are_a_result_or_one_clean_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import cmax.submission.bundle

    # a small free allowance: the ratio bound is reached in megabytes, not gigabytes
    monkeypatch.setattr(cmax.submission.bundle, "ARCHIVE_FREE_BYTES", 4 << 20)
    rng = random.Random(f"{name}-{SEED}")
    outcomes = {0: 0, 1: 0, 2: 0}
    for index in range(HOSTILE_COUNT):
        bundle = HOSTILE_FAMILIES[name](rng, tmp_path, index)
        code = main(["validate", str(bundle)])
        out, err = capsys.readouterr()
        where = f"{name} input #{index} (seed {SEED})"
        assert code in outcomes, f"{where}: exit {code}: {err[-800:]}"
        outcomes[code] += 1
        assert "Traceback" not in err and SECRET not in out + err, where
        assert _raw(out + err) == [], f"{where}: raw control characters printed"
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("cmax: error: "), f"{where}: {err}"
        if name == "links":
            assert code == 2 and "link that leads outside the bundle" in err, f"{where}: {err}"
        shutil.rmtree(bundle, ignore_errors=True) if bundle.is_dir() else bundle.unlink()
    print(f"{name}: {HOSTILE_COUNT} inputs, {outcomes[0] + outcomes[1]} results "
          f"({outcomes[1]} with findings), {outcomes[2]} refusals")
