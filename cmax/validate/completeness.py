"""Completeness: the evidence the rating needs is all there.

The reference recipes average a fixed band of iterations of a run that finished (DGXC
``parse_train_timing*.sh`` and ``llmb-run``: a run is INCOMPLETE unless its final iteration is
printed and every iteration of the window is present). A submission that stops early or lacks
part of the window cannot be rated the way the reference was, whatever its numbers say.
"""

from __future__ import annotations

from collections.abc import Iterator

from cmax.findings import Finding
from cmax.ingest.evidence import declared_files, table_of_key
from cmax.reading.coerce import as_int
from cmax.recipes.window import CURRENT_WINDOW, V25_05_WINDOW
from cmax.resolve.case import same_file, under
from cmax.validate.context import Context, fmt_iters, run_finding, unmatched_specs
from cmax.validate.registry import Rule, finding, register
from cmax.validate.thresholds import RECIPE_STEPS

register(Rule(
    "completeness.no-steps", "error", "A training log yielded no steps",
    "Without per-step timings there is no throughput to rate (llmb-run status NO_DATA).",
    "Submit the full stdout of the training job (the file with the `iteration N/M` lines), "
    "not a summary or the wrong rank's log.",
))
register(Rule(
    "completeness.window-missing", "error", "The reference steady-state window is incomplete",
    "The reference averages a fixed band of iterations ("
    f"{CURRENT_WINDOW[0]}-{CURRENT_WINDOW[1]} from DGXC v25.08 and in llmb-run; "
    f"{V25_05_WINDOW[0]}-{V25_05_WINDOW[1]} in v25.05-v25.07). If any of them is missing the "
    "run cannot be measured the way the reference was, and a partial window can be chosen to "
    "flatter the result.",
    "Run the recipe to its final iteration and submit the whole log: every iteration of the "
    "averaging window must be printed.",
    "DGXC common/parse_train_timing*.sh (MIN_ITERATION/MAX_ITERATION), llmb-run "
    "pretrain_log_parser.py (INCOMPLETE status).",
))
register(Rule(
    "completeness.run-unfinished", "error", "The run did not reach its final iteration",
    "A run that stopped early (crash, timeout, cancellation) is not a valid benchmark: "
    "llmb-run marks it INCOMPLETE unless the last iteration N == M is printed.",
    "Re-run until the job finishes and submit the log of that attempt.",
    "llmb-run pretrain_log_parser.py: INCOMPLETE unless the final iteration is seen.",
))
register(Rule(
    "completeness.short-run", "warning", "The run is shorter than the recipe",
    f"The DGXC recipes run {RECIPE_STEPS} steps. A shorter run leaves too few steps after "
    "warm-up to check for stalls, drift or a cherry-picked window.",
    f"Run the recipe with its default step count ({RECIPE_STEPS}).",
    f"DGXC READMEs v25.05+: \"Each benchmark runs {RECIPE_STEPS} steps\".",
))
register(Rule(
    "completeness.summary-only", "warning", "Only a summary of the run was submitted",
    "A DGXC parse-script CSV/JSON or an llmb-run database holds the parser's mean over its "
    "window, not the steps. cmax can rate it, but cannot check the window, warm-up, stalls, "
    "drift or a cherry-picked window, so the number rests on the submitter's parser run.",
    "Submit the training job's log (the `iteration N/M` lines) alongside the summary.",
))
register(Rule(
    "completeness.empty-evidence", "error", "A declared evidence file yielded no data",
    "The manifest names the file as evidence, but nothing in it could be read (wrong file, "
    "truncated output, unsupported format), so the claim it supports is unverified.",
    "Submit the raw tool output (nccl-tests stdout, MLPerf result_*.txt, audit.values.json); "
    "run `cmax inspect FILE` to see how cmax reads it.",
    subject="file",
))
register(Rule(
    "completeness.empty-incident-log", "warning", "The incident log lists no incident",
    "An incident log with no rows says nothing happened in the period. That may be true, but "
    "it is the provider's word, not evidence: the interruption rate, the MTBF and the SLA "
    "credit then rest on an empty file.",
    "Submit the provider's incident or maintenance log for the period (every node drain, "
    "XID/ECC fault and outage), or state in the report that none was kept.",
    subject="fleet",
))
register(Rule(
    "completeness.no-rateable-evidence", "error", "The bundle holds no evidence cmax can rate",
    "The manifest names no training log, nccl-tests output, MLPerf result, serving result or "
    "ClusterMAX audit: an incident log or power telemetry only qualifies such evidence, and "
    "the declarations are the provider's word. A rating of such a bundle would rest on "
    "nothing measured.",
    "Add the benchmark evidence to the bundle and name it in cmax.toml ([[runs]], [[nccl]], "
    "[[mlperf]], [[inference]] or [audit]); `cmax init` drafts the entries from the files.",
    subject="bundle",
))

