"""Resume that knows what it resumes, one owner per folder, read-only folders (issue 19, items
2, 3, 7)."""

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clad.engine.benchmark import ResultsWriteError, run_spec
from clad.engine.folder import FolderInUse
from clad.errors import DataError

from tests.runner_helpers import spec_toml, synthetic, write_spec

ROOT = Path(__file__).resolve().parents[2]


def _table(path: Path, shift: float) -> None:
    rng = np.random.default_rng(0)
    n = 60
    pd.DataFrame(
        {
            "c": ["a"] * n + ["b"] * n,
            "y": ([0] * 50 + [1] * 10) * 2,
            "x1": rng.normal(size=2 * n) + shift,
            "x2": rng.normal(size=2 * n),
        }
    ).to_csv(path, index=False)


def _spec(data: Path, detector: str = "hbos") -> dict:
    return {
        "name": "table-spec",
        "seeds": 1,
        "strategies": ["naive"],
        "scenarios": ["concept_incremental"],
        "detectors": [detector],
        "datasets": [
            {
                "name": "table",
                "file": data.name,
                "data_dir": str(data.parent),
                "concept_column": "c",
                "label_column": "y",
                "random_state": 0,
            }
        ],
    }


@pytest.mark.slow
def test_a_replaced_data_file_makes_its_runs_stale(tmp_path, caplog):
    data = tmp_path / "data.csv"
    _table(data, 0.0)
    first = run_spec(_spec(data), tmp_path / "out")
    assert first.n_computed == 1 and any(k.startswith("data file ") for k in first.runs[0].inputs)
    assert run_spec(_spec(data), tmp_path / "out").n_computed == 0  # unchanged: resumed
    _table(data, 5.0)
    os.utime(data, (time.time() + 5, time.time() + 5))
    with caplog.at_level("WARNING"):
        again = run_spec(_spec(data), tmp_path / "out")
    assert again.n_computed == 1
    assert f"input changed: data file {data.resolve()}" in caplog.text


PLUGIN = """
import numpy as np


class Mean:
    def fit(self, X):
        self.mean_ = np.asarray(X).mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), {q}))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)
"""


@pytest.mark.slow
def test_an_edited_plugin_makes_its_runs_stale(tmp_path, caplog, monkeypatch):
    plugin = tmp_path / "edited_plugin.py"
    plugin.write_text(PLUGIN.format(q=0.9))
    monkeypatch.syspath_prepend(str(tmp_path))
    data = tmp_path / "data.csv"
    _table(data, 0.0)
    spec = _spec(data, "edited_plugin:Mean")
    assert run_spec(spec, tmp_path / "out").n_computed == 1
    assert run_spec(spec, tmp_path / "out").n_computed == 0
    plugin.write_text(PLUGIN.format(q=0.8))
    with caplog.at_level("WARNING"):
        assert run_spec(spec, tmp_path / "out").n_computed == 1
    assert "input changed: code edited_plugin" in caplog.text


def test_missing_cells_are_computed_again(tmp_path):
    data = tmp_path / "data.csv"
    _table(data, 0.0)
    run_spec(_spec(data), tmp_path / "out")
    con = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    con.execute("DELETE FROM r_cells WHERE step_index = 0")
    con.commit()
    con.close()
    again = run_spec(_spec(data), tmp_path / "out")
    assert again.n_computed == 1 and not np.isnan(again.runs[0].R["roc_auc"]).any()


def test_another_spec_is_refused_unless_fresh_or_add(tmp_path):
    data = tmp_path / "data.csv"
    _table(data, 0.0)
    run_spec(_spec(data), tmp_path / "out")
    other = {**_spec(data, "ecod"), "name": "other"}
    with pytest.raises(FolderInUse, match="'table-spec'.*'other'"):
        run_spec(other, tmp_path / "out")
    added = run_spec(other, tmp_path / "out", add=True)
    from clad.results.reading import load_results

    assert (
        len(load_results(tmp_path / "out" / "results.json"))
        == 2
        == len(load_results(tmp_path / "out"))
    )
    assert len(added.runs) == 1
    fresh = run_spec(other, tmp_path / "out", fresh=True)
    assert len(load_results(tmp_path / "out" / "results.json")) == 1 and fresh.n_computed == 1


