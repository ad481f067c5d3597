"""Executors: where the runs of a grid are computed.

:func:`execute_grid` yields :class:`RunEvent` objects (a run started, a run finished) while it
computes a list of :class:`~clad.engine.run.RunConfig` in one of three places:

* ``jobs=1`` (default): one after another in this process, with a per-step callback;
* ``jobs=N``: N worker processes (a :class:`pebble.ProcessPool`, ``forkserver`` context where
  available, else ``spawn``), at most N runs in flight. A worker that dies (killed, out of
  memory, a crash in native code) fails only its own run and is replaced; workers end by
  themselves when the main process ends, even by SIGKILL (:func:`exit_with`);
* ``dask="tcp://host:8786"``: a running Dask distributed cluster (``Client(address)``,
  ``client.submit`` per run, results streamed back with ``as_completed``).

Every run uses ``threads`` BLAS/OpenMP/torch threads (default 1) wherever it runs: environment
variables set before worker processes start, :mod:`threadpoolctl` limits and
``torch.set_num_threads`` around each run. So N workers do not oversubscribe the cores, and —
since a thread count can change the rounding of parallel reductions — the numbers do not depend
on the executor either.

Results never depend on where or in which order runs are computed: every seed derives from the
run seed. A run that raises becomes a failed :class:`~clad.results.record.RunResult` carrying its traceback
(the grid goes on). With ``timeout`` a run taking longer is stopped and recorded as failed with
an error starting ``"timeout"`` (in this process and in worker processes through ``SIGALRM``;
with worker processes a run stuck in native code is stopped by killing and replacing its worker). Dask runs
tasks in threads, which cannot be interrupted: there the limit is not enforced (a warning says
so; use the cluster's own limits). Dask workers must be able to import clad (the same version)
and every plug-in the spec names. Datasets are loaded once per process
(``clad.engine.run._cached_dataset``) and runs on the same dataset are computed one after another, so
a worker reuses the arrays for every run on the same dataset: runs start in
:func:`~clad.engine.run.execution_order`, the order ``clad run --dry-run`` lists.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from ..results.record import RunResult
from ..errors import CladError, CladValueError
from .forkserver import mp_context
from .config import RunConfig
from .run import execution_order, failed_result, run_safely

__all__ = [
    "RunEvent",
    "execute_grid",
    "execute_claimed",
    "execute_one",
    "execute_group",
    "check_execution",
    "RunTimeout",
    "THREAD_ENV_VARS",
    "limited_threads",
    "execute_unit",
    "ClusterLost",
    "import_modules",
    "LOST_CLUSTER_SECONDS",
]

from ..core.time_limit import RunTimeout, check_timeout, time_limit

log = logging.getLogger(__name__)

#: seconds a Dask client may be without its scheduler before the grid stops, naming the lost cluster
LOST_CLUSTER_SECONDS = 10.0

#: environment variables that cap the threads of BLAS / OpenMP libraries in worker processes
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@dataclass(frozen=True)
class RunEvent:
    """What happened to one run: ``kind`` is ``"started"``, ``"step"`` (a sequential run evaluated
    its training step ``index``, named ``step``) or ``"finished"`` (then ``result``, ``started``
    and ``finished`` are set; times are UTC ISO 8601)."""

    kind: str
    config: RunConfig
    result: RunResult | None = None
    started: str | None = None
    finished: str | None = None
    step: str | None = None
    index: int | None = None


def _utc() -> str:
    from ..results.store import utc_now

    return utc_now()


def _time_limit(seconds: float | None):
    """:func:`clad.core.time_limit.time_limit` (``SIGALRM``; main thread on POSIX only)."""
    return time_limit(seconds)


def _timeout_result(cfg: RunConfig, seconds: float, detail: str = "") -> RunResult:
    return failed_result(
        cfg, f"timeout: the run took longer than {seconds:g} s (time limit)\n{detail}".rstrip()
    )


@contextmanager
def limited_threads(threads: int | None):
    """Run the block with at most ``threads`` BLAS/OpenMP/torch threads (``None``: no limit):
    threadpoolctl limits, ``torch.set_num_threads`` if torch is loaded, and the thread-count
    environment variables the user did not set (read by libraries loaded inside the block)."""
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    torch_before = torch.get_num_threads() if torch is not None else None
    with _thread_env(threads), threadpool_limits(limits=int(threads)):
        if torch is not None:
            torch.set_num_threads(int(threads))
        try:
            yield
        finally:
            if torch_before is not None:
                torch.set_num_threads(torch_before)


def execute_one(
    cfg: RunConfig,
    timeout: float | None = None,
    threads: int | None = 1,
    on_step: Callable[[str, int], None] | None = None,
) -> tuple[RunResult, str, str]:
    """Run one configuration safely with at most ``threads`` BLAS/OpenMP/torch threads:
    ``(result, started, finished)``; never raises for a failing run (the result is failed, with
    the traceback or ``"timeout..."``).

    >>> from clad.engine.config import Component
    >>> cfg = RunConfig(Component("synthetic", {"n_concepts": 2, "n_train": 50, "n_test": 40}),
    ...                 Component("concept_aware"), Component("naive"), Component("hbos"))
    >>> result, started, finished = execute_one(cfg)
    >>> result.status, result.R["roc_auc"].shape
    ('ok', (2, 2))
    """
    started = _utc()
    try:
        with limited_threads(threads), _time_limit(timeout):
            result = run_safely(cfg, on_step=on_step)
    except RunTimeout:  # a BaseException: run_safely lets it through
        result = _timeout_result(cfg, timeout or 0.0, traceback.format_exc())
    return result, started, _utc()


def execute_in_worker(
    cfg: RunConfig, timeout: float | None = None, threads: int | None = 1
) -> tuple[RunResult, str, str]:
    """:func:`execute_one` in a worker process, telling the main process each concept step through
    the queue the worker was started with (when it was)."""
    steps = _STEPS
    if steps is None:
        return execute_one(cfg, timeout, threads)
    steps.put(
        ("pid", cfg.run_id, os.getpid(), None)
    )  # so the main process sees this worker end, however it ends
    on_step = (
        (lambda step, index: steps.put(("step", cfg.run_id, str(step), int(index))))
        if _FOLLOW_STEPS
        else None
    )
    return execute_one(cfg, timeout, threads, on_step=on_step)


def execute_group(
    configs: Sequence[RunConfig],
    timeout: float | None = None,
    threads: int | None = 1,
    sharing=None,
    on_step: Callable[[RunConfig, str, int], None] | None = None,
) -> list[tuple[RunResult, str, str]]:
    """:func:`execute_one` for each run of a sharing group (:func:`clad.engine.sharing.sharing_groups`),
    one after another through one step cache (``sharing``, a :class:`~clad.engine.sharing.Sharing`;
    None: nothing shared): ``[(result, started, finished)]`` in the given order. ``timeout`` is
    each run's."""
    if isinstance(configs, ReplicaUnit):
        return execute_unit(configs, timeout, threads, on_step=on_step)
    return list(_group_runs(configs, timeout, threads, sharing, on_step))