QUALIFYING = frozenset({"reliability", "power"})
"""Manifest sections whose evidence qualifies other evidence (an incident log prices the
interruptions of measured work; power telemetry its energy) and rates nothing on its own."""


def _rateable(ctx: Context) -> Iterator[Finding]:
    declared = [key for key, _ in declared_files(ctx.manifest)]
    if not any(key.split(".")[0].split("[")[0] not in QUALIFYING for key in declared):
        named = f" (it names only {', '.join(declared)})" if declared else ""
        yield finding("completeness.no-rateable-evidence",
                      f"cmax.toml names no evidence a rating can rest on{named}",
                      file=ctx.manifest_file)


def _empty_evidence(ctx: Context) -> Iterator[Finding]:
    """A declared file (or folder) that gave its table no row, as its table declares
    (:data:`cmax.ingest.evidence.TABLES`: which tables judge an empty file here, with which
    rule)."""
    for key, rel in declared_files(ctx.manifest):
        table = table_of_key(key)
        if table is None or table.empty is None or not ctx.case.is_present(rel):
            continue  # judged by the table's own rules (a missing file stops the bundle)
        sources = ctx.tables[table.name]["source_file"].drop_nulls().unique().to_list()
        if any(under(s, rel) if table.folder else same_file(s, rel) for s in sources):
            continue
        rows = table.name.replace("_", " ")
        yield finding(table.empty, f"{key} = {rel!r}: no {rows} row could be read from it "
                      f"(expected {table.what})", file=rel)


def _runs(ctx: Context) -> Iterator[Finding]:
    for index, spec in unmatched_specs(ctx):
        if ctx.case.is_present(spec.log):
            yield finding("completeness.no-steps",
                          f"runs[{index}] ({spec.workload} {spec.precision} x{spec.num_gpus}): "
                          "no training run was read from this log", file=spec.log)
    for view in ctx.runs:
        steps = view.clean_steps
        if view.summary is not None:
            yield run_finding("completeness.summary-only", view,
                              "only the parser's window mean is available, no per-step times")
            status = str(view.row.get("status") or "").strip().lower()
            if status in {"incomplete", "failed", "no_data", "no_window"}:
                yield run_finding("completeness.run-unfinished", view,
                                  f"the parser reports status {status!r}")
            continue
        if view.steps.is_empty():
            yield run_finding("completeness.no-steps", view, "the log has no steps")
            continue
        if steps.is_empty():
            continue  # every step is invalid: reported by the sanity rules
        win = view.window
        iterations = steps["iteration"]
        seen = set(iterations.filter(iterations.is_between(win.first, win.last)).to_list())
        missing = [i for i in range(win.first, win.last + 1) if i not in seen]
        last_seen = int(iterations.max())  # type: ignore[arg-type]
        if missing:
            yield run_finding(
                "completeness.window-missing", view,
                f"iterations {fmt_iters(missing)} of the steady-state window "
                f"{win.first}-{win.last} ({win.rule}) are missing")
        elif last_seen < CURRENT_WINDOW[1]:
            # an older baseline measures the last step, so its own window is "covered" by any
            # run; llmb-run (>= 1.14) still calls a run that never reached iterations
            # 35-44 INCOMPLETE, and so does cmax: a few steps can be picked to flatter
            missing = [CURRENT_WINDOW[1]]  # reported: no short-run / status finding on top
            yield run_finding(
                "completeness.window-missing", view,
                f"the run stops at iteration {last_seen}, before the recipe's averaging window "
                f"{CURRENT_WINDOW[0]}-{CURRENT_WINDOW[1]} (llmb-run marks it INCOMPLETE)",
                line=view.line_of(last_seen))
        declared_last = as_int(view.row.get("max_iteration"))
        status = str(view.row.get("status") or "").strip().lower()
        if declared_last is not None and last_seen < declared_last:
            yield run_finding("completeness.run-unfinished", view,
                              f"the last iteration printed is {last_seen} of {declared_last}",
                              line=view.line_of(last_seen))
        elif declared_last is None and status in {"incomplete", "failed", "timeout",
                                                  "cancelled", "running"} and not missing:
            yield run_finding("completeness.run-unfinished", view,
                              f"ingest reports status {status!r}")
        elif not missing and (count := iterations.n_unique()) < RECIPE_STEPS:
            yield run_finding("completeness.short-run", view,
                              f"{count} steps, the recipe runs {RECIPE_STEPS}")


def check(ctx: Context) -> Iterator[Finding]:
    yield from _rateable(ctx)
    yield from _empty_evidence(ctx)
    yield from _runs(ctx)