def test_a_foreign_sqlite_file_is_never_written(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    con = sqlite3.connect(out / "results.sqlite")
    con.execute("CREATE TABLE mine (x INTEGER)")
    con.commit()
    con.close()
    data = tmp_path / "data.csv"
    _table(data, 0.0)
    with pytest.raises(DataError, match="did not create"):
        run_spec(_spec(data), out)
    con = sqlite3.connect(out / "results.sqlite")
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["mine"]
    con.close()


@pytest.mark.slow
def test_out_naming_a_file_exits_111(tmp_path):
    target = tmp_path / "afile"
    target.write_text("x")
    _table(tmp_path / "data.csv", 0.0)
    with pytest.raises(ResultsWriteError, match="names a file"):
        run_spec(_spec(tmp_path / "data.csv"), target)
    proc = subprocess.run(
        [sys.executable, "-m", "clad.cli", "report", str(tmp_path), "--out", str(target)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode != 0  # no results there: a plain error


def _chmod(path: Path, writable: bool) -> None:
    w = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    for p in [path, *path.rglob("*")]:
        mode = p.stat().st_mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        if p.is_dir():
            mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~w)


def _without_root_override() -> list[str]:
    """A command prefix under which root, like everyone else, cannot write into read-only files
    (its capability to override file permissions dropped), or none when not root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: read-only folders cannot be tested")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


@pytest.mark.slow
def test_report_of_a_read_only_copy_with_out_elsewhere(tmp_path):
    data = tmp_path / "data.csv"
    _table(data, 0.0)
    run_spec(_spec(data), tmp_path / "out")
    base = tmp_path
    copy, report = base / "archived", base / "report"
    shutil.copytree(tmp_path / "out", copy)
    _chmod(copy, writable=False)
    prefix = _without_root_override()
    run = dict(capture_output=True, text=True, cwd=ROOT, timeout=300)
    try:
        proc = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-m",
                "clad.cli",
                "report",
                str(copy),
                "--out",
                str(report / "r"),
            ],
            **run,
        )
        assert proc.returncode == 0, proc.stderr
        assert (report / "r" / "index.html").is_file()
        # writing the report into the read-only folder itself: exit 111 naming the path
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "clad.cli", "report", str(copy)], **run
        )
        assert proc.returncode == 111 and str(copy) in proc.stderr, proc.stderr
        # running into it: exit 111 too, naming the folder
        spec = write_spec(
            tmp_path,
            name=None,
            seeds=1,
            scenarios=["concept_incremental"],
            detectors=["hbos"],
            datasets=[{"name": "synthetic", "n_concepts": 2}],
        )
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "clad.cli", "run", str(spec), "--out", str(copy)], **run
        )
        assert proc.returncode == 111 and str(copy) in proc.stderr, proc.stderr
    finally:
        _chmod(copy, writable=True)


def _started(db) -> bool:
    """Whether a results database records a run as started (read-only; False before it exists)."""
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0] > 0
        finally:
            con.close()
    except sqlite3.Error:
        return False


def _slow(name: str, seeds: int, delay: float) -> str:
    return spec_toml(
        name=name,
        seeds=seeds,
        scenarios=["concept_incremental"],
        datasets=[synthetic(n_features=2, n_train=40, n_test=30)],
        detectors=[{"name": "plugins:SlowDetector", "delay": delay}],
    )


@pytest.mark.slow
def test_fresh_beside_a_live_run_of_another_spec_is_refused(tmp_path):
    """Waits on conditions, never on wall time: the first process's runs wait for a gate file that
    the test creates only after the second process has been refused."""
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    gate = tmp_path / "gate"
    a.write_text(
        spec_toml(
            name="A",
            seeds=4,
            scenarios=["concept_incremental"],
            datasets=[synthetic(n_features=2, n_train=40, n_test=30)],
            detectors=[{"name": "reliability_plugins:GateDetector", "gate": str(gate)}],
        )
    )
    b.write_text(_slow(name="B", seeds=1, delay=0.0))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    cmd = [sys.executable, "-m", "clad.cli", "run", "--quiet", "--out", str(out)]
    first = subprocess.Popen(
        cmd + [str(a)], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = (
            time.time() + 600
        )  # a safety net only: the loop ends when the first run has started
        while (
            not _started(out / "results.sqlite") and first.poll() is None and time.time() < deadline
        ):
            time.sleep(0.1)
        assert first.poll() is None, first.communicate()[1]
        second = subprocess.run(
            cmd + ["--fresh", str(b)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        gate.touch()  # the first process's runs go on
    assert second.returncode == 2 and f"process {first.pid}" in second.stderr, second.stderr
    assert "'A'" in second.stderr
    _, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    from clad.results.reading import load_results

    runs = load_results(out)
    assert len(runs) == 4 and {r.seed for r in runs} == {0, 1, 2, 3} and all(r.ok for r in runs)
    assert len(load_results(out / "results.json")) == 4


def test_installed_plugin_code_is_fingerprinted_by_its_distribution():
    """A plug-in from an installed package is fingerprinted as ``distribution==version``, the
    distribution being the one importlib.metadata says provides the module (found by its name
    first, without reading every installed distribution's record)."""
    from importlib import metadata

    from clad.engine.config import Component, RunConfig
    from clad.engine.identity import code_inputs

    providers = metadata.packages_distributions()
    cfg = RunConfig(
        Component("synthetic"),
        Component("concept_aware"),
        Component("naive"),
        Component("pyod.models.iforest:IForest"),
    )
    assert code_inputs(cfg) == {
        "code pyod.models.iforest": f"{providers['pyod'][0]}=={metadata.version('pyod')}"
    }
    # a module whose distribution has another name (scikit-learn provides sklearn)
    cfg = RunConfig(
        Component("synthetic"),
        Component("concept_aware"),
        Component("naive"),
        Component("sklearn.ensemble:IsolationForest"),
    )
    assert code_inputs(cfg) == {
        "code sklearn.ensemble": f"scikit-learn=={metadata.version('scikit-learn')}"
    }
