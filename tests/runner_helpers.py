"""Shared helpers of the runner tests: small spec files and running the ``clad`` command."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import tomli_w

ROOT = Path(__file__).resolve().parents[1]


def synthetic(**params) -> dict:
    """A ``[[datasets]]`` table of a tiny synthetic dataset (2 concepts, 3 features, 60 training and
    40 test rows per concept); ``params`` replace or add parameters."""
    return {
        "name": "synthetic",
        "n_concepts": 2,
        "n_features": 3,
        "n_train": 60,
        "n_test": 40,
        **params,
    }


def small_spec(**keys) -> dict:
    """A small spec: seed 0, ``naive``, one tiny synthetic dataset (``synthetic()``),
    ``concept_incremental`` and ``hbos``. Each keyword replaces that top-level key (a list of tables is
    a list of dicts, ``synthetic(...)`` among them) or adds it; ``None`` removes it."""
    spec = {
        "name": "tiny",
        "seeds": [0],
        "strategies": ["naive"],
        "datasets": [synthetic()],
        "scenarios": [{"name": "concept_incremental"}],
        "detectors": [{"name": "hbos"}],
        **keys,
    }
    return {key: value for key, value in spec.items() if value is not None}


def spec_toml(**keys) -> str:
    """The TOML text of ``small_spec(**keys)``."""
    return tomli_w.dumps(small_spec(**keys))


def finished_runs(db) -> dict:
    """``{run_id: finished}`` of the runs a results database holds as ok, read without writing to
    it (another process may be running the grid); empty before the database exists."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return dict(
                con.execute("SELECT run_id, finished FROM runs WHERE status = 'ok'").fetchall()
            )
        finally:
            con.close()
    except sqlite3.OperationalError:  # not created yet
        return {}


# a small, fast grid: 3 concepts, 2 strategies, 2 detectors, 2 seeds = 8 runs
SMALL = dict(
    name="small",
    base_metrics=["roc_auc", "f1"],
    seeds=2,
    strategies=["naive", "cumulative"],
    datasets=[synthetic(n_concepts=3, n_features=4, n_train=120, n_test=60)],
    scenarios=[{"name": "concept_agnostic", "batch_size": 50}],
    detectors=[{"name": "iforest", "n_estimators": 10}, {"name": "hbos"}],
)
SMALL_SPEC = spec_toml(**SMALL)


def strict_loads(text: str):
    """``json.loads`` that refuses NaN and Infinity literals (results files are strict JSON)."""

    def refuse(name):
        raise ValueError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def write_spec(
    folder: Path, text: str | None = None, filename: str = "spec.toml", /, **keys
) -> Path:
    """Write ``text`` (dedented), or else ``spec_toml(**keys)``, to ``folder/filename``."""
    if text is None:
        text = spec_toml(**keys)
    path = Path(folder) / filename
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def clad_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "clad.cli", *map(str, args)]


def run_clad(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``clad ARGS`` in a subprocess from the project root (so ``tests.plugins`` imports)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        clad_cmd(*args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def same_results(a, b) -> None:
    """Assert that two lists of RunResult have bit-identical R and metrics, run by run."""
    da = {r.run_id: r for r in a}
    db = {r.run_id: r for r in b}
    assert set(da) == set(db) and len(da) == len(a) == len(b)
    for rid, ra in da.items():
        rb = db[rid]
        assert ra.status == rb.status == "ok", (ra.error, rb.error)
        assert set(ra.R) == set(rb.R)
        for m in ra.R:
            assert np.array_equal(ra.R[m], rb.R[m], equal_nan=True), (rid, m)
        for m in ra.metrics:
            for k, v in ra.metrics[m].items():
                w = rb.metrics[m][k]
                if isinstance(v, (list, dict)):
                    assert np.array_equal(
                        np.asarray(v if isinstance(v, list) else list(v.values()), float),
                        np.asarray(w if isinstance(w, list) else list(w.values()), float),
                        equal_nan=True,
                    )
                else:
                    assert np.array_equal(v, w, equal_nan=True), (rid, m, k)


def run_main(capsys, caplog, *args: str) -> tuple[int, str, str]:
    """Run ``clad ARGS`` in this process: ``(exit status, stdout, stderr + log text)``."""
    import logging

    from clad.cli import main

    caplog.clear()
    capsys.readouterr()
    with caplog.at_level(logging.INFO):
        rc = main([str(a) for a in args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err + "\n" + caplog.text


def edit_reference(spec, change) -> None:
    """Apply ``change`` to the reference file ``clad verify --update`` wrote for ``spec``."""
    from clad.engine.verify import reference_path

    path = reference_path(spec)
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
