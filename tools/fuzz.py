"""Seeded mutation fuzzing of every input cmax reads: evidence files, manifests, archives.

The contract under test (issue 18): every input, however broken, gives either a result or one
:class:`~cmax.errors.CmaxError`; never another exception, never a hang, never JSON that a
strict parser rejects. Each family starts from real-format seed files in tests/data and the
sample bundles and applies byte-level and structure-aware mutations chosen by a seeded
``random.Random``, so every run with the same seed tries the same inputs and a failure is
reproduced by its (family, seed, index).

``tests/test_fuzz.py`` runs a bounded campaign from this module on every test run; run this
file directly for a longer one::

    python tools/fuzz.py --per-family 5000 --seed 1

It prints, per family, the inputs tried and how many gave a result, a CmaxError or a crash,
and one reproducer per distinct crash (exception type and message).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import random
import re
import signal
import sys
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make `cmax` and `tests` importable
    sys.path.insert(0, str(REPO))

from cmax.errors import CmaxError  # noqa: E402
from cmax.reading.limits import json_safe  # noqa: E402

DATA = REPO / "tests" / "data" / "ingest"
SAMPLES = REPO / "samples"

# Values that broke parsers in the issue-18 campaign: non-finite numbers, integers past
# int64 and past Python's 4,300-digit conversion limit, NUL and invalid UTF-8, deep nesting,
# a field past the csv module's 128 KiB limit, separators that shift columns.
INTERESTING: tuple[bytes, ...] = (
    b"inf", b"-inf", b"nan", b"NaN", b"Infinity", b"1e999", b"-1e999", b"1e308", b"0", b"-0",
    b"-1", b"9223372036854775808", b"-9223372036854775809", b"18446744073709551616",
    b"9" * 5000, b"-" + b"9" * 5000, b"0." + b"0" * 400 + b"1", b"\x00", b"\xff\xfe",
    b"\xc3\x28", b"[" * 3000, b"{\"a\":" * 3000, b"x" * 200_000, b"\"", b"'", b",,,,",
    b"\r", b"\n\n", b"\t", b" " * 64, b"#", b"::", b"=", b"true", b"null", b"\x1b[31m",
)
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_DIGITS = re.compile(r"0x[0-9a-f]+|\d+")


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [data]


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to three byte-level mutations: the kind a truncated copy, a bad disk or a hand
    edit produces, plus the hostile values above."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(8)
        n = len(data)
        pos = rng.randrange(n + 1)
        if kind == 0 and n:  # flip bits of one byte
            data = data[:pos - 1] + bytes([data[pos - 1] ^ (1 << rng.randrange(8))]) + data[pos:]
        elif kind == 1:  # insert a hostile token
            data = data[:pos] + rng.choice(INTERESTING) + data[pos:]
        elif kind == 2:  # replace a number with a hostile value
            numbers = list(_NUMBER.finditer(data))
            if numbers:
                m = rng.choice(numbers)
                data = data[:m.start()] + rng.choice(INTERESTING[:17]) + data[m.end():]
        elif kind == 3 and n:  # delete a range
            end = min(n, pos + rng.randint(1, 256))
            data = data[:pos] + data[end:]
        elif kind == 4:  # duplicate or drop a line
            lines = _lines(data)
            i = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(i, lines[i])
            else:
                del lines[i]
            data = b"".join(lines)
        elif kind == 5:  # cut off (a file copied while still being written)
            data = data[:pos]
        elif kind == 6:  # swap two lines
            lines = _lines(data)
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            data = b"".join(lines)
        else:  # overwrite a run of bytes with random ones
            end = min(n, pos + rng.randint(1, 16))
            data = data[:pos] + rng.randbytes(end - pos) + data[end:]
    return data


_JSON_VALUES: tuple[Any, ...] = (
    float("inf"), float("nan"), -1, 0, 10**30, -(10**30), "", "x" * 100_000, None, True,
    [], {}, [[[[[[[[[[1]]]]]]]]]], "inf", "nan", "1e999", 1.7e308, "2026-13-45",
)


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))


def mutate_json(data: bytes, rng: random.Random) -> bytes:
    """Structure-aware: replace one value (any depth) with a hostile one, or drop a key;
    the result still parses, so it reaches the format's own reader rather than the JSON
    decoder. Falls back to byte mutation for seeds that are not JSON."""
    try:
        doc = json.loads(data)
    except ValueError:
        return mutate_bytes(data, rng)
    paths = [p for p in _leaves(doc) if p]
    if not paths:
        return mutate_bytes(data, rng)
    for _ in range(rng.randint(1, 2)):
        path = rng.choice(paths)
        parent = doc
        try:
            for part in path[:-1]:
                parent = parent[part]
            if isinstance(parent, dict) and rng.random() < 0.2:
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(_JSON_VALUES))  # never shared
        except (KeyError, IndexError, TypeError):
            continue
    if rng.random() < 0.05:
        doc = [doc] * 2 if rng.random() < 0.5 else {"wrapped": doc}
    return json.dumps(doc).encode()


# The fields the last two rounds taught cmax to read, as they appear in the real formats:
# Megatron's skipped iterations, consumed samples, energy and power per GPU, the iteration
# counter; wall-clock stamps of every logger; serving benchmarks' request counts, rates and
# latencies. Each match's value is replaced, so the damage lands where a parser reads.
_FIELD = re.compile(
    rb"(?P<key>iteration|consumed samples|number of skipped iterations|number of nan "
    rb"iterations|energy per GPU \(J/iter/GPU\)|power per GPU \(W/GPU\)|elapsed time per "
    rb"iteration \(ms\)|global batch size|grad norm|lm loss|train_step_timing in s|"
    rb"\"?(?:completed|request_rate|max_concurrency|duration|total_output_tokens|"
    rb"mean_tpot_ms|mean_ttft_ms|output_throughput|num_prompts|power|energy|timestamp|"
    rb"gpu_count|tp|ep|dp)\"?)(?P<sep>\s*[:=]\s*|\s+)(?P<value>[^\s|,}\]]+)")
_STAMP = re.compile(rb"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?")
_FIELD_VALUES: tuple[bytes, ...] = (
    *INTERESTING[:17], b"", b"x", b"None", b"null", b"-", b"1x", b"/", b"0/0", b"12 34",
    b"2026-13-45 25:61:61", b"9999-12-31 23:59:59", b"0000-00-00T00:00:00", b"1e30",
)


def mutate_fields(data: bytes, rng: random.Random) -> bytes:
    """Structure-aware for line formats: one to three of the fields above (or a timestamp)
    get a damaged or hostile value, the line otherwise intact; byte mutation when the seed
    holds none of them."""
    for _ in range(rng.randint(1, 3)):
        spans = [(m.start("value"), m.end("value")) for m in _FIELD.finditer(data)]
        spans += [(m.start(), m.end()) for m in _STAMP.finditer(data)]
        if not spans:
            return mutate_bytes(data, rng)
        start, end = rng.choice(spans)
        value = rng.choice(_FIELD_VALUES)
        if rng.random() < 0.3:  # damage in place: a cut, a letter, a digit dropped
            old = data[start:end]
            cut = rng.randrange(len(old) + 1)
            value = rng.choice([old[:cut], old[:cut] + b"x" + old[cut:], old[:cut] + old[cut + 1:]])
        data = data[:start] + value + data[end:]
    return data


_YAML_TOKENS: tuple[bytes, ...] = (
    b"&a ", b"*a", b"&a [*a, *a]", b"!!python/object/apply:os.system ['true']", b"!!binary ",
    b"? ", b"- ", b"{", b"[" * 200, b"}" * 3, b"<<: *a", b"---\n", b"...\n", b"%YAML 1.1\n",
    b"'", b"|\n", b">-\n", b"\t", b"~", b".inf", b".nan", b"0x7fffffffffffffffff",
)


def mutate_yaml(data: bytes, rng: random.Random) -> bytes:
    """An llmb-config with YAML's own hazards put in at a random line (anchors and aliases,
    tags, deep flow collections, a second document), or a value of a key replaced; byte
    mutation otherwise."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    line = lines[i]
    kind = rng.randrange(3)
    if kind == 0 and b":" in line:  # a value replaced
        key, _, _ = line.partition(b":")
        lines[i] = key + b": " + rng.choice((*_YAML_TOKENS, *_FIELD_VALUES)) + b"\n"
    elif kind == 1:  # a token put into the line
        cut = rng.randrange(len(line) + 1)
        lines[i] = line[:cut] + rng.choice(_YAML_TOKENS) + line[cut:]
    else:
        return mutate_bytes(data, rng)
    return b"".join(lines)


