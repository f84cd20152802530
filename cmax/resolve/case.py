"""The case: one bundle resolved once, the only thing validate, score, price and render read.

Ingest reads the files into canonical tables (:mod:`cmax.ingest.evidence`); :func:`resolve` then
makes
every decision that more than one stage needs, once, against the reference release:

* which manifest ``[[runs]]`` entry each ingested run came from (the ``entry`` ingest wrote on
  its row: never guessed from its id or its log's path);
* each run's steps in file order and its *clean* steps (finite, positive step time, first
  occurrence of each iteration), computed once instead of once per rule;
* each run's matched reference baseline, as a typed :class:`BaselineRow` (exact match on GBS
  and sequence length when stated, else the recipe's own configuration, with a note);
* each run's steady-state window (:func:`cmax.recipes.window.steady_state_window` with the matched
  baseline's recipe release: the window the reference number was measured over);
* the global batch size the log prints on the window's lines (a ``parallel`` fact
  ``gbs=N``), so that no rule has to open the log again;
* which declared files are in the bundle and the ``cmax.toml`` line that names each;
* the claims ledger (:mod:`cmax.resolve.claims`): each run's GPU, scale, model, precision,
  configuration and software claims, each corroborated, declared only, assumed from the recipe
  or contradicted, with the evidence cited.

The result is a :class:`Case`: an immutable :class:`~cmax.ingest.evidence.Evidence` (same table
attribute names, so code written against Evidence keeps working) plus the resolved parts. After
:func:`resolve` no stage opens a file: a case outlives the bundle's temporary directory and
gives the same findings, scorecard and reports.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

import polars as pl

from cmax.ingest.evidence import STEPS_SCHEMA, Evidence, EvidenceFile, declared_files
from cmax.ingest.evidence import TABLES as EVIDENCE_TABLES
from cmax.ingest.facts import Fact, facts_of
from cmax.ingest.textlines import clean_steps
from cmax.reading.coerce import as_float, as_int
from cmax.recipes.columns import RECIPE_SCHEMA
from cmax.recipes.window import Window, steady_state_window
from cmax.reference.gpus import gpu_family
from cmax.reference.view import ReferenceData, RefView
from cmax.resolve.bundle_claims import bundle_claims
from cmax.resolve.canonical import require_canonical
from cmax.resolve.claims import Claim, Ledger
from cmax.resolve.entry_claims import entry_claims, with_declared
from cmax.resolve.incident_review import IncidentReview, review_incidents
from cmax.resolve.run_claims import (
    RunInputs,
    config_claims,
    identity_claims,
    known_workloads,
    run_identity,
)
from cmax.resolve.runs import BaselineRow, ResolvedRun
from cmax.resolve.step_time import derive_step_times
from cmax.submission.manifest import MANIFEST_NAME, RunSpec

#: Recipe parameters a run is compared on (:data:`cmax.recipes.columns.RECIPE_SCHEMA`), in the order
#: findings list them: GBS first, the parameter a submitter most often changes.
CONFIG_FIELDS: tuple[str, ...] = ("gbs", *(name for name in RECIPE_SCHEMA if name != "gbs"))

#: The canonical tables, by the attribute name they have on Evidence and Case.
TABLES: dict[str, dict[str, pl.DataType]] = {t.name: t.schema for t in EVIDENCE_TABLES}


def safe_conform(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Canonical columns in canonical order; extra columns kept; bad casts become null.

    Rules must run on evidence that is itself wrong (that is their job): a missing column or an
    uncastable value becomes null here and the schema rules report it.
    """
    if list(frame.schema.items()) == list(schema.items()):
        return frame  # already canonical: no copy (a long run's steps are ~180 MB)
    cols = [
        (pl.col(name).cast(dtype, strict=False) if name in frame.columns
         else pl.lit(None, dtype=dtype)).alias(name)
        for name, dtype in schema.items()
    ]
    extra = [pl.col(c) for c in frame.columns if c not in schema]
    return frame.select(cols + extra)


def norm_path(path: str | None) -> str:
    """A bundle path as written, normalised (``./a\\b`` -> ``a/b``)."""
    if not path:
        return ""
    return PurePosixPath(path.replace("\\", "/")).as_posix().removeprefix("./")


