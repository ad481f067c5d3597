"""Export a results database to MLflow (``clad export DIR --format mlflow [--tracking-uri URI]``).

Every run stored in ``DIR/results.sqlite`` becomes one MLflow run in the experiment named after
the spec; what each holds (parameters, metrics, artifacts, tags), the default store and how an
export is idempotent by content (the ``clad.fingerprint`` and ``clad.complete`` tags; runs
*updated* and *retired*) are in docs/guides/reports.md ("Exports"). A tracking server that cannot
be reached is an error naming the URI at once (no retries). Undefined values (NaN) are not logged:
MLflow would show them as numbers. Needs ``pip install 'clad[mlflow]'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..errors import CladValueError, DataError
from .config import group_by
from .export import database_of

__all__ = [
    "export_mlflow",
    "default_tracking_uri",
    "fingerprint",
    "check_tracking_uri",
    "TRACKING_SCHEMES",
]


def _mlflow():
    try:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise CladValueError(
            "MLflow export needs MLflow: pip install 'clad[mlflow]' "
            "(mlflow-skinny with SQLAlchemy and Alembic)"
        ) from None
    return MlflowClient, Metric, Param, RunTag


def default_tracking_uri(folder: str | os.PathLike) -> str:
    """``sqlite:///FOLDER/mlruns/mlflow.db``: the local store clad exports to by default."""
    return "sqlite:///" + str((Path(folder) / "mlruns" / "mlflow.db").resolve())


def _params(run) -> dict[str, str]:
    out = {k: str(getattr(run, k)) for k in ("dataset", "scenario", "strategy", "detector", "seed")}
    config = run.config or {}
    if config.get("base_metrics"):
        out["base_metrics"] = ",".join(map(str, config["base_metrics"]))
    for part in ("dataset", "scenario", "strategy", "detector"):
        comp = config.get(part)
        if isinstance(comp, dict):
            out[f"{part}.name"] = str(comp.get("name"))
            for k, v in (comp.get("params") or {}).items():
                out[f"{part}.{k}"] = str(v)[:6000]
    return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _metrics(run, Metric, now: int) -> tuple[list, list[str]]:
    out, undefined = [], []

    def add(key: str, value: Any, step: int = 0) -> None:
        f = _number(value)
        if f is None:
            undefined.append(key if step == 0 else f"{key}@{step}")
        else:
            out.append(Metric(key, f, now, step))

    for base, values in (run.metrics or {}).items():
        for name, value in values.items():
            if name == "left_out" and isinstance(value, dict):
                for k, n in value.items():
                    add(f"{base}.{k}.left_out", n)
            elif isinstance(value, (list, tuple)):
                for step, v in enumerate(value):
                    add(f"{base}.{name}", v, step)
            else:
                add(f"{base}.{name}", value)
    for step, rows in enumerate(run.memory_rows or ()):
        add("memory_rows", rows, step)
    if run.peak_memory is not None:
        add("peak_memory_mb", run.peak_memory / 1e6)
    for key, value in (run.timings or {}).items():
        # counts, not seconds: the run's training steps and scoring passes
        if isinstance(value, dict):
            for k, v in value.items():
                add(f"{key}.{k}", v)
        elif isinstance(value, (list, tuple)):
            add(f"seconds.{key}", sum(_number(v) or 0.0 for v in value))
        else:
            add(f"seconds.{key}", value)
    return out, undefined


def _r_table(run, base):
    import pandas as pd

    return (
        pd.DataFrame(
            run.R[base],
            index=[f"{i}: {c}" for i, c in enumerate(run.concepts)],
            columns=list(run.test_concepts),
        )
        .rename_axis("step")
        .reset_index()
    )


def fingerprint(run) -> str:
    """A hash of what a run's numbers are: its configuration, the fingerprints of its inputs, its
    status, R and metrics (not its times). A run computed again from changed inputs has another."""
    from ..results.record import to_jsonable
    from .config import canonical

    rec = run.to_dict()
    content = {
        k: rec.get(k)
        for k in (
            "run_id",
            "config",
            "inputs",
            "status",
            "R",
            "metrics",
            "error",
            "concepts",
            "test_concepts",
        )
    }
    return hashlib.sha256(canonical(to_jsonable(content)).encode()).hexdigest()[:16]


