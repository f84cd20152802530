"""Benchmark report rendering: seconds per report, split into charts, HTML, layout, PDF write.

    python benchmarks/bench_render.py [--repeat 3] [--samples] [--cli] [--keep DIR]

Floors (issue 15): a sample scorecard renders in at most 1.5 s (``--samples``), and
``cmax report`` of one sample, as a whole process, takes at most 3× a bare WeasyPrint process
writing a one-line page in the same venv (``--cli``); each figure is printed beside its floor.
``--cli`` also times ``cmax report`` without its document worker (cmax.render.worker), to show
what drawing the charts in a second process saves on this machine.

Reports come from tests/score/scorecard_factory.py (an H100 provider near reference, a weak one,
one with every section missing, one with hostile text) and, with ``--samples``, from the
sample bundles that ship with cmax (rated first; rating time is not counted). Each report is
rendered ``--repeat`` times in this process and the median is printed, after one warm-up
render whose time (imports, font discovery) is printed as the cold start.

A loaded machine slows everything alike, so with ``--samples`` the bare WeasyPrint process is
timed first and each sample scorecard is also shown as a multiple of it (the 1.5 s floor was
set when that process took 0.57 s: about 2.6× bare); ``--cli`` runs its processes in turns.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

T0 = time.perf_counter()

from cmax.render import reports, views  # noqa: E402
from cmax.render.pdf import DEFAULT_VARIANT, layout, write_document  # noqa: E402
from cmax.scorecard import Scorecard  # noqa: E402
from tests.score.scorecard_factory import (  # noqa: E402
    make_hostile_scorecard,
    make_minimal_scorecard,
    make_scorecard,
    make_strong_scorecard,
    make_weak_scorecard,
)

IMPORTS_S = time.perf_counter() - T0


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def bench_scorecard(card: Scorecard, out: Path) -> dict[str, float]:
    t_charts, chart_set = _timed(lambda: reports.scorecard_charts(card))
    t_html, html = _timed(lambda: reports.scorecard_html(card, "b", "pdf", chart_set))
    t_layout, document = _timed(lambda: layout(html))
    t_write, _ = _timed(lambda: write_document(document, out / "b.pdf",
                                               pdf_variant=DEFAULT_VARIANT))
    return {"charts": t_charts, "html": t_html, "layout": t_layout, "write": t_write,
            "pages": len(document.pages), "kb": (out / "b.pdf").stat().st_size / 1024}


def bench_brief(card: Scorecard, out: Path) -> dict[str, float]:
    t_html, html = _timed(lambda: reports.brief_html(card))
    t_layout, document = _timed(lambda: layout(html))
    t_write, _ = _timed(lambda: write_document(document, out / "b.pdf",
                                               pdf_variant=DEFAULT_VARIANT))
    return {"charts": 0.0, "html": t_html, "layout": t_layout, "write": t_write,
            "pages": len(document.pages), "kb": (out / "b.pdf").stat().st_size / 1024}


def bench_leaderboard(cards: list[Scorecard], out: Path) -> dict[str, float]:
    rows = views.leaderboard_rows([(f"s{i}", c) for i, c in enumerate(cards)])
    labels = [f"{r.card.provider[:28]} · {r.card.cluster[:20]}" for r in rows]
    t_charts, uris = _timed(lambda: {
        "score": reports._uri(reports.charts.score_chart([r.card for r in rows], labels)),
        "price": reports._uri(reports.charts.price_chart([r.card for r in rows], labels)),
    })
    t_html, html = _timed(lambda: reports.leaderboard_html(rows, "pdf", uris))
    t_layout, document = _timed(lambda: layout(html))
    t_write, _ = _timed(lambda: write_document(document, out / "b.pdf",
                                               pdf_variant=DEFAULT_VARIANT))
    return {"charts": t_charts, "html": t_html, "layout": t_layout, "write": t_write,
            "pages": len(document.pages), "kb": (out / "b.pdf").stat().st_size / 1024}


def _sample_cards() -> list[tuple[str, Scorecard]]:
    from cmax.pipeline import assess
    from cmax.submission.samples import sample_bundles

    out = []
    for path in sample_bundles():
        card = assess(path)
        out.append((card.provider, card))
    return out


SCORECARD_FLOOR_S = 1.5
CLI_FLOOR_RATIO = 3.0
BARE_WEASYPRINT = ("import sys, weasyprint; "
                   "weasyprint.HTML(string='<p>one line</p>').write_pdf(sys.argv[1])")


# `cmax report` with every document drawn in-process (cmax.render.worker not started)
NO_WORKER = ("from cmax.render.worker import DocumentWorker; "
             "DocumentWorker.start = classmethod(lambda cls: cls(None)); "
             "from cmax.cli import run; run()")


def _process_seconds(argv: list[str]) -> float:
    """Wall time of a whole process (imports, font discovery and all)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return time.perf_counter() - start


def _bare_argv(out: Path) -> list[str]:
    return [sys.executable, "-c", BARE_WEASYPRINT, str(out / "bare.pdf")]