def _check_json(result: Any) -> None:
    """What `--format json` would print must parse under a strict parser."""
    text = json.dumps(json_safe(result), allow_nan=False, default=_refuse)
    json.loads(text)


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def inspect_target(path: Path) -> None:
    """`cmax inspect FILE --format json` as a function."""
    from cmax.ingest import inspect_file

    _check_json(inspect_file(path))


def manifest_target(path: Path) -> None:
    from cmax.submission.manifest import load_manifest

    load_manifest(path)


def llmb_config_target(path: Path) -> None:
    """An llmb-config read as a package reads it: its values, its job id, its flags."""
    from cmax.submission.intake.llmb import read_job, refuse_not_for_rating

    job = read_job(path, path.parent)
    refuse_not_for_rating(job)
    _check_json({k: str(v.value) for k, v in job.values.items()})


def llmb_package_target(path: Path) -> None:
    """A folder of llmb-run experiments holding the mutated llmb-config beside a real log:
    opened, its manifest drafted from the evidence, ingested and validated."""
    from cmax.pipeline import load

    root = path.parent / "package"
    folder = root / "pretrain_llama3.1" / "experiments" / "e" / "e_1" / "e"
    if not root.exists():
        folder.mkdir(parents=True)
        (folder / "log-e_3913022_0.out").write_bytes(
            (DATA / "megatron_bridge_llama3.1-70b.log").read_bytes())
    (folder / "llmb-config_3913022.yaml").write_bytes(path.read_bytes())
    with load(root) as loaded:
        _check_json(loaded.bundle.manifest.model_dump(mode="json"))