def _log_run(client, experiment_id: str, run, classes, folder: str = "") -> str:
    import time

    now = int(time.time() * 1000)
    tags = {
        "clad.run_id": run.run_id or "",
        "clad.status": run.status,
        "clad.fingerprint": fingerprint(run),
        "clad.folder": folder,
    }
    tags.update(
        {f"clad.version.{k}": str(v) for k, v in (run.versions or {}).items() if v is not None}
    )
    name = f"{run.dataset} / {run.scenario} / {run.strategy} / {run.detector} / seed {run.seed}"
    mlrun = client.create_run(experiment_id, run_name=name[:250], tags=tags)
    rid = mlrun.info.run_id
    try:
        _fill_run(client, rid, run, classes, now)
    except BaseException:  # Ctrl-C, SIGTERM or an error half-way: no half-logged run stays RUNNING
        with contextlib.suppress(Exception):
            _discard(client, rid, "RUNNING")
        raise
    return rid


def _fill_run(client, rid: str, run, classes, now: int) -> None:
    _, Metric, Param, RunTag = classes
    metrics, undefined = _metrics(run, Metric, now)
    params = [Param(k, v) for k, v in _params(run).items()]
    for k in range(0, len(params), 100):  # MLflow's limits per batch: 100 parameters, 1000 metrics
        client.log_batch(rid, params=params[k : k + 100])
    for k in range(0, len(metrics), 1000):
        client.log_batch(rid, metrics=metrics[k : k + 1000])
    if undefined:
        client.log_batch(rid, tags=[RunTag("clad.undefined_metrics", ", ".join(undefined)[:5000])])
    if run.ok:
        from ..report.figure_data import heatmap_data
        from ..report.plots import plot_heatmap

        for base in run.R:
            client.log_table(rid, _r_table(run, base), f"R/{base}.json")
            ax = plot_heatmap(heatmap_data([run], base))
            client.log_figure(rid, ax.figure, f"R/{base}.png")
    else:
        client.log_text(rid, run.error or "no error recorded", "error.txt")
    # last: an export cut short before it is logged again
    client.set_tag(rid, "clad.complete", "true")
    client.set_terminated(rid, status="FINISHED" if run.ok else "FAILED")


def export_mlflow(
    folder: str | os.PathLike, tracking_uri: str | None = None, experiment: str | None = None
) -> dict:
    """Log the runs of ``folder/results.sqlite`` (or a database file) into an MLflow tracking
    store, idempotently by content (docs/guides/reports.md, "Exports"); return ``{"tracking_uri",
    "experiment_id", "exported", "updated", "skipped", "retired", "reasons"}`` (``exported``: runs
    logged for the first time; ``updated``: runs logged again, ``reasons`` saying why)."""
    from ..results.reading import read_store

    db = database_of(folder)
    classes = _mlflow()
    runs, spec = read_store(db, lambda store: (store.load_results(), store.get_meta("spec") or {}))
    from ..results.record import is_tuning_run

    runs = [r for r in runs if not is_tuning_run(r.config)]
    name = experiment or (spec.get("name") if isinstance(spec, dict) else None) or db.parent.name
    if tracking_uri is None:
        tracking_uri = default_tracking_uri(db.parent)
        from ..results.store import writable_destination

        writable_destination(db.parent / "mlruns", "folder", "--tracking-uri (another store)")
    check_tracking_uri(tracking_uri)
    _reachable(tracking_uri)
    artifacts = _artifact_location(tracking_uri)
    here = str(db.resolve())
    with _no_retries():
        try:
            client = classes[0](tracking_uri=tracking_uri)
            found = client.get_experiment_by_name(name)
        except Exception as exc:  # noqa: BLE001 - MLflow's many ways of saying a store cannot be opened
            raise DataError(
                f"MLflow cannot open the tracking store {tracking_uri} ({type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}); give another "
                "--tracking-uri"
            ) from None
        experiment_id = (
            found.experiment_id
            if found
            else client.create_experiment(name, artifact_location=artifacts)
        )
        found_runs = _all_runs(client, experiment_id)
        exported_before = group_by(found_runs, lambda r: r.data.tags.get("clad.run_id"))
        counts = dict.fromkeys(("exported", "updated", "skipped", "retired"), 0)
        reasons: dict[str, int] = {}
        for run in runs:
            before = exported_before.pop(run.run_id, []) if run.run_id else []
            why = _why_again(before, run)
            if before and why is None:
                counts["skipped"] += 1
                continue
            for old in before:
                _discard(client, old.info.run_id, old.info.status)
            _log_run(client, experiment_id, run, classes, here)
            counts["updated" if before else "exported"] += 1
            if before:
                reasons[why] = reasons.get(why, 0) + 1
        for rid, left in exported_before.items():  # exported from this folder, no longer in it
            for old in left:
                if rid and old.data.tags.get("clad.folder") == here:
                    _discard(client, old.info.run_id, old.info.status)
                    counts["retired"] += 1
    return {
        "tracking_uri": tracking_uri,
        "experiment_id": experiment_id,
        **counts,
        "reasons": reasons,
    }