def bare_seconds(out: Path, repeat: int) -> float:
    """Median of a bare WeasyPrint process writing a one-line page: this machine's yardstick."""
    return statistics.median(_process_seconds(_bare_argv(out)) for _ in range(repeat))


def bench_cli(out: Path, repeat: int) -> None:
    """`cmax report` of one sample against a bare WeasyPrint one-line page, both as processes,
    run in turns so that both see the same load; cmax's bytecode compiled first, as pip leaves
    it (WeasyPrint's is: it was installed by pip)."""
    from _bytecode import compile_cmax

    from cmax.submission.samples import sample_bundles

    compile_cmax()
    bundle = sample_bundles()[0]
    args = ["report", str(bundle), "-o", str(out / "cli")]
    report_argv = [sys.executable, "-m", "cmax", *args]
    alone_argv = [sys.executable, "-c", NO_WORKER, *args]
    bares, report_times, alone_times = [], [], []
    for _ in range(repeat):
        bares.append(_process_seconds(_bare_argv(out)))
        report_times.append(_process_seconds(report_argv))
        alone_times.append(_process_seconds(alone_argv))
    bare, report = statistics.median(bares), statistics.median(report_times)
    alone = statistics.median(alone_times)
    print(f"bare WeasyPrint one-line page (process): {bare:.2f} s")
    print(f"cmax report {bundle.name} (process):      {report:.2f} s = {report / bare:.2f}× "
          f"bare (floor ≤ {CLI_FLOOR_RATIO:g}×: "
          f"{'met' if report <= CLI_FLOOR_RATIO * bare else 'NOT met'})")
    print(f"  the same without its document worker:   {alone:.2f} s = {alone / bare:.2f}× bare")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", action="store_true",
                        help="also render the sample bundles that ship with cmax")
    parser.add_argument("--cli", action="store_true",
                        help="also time `cmax report` of one sample against bare WeasyPrint")
    parser.add_argument("--keep", type=Path, default=None, help="write the PDFs here")
    args = parser.parse_args()

    out = args.keep or Path(tempfile.mkdtemp(prefix="cmax-bench-render-"))
    out.mkdir(parents=True, exist_ok=True)
    bare = bare_seconds(out, args.repeat) if args.samples else None
    ref = make_scorecard()
    cold, _ = _timed(lambda: bench_scorecard(ref, out))
    print(f"cold start: imports {IMPORTS_S:.2f} s, first scorecard render {cold:.2f} s "
          "(matplotlib and WeasyPrint warm-up)")

    cases: list[tuple[str, Callable[[], dict[str, float]]]] = [
        ("scorecard: H100 near reference", lambda: bench_scorecard(ref, out)),
        ("scorecard: weak provider", lambda: bench_scorecard(make_weak_scorecard(), out)),
        ("scorecard: every section missing",
         lambda: bench_scorecard(make_minimal_scorecard(), out)),
        ("scorecard: hostile text", lambda: bench_scorecard(make_hostile_scorecard(), out)),
        ("brief: H100 near reference", lambda: bench_brief(ref, out)),
        ("leaderboard: 5 providers", lambda: bench_leaderboard(
            [make_strong_scorecard(), ref, make_weak_scorecard(), make_minimal_scorecard(),
             make_hostile_scorecard()], out)),
    ]
    if args.samples:
        samples = _sample_cards()
        for name, card in samples:
            cases.append((f"scorecard: sample {name}",
                          lambda card=card: bench_scorecard(card, out)))
            cases.append((f"brief: sample {name}", lambda card=card: bench_brief(card, out)))
        cases.append((f"leaderboard: {len(samples)} samples",
                      lambda: bench_leaderboard([c for _, c in samples], out)))

    header = (f"{'report':<38} {'charts':>7} {'html':>6} {'layout':>7} {'pdf':>6} "
              f"{'total':>7} {'pages':>5} {'KiB':>6}")
    print(f"median of {args.repeat} renders, seconds")
    print(header)
    print("-" * len(header))
    for name, run in cases:
        results = [run() for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in results) for k in results[0]}
        total = med["charts"] + med["html"] + med["layout"] + med["write"]
        floor = ""
        if name.startswith("scorecard: sample") and bare:
            floor = (f"  (floor ≤ {SCORECARD_FLOOR_S:g} s: "
                     f"{'met' if total <= SCORECARD_FLOOR_S else 'NOT met'}; "
                     f"{total / bare:.1f}× bare)")
        print(f"{name:<38} {med['charts']:>7.2f} {med['html']:>6.2f} {med['layout']:>7.2f} "
              f"{med['write']:>6.2f} {total:>7.2f} {int(med['pages']):>5} {med['kb']:>6.0f}"
              f"{floor}")
    if bare is not None:
        print(f"bare WeasyPrint one-line page (process, before the renders): {bare:.2f} s")
    if args.cli:
        bench_cli(out, args.repeat)
    if args.keep is None:
        import shutil

        shutil.rmtree(out)


if __name__ == "__main__":
    main()