def bundle_target(path: Path) -> None:
    from cmax.ingest.evidence import declared_files
    from cmax.submission.bundle import open_bundle

    with open_bundle(path) as bundle:
        declared_files(bundle.manifest)


FIXTURE = REPO / "tests" / "data" / "validate" / "mbridge-405b-fp8"
# where each pipeline seed sits in the bundle the pipeline target assesses
PIPELINE_SLOTS = {
    "cmax.toml": "cmax.toml",
    "log-llama3.1-405b_fp8_1024_4242_0.out": "training/log-llama3.1-405b_fp8_1024_4242_0.out",
    "all_reduce_1node.txt": "nccl/all_reduce.txt",
    "incidents.csv": "incidents.csv",
    "audit.values.json": "audit/audit.values.json",
}


def pipeline_target(path: Path) -> None:
    """`cmax price --format json` as a function: the whole bundle is assessed (ingest,
    validate, score, price) with one of its files replaced by the mutated input."""
    from cmax.pipeline import assess

    root = path.parent / "bundle"
    if not root.exists():
        for seed in _pipeline_seeds():
            slot = root / PIPELINE_SLOTS[seed.name]
            slot.parent.mkdir(parents=True, exist_ok=True)
            slot.write_bytes(seed.data)
    slot = root / PIPELINE_SLOTS[path.name]
    original = slot.read_bytes()
    slot.write_bytes(path.read_bytes())
    try:
        _check_json(assess(root).model_dump(mode="json"))
    finally:
        slot.write_bytes(original)


def _pipeline_seeds() -> list[Seed]:
    from tests.fakes import reliability_toml

    manifest = ((FIXTURE / "cmax.toml").read_text(encoding="utf-8")
                + '\n[[nccl]]\npath = "nccl/all_reduce.txt"\n\n[audit]\n'
                + 'path = "audit/audit.values.json"\n' + reliability_toml(1024)
                + "\n[pricing]\nusd_per_gpu_hour = 2.45\n")
    return [Seed("cmax.toml", manifest.encode()),
            _read(FIXTURE / "training" / "log-llama3.1-405b_fp8_1024_4242_0.out"),
            _read(DATA / "nccl" / "all_reduce_1node.txt"), _read(DATA / "incidents.csv"),
            _read(SAMPLES / "aurora-compute" / "audit" / "audit.values.json")]


@dataclass(frozen=True)
class Seed:
    name: str
    data: bytes


@dataclass
class Family:
    """A format family: seed files, how to mutate them and what to call on the result.
    ``structured`` replaces the byte mutation of half the JSON seeds; ``fields`` that of half
    the other seeds (a structure-aware mutation of line formats)."""

    name: str
    seeds: list[Seed]
    target: Callable[[Path], None]
    mutate: Callable[[bytes, random.Random], bytes] = mutate_bytes
    structured: Callable[[bytes, random.Random], bytes] | None = None
    fields: Callable[[bytes, random.Random], bytes] | None = None


