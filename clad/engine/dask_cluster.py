"""Tasks on a running Dask distributed cluster: ``Client(address)``, ``client.submit`` of
:func:`~clad.engine.tasks.compute` per task, results streamed back as they complete.

Dask runs tasks in threads, which cannot be interrupted: the per-run time limit is not enforced
there (a warning says so; use the cluster's own limits). Dask workers must be able to import clad
(the same version) and every plug-in the spec names: that is checked on every worker before
anything is submitted.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from typing import Iterator, Sequence

from ..errors import CladError, CladValueError
from .config import RunConfig
from .run import failed_result
from ..results.store import utc_now
from .tasks import RunEvent, Task, compute

__all__ = ["iter_dask", "ClusterLost", "LOST_CLUSTER_SECONDS"]

log = logging.getLogger(__name__)

#: seconds a Dask client may be without its scheduler before the grid stops, naming the lost cluster
LOST_CLUSTER_SECONDS = 10.0


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
        components = (cfg.dataset, cfg.scenario, cfg.strategy, cfg.detector)
        for comp, registry in zip(components, (DATASETS, SCENARIOS, STRATEGIES, DETECTORS)):
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


def _client(address):
    """``(client, whether this grid opened it, where it is)``."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise CladValueError(
            "running on Dask needs dask.distributed: pip install 'clad[dask]'"
        ) from None
    own = not hasattr(address, "submit")
    try:
        client = Client(address, timeout="30s") if own else address
    except (OSError, TimeoutError, ValueError) as exc:
        raise CladValueError(
            f"cannot connect to the Dask scheduler at {address!r} ({exc})"
        ) from None
    where = (
        address
        if isinstance(address, str)
        else getattr(client, "scheduler", None) and client.scheduler.address
    )
    return client, own, where


class _Cluster:
    """The tasks of one grid on a Dask cluster: those to submit and those in flight."""

    def __init__(self, client, where, tasks: Sequence[Task], timeout, threads):
        self.client, self.where = client, where
        self.timeout, self.threads = timeout, threads
        self.todo = list(tasks)[::-1]
        self.inflight: dict = {}  # key -> (future, task, started)

    def submit(self) -> Iterator[RunEvent]:
        """Submit the next task (its runs share a step cache in one worker)."""
        task = self.todo.pop()
        key = f"clad-run-{task.kept[0].run_id}-{time.time_ns()}"
        fut = self.client.submit(compute, task, self.timeout, self.threads, key=key, pure=False)
        self.inflight[fut.key] = (fut, task, utc_now())
        for cfg in task.kept:
            yield RunEvent("started", cfg, started=self.inflight[fut.key][2])

    def lost(self, why: str) -> ClusterLost:
        n = sum(len(t.kept) for _, t, _ in self.inflight.values())
        return ClusterLost(
            f"lost the Dask cluster at {self.where} ({why}) while {n} run(s) were computing; "
            "the runs finished before are kept in the results database and the runs in flight "
            "are not recorded as failed: start the cluster again and run the same command to "
            "resume"
        )

    def finished(self, key) -> Iterator[RunEvent]:
        fut, task, started = self.inflight.pop(key)
        if fut.status == "cancelled":  # the cluster dropped it (a lost scheduler), not the run
            self.inflight[key] = (fut, task, started)
            raise self.lost("its scheduler cancelled the runs in flight")
        try:
            outcomes = fut.result()
        except Exception:  # noqa: BLE001 - the task itself failed (not the run)
            why = traceback.format_exc()
            outcomes = [(failed_result(c, why), started, utc_now()) for c in task.kept]
        fut.release()
        for cfg, (result, started_at, finished) in zip(task.kept, outcomes):
            yield RunEvent("finished", cfg, result=result, started=started_at, finished=finished)

    def run(self) -> Iterator[RunEvent]:
        slots = max(1, sum(self.client.nthreads().values()))
        lost_since = None
        while self.todo and len(self.inflight) < 2 * slots:
            yield from self.submit()
        while self.inflight:
            done = [k for k, (fut, _, _) in self.inflight.items() if fut.status != "pending"]
            if not done:
                if self.client.status != "running":  # no scheduler: wait a little, then say so
                    lost_since = lost_since or time.monotonic()
                    if time.monotonic() - lost_since > LOST_CLUSTER_SECONDS:
                        raise self.lost(f"the client is {self.client.status}")
                else:
                    lost_since = None
                time.sleep(0.1)
                continue
            for key in done:
                yield from self.finished(key)
                if self.todo:
                    yield from self.submit()


def iter_dask(
    tasks: Sequence[Task], address, timeout: float | None, threads: int | None
) -> Iterator[RunEvent]:
    """Compute ``tasks`` on the Dask cluster at ``address`` (or a ``distributed.Client``),
    yielding :class:`RunEvent` objects as runs start and finish."""
    if timeout is not None:
        log.warning(
            "the per-run time limit (%g s) is not enforced on Dask: its workers run tasks in "
            "threads, which cannot be interrupted",
            timeout,
        )
    client, own_client, where = _client(address)
    try:
        _check_worker_imports(client, [c for t in tasks for c in t.kept])
        yield from _Cluster(client, where, tasks, timeout, threads).run()
    finally:
        if own_client:
            with contextlib.suppress(Exception):
                client.close(timeout=5)
