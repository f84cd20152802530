"""Where a fleet audit scores its runs: this machine's cores, or a Ray cluster.

Scoring a run (ingest, validate, score) is independent of every other run and of the history,
so it fans out; recording stays in the driver (:func:`cmax.history.audit.run_audit`), which
commits the results in batches, in the runs' order, whichever executor scored them. So both
executors record the same history.

* ``local`` (default): a pool of worker processes sized to the CPUs this process may use
  (for a backlog of at least ``MIN_RUNS_FOR_POOL`` runs, unless a worker count is given).
  Workers are started once ("spawn": fork is unsafe with Polars' threads) and load the
  reference data once each in their initializer, not once per run; with one worker, runs are
  scored in this process.
* ``ray``: one Ray task per run, on the cluster at ``RAY_ADDRESS`` / ``--ray-address``, or on
  a Ray started on this machine. Ray is an optional extra (``pip install
  'cmax-rating[ray]'``). The runs root must be readable at the same path from every Ray
  worker (a shared volume), because tasks read the bundles where they are.

Both yield ``(run, Scorecard | Unusable)`` in the order of ``pending``, with at most a few
tasks per worker in flight, so memory stays flat however large the backlog.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, Literal

from cmax.errors import CmaxError, UsageError
from cmax.history.discover import RunRef, Unusable
from cmax.reading.pidfolders import owned_prefix, remove_stale
from cmax.scorecard import Scorecard
from cmax.submission.bundle import ignore_stop_signals, stop_code

ExecutorName = Literal["local", "ray"]
EXECUTORS: tuple[ExecutorName, ...] = ("local", "ray")
AssessFn = Callable[[Path], Scorecard]
Outcome = Scorecard | Unusable
Scored = Generator[tuple[RunRef, Outcome], None, None]

IN_FLIGHT_PER_WORKER = 4
# A spawned worker costs about a second of imports before its first run (a run costs well
# under a tenth), so without an explicit worker count a pool is only started for a backlog
# at least this large; smaller passes score in this process.
MIN_RUNS_FOR_POOL = 24
# how long stopped workers get to remove their temporary folders before SIGKILL
STOP_GRACE_S = 5.0
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def machine_workers() -> int:
    """The CPUs this process may run on (its affinity mask, not the host's core count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def score_one(run: RunRef, assess: AssessFn) -> Outcome:
    """A run's Scorecard, or the one-line reason it cannot be scored (never raises)."""
    try:
        return assess(run.path)
    except CmaxError as exc:
        return Unusable(run.path, exc.one_line())
    except Exception as exc:  # one broken run must not stop a fleet audit
        return Unusable(run.path, f"internal error while scoring ({type(exc).__name__}: "
                                  f"{exc}); please report it with this bundle")


def _warm_worker(parent: int) -> None:
    """Pool initializer: tie the worker's life to cmax's, then import the pipeline and load
    the reference once per worker. A stop while it runs ends the worker at once and quietly:
    ``concurrent.futures`` logs any exception of an initializer with its traceback (a Ctrl-C
    during start-up printed 83 lines of them). The worker never sees SIGINT (it is blocked
    from birth, :func:`children_spared_sigint`): cmax stops its workers itself."""
    try:
        _die_with_parent(parent)
        signal.signal(signal.SIGTERM, _stop)
        import cmax.pipeline  # noqa: F401  (the import is the point: Polars, pydantic, parsers)
        from cmax.reference import load_reference

        with contextlib.suppress(CmaxError):  # the first run reports it, with its bundle named
            load_reference()
    except SystemExit as exc:
        os._exit(exc.code if isinstance(exc.code, int) else 1)


@contextlib.contextmanager
def children_spared_sigint() -> Iterator[None]:
    """Block SIGINT in this thread while it starts processes (pool workers, the resource
    tracker), so they are born with it blocked: Ctrl-C reaches every process of the terminal's
    group, and a worker still importing would print a KeyboardInterrupt traceback.

    A stop meant for cmax (SIGINT, SIGTERM) that arrives meanwhile is held and raised again
    once the processes have started: Python runs its handler in this thread even while the
    signal is blocked here (another thread takes it), and unwinding in the middle of a launch
    closed the pipe a new worker was reading its start-up data from, so that worker printed
    multiprocessing's ``EOFError`` traceback beside cmax's one line."""
    held: list[int] = []
    handlers: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handlers[sig] = signal.signal(sig, lambda signum, _frame: held.append(signum))
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        for stop, handler in handlers.items():
            signal.signal(stop, handler)
        if held:
            signal.raise_signal(held[0])


def _stop(signum: int, frame: object) -> None:
    """SIGTERM/SIGINT in a worker: unwind (the run's ``with`` blocks remove its temporary
    folder), then :func:`_score_in_worker` ends the process."""
    ignore_stop_signals()
    raise SystemExit(128 + signum)


def _die_with_parent(parent: int) -> None:
    """Have the kernel send this worker SIGTERM when cmax dies, even by kill -9 (Linux
    ``PR_SET_PDEATHSIG``); elsewhere a thread watches for the parent to go. Without it a
    killed cmax left its workers, and through them the resource tracker, running forever,
    holding cmax's stdout and stderr, so a caller reading them hung."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # cmax died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _score_in_worker(run: RunRef, assess: AssessFn) -> Outcome:
    """:func:`score_one` in a pool worker; a stop signal during the run (SystemExit, from
    :func:`_stop` or from a bundle's own handler) exits the process once the run's cleanups
    have run, instead of returning to the pool for the next task."""
    try:
        return score_one(run, assess)
    except SystemExit as exc:
        os._exit(exc.code if isinstance(exc.code, int) else 1)


def stop_pool(pool: Any) -> None:
    """Stop a pool now: cancel what has not started, SIGTERM the workers (each removes its
    run's temporary folder), SIGKILL any still alive after ``STOP_GRACE_S``."""
    handles = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in handles:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for proc in handles:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join()


def score_local(pending: list[RunRef], assess: AssessFn,
                workers: int) -> Scored:
    """Score in this process (one worker) or in a pool of ``workers`` processes.

    If the caller stops early (an exception, SIGTERM/SIGINT turned into SystemExit by
    :func:`cmax.submission.bundle.cleanup_on_signals`), the pool is stopped at once rather than
    waiting for the runs in flight."""
    if workers <= 1 or len(pending) < 2:
        for run in pending:
            yield run, score_one(run, assess)
        return
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    size = min(workers, len(pending))
    with children_spared_sigint():
        pool = ProcessPoolExecutor(max_workers=size, mp_context=context,
                                   initializer=_warm_worker, initargs=(os.getpid(),))
    finished = False
    try:
        def submit(run: RunRef) -> Future[Outcome]:
            with children_spared_sigint():  # a submit starts a worker when one is missing
                return pool.submit(_score_in_worker, run, assess)

        def result(run: RunRef, future: Future[Outcome]) -> Outcome:
            return future.result()

        yield from _in_order(pending, submit, result, size)
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:
            stop_pool(pool)


def _in_order(pending: list[RunRef], submit: Callable[[RunRef], Any],
              result: Callable[[RunRef, Any], Outcome],
              workers: int) -> Iterator[tuple[RunRef, Outcome]]:
    """Keep ``IN_FLIGHT_PER_WORKER`` tasks per worker submitted; yield in ``pending`` order."""
    queue: deque[tuple[RunRef, Any]] = deque()
    todo = iter(pending)
    for run in todo:
        queue.append((run, submit(run)))
        if len(queue) >= workers * IN_FLIGHT_PER_WORKER:
            break
    while queue:
        run, handle = queue.popleft()
        nxt = next(todo, None)
        if nxt is not None:
            queue.append((nxt, submit(nxt)))
        yield run, result(run, handle)


def require_ray() -> None:
    """Fail early, in one line, when ``--executor ray`` is asked for without Ray installed."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("--executor ray needs Ray, which is not installed",
                        fix="pip install 'cmax-rating[ray]' (or use --executor local)"
                        ) from None


RAY_FOLDER_PREFIX = "cmax-ray-"


def _start_reaper(folder: Path) -> subprocess.Popen[bytes] | None:
    """The reaper of a local Ray (cmax/history/rayreaper.py): when its stdin closes, with
    cmax ending or killed, it stops whatever still holds a file in ``folder`` and removes it.
    None where there is no /proc to find those processes in."""
    if not Path("/proc/self/fd").is_dir():
        return None
    script = Path(__file__).with_name("rayreaper.py")
    return subprocess.Popen([sys.executable, "-I", str(script), str(folder), str(STOP_GRACE_S),
                             str(os.getpid())],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd="/", start_new_session=True)


def _finish_reaper(reaper: subprocess.Popen[bytes] | None, folder: Path | None) -> None:
    """After a local Ray is shut down: remove its folder; the reaper, its stdin closed, stops
    anything Ray left behind and exits."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    if reaper is not None and reaper.stdin is not None:
        reaper.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            reaper.wait(STOP_GRACE_S * 2 + 5)


def _own_ray_folder() -> Path:
    """A private temporary folder for a local Ray (its session files, and the temporary
    folders its tasks make): removed after the Ray is shut down; one a killed cmax left is
    removed by the next local Ray (its process id is gone)."""
    parent = Path(tempfile.gettempdir())
    remove_stale(parent, RAY_FOLDER_PREFIX)
    return Path(tempfile.mkdtemp(prefix=owned_prefix(RAY_FOLDER_PREFIX), dir=parent))


@contextlib.contextmanager
def _keep_stop_signals() -> Iterator[None]:
    """Ray's ``init`` replaces the driver's SIGTERM handler (with a bare ``sys.exit``, and its
    core worker with a C-level one that prints a stack and exits 1), skipping every cleanup
    and the audit's last commit; put the handlers that were there back afterwards, so a stop
    unwinds through :func:`cmax.submission.bundle.cleanup_on_signals`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            if handler is not None:
                signal.signal(sig, handler)


def _cancel(ray: Any, in_flight: dict[Any, RunRef]) -> None:
    """Cancel the tasks still running (each unwinds as on Ctrl-C, removing its run's
    temporary folder) and give them ``STOP_GRACE_S`` to finish doing so."""
    refs = list(in_flight)
    for ref in refs:
        with contextlib.suppress(Exception):
            ray.cancel(ref)
    with contextlib.suppress(Exception):
        ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_S)


def score_ray(pending: list[RunRef], assess: AssessFn, workers: int | None,
              address: str | None) -> Scored:
    """One Ray task per run; connects to ``address`` / ``RAY_ADDRESS`` or starts a local Ray.

    A Ray this call started is its own (never a ``ray start`` instance found on the machine),
    keeps its files in a private temporary folder and is shut down, and the folder removed,
    when it is done or stopped; one already initialised in this process (a test fixture, a
    notebook) is used and left running. Stopped early (SIGTERM/SIGINT, an error), the tasks
    in flight are cancelled first.
    """
    require_ray()
    import ray

    started = False
    own: Path | None = None
    reaper: subprocess.Popen[bytes] | None = None
    if not ray.is_initialized():
        target = address or os.environ.get("RAY_ADDRESS") or None
        # Ray's own start-up chatter (INFO/WARNING) would interleave with cmax's output
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                   "logging_level": logging.ERROR}
        if target is None:
            own = _own_ray_folder()
            reaper = _start_reaper(own)
            options.update(_temp_dir=str(own),
                           runtime_env={"env_vars": {"TMPDIR": str(own)}})
            if workers is not None:
                options["num_cpus"] = workers
        try:
            with _keep_stop_signals():
                ray.init(address=target or "local", **options)
        except Exception as exc:  # ConnectionError and Ray's own exception types
            _finish_reaper(reaper, own)
            raise CmaxError(f"cannot start or reach Ray ({type(exc).__name__}: "
                            f"{str(exc).strip().splitlines()[0][:200] if str(exc) else ''})",
                            file=target or "local Ray",
                            fix="check --ray-address / RAY_ADDRESS (ray://host:10001 or "
                            "host:6379), or leave both unset to start Ray here") from None
        started = True
    in_flight: dict[Any, RunRef] = {}
    finished = False
    try:
        task = ray.remote(num_cpus=1, max_retries=2)(score_one)
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        size = workers or max(1, int(resources.get("CPU", 1)))

        def submit(run: RunRef) -> Any:
            ref = task.remote(run, assess)
            in_flight[ref] = run
            return ref

        def result(run: RunRef, ref: Any) -> Outcome:
            try:
                outcome: Outcome = ray.get(ref)
            except SystemExit as exc:  # a stop signal, which Ray reports as SystemExit(1)
                raise SystemExit(stop_code() or exc.code) from None
            except Exception as exc:  # the worker died (OOM, node lost) after its retries
                outcome = Unusable(run.path, f"Ray task failed ({type(exc).__name__}); "
                                             "run cmax audit again to retry this run")
            # a stop (SystemExit) inside ray.get leaves the task in flight, to be cancelled
            del in_flight[ref]
            return outcome

        yield from _in_order(pending, submit, result, size)
        finished = True
    finally:
        if not finished and in_flight:
            _cancel(ray, in_flight)
        if started:
            with _keep_stop_signals():  # Ray's shutdown resets SIGTERM to its default
                ray.shutdown()
        _finish_reaper(reaper, own)


def score_runs(pending: list[RunRef], assess: AssessFn, *, executor: ExecutorName = "local",
               workers: int | None = None,
               ray_address: str | None = None) -> Scored:
    """Dispatch to the chosen executor (``workers`` None: the machine's / cluster's CPUs)."""
    if executor == "ray":
        return score_ray(pending, assess, workers, ray_address)
    if executor == "local":
        if workers is None:
            workers = machine_workers() if len(pending) >= MIN_RUNS_FOR_POOL else 1
        return score_local(pending, assess, workers)
    raise UsageError(f"unknown executor {executor!r}", field="--executor",
                    expected=" or ".join(EXECUTORS))