def _read(path: Path, max_lines: int | None = None) -> Seed:
    data = path.read_bytes()
    if max_lines is not None:  # a shorter seed keeps the bounded in-suite run fast
        data = b"".join(data.splitlines(keepends=True)[:max_lines])
    return Seed(path.name, data)


def _archives() -> list[Seed]:
    nccl = (DATA / "nccl" / "all_reduce_1node.txt").read_bytes()
    from tests.fakes import manifest_text

    manifest = manifest_text('[[nccl]]\npath = "nccl/all_reduce.txt"', name="Fuzz Cloud",
                             cluster="fuzz-h100", nodes=1, interconnect=None).encode()
    members = {"bundle/cmax.toml": manifest, "bundle/nccl/all_reduce.txt": nccl}
    seeds = []
    for mode, suffix in (("w:gz", ".tar.gz"), ("w:xz", ".tar.xz"), ("w:bz2", ".tar.bz2"),
                         ("w", ".tar")):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode=mode) as tar:  # type: ignore[call-overload]
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = 1_790_000_000  # fixed: the seed bytes are reproducible
                tar.addfile(info, io.BytesIO(data))
        seeds.append(Seed("bundle" + suffix, buf.getvalue()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2026, 10, 1, 0, 0, 0)), data,
                        zipfile.ZIP_DEFLATED)
    seeds.append(Seed("bundle.zip", buf.getvalue()))
    return seeds


# more seeds of a format than its documented sample: the files that hold the fields the last
# two rounds added (skipped iterations, consumed samples, energy, timestamps, sweeps)
EXTRA_SEEDS: dict[str, tuple[str, ...]] = {
    "megatron": ("ingest/megatron_lm_log_energy.log", "ingest/megatron_lm_nan_grad.log",
                 "ingest/megatron_bridge_step_time_only.log",
                 "ingest/megatron_bridge_tflops_by_position.log",
                 "validate/mbridge-405b-fp8/training/log-llama3.1-405b_fp8_1024_4242_0.out"),
    "nemo2": ("ingest/nemo2_two_epochs.log", "ingest/nemo2_identity_preamble.log",
              "ingest/nemo2_messy.log"),
    "vllm-bench-serve": ("inference/vllm_bench_serve_sweep.jsonl",),
    "inferencex-agg": ("inference/inferencex_agg_gb200_disagg.json",),
    "mlperf-inference-summary": ("inference/mlperf/offline_mlperf_log_summary.txt",),
    "dgxc-csv": ("ingest/dgxc_parse_mbridge.csv",),
}


_SQL_VALUES: tuple[object, ...] = (
    None, "", "inf", "nan", "1e999", -1, 0, 2**63 - 1, -(2**63), 1e308, float("inf"),
    float("nan"), "x" * 100_000, b"\x00\xff", "n[1-99999999]", "n[9-1]", "n[", "success",
    "invalid_grad_norm", "9" * 5000, "2026-13-45T25:61:61", "\u202e\x1b[2J",
)
_SQL_CHANGES: tuple[str, ...] = (
    "ALTER TABLE jobs DROP COLUMN {col}", "ALTER TABLE jobs RENAME TO jobs_old",
    "ALTER TABLE jobs ADD COLUMN pad TEXT DEFAULT 'padding'", "DELETE FROM jobs",
    "CREATE TABLE jobs2 AS SELECT * FROM jobs",
    "INSERT INTO jobs SELECT * FROM jobs",
)


def mutate_sqlite(data: bytes, rng: random.Random) -> bytes:
    """A job database changed the way a hand edit or a hostile provider would: a cell set to a
    hostile value (any type), a column dropped, the table renamed, emptied, doubled; byte
    mutation (a damaged page) when the seed does not open."""
    import sqlite3

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "jobs.sqlite3"
        path.write_bytes(data)
        try:
            con = sqlite3.connect(path)
            columns = [r[1] for r in con.execute("PRAGMA table_info(jobs)")]
            rows = con.execute("SELECT count(*) FROM jobs").fetchone()[0]
            if rng.random() < 0.75 and columns and rows:
                con.execute(f'UPDATE jobs SET "{rng.choice(columns)}" = ? WHERE rowid = ?',
                            (rng.choice(_SQL_VALUES), rng.randint(1, rows)))
            else:
                con.execute(rng.choice(_SQL_CHANGES).format(col=rng.choice(columns or ["x"])))
            con.commit()
            con.close()
        except sqlite3.Error:
            return mutate_bytes(data, rng)
        return path.read_bytes()