def same_file(a: str | None, b: str | None) -> bool:
    """Paths equal as the user wrote them, tolerating absolute vs bundle-relative forms."""
    pa, pb = norm_path(a), norm_path(b)
    if not pa or not pb:
        return False
    if pa == pb:
        return True
    parts_a, parts_b = PurePosixPath(pa).parts, PurePosixPath(pb).parts
    short, long = sorted((parts_a, parts_b), key=len)
    return long[len(long) - len(short):] == short


def under(path: str | None, folder: str) -> bool:
    """``path`` is ``folder`` itself or a file inside it."""
    if same_file(path, folder):
        return True
    p = norm_path(path)
    f = norm_path(folder).rstrip("/")
    return bool(p) and (p.startswith(f + "/") or f"/{f}/" in p)


@dataclass(frozen=True)
class DeclaredFile:
    """A file the manifest names, whether the bundle holds it, and the cmax.toml line."""

    key: str
    path: str
    present: bool
    manifest_line: int | None = None


@dataclass(eq=False)
class Case(Evidence):
    """A bundle's evidence resolved against a reference release; immutable once built.

    Build with :func:`resolve`. The table attributes (``runs``, ``steps``, ``nccl``,
    ``incidents``, ``audit_checks``, ``mlperf``) are ingest's tables as read; ``tables`` holds
    them conformed for rules that must survive a malformed table.
    """

    reference_release: str = ""
    tables: Mapping[str, pl.DataFrame] = field(default_factory=dict)
    resolved: tuple[ResolvedRun, ...] = ()
    declared: tuple[DeclaredFile, ...] = ()
    claims: Ledger = field(default_factory=Ledger)
    incident_review: IncidentReview | None = None
    """the incident log read against the period and the fleet
    (:func:`cmax.resolve.incident_review.review_incidents`), None without ``[reliability]``:
    the ledger, the reliability and monitoring rules, the rate and the SLA all read this one"""
    resolved_from: tuple[object, ...] = field(default=(), repr=False, compare=False)
    """the Evidence fields it was resolved from, each the very object: a copy made with
    ``dataclasses.replace(case, runs=...)`` keeps them, so :func:`resolve` sees the change"""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}: a Case "
                                                  "is immutable")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def current(self) -> bool:
        """Whether its Evidence fields are still the ones it was resolved from."""
        now = tuple(getattr(self, f.name) for f in dataclasses.fields(Evidence))
        return len(now) == len(self.resolved_from) and all(
            a is b for a, b in zip(now, self.resolved_from, strict=True))

    def run(self, run_id: str) -> ResolvedRun | None:
        """The resolved run with this id."""
        return next((r for r in self.resolved if r.run_id == run_id), None)

    def with_declared(self, name: str) -> pl.DataFrame:
        """The ``storage`` or ``inference`` table with what each entry declares where its file
        is silent, from the claims ledger (:mod:`cmax.resolve.entry_claims`), the columns
        filled listed by name in a ``declared`` column."""
        return with_declared(safe_conform(_frame(self, name), TABLES[name]), self.claims, name)

    def is_present(self, path: str) -> bool:
        """Whether a declared path is in the bundle (recorded at resolve time)."""
        return any(d.present for d in self.declared if same_file(d.path, path))


# ---------------------------------------------------------------------------------------------
# resolving


def _frame(evidence: Evidence, name: str) -> pl.DataFrame:
    value = getattr(evidence, name, None)
    return value if isinstance(value, pl.DataFrame) else pl.DataFrame()


def _spec_of(row: Mapping[str, Any],
             specs: Sequence[RunSpec]) -> tuple[RunSpec | None, int | None]:
    """The manifest ``[[runs]]`` entry a run was read for: the ``entry`` ingest recorded on its
    row. A row without one (or naming no entry) answers to no declaration."""
    index = as_int(row.get("entry"))
    if index is None or not 0 <= index < len(specs):
        return None, None
    return specs[index], index