def _group_runs(configs, timeout, threads, sharing, on_step=None, claim=None):
    from ..core.steps import using

    cache = sharing.cache_for(configs) if sharing is not None else None
    for cfg in configs:
        if claim is not None and not claim(cfg):
            continue
        step = None if on_step is None else functools.partial(on_step, cfg)
        with using(cache):
            outcome = execute_one(cfg, timeout, threads, on_step=step)
        yield outcome


def execute_group_in_worker(
    configs: Sequence[RunConfig],
    timeout: float | None = None,
    threads: int | None = 1,
    sharing=None,
) -> list[tuple[RunResult, str, str]]:
    """:func:`execute_group` in a worker process, telling the main process this worker's process id
    (so that it sees the worker end, however it ends) and, when followed, each concept step through
    the queue the worker was started with."""
    steps = _STEPS
    if steps is None:
        return execute_group(configs, timeout, threads, sharing)
    for cfg in configs:
        steps.put(("pid", cfg.run_id, os.getpid(), None))
    on_step = (
        (lambda cfg, step, index: steps.put(("step", cfg.run_id, str(step), int(index))))
        if _FOLLOW_STEPS
        else None
    )
    return execute_group(configs, timeout, threads, sharing, on_step=on_step)


def check_execution(jobs: int, threads: int | None, timeout: float | None) -> None:
    """A :class:`~clad.errors.CladValueError` naming ``jobs``, ``threads`` or ``timeout`` when it is not allowed.

    >>> check_execution(2, 1, None)
    >>> check_execution(0, 1, None)
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: jobs=0; expected an integer >= 1
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise CladValueError(f"jobs={jobs!r}; expected an integer >= 1")
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise CladValueError(f"threads={threads!r}; expected an integer >= 1 or None")
    check_timeout(timeout)


# -- worker processes --------------------------------------------------------------------------
#: in a worker process: the queue its runs' concept steps go to (None: nobody follows them)
_STEPS = None
#: in a worker process: whether its runs' concept steps are told through that queue
_FOLLOW_STEPS = False


def _init_worker(env: dict, main_pid: int, steps=None, follow_steps: bool = True) -> None:
    global _STEPS, _FOLLOW_STEPS
    _STEPS, _FOLLOW_STEPS = steps, follow_steps
    # the parent decides when to stop (Ctrl-C, SIGTERM): workers ignore SIGINT
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a forked worker inherits the environment of the fork server; set this grid's values
    os.environ.update(env)
    exit_with(main_pid)


def exit_with(pid: int) -> None:
    """End this process as soon as process ``pid`` ends, however it ends (SIGKILL included).

    A daemon thread waits on a pidfd of ``pid`` (Linux), which becomes readable when it ends;
    elsewhere it checks every half second. Workers watch the main process itself rather than
    their parent: a fork server's children keep the fork server alive, so a parent-death signal
    from it would never come.
    """

    def wait_for_end():
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError) as exc:  # no pidfd here, or the process is already gone
            if isinstance(exc, ProcessLookupError):
                os._exit(1)
            while _exists(pid):
                time.sleep(0.5)
        else:
            import select

            select.select([fd], [], [])
        os._exit(1)

    threading.Thread(target=wait_for_end, name=f"clad-exit-with-{pid}", daemon=True).start()


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def _thread_env(threads: int):
    """Set the thread-capping variables (those the user did not set) while workers start."""
    added = [v for v in THREAD_ENV_VARS if v not in os.environ]
    for v in added:
        os.environ[v] = str(threads)
    try:
        yield
    finally:
        for v in added:
            os.environ.pop(v, None)


def _stop_pool(pool) -> None:
    pool.stop()  # workers get SIGTERM, then SIGKILL after a few seconds
    pool.join()


def _iter_processes(
    groups: Sequence[list[RunConfig]],
    jobs: int,
    timeout: float | None,
    threads: int | None,
    claim=None,
    steps: bool = False,
    sharing=None,
) -> Iterator[RunEvent]:
    """Runs in a :class:`pebble.ProcessPool`, each sharing group (a list of runs) as one task: a
    task past its time limit (each run's, plus a grace period for the alarm inside the worker) has
    its worker killed and replaced, and a worker that dies fails only the runs of the task it was
    computing; the other workers go on. With ``steps``, the workers tell each concept step through
    a queue and a ``"step"`` event is yielded for it."""
    from concurrent.futures import FIRST_COMPLETED, TimeoutError, wait
    from concurrent.futures.process import BrokenProcessPool

    from pebble import ProcessExpired, ProcessPool

    hard_limit = None if timeout is None else timeout + max(2.0, 0.25 * timeout)
    todo = [g if isinstance(g, ReplicaUnit) else list(g) for g in groups][
        ::-1
    ]  # pop() from the end keeps the given order
    worker_env = (
        {} if threads is None else {v: str(threads) for v in THREAD_ENV_VARS if v not in os.environ}
    )

    # a SimpleQueue's put writes into the pipe before it returns: a run's steps are there before its
    # result, and the process id of the worker computing a run before the run starts
    step_queue = mp_context().SimpleQueue()
    pids: dict[str, int] = {}  # run_id -> the worker process computing it
    gone: dict[str, int] = {}  # run_id -> how many checks in a row found its worker ended

    def new_pool():
        return ProcessPool(
            max_workers=jobs,
            initializer=_init_worker,
            initargs=(worker_env, os.getpid(), step_queue, steps),
            context=mp_context(),
        )

    def step_events():
        while True:
            try:
                if step_queue.empty():
                    return
                kind, run_id, a, b = step_queue.get()
            except (OSError, ValueError, EOFError):
                return
            cfg = next((c for g, _ in inflight.values() for c in g if c.run_id == run_id), None)
            if kind == "pid":
                pids[run_id] = a
            elif cfg is not None and steps:
                yield RunEvent("step", cfg, step=a, index=b)

    def lost_workers():
        """Tasks whose worker ended without a result and without the pool noticing (a plug-in's
        ``os._exit(0)``: the pool takes a worker ending with status 0 for a normal end): seen twice in a
        row, a second apart, so that a result on its way is not taken for a loss."""
        lost = []
        for fut, (group, _) in list(inflight.items()):
            key = group[0].run_id
            pid = next((pids[c.run_id] for c in group if c.run_id in pids), None)
            if fut.done() or pid is None or _exists(pid):
                gone.pop(key, None)
                continue
            gone[key] = gone.get(key, 0) + 1
            if gone[key] >= 2:
                lost.append(fut)
        return lost

    def fill(broken: list) -> Iterator[RunEvent]:
        """Schedule tasks while fewer than ``jobs`` are in flight (a task that cannot be scheduled,
        the pool having failed, goes to ``broken``)."""
        while todo and len(inflight) < jobs:
            task = todo.pop()
            group = type(task)(c for c in task if claim is None or claim(c))
            if not group:
                continue
            try:
                fut = pool.schedule(
                    execute_group_in_worker,
                    args=(group, timeout, threads, sharing),
                    timeout=None
                    if hard_limit is None or isinstance(group, ReplicaUnit)
                    else hard_limit * len(group),
                )
            except RuntimeError:  # the pool failed between two runs
                broken.append(group)
                return
            inflight[fut] = (group, _utc())
            for cfg in group:
                yield RunEvent("started", cfg, started=inflight[fut][1])

    # set while workers may start (a replaced worker starts later), read as libraries load
    env = _thread_env(threads) if threads is not None else contextlib.nullcontext()
    inflight: dict = {}  # at most `jobs` runs in flight, so a run starts when it is submitted
    retried: set[str] = set()  # runs already resubmitted once after the pool broke
    pool = None
    with env:
        try:
            pool = new_pool()
            while todo or inflight:
                broken = []
                yield from fill(broken)
                done, _ = (
                    wait(
                        list(inflight), timeout=0.25 if steps else 1.0, return_when=FIRST_COMPLETED
                    )
                    if inflight
                    else ((), ())
                )
                yield from step_events()
                for fut in lost_workers():
                    group, started = inflight.pop(fut)
                    fut.cancel()
                    for cfg in group:
                        yield RunEvent(
                            "finished",
                            cfg,
                            result=failed_result(
                                cfg,
                                "the worker process computing this run ended without returning a result and "
                                "without an error (e.g. a plug-in calling os._exit(0)); the other runs go on\n"
                                f"(worker process {pids.get(cfg.run_id)})",
                            ),
                            started=started,
                            finished=_utc(),
                        )
                finished_events = []
                for fut in done:
                    group, started = inflight.pop(fut)
                    finished = _utc()
                    try:
                        outcomes = fut.result()
                    except TimeoutError:
                        outcomes = [
                            (
                                _timeout_result(
                                    cfg,
                                    timeout,
                                    "stopped by killing and replacing its worker process",
                                ),
                                started,
                                finished,
                            )
                            for cfg in group
                        ]
                    except ProcessExpired as exc:
                        outcomes = [
                            (
                                failed_result(
                                    cfg,
                                    f"the worker process running this run died (exit code "
                                    f"{exc.exitcode}: killed, out of memory or a crash in native "
                                    "code)",
                                ),
                                started,
                                finished,
                            )
                            for cfg in group
                        ]
                    except (BrokenProcessPool, RuntimeError):
                        broken.append(group)
                        continue
                    except Exception:  # noqa: BLE001 - e.g. a result that cannot be pickled
                        outcomes = [
                            (failed_result(cfg, traceback.format_exc()), started, finished)
                            for cfg in group
                        ]
                    finished_events += [
                        RunEvent(
                            "finished", cfg, result=result, started=started_at, finished=finished_at
                        )
                        for cfg, (result, started_at, finished_at) in zip(group, outcomes)
                    ]
                if (
                    finished_events and not broken
                ):  # the freed workers get their next task before the
                    yield from fill(
                        broken
                    )  # results are written: writing takes the main process a while
                yield from finished_events
                if broken:
                    # the pool itself failed (it cannot tell which run was at fault): a new pool, and
                    # each run then in flight is tried once more
                    _stop_pool(pool)
                    broken += [group for group, _ in inflight.values()]
                    inflight.clear()
                    # a replica unit is tried again whole (its runs train together), other runs one by one
                    retry = [
                        t
                        for g in broken
                        for t in ([g] if isinstance(g, ReplicaUnit) else [[c] for c in g])
                    ]
                    for task in retry:
                        if task[0].run_id in retried:
                            for cfg in task:
                                yield RunEvent(
                                    "finished",
                                    cfg,
                                    result=failed_result(
                                        cfg,
                                        "the worker processes failed twice while computing this run",
                                    ),
                                    started=_utc(),
                                    finished=_utc(),
                                )
                        else:
                            retried.add(task[0].run_id)
                            todo.append(task)
                    pool = new_pool()
        finally:
            if pool is not None and not todo and not inflight:
                # every task returned: the workers are stopped while the caller writes the results (stopping
                # waits for the pool's threads, a tenth of a second); they end with this process in any case
                threading.Thread(
                    target=_stop_quietly,
                    args=(pool, step_queue),
                    name="clad-pool-stop",
                    daemon=True,
                ).start()
            else:
                if pool is not None:
                    _stop_pool(pool)
                step_queue.close()


def _stop_quietly(pool, queue) -> None:
    try:
        _stop_pool(pool)
    except Exception:  # noqa: BLE001 - a worker that will not stop ends with the main process (exit_with)
        log.debug("stopping the worker processes", exc_info=True)
    finally:
        queue.close()


# -- Dask ---------------------------------------------------------------------------------------
class ClusterLost(CladError):
    """The Dask cluster went away while runs were computing (its scheduler stopped answering): the
    runs finished before are kept; the runs in flight are not failures of their own."""


def _component_modules(configs: Sequence[RunConfig]) -> list[str]:
    """The modules a worker imports to build the components ``configs`` name (registered names by
    their import path, plug-ins by theirs)."""
    from ..datasets import DATASETS
    from ..detectors import DETECTORS
    from ..scenarios import SCENARIOS
    from ..strategies import STRATEGIES

    modules = set()
    for cfg in configs:
        for comp, registry in (
            (cfg.dataset, DATASETS),
            (cfg.scenario, SCENARIOS),
            (cfg.strategy, STRATEGIES),
            (cfg.detector, DETECTORS),
        ):
            path = registry.path(comp.name) if comp.name in registry else comp.name
            if isinstance(path, str) and (":" in path or "." in path):
                module = path.partition(":")[0] if ":" in path else path.rpartition(".")[0]
                if module:
                    modules.add(module)
    return sorted(modules)


def import_modules(modules: Sequence[str]) -> list[tuple[str, str]]:
    """Import each of ``modules`` here: ``(module, why)`` for each that cannot be (run on Dask workers
    before a grid is submitted)."""
    import importlib

    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - any way a module fails to import, said
            failed.append((name, f"{type(exc).__name__}: {exc}"))
    return failed


def _check_worker_imports(client, configs: Sequence[RunConfig]) -> None:
    """Every module the grid names imported on every worker before anything is submitted: a plug-in
    importable here but not there is a clear error (with the fix), not a failure of each run."""
    modules = _component_modules(configs)
    if not modules:
        return
    answers = client.run(import_modules, modules)
    missing = {}
    for worker, failed in answers.items():
        for module, why in failed:
            missing.setdefault((module, why), []).append(worker)
    if missing:
        lines = [
            f"module {module!r} cannot be imported on {len(workers)} of {len(answers)} Dask worker(s) "
            f"(e.g. {workers[0]}): {why}"
            for (module, why), workers in missing.items()
        ]
        raise CladValueError(
            "; ".join(lines) + ". Nothing was submitted. Make it importable on the workers: "
            "start them with PYTHONPATH naming its folder, send the file with "
            "client.upload_file('module.py'), or install it there as a package"
        )


def _iter_dask(
    groups: Sequence[list[RunConfig]],
    address,
    timeout: float | None,
    threads: int | None,
    sharing=None,
) -> Iterator[RunEvent]:
    try:
        from dask.distributed import Client
    except ImportError:
        raise CladValueError(
            "running on Dask needs dask.distributed: pip install 'clad[dask]'"
        ) from None
    if timeout is not None:
        log.warning(
            "the per-run time limit (%g s) is not enforced on Dask: its workers run tasks in threads, "
            "which cannot be interrupted",
            timeout,
        )
    own_client = not hasattr(address, "submit")
    try:
        client = Client(address, timeout="30s") if own_client else address
    except (OSError, TimeoutError, ValueError) as exc:
        raise CladValueError(
            f"cannot connect to the Dask scheduler at {address!r} ({exc})"
        ) from None
    where = (
        address
        if isinstance(address, str)
        else getattr(client, "scheduler", None) and client.scheduler.address
    )
    try:
        _check_worker_imports(client, [c for g in groups for c in g])
        slots = max(1, sum(client.nthreads().values()))
        todo = [g if isinstance(g, ReplicaUnit) else list(g) for g in groups][::-1]
        inflight: dict = {}  # key -> (future, group, started)
        lost_since = None

        def submit():  # a sharing group is one task: its runs share a step cache in one worker
            group = todo.pop()
            fut = client.submit(
                execute_group,
                group,
                timeout,
                threads,
                sharing,
                key=f"clad-run-{group[0].run_id}-{time.time_ns()}",
                pure=False,
            )
            inflight[fut.key] = (fut, group, _utc())
            return group, inflight[fut.key][2]

        def lost(why: str) -> ClusterLost:
            n = sum(len(g) for _, g, _ in inflight.values())
            return ClusterLost(
                f"lost the Dask cluster at {where} ({why}) while {n} run(s) were computing; "
                "the runs finished before are kept in the results database and the runs in flight "
                "are not recorded as failed: start the cluster again and run the same command to "
                "resume"
            )

        while todo and len(inflight) < 2 * slots:
            group, started = submit()
            for cfg in group:
                yield RunEvent("started", cfg, started=started)
        while inflight:
            done = [key for key, (fut, _, _) in inflight.items() if fut.status != "pending"]
            if not done:
                if (
                    client.status != "running"
                ):  # the scheduler stopped answering: wait a little, then say so
                    lost_since = lost_since or time.monotonic()
                    if time.monotonic() - lost_since > LOST_CLUSTER_SECONDS:
                        raise lost(f"the client is {client.status}")
                else:
                    lost_since = None
                time.sleep(0.1)
                continue
            for key in done:
                fut, group, started = inflight.pop(key)
                if (
                    fut.status == "cancelled"
                ):  # the cluster dropped it (a lost scheduler), not the run
                    inflight[key] = (fut, group, started)
                    raise lost("its scheduler cancelled the runs in flight")
                try:
                    outcomes = fut.result()
                except Exception:  # noqa: BLE001 - the task itself failed (not the run)
                    outcomes = [
                        (failed_result(cfg, traceback.format_exc()), started, _utc())
                        for cfg in group
                    ]
                fut.release()
                for cfg, (result, started_at, finished) in zip(group, outcomes):
                    yield RunEvent(
                        "finished", cfg, result=result, started=started_at, finished=finished
                    )
                if todo:
                    group, started = submit()
                    for cfg in group:
                        yield RunEvent("started", cfg, started=started)
    finally:
        if own_client:
            with contextlib.suppress(Exception):
                client.close(timeout=5)


# -- sequential ---------------------------------------------------------------------------------
def _iter_sequential(
    groups: Sequence[list[RunConfig]],
    timeout: float | None,
    threads: int | None,
    on_step,
    claim=None,
    sharing=None,
) -> Iterator[RunEvent]:
    from ..core.steps import using

    for group in groups:  # one step cache per sharing group, set only while a run computes
        if isinstance(
            group, ReplicaUnit
        ):  # runs trained together: claimed together, computed together
            unit = ReplicaUnit(c for c in group if claim is None or claim(c))
            for cfg in unit:
                yield RunEvent("started", cfg, started=_utc())
            for cfg, (result, started, finished) in zip(
                unit, execute_unit(unit, timeout, threads, on_step) if unit else ()
            ):
                yield RunEvent("finished", cfg, result=result, started=started, finished=finished)
            continue
        cache = sharing.cache_for(group) if sharing is not None else None
        for cfg in group:
            if claim is not None and not claim(cfg):
                continue
            yield RunEvent("started", cfg, started=_utc())
            step = None if on_step is None else functools.partial(on_step, cfg)
            with using(cache):
                result, started, finished = execute_one(cfg, timeout, threads, on_step=step)
            yield RunEvent("finished", cfg, result=result, started=started, finished=finished)


def execute_grid(
    configs: Sequence[RunConfig],
    jobs: int = 1,
    dask=None,
    timeout: float | None = None,
    threads: int | None = 1,
    on_step: Callable[[RunConfig, str, int], None] | None = None,
    claim: Callable[[RunConfig], bool] | None = None,
    sharing=None,
    replicas: int = 1,
) -> Iterator[RunEvent]:
    """Compute every configuration and yield a ``"started"`` and a ``"finished"`` event for each,
    as they happen. Each run uses at most ``threads`` BLAS/OpenMP/torch threads (None: no
    limit, and then results may depend on the executor). ``on_step(config, step_name,
    step_index)`` is called after every evaluated concept step of a sequential run (``jobs=1``,
    no Dask); with ``jobs > 1`` and ``on_step`` given, each step of a worker's run is yielded as a
    ``"step"`` event instead (through a queue; not on Dask). ``claim(config)`` is asked just before a run starts (not on Dask, where runs are
    claimed before they are submitted): False skips the run (another process computes it). Closing the generator (or Ctrl-C) stops the workers.

    ``sharing`` (a :class:`~clad.engine.sharing.Sharing`; None or mode ``"off"``: nothing shared):
    the runs are planned into sharing groups (:func:`~clad.engine.sharing.sharing_groups`), each
    computed in one process through one step cache (with ``jobs > 1`` and on Dask, a group is one
    task: the largest first, and a grid with fewer groups than workers has its largest groups
    halved until every worker has one).

    With ``replicas`` > 1, runs that train the same torch network are computed together, at most
    ``replicas`` in one task (:mod:`clad.engine.replicas`); the tasks are the same on every executor."""
    check_execution(jobs, threads, timeout)
    if dask is None and threads is not None and jobs * threads > (os.cpu_count() or 1):
        log.warning(
            "%d jobs x %d threads is more than the %d cores of this machine",
            jobs,
            threads,
            os.cpu_count() or 1,
        )
    # runs on the same data one after another, so each process loads a dataset once (results do
    # not depend on the order); the order --dry-run lists
    configs = execution_order(configs)
    if not configs:
        return (e for e in ())
    if sharing is not None and not sharing.active:
        sharing = None
    groups = _tasks(configs, sharing, 1 if dask is None and jobs == 1 else max(jobs, 2), replicas)
    if dask is not None:
        return _iter_dask(groups, dask, timeout, threads, sharing)
    if jobs > 1:  # the steps of worker runs come back as "step" events
        return _iter_processes(
            groups,
            min(jobs, len(configs)),
            timeout,
            threads,
            claim,
            steps=on_step is not None,
            sharing=sharing,
        )
    return _iter_sequential(groups, timeout, threads, on_step, claim, sharing)


class ReplicaUnit(list):
    """A task of runs trained together as replicas of one torch network (:mod:`clad.engine.replicas`):
    computed by :func:`execute_unit`, its runs in threads of one process."""


def _tasks(
    configs: list[RunConfig], sharing, workers: int, replicas: int = 1
) -> list[list[RunConfig]]:
    """The grid as tasks: its replica units of several runs (:func:`_units`), then the other runs,
    one each without sharing, else in their sharing groups, for several workers the largest first
    and the largest halved while there are fewer tasks than workers."""
    units = _units(configs, replicas)
    if units is not None:
        alone = [u[0] for u in units if len(u) == 1]
        return [ReplicaUnit(u) for u in units if len(u) > 1] + (
            _tasks(alone, sharing, workers) if alone else []
        )
    if sharing is None:
        return [[c] for c in configs]
    from .sharing import sharing_groups

    groups = sharing_groups(configs)
    if workers > 1:
        while len(groups) < workers and max(len(g) for g in groups) > 1:
            big = max(range(len(groups)), key=lambda i: len(groups[i]))
            g = groups.pop(big)
            groups[big:big] = [g[: len(g) // 2], g[len(g) // 2 :]]
        groups.sort(key=len, reverse=True)
    return groups


def execute_claimed(
    configs: Sequence[RunConfig],
    store,
    *,
    jobs: int = 1,
    dask=None,
    timeout: float | None = None,
    threads: int | None = 1,
    on_step: Callable[[RunConfig, str, int], None] | None = None,
    sharing=None,
    replicas: int = 1,
) -> Iterator[RunEvent]:
    """:func:`execute_grid` over the runs this process claims in ``store``, so that two processes
    on one results folder never compute one run twice: on Dask each run is claimed before it is
    submitted, elsewhere just before it starts. Closing the generator stops the workers."""
    if dask is not None:
        configs = [c for c in configs if store.claim(c.run_id)]
    return execute_grid(
        configs,
        jobs=jobs,
        dask=dask,
        timeout=timeout,
        threads=threads,
        on_step=on_step,
        claim=None if dask is not None else (lambda cfg: store.claim(cfg.run_id)),
        sharing=sharing,
        replicas=replicas,
    )


# -- replica units (clad.engine.replicas) --------------------------------------------------------
def _units(configs: Sequence[RunConfig], replicas: int):
    """The grid cut into replica units, or None when every unit is one run (the usual paths)."""
    if replicas is None or replicas <= 1:
        return None
    from .replicas import replica_units

    units = replica_units(configs, int(replicas))
    return units if any(len(u) > 1 for u in units) else None


def _unit_share(timings: dict | None, size: int) -> dict | None:
    """A run's share of its replica unit's seconds: the runs of a unit are trained together, so each
    thread's clock measured the unit's time; divided by the unit's size, the runs' seconds add up to
    the unit's (the unit's measured total is kept as ``unit_total``).

    >>> _unit_share({"fit": [2.0, 4.0], "score": [1.0, 1.0], "total": 8.0}, 4)
    {'fit': [0.5, 1.0], 'score': [0.25, 0.25], 'total': 2.0, 'unit_total': 8.0}
    """
    if not timings or size <= 1:
        return timings
    out = dict(timings)
    for key in ("fit", "score"):
        if isinstance(out.get(key), list):
            out[key] = [v / size if isinstance(v, (int, float)) else v for v in out[key]]
    if isinstance(out.get("total"), (int, float)):
        out["unit_total"], out["total"] = out["total"], out["total"] / size
    return out


def execute_unit(
    unit: Sequence[RunConfig],
    timeout: float | None = None,
    threads: int | None = 1,
    on_step: Callable[[RunConfig, str, int], None] | None = None,
) -> list:
    """Compute a unit: ``[(result, started, finished), ...]`` in the unit's order. One run is
    :func:`execute_one`; several run in threads of this process, meeting at
    their torch training calls (:class:`~clad.detectors.torch_replicas.ReplicaGroup`)."""
    import dataclasses
    import traceback

    from ..core.run_warnings import routing
    from .replicas import unit_id

    unit = list(unit)
    if len(unit) == 1:
        cfg = unit[0]
        step = None if on_step is None else functools.partial(on_step, cfg)
        return [execute_one(cfg, timeout, threads, on_step=step)]
    from ..detectors.torch_replicas import ReplicaGroup

    if timeout is not None:
        log.warning(
            "the per-run time limit (%g s) is not enforced for runs trained as replicas (threads cannot "
            "be interrupted); set replicas = 1 to enforce it",
            timeout,
        )
    group = ReplicaGroup(len(unit))
    out: list = [None] * len(unit)
    step_lock = threading.Lock()

    def member(i: int, cfg: RunConfig) -> None:
        started = _utc()
        step = None
        if on_step is not None:

            def step(name, index, cfg=cfg):
                with step_lock:
                    on_step(cfg, name, index)

        try:
            with group.member(i):
                result = run_safely(cfg, on_step=step)
        except BaseException:  # noqa: BLE001 - recorded as the run's failure
            result = failed_result(cfg, traceback.format_exc())
        out[i] = (result, started, _utc())

    uid = unit_id(unit)
    with limited_threads(threads), routing():
        workers = [
            threading.Thread(target=member, args=(i, c), name=f"clad-replica-{i}", daemon=True)
            for i, c in enumerate(unit)
        ]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    done = []
    for i, (result, started, finished) in enumerate(out):
        record = {
            "unit": uid,
            "size": len(unit),
            "index": i,
            "stacked_calls": group.stats.stacked_calls,
        }
        result = dataclasses.replace(
            result,
            timings=_unit_share(result.timings, len(unit)),
            extras={**(result.extras or {}), "replicas": record},
        )
        done.append((result, started, finished))
    return done