def _sqlite_seed() -> Seed:
    from tests.submission.intake.llmb_fakes import make_llmb_db

    with tempfile.TemporaryDirectory() as tmp:
        return Seed("jobs.sqlite3", make_llmb_db(Path(tmp) / "jobs.sqlite3").read_bytes())


def format_families(max_lines: int | None = None) -> list[Family]:
    """One family per registered evidence format, from its documented sample and the seeds
    above, each input read as ``cmax inspect`` reads it: so every format is fuzzed, including
    a format added later."""
    from cmax.ingest.formats import all_formats

    out = []
    for fmt in all_formats():
        names = (fmt.sample, *EXTRA_SEEDS.get(fmt.id, ()))
        seeds = [_read(REPO / "tests" / "data" / n, None if n.endswith(".json") else max_lines)
                 for n in names if (REPO / "tests" / "data" / n).is_file()]
        fields = mutate_fields
        if fmt.id == "llmb-sqlite":
            seeds, fields = [_sqlite_seed()], mutate_sqlite
        out.append(Family(f"format:{fmt.id}", seeds, inspect_target, structured=mutate_json,
                          fields=fields))
    return out


def _llmb_configs() -> list[Seed]:
    from tests.submission.intake.llmb_fakes import Job, config_text

    jobs = [Job(), Job(dtype="bf16", env_overrides={"NCCL_DEBUG": "INFO"}),
            Job(mbridge_args=("--seq-length=8192",), model_overrides={"gbs": 2048}),
            Job(workload="microbenchmark_nccl", model_name="", dtype="")]
    return [Seed("llmb-config_3913022.yaml", config_text(job).encode()) for job in jobs]


def families(max_lines: int | None = None, *, pipeline: bool = False) -> list[Family]:
    """Every family with its seeds; ``max_lines`` shortens text seeds for quick runs.
    ``pipeline`` adds whole-bundle assessment (~0.2 s an input: tools only, not the suite)."""
    mlperf = DATA / "mlperf"
    training = ["nemo1_gpt3-175b.log", "nemo2_llama3.1-8b_fp8.log", "nemo2_messy.log",
                "megatron_bridge_llama3.1-70b.log", "megatron_lm_nan_grad.log",
                "maxtext_llama2-70b.log", "paxml_gpt3-5b.log", "torchtitan_deepseek-v3.log"]
    return [
        Family("training", [_read(DATA / n, max_lines) for n in training], inspect_target),
        Family("nccl", [_read(p) for p in sorted((DATA / "nccl").glob("*.txt"))],
               inspect_target),
        Family("mlperf", [_read(mlperf / "results" / "example_h100_64x8" / "resnet" /
                                "result_0.txt"),
                          _read(mlperf / "results" / "example_h100_64x8" / "llama31_405b" /
                                "result_1.txt"),
                          _read(mlperf / "systems" / "example_h100_64x8.json")],
               inspect_target, structured=mutate_json),
        Family("dgxc", [_read(DATA / "dgxc_parse_nemo2.csv"),
                        _read(DATA / "dgxc_parse_mbridge.csv"),
                        _read(DATA / "dgxc_parse_nemo2.json")],
               inspect_target, structured=mutate_json),
        Family("incidents", [_read(DATA / "incidents.csv"), _read(DATA / "incidents.json")],
               inspect_target, structured=mutate_json),
        Family("audit", [_read(SAMPLES / "aurora-compute" / "audit" / "audit.values.json")],
               inspect_target, structured=mutate_json),
        Family("manifest", [_read(SAMPLES / "aurora-compute" / "cmax.toml")], manifest_target),
        Family("archive", _archives(), bundle_target),
        Family("llmb-config", _llmb_configs(), llmb_config_target, fields=mutate_yaml),
        *([Family("pipeline", _pipeline_seeds(), pipeline_target, structured=mutate_json),
           Family("llmb-package", _llmb_configs(), llmb_package_target, fields=mutate_yaml)]
          if pipeline else []),
        *format_families(max_lines),
    ]