def _discard(client, rid: str, status: str) -> None:
    """Delete an exported run; one whose export was cut short is marked ``KILLED`` first (MLflow keeps
    a deleted run's status: it would stay ``RUNNING`` in the store for ever)."""
    if status not in ("FINISHED", "FAILED", "KILLED"):
        client.set_terminated(rid, status="KILLED")
    client.delete_run(rid)


def _why_again(before: list, run) -> str | None:
    """Why an exported run is logged again (None when its export is complete and the same)."""
    if not before:
        return "new"
    if len(before) > 1:
        return "exported more than once"
    old = before[0]
    complete = old.data.tags.get("clad.complete") == "true"
    if not complete or old.info.status not in ("FINISHED", "FAILED"):
        return "its export was cut short"
    if old.data.tags.get("clad.fingerprint") != fingerprint(run):
        return "computed again since"
    return None


#: the tracking stores MLflow reads: a server, a SQL database, a folder (``file:``, when MLflow allows it)
TRACKING_SCHEMES = ("http", "https", "sqlite", "postgresql", "mysql", "mssql", "file")


def check_tracking_uri(tracking_uri: Any) -> str:
    """``tracking_uri`` if MLflow can keep runs there, else a :class:`~clad.errors.CladValueError`
    saying what is allowed: one of :data:`TRACKING_SCHEMES`, never an in-memory SQLite store (the
    runs would vanish when the export ends).

    >>> check_tracking_uri("sqlite:///:memory:")
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: --tracking-uri 'sqlite:///:memory:' is an in-memory store: the logged runs would vanish when the export ends; give a file, e.g. sqlite:////absolute/path/mlflow.db
    """
    if not isinstance(tracking_uri, str) or not tracking_uri.strip():
        raise CladValueError(
            f"--tracking-uri {tracking_uri!r}; expected a URI such as http://host:5000 or "
            "sqlite:////absolute/path/mlflow.db"
        )
    parsed = urlparse(tracking_uri)
    scheme = parsed.scheme.split("+")[0].lower()
    if scheme not in TRACKING_SCHEMES:
        raise CladValueError(
            f"--tracking-uri {tracking_uri!r}: scheme {parsed.scheme or '(none)'!r} is not a tracking "
            f"store MLflow reads; expected one of {', '.join(s + ':' for s in TRACKING_SCHEMES)}"
        )
    if scheme == "sqlite" and tracking_uri.split("://", 1)[-1].lstrip("/") in ("", ":memory:"):
        raise CladValueError(
            f"--tracking-uri {tracking_uri!r} is an in-memory store: the logged runs would vanish "
            "when the export ends; give a file, e.g. sqlite:////absolute/path/mlflow.db"
        )
    if scheme in ("http", "https") and not parsed.hostname:
        raise CladValueError(
            f"--tracking-uri {tracking_uri!r} names no host; expected e.g. http://host:5000"
        )
    return tracking_uri


def _reachable(tracking_uri: str, timeout: float = 5.0) -> None:
    """For an ``http(s)`` tracking URI, a :class:`~clad.errors.DataError` naming it at once when
    nothing answers there (rather than MLflow's retries)."""
    parsed = urlparse(tracking_uri)
    if parsed.scheme not in ("http", "https"):
        return
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "localhost", port), timeout=timeout):
            pass
    except OSError as exc:
        raise DataError(
            f"cannot reach the MLflow tracking server at {tracking_uri} "
            f"({exc.strerror or exc}); start it, or give another --tracking-uri"
        ) from None


@contextlib.contextmanager
def _no_retries():
    """MLflow's HTTP client without its retries (minutes of back-off against a server that went
    away), unless the user set them."""
    keys = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}
    set_here = [k for k in keys if k not in os.environ]
    os.environ.update({k: keys[k] for k in set_here})
    try:
        yield
    finally:
        for k in set_here:
            os.environ.pop(k, None)


def _artifact_location(tracking_uri: str) -> str | None:
    """For a SQLite store, ``artifacts/`` beside its database file (MLflow would otherwise put a new
    experiment's artifacts in ``./mlruns`` of the current folder); else the store's own default."""
    prefix = "sqlite:///"
    if not tracking_uri.startswith(prefix) or tracking_uri[len(prefix) :] in ("", ":memory:"):
        return None
    return (Path(tracking_uri[len(prefix) :]).resolve().parent / "artifacts").as_uri()


def _all_runs(client, experiment_id: str):
    token = None
    while True:
        page = client.search_runs([experiment_id], max_results=1000, page_token=token)
        yield from page
        token = page.token
        if not token:
            return