def _summary(run_id: str, row: Mapping[str, Any], file: str | None,
             steps: pl.DataFrame) -> pl.DataFrame | None:
    """For summary-only sources (parse-script CSV/JSON, llmb-run database): the parser's
    window mean as a one-row steps table; None when the run has per-step rows."""
    if not steps.is_empty():
        return None
    step = as_float(row.get("reported_step_time_s"))
    tflops = as_float(row.get("reported_tflops_per_gpu"))
    if step is None and tflops is None:
        return None
    frame = pl.DataFrame({"run_id": [run_id], "step_time_s": [step],
                          "tflops_per_gpu": [tflops], "source_file": [file]},
                         schema={"run_id": pl.String, "step_time_s": pl.Float64,
                                 "tflops_per_gpu": pl.Float64, "source_file": pl.String})
    return safe_conform(frame, STEPS_SCHEMA)


def match_baseline(ref: RefView, workload: str | None, gpu: str | None,
                   precision: str | None, num_gpus: int | None, gbs: int | None,
                   seq_len: int | None) -> tuple[BaselineRow | None, bool, str | None]:
    """The run's reference baseline: (row, exact, note).

    Exact when the reference has the run's own GBS and sequence length; otherwise the recipe's
    configuration at the same workload, GPU, precision and scale (comparability then reports
    the config mismatch, which makes the run not comparable). This is the only place cmax
    matches a run to a baseline.
    """
    if not workload or not precision or not num_gpus or not gpu:
        return None, False, None
    if gbs is not None or seq_len is not None:
        exact = ref.match_baseline(workload, gpu, precision, num_gpus, gbs=gbs, seq_len=seq_len)
        if exact is not None:
            return _row(exact, workload, gpu, precision, num_gpus), True, None
    found = ref.match_baseline(workload, gpu, precision, num_gpus)
    if found is None:
        return None, False, None
    base = _row(found, workload, gpu, precision, num_gpus)
    note = None
    asked = [f"{name} {value}" for name, value in (("GBS", gbs), ("sequence length", seq_len))
             if value is not None]
    if asked:  # only what the run states: "sequence length None" is no configuration
        note = (f"no baseline at {' / '.join(asked)}: matched the recipe's "
                f"GBS {found.get('gbs')} / sequence length {found.get('seq_len')}")
    return base, False, note


def _row(found: Mapping[str, Any], workload: str, gpu: str, precision: str,
         num_gpus: int) -> BaselineRow:
    return BaselineRow.from_row(found, f"{workload}/{gpu}/{precision}/{num_gpus}")


def window_for(baseline: BaselineRow | None, row: Mapping[str, Any],
               clean_steps: pl.DataFrame) -> Window:
    """The steady-state window of the recipe release the baseline was measured with.

    For releases that measure the last step, that is the run's final iteration (the ``M`` of
    ``iteration N/M``), else the last clean iteration printed.
    """
    last = as_int(row.get("max_iteration"))
    if last is None and not clean_steps.is_empty():
        last = as_int(clean_steps["iteration"].max())
    return steady_state_window(baseline.recipe_release if baseline else None, last)


_LOGGED_GBS = re.compile(r"global[_ ]batch[_ ]size:\s*(\d+)")
"""Global batch size as NeMo 2 ("global_batch_size: 256") and Megatron / Megatron-Bridge
("global batch size:  2048") print it on every iteration line."""


def _gbs_facts_from_disk(path: Path, lines: set[int]) -> tuple[Fact, ...] | None:
    """``parallel gbs=N`` facts for the given lines, read while the bundle is still open.

    Used only for window lines the parser did not record a GBS fact for; None if the file is
    gone (a bundle already closed: the case then knows only what the parser recorded).
    """
    out: list[Fact] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            top = max(lines)
            for number, line in enumerate(handle, start=1):
                if number > top:
                    break
                if number in lines:
                    match = _LOGGED_GBS.search(line)
                    if match:
                        out.append(Fact("parallel", f"gbs={match.group(1)}", line=number))
    except OSError:
        return None
    return tuple(out)


def _gbs_by_line(facts: Sequence[Fact]) -> list[tuple[int, int]]:
    out = []
    for fact in facts_of(tuple(facts), "parallel"):
        key, _, value = fact.value.partition("=")
        number = as_int(value.strip())
        if key.strip().lower() == "gbs" and number is not None and fact.line is not None:
            out.append((fact.line, number))
    return sorted(out)