@dataclass
class Tally:
    """Outcomes of one family's campaign."""

    tried: int = 0
    results: int = 0
    refused: int = 0
    crashes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, tuple[str, int]] = field(default_factory=dict)
    bad_errors: list[str] = field(default_factory=list)

    @property
    def crashed(self) -> int:
        return sum(self.crashes.values())


class Hang(Exception):
    """An input took longer than the per-input time limit."""


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def expired(signum: int, frame: object) -> None:
        raise Hang(f"no outcome within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def generate(family: Family, seed: int, count: int) -> Iterator[tuple[int, Seed, bytes]]:
    """The family's inputs: deterministic for (family, seed)."""
    rng = random.Random(zlib.crc32(family.name.encode()) ^ seed)
    for index in range(count):
        base = family.seeds[index % len(family.seeds)]
        mutate = family.mutate
        if family.structured is not None and base.name.endswith(".json") and rng.random() < 0.5:
            mutate = family.structured
        elif family.fields is not None and not base.name.endswith(".json") and (
                rng.random() < 0.5):
            mutate = family.fields
        yield index, base, mutate(base.data, rng)


def run_family(family: Family, *, seed: int, count: int, workdir: Path,
               per_input_s: int = 20) -> Tally:
    """Feed ``count`` mutated inputs to the family's target; classify each outcome."""
    tally = Tally()
    folder = workdir / family.name
    folder.mkdir(parents=True, exist_ok=True)
    for index, base, data in generate(family, seed, count):
        path = folder / base.name
        path.write_bytes(data)
        tally.tried += 1
        try:
            with _deadline(per_input_s):
                family.target(path)
        except CmaxError as exc:
            tally.refused += 1
            text = exc.one_line()
            if "\n" in text or not text.strip():
                tally.bad_errors.append(f"#{index}: {text!r}")
        except (Exception, RecursionError) as exc:  # classifying is the point
            # positions and values vary; the kind of crash is what a fix addresses
            key = f"{type(exc).__name__}: {_DIGITS.sub('N', str(exc))[:160]}"
            tally.crashes[key] += 1
            tally.examples.setdefault(key, (base.name, index))
        else:
            tally.results += 1
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-family", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--family", action="append", help="only these families")
    parser.add_argument("--max-lines", type=int, default=None,
                        help="shorten training-log seeds to this many lines")
    parser.add_argument("--pipeline", type=int, default=300,
                        help="inputs for the whole-bundle family (slow: ~0.2 s each)")
    parser.add_argument("--save", type=Path, default=None,
                        help="write each crashing input here for reproduction")
    args = parser.parse_args(argv)
    chosen = [f for f in families(args.max_lines, pipeline=True)
              if not args.family or f.name in args.family]
    total_crashes = 0
    print(f"{'family':<10} {'tried':>7} {'result':>7} {'refused':>8} {'crash':>6} {'s':>7}")
    with tempfile.TemporaryDirectory(prefix="cmax-fuzz-") as tmp:
        for family in chosen:
            start = time.perf_counter()
            count = min(args.per_family, args.pipeline) if family.name == "pipeline" else (
                args.per_family)
            tally = run_family(family, seed=args.seed, count=count, workdir=Path(tmp))
            took = time.perf_counter() - start
            total_crashes += tally.crashed + len(tally.bad_errors)
            print(f"{family.name:<10} {tally.tried:>7} {tally.results:>7} {tally.refused:>8} "
                  f"{tally.crashed:>6} {took:>7.1f}")
            for key, n in tally.crashes.most_common():
                seed_name, index = tally.examples[key]
                print(f"    {n:>5} x {key}  [reproduce: --family {family.name} --seed "
                      f"{args.seed}, input #{index} from {seed_name}]")
                if args.save:
                    _save(family, args.seed, index, args.save)
            for line in tally.bad_errors[:5]:
                print(f"    multi-line error {line}")
    return 1 if total_crashes else 0


def _save(family: Family, seed: int, index: int, where: Path) -> None:
    for i, base, data in generate(family, seed, index + 1):
        if i == index:
            where.mkdir(parents=True, exist_ok=True)
            (where / f"{family.name}-{seed}-{index}-{base.name}").write_bytes(data)


if __name__ == "__main__":
    sys.exit(main())
