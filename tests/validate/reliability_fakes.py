"""A training run that restarts, placed in time by its own step stamps, and the incident row
that does (or does not) cover it: the cases of the reliability rules that read the logs. The
log is written with both attempts' stamps (tests/validate/validate_fakes.py RunFx), so real
ingest finds the restart and its times."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from tests.validate.validate_fakes import HonestBundle

UTC = dt.UTC
STARTED = dt.datetime(2026, 8, 3, 8, 0, tzinfo=UTC)
RESUMED_AT = 30
REACHED = 34
DOWN = dt.timedelta(hours=2)


def restarted_run(logged: tuple[int, int] | None = None) -> Callable[[HonestBundle], None]:
    """Run 0's first attempt, stamped from 2026-08-03 08:00 UTC, reaches iteration 34; the job
    is back two hours after that step and resumes from the checkpoint at iteration 30.
    ``logged`` adds an unplanned incident row from that many minutes after the first
    attempt's last step to that many minutes after it (None: no row)."""
    def fn(bundle: HonestBundle) -> None:
        run = bundle.runs[0]
        step = run.times[0]
        first = [STARTED.timestamp() + step * (i + 1) for i in range(REACHED + 1)]
        back = first[-1] + DOWN.total_seconds()
        run.earlier = list(range(REACHED + 1))
        run.earlier_stamps = first
        run.iterations = list(range(RESUMED_AT, RESUMED_AT + len(run.times)))
        run.max_iteration = RESUMED_AT + len(run.times) - 1
        run.extra_steps["wall_time_s"] = [back + t for t in accumulate(run.times)]
        if logged is not None:
            stopped = dt.datetime.fromtimestamp(first[-1], UTC)
            rows: list[dict[str, Any]] = bundle.incident_rows()
            rows.append({"start": stopped + dt.timedelta(minutes=logged[0]),
                         "end": stopped + dt.timedelta(minutes=logged[1]), "node": "node-003",
                         "gpu": None, "category": "Faulty GPU", "planned": False,
                         "description": "Xid 79", "source_file": "incidents.csv",
                         "line": len(rows) + 2})
            bundle.incidents = rows
    return fn