def _logged_gbs(file_facts: Sequence[Fact], window_lines: list[int]) -> tuple[tuple[int, int], ...]:
    """The GBS in effect on each window line: the last ``gbs=`` fact at or before it."""
    known = _gbs_by_line(file_facts)
    out: list[tuple[int, int]] = []
    for line in sorted(window_lines):
        before = [gbs for at, gbs in known if at <= line]
        if before:
            out.append((line, before[-1]))
    return tuple(out)


def _manifest_lines(root: Path, manifest_text: str | None) -> list[str]:
    if manifest_text is None:
        try:
            manifest_text = (root / MANIFEST_NAME).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
    return manifest_text.splitlines()


def _on_disk(root: Path, rel: str) -> bool:
    try:
        return root.joinpath(*PurePosixPath(rel.replace("\\", "/")).parts).exists()
    except (OSError, ValueError):
        return False


def _steps_by_run(steps: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Each run's rows of the steps table, in table order. Ingest writes each run's steps in one
    block: then each is a slice (no copy; a long run's steps are ~180 MB), else one pass of
    ``partition_by`` instead of one filter per run."""
    blocks = steps.get_column("run_id").rle().struct.unnest()
    if blocks.height == steps.get_column("run_id").n_unique():
        by_run: dict[str, pl.DataFrame] = {}
        offset = 0
        for length, run_id in blocks.iter_rows():
            if run_id is not None:
                by_run[str(run_id)] = steps.slice(offset, length)
            offset += length
        return by_run
    return {str(key[0]): frame for key, frame in steps.partition_by(
        "run_id", as_dict=True, maintain_order=True).items() if key[0] is not None}


def _in_line_order(steps: pl.DataFrame) -> pl.DataFrame:
    """A run's steps by line, then ingest order (``_order``, dropped). Ingest gives them in
    file order nearly always: then the table is not copied (a long run's is ~180 MB)."""
    line = steps.get_column("line")
    if not line.null_count() and line.is_sorted():
        return steps.drop("_order")  # ties keep ingest order: partition_by maintains it
    return steps.sort(["line", "_order"], nulls_last=True).drop("_order")


def resolve(evidence: Evidence, reference: ReferenceData, *,
            manifest_text: str | None = None) -> Case:
    """Resolve ingested evidence into a :class:`Case` (see the module docstring).

    Call it while the bundle is open (the pipeline does, right after ingest): it is the last
    step allowed to look at the bundle's files, for what the parsers did not record (declared
    paths that exist, the manifest's line numbers, the logged GBS of the window's lines).
    Resolving evidence whose bundle is already gone works too: those parts then come from
    what ingest recorded (``Evidence.files`` and their facts) alone.
    """
    if isinstance(evidence, Case):
        if evidence.current():
            return evidence
        # a copy of a case with a table (or the manifest) replaced: resolve what it now holds
        evidence = Evidence(**{f.name: getattr(evidence, f.name)
                               for f in dataclasses.fields(Evidence)})
    require_canonical(evidence, TABLES)
    ref = RefView(reference)
    tables = {name: safe_conform(_frame(evidence, name), schema)
              for name, schema in TABLES.items()}
    steps_all = tables["steps"].with_row_index("_order")
    steps_by_run = _steps_by_run(steps_all)
    manifest = evidence.manifest
    specs = list(manifest.runs)
    system_gpu = manifest.system.gpu.strip().lower()
    files = {f.path: f for f in evidence.files}
    runs: list[ResolvedRun] = []
    run_claims: list[Claim] = []
    known = known_workloads(getattr(ref.reference, "baselines", None))
    run_rows = tables["runs"].filter(pl.col("run_id").is_not_null()).unique(
        subset="run_id", keep="first", maintain_order=True)
    for raw in run_rows.iter_rows(named=True):
        row = MappingProxyType(dict(raw))
        spec, index = _spec_of(row, specs)
        run_id = str(row["run_id"])
        file = row.get("source_file") or (spec.log if spec else None)
        steps = _in_line_order(steps_by_run.get(run_id, steps_all.clear()))
        clean = clean_steps(steps)
        draft = ResolvedRun(run_id=run_id, row=row, file=file, spec=spec, spec_index=index,
                            steps=steps, clean_steps=clean, window=steady_state_window(None, None),
                            window_steps=clean.clear(), summary=None)
        # what the run is (the ledger's GPU, scale, model, precision) decides its baseline
        inputs = _run_inputs(draft, list(files.values()), evidence, ref, known)
        named = identity_claims(draft, inputs)
        draft = dataclasses.replace(draft, identity=run_identity(draft, named))
        # a step time the log does not print (TorchTitan's tps): derived from the values above
        steps, derived = derive_step_times(draft)
        if derived is not None:
            clean = clean_steps(steps)
            draft = dataclasses.replace(draft, steps=steps, clean_steps=clean,
                                        step_time_derived=derived)
        base, exact, note = match_baseline(
            ref, draft.get_str("workload"), draft.get_str("gpu") or system_gpu,
            draft.get_str("precision"), draft.get_int("num_gpus"), draft.get_int("gbs"),
            draft.get_int("seq_len"))
        window = window_for(base, row, clean)
        in_window = clean.filter(pl.col("iteration").is_between(window.first, window.last))
        window_lines = [n for n in (as_int(v) for v in in_window["line"].to_list())
                        if n is not None]
        logged: tuple[tuple[int, int], ...] = ()
        record = next((f for p, f in files.items() if same_file(p, file)), None)
        if file and window_lines:
            facts: tuple[Fact, ...] = record.facts if record else ()
            # what the parser recorded line by line wins; window lines it did not cover are
            # read now, while the bundle is open, and carried as facts from here on
            uncovered = set(window_lines) - {line for line, _ in _gbs_by_line(facts)}
            if uncovered:
                found = _gbs_facts_from_disk(
                    evidence.root.joinpath(*PurePosixPath(file.replace("\\", "/")).parts),
                    uncovered)
                if found:
                    facts = (*facts, *found)
                    if record is not None:
                        record = files[record.path] = dataclasses.replace(record, facts=facts)
            logged = _logged_gbs(facts, window_lines)
        run = dataclasses.replace(
            draft, window=window, window_steps=in_window,
            summary=_summary(run_id, row, file, steps), baseline=base, baseline_exact=exact,
            baseline_note=note, logged_gbs=logged)
        claims = [*named, *config_claims(run, dataclasses.replace(
            inputs, facts=record.facts if record else ()))]
        runs.append(dataclasses.replace(run, identity=run_identity(run, claims)))
        run_claims.extend(claims)
    text_lines = _manifest_lines(evidence.root, manifest_text)
    declared = []
    for key, rel in declared_files(manifest):
        present = any(under(p, rel) for p in files) or _on_disk(evidence.root, rel)
        line = next((n for n, t in enumerate(text_lines, start=1) if rel in t), None)
        declared.append(DeclaredFile(key=key, path=rel, present=present, manifest_line=line))
    ingested = {f.name: getattr(evidence, f.name) for f in dataclasses.fields(Evidence)}
    ingested["files"] = list(files.values())
    review = review_incidents(evidence)
    return Case(**ingested, resolved_from=tuple(ingested.values()),
                reference_release=ref.release, tables=MappingProxyType(tables),
                resolved=tuple(runs), declared=tuple(declared), incident_review=review,
                claims=Ledger(tuple(run_claims)).added(
                    *bundle_claims(evidence, review, ref.reference.economics,
                                   ref.gpu_id(evidence.manifest.system.gpu)
                                   or evidence.manifest.system.gpu),
                    *entry_claims(evidence)))


def _run_inputs(run: ResolvedRun, files: Sequence[EvidenceFile], evidence: Evidence,
                ref: RefView, known: tuple[str, ...]) -> RunInputs:
    """What resolving a run's claims reads besides the run: its log's facts, the system's GPU
    and the other files' GPU statements (:mod:`cmax.resolve.run_claims`)."""
    system = evidence.manifest.system
    record = next((f for f in files if same_file(f.path, run.file)), None)
    others = tuple((f.path, fact) for f in files if f is not record
                   for fact in facts_of(f.facts, "gpu"))
    workload = run.spec.workload if run.spec is not None else run.row.get("workload")
    return RunInputs(
        facts=record.facts if record else (), system_gpu=system.gpu.strip().lower(),
        system_gpu_family=gpu_family(ref.gpu_id(system.gpu) or system.gpu),
        gpus_per_node=system.gpus_per_node, known_workloads=known, other_gpus=others,
        shape=ref.shape(str(workload).strip().lower() if workload else None))
