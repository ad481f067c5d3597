"""Tasks in worker processes: a :class:`pebble.ProcessPool` (``forkserver`` context where
available, else ``spawn``) computing at most ``jobs`` tasks at a time, each with
:func:`~clad.engine.tasks.compute`.

A worker that dies (killed, out of memory, a crash in native code) fails only the runs of its own
task and is replaced; a task past its time limit (each run's, plus a grace period for the alarm
inside the worker) has its worker killed and replaced. Workers end by themselves when the main
process ends, even by SIGKILL (:func:`exit_with`). With ``steps``, the workers tell each concept
step through a queue and a ``"step"`` event is yielded for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
import traceback
from typing import Iterator, Sequence

from .forkserver import mp_context
from .run import failed_result
from ..results.store import utc_now
from .tasks import RunEvent, THREAD_ENV_VARS, Task, compute, thread_env, timeout_result

__all__ = ["iter_processes", "exit_with"]

log = logging.getLogger(__name__)

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


def _compute_in_worker(task: Task, timeout: float | None, threads: int | None) -> list:
    """:func:`~clad.engine.tasks.compute` in a worker process, telling the main process this
    worker's process id (so that it sees the worker end, however it ends) and, when followed, each
    concept step through the queue the worker was started with."""
    steps = _STEPS
    if steps is None:
        return compute(task, timeout, threads)
    for cfg in task.kept:
        steps.put(("pid", cfg.run_id, os.getpid(), None))
    on_step = (
        (lambda cfg, step, index: steps.put(("step", cfg.run_id, str(step), int(index))))
        if _FOLLOW_STEPS
        else None
    )
    return compute(task, timeout, threads, on_step=on_step)


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


def _stop_pool(pool) -> None:
    pool.stop()  # workers get SIGTERM, then SIGKILL after a few seconds
    pool.join()


def _stop_quietly(pool, queue) -> None:
    try:
        _stop_pool(pool)
    except Exception:  # noqa: BLE001 - a worker that will not stop ends with the main process (exit_with)
        log.debug("stopping the worker processes", exc_info=True)
    finally:
        queue.close()


def _failed(task: Task, started: str, why: str) -> list[RunEvent]:
    """A ``"finished"`` event for each run of ``task``, failed for ``why``."""
    return [
        RunEvent("finished", c, result=failed_result(c, why), started=started, finished=utc_now())
        for c in task.kept
    ]


class _Pool:
    """The state of one grid's worker processes: the tasks to do, those in flight, the workers'
    process ids and the steps they tell."""

    def __init__(self, tasks, jobs, timeout, threads, steps):
        self.todo = list(tasks)[::-1]  # pop() from the end keeps the given order
        self.jobs, self.timeout, self.threads = jobs, timeout, threads
        self.steps = steps
        self.hard_limit = None if timeout is None else timeout + max(2.0, 0.25 * timeout)
        self.env = (
            {}
            if threads is None
            else {v: str(threads) for v in THREAD_ENV_VARS if v not in os.environ}
        )
        # a SimpleQueue's put writes into the pipe before it returns: a run's steps are there
        # before its result, and the process id of the worker computing a run before it starts
        self.queue = mp_context().SimpleQueue()
        self.pids: dict[str, int] = {}  # run_id -> the worker process computing it
        self.gone: dict[str, int] = {}  # run_id -> checks in a row that found its worker ended
        self.inflight: dict = {}  # future -> (task, started): at most `jobs` tasks
        self.retried: set[str] = set()  # tasks already resubmitted once after the pool broke
        self.pool = None

    def new_pool(self):
        from pebble import ProcessPool

        self.pool = ProcessPool(
            max_workers=self.jobs,
            initializer=_init_worker,
            initargs=(self.env, os.getpid(), self.queue, self.steps),
            context=mp_context(),
        )

    def step_events(self) -> Iterator[RunEvent]:
        while True:
            try:
                if self.queue.empty():
                    return
                kind, run_id, a, b = self.queue.get()
            except (OSError, ValueError, EOFError):
                return
            tasks = (t for t, _ in self.inflight.values())
            cfg = next((c for t in tasks for c in t.kept if c.run_id == run_id), None)
            if kind == "pid":
                self.pids[run_id] = a
            elif cfg is not None and self.steps:
                yield RunEvent("step", cfg, step=a, index=b)

    def lost_workers(self) -> list:
        """Tasks whose worker ended without a result and without the pool noticing (a plug-in's
        ``os._exit(0)``: the pool takes a worker ending with status 0 for a normal end): seen twice
        in a row, a second apart, so that a result on its way is not taken for a loss."""
        lost = []
        for fut, (task, _) in list(self.inflight.items()):
            key = task.kept[0].run_id
            pid = next((self.pids[c.run_id] for c in task.kept if c.run_id in self.pids), None)
            if fut.done() or pid is None or _exists(pid):
                self.gone.pop(key, None)
                continue
            self.gone[key] = self.gone.get(key, 0) + 1
            if self.gone[key] >= 2:
                lost.append(fut)
        return lost

    def fill(self, broken: list) -> Iterator[RunEvent]:
        """Schedule tasks while fewer than ``jobs`` are in flight (a task that cannot be
        scheduled, the pool having failed, goes to ``broken``)."""
        while self.todo and len(self.inflight) < self.jobs:
            task = self.todo.pop()
            limit = self.hard_limit
            try:
                fut = self.pool.schedule(
                    _compute_in_worker,
                    args=(task, self.timeout, self.threads),
                    timeout=None if limit is None or task.together else limit * len(task.kept),
                )
            except RuntimeError:  # the pool failed between two runs
                broken.append(task)
                return
            self.inflight[fut] = (task, utc_now())
            for cfg in task.kept:
                yield RunEvent("started", cfg, started=self.inflight[fut][1])

    def outcomes(self, fut, task: Task, started: str, broken: list) -> list | None:
        """The outcomes of a finished future (None: the pool broke, ``task`` goes to ``broken``)."""
        from concurrent.futures import TimeoutError
        from concurrent.futures.process import BrokenProcessPool

        from pebble import ProcessExpired

        finished = utc_now()
        try:
            return fut.result()
        except TimeoutError:
            why = "stopped by killing and replacing its worker process"
            return [(timeout_result(c, self.timeout, why), started, finished) for c in task.kept]
        except ProcessExpired as exc:
            why = (
                f"the worker process running this run died (exit code {exc.exitcode}: killed, out "
                "of memory or a crash in native code)"
            )
            return [(failed_result(c, why), started, finished) for c in task.kept]
        except (BrokenProcessPool, RuntimeError):
            broken.append(task)
            return None
        except Exception:  # noqa: BLE001 - e.g. a result that cannot be pickled
            why = traceback.format_exc()
            return [(failed_result(c, why), started, finished) for c in task.kept]

    def finished(self, done, broken: list) -> list[RunEvent]:
        events = []
        for fut in done:
            task, started = self.inflight.pop(fut)
            outcomes = self.outcomes(fut, task, started, broken)
            events += [
                RunEvent("finished", cfg, result=result, started=started_at, finished=finished_at)
                for cfg, (result, started_at, finished_at) in zip(task.kept, outcomes or ())
            ]
        return events

    def lost(self) -> Iterator[RunEvent]:
        for fut in self.lost_workers():
            task, started = self.inflight.pop(fut)
            fut.cancel()
            pid = self.pids.get(task.kept[0].run_id)
            yield from _failed(
                task,
                started,
                "the worker process computing this run ended without returning a result and "
                "without an error (e.g. a plug-in calling os._exit(0)); the other runs go on\n"
                f"(worker process {pid})",
            )

    def recover(self, broken: list) -> Iterator[RunEvent]:
        """The pool itself failed (it cannot tell which run was at fault): a new pool, and each
        task then in flight tried once more (a replica unit whole, other runs one by one)."""
        _stop_pool(self.pool)
        broken += [task for task, _ in self.inflight.values()]
        self.inflight.clear()
        for task in (t for b in broken for t in b.alone()):
            if task.kept[0].run_id in self.retried:
                why = "the worker processes failed twice while computing this run"
                yield from _failed(task, utc_now(), why)
            else:
                self.retried.add(task.kept[0].run_id)
                self.todo.append(task)
        self.new_pool()

    def run(self) -> Iterator[RunEvent]:
        from concurrent.futures import FIRST_COMPLETED, wait

        self.new_pool()
        while self.todo or self.inflight:
            broken: list = []
            yield from self.fill(broken)
            done = ()
            if self.inflight:
                wait_s = 0.25 if self.steps else 1.0
                done, _ = wait(list(self.inflight), timeout=wait_s, return_when=FIRST_COMPLETED)
            yield from self.step_events()
            yield from self.lost()
            events = self.finished(done, broken)
            if events and not broken:  # the freed workers get their next task before the
                yield from self.fill(broken)  # results are written (that takes a while)
            yield from events
            if broken:
                yield from self.recover(broken)

    def close(self) -> None:
        if self.pool is not None and not self.todo and not self.inflight:
            # every task returned: the workers are stopped while the caller writes the results
            # (stopping waits for the pool's threads, a tenth of a second); they end with this
            # process in any case
            threading.Thread(
                target=_stop_quietly,
                args=(self.pool, self.queue),
                name="clad-pool-stop",
                daemon=True,
            ).start()
            return
        if self.pool is not None:
            _stop_pool(self.pool)
        self.queue.close()


def iter_processes(
    tasks: Sequence[Task],
    jobs: int,
    timeout: float | None,
    threads: int | None,
    steps: bool = False,
) -> Iterator[RunEvent]:
    """Compute ``tasks`` in ``jobs`` worker processes, yielding :class:`RunEvent` objects as runs
    start and finish (and, with ``steps``, as they evaluate a concept step)."""
    state = _Pool(tasks, jobs, timeout, threads, steps)
    # set while workers may start (a replaced worker starts later), read as libraries load
    env = thread_env(threads) if threads is not None else contextlib.nullcontext()
    with env:
        try:
            yield from state.run()
        finally:
            state.close()
